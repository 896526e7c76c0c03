"""What any process can measure of a store from its file names and one stat per file (no
record is decoded, so `status`, the watcher's per-round backlog and the outbox cap stay cheap
on a large store): pending messages, events, vectors and bytes, the oldest pending, what is
quarantined, messages without a vector, entries that can never be records."""

from __future__ import annotations

import os
import time
from datetime import datetime, timezone
from typing import Any, Callable

from agent_memory.outbox import atomic, layout, names
from agent_memory.outbox.contract import session_ids_among
from agent_memory.outbox.layout import IMPORTED, QUARANTINED


def iso(moment: float | None = None) -> str:
    """A wall-clock time as RFC 3339 UTC with milliseconds."""
    stamp = datetime.fromtimestamp(time.time() if moment is None else moment, timezone.utc)
    return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _zero() -> dict[str, Any]:
    return {"pending_messages": 0, "pending_events": 0, "pending_vectors": 0, "pending_bytes": 0,
            "oldest_pending_at": None, "oldest_pending_age_s": None}


def _scan_pending(fd: int, entry: dict[str, Any], ids: dict[str, set[str]] | None,
                  now: float) -> None:
    oldest = None
    items = list(os.scandir(fd))
    final = set(names.finals([item.name for item in items])) if items else set()  # one scan
    for item in items:
        if item.name not in final:
            continue
        try:
            st = item.stat(follow_symlinks=False)
        except FileNotFoundError:
            continue  # moved to .imported/ meanwhile
        unsafe = atomic.unsafe_reason(st)
        if unsafe is not None:  # never counted as pending: sync sets it aside
            entry.setdefault("unsafe", []).append({"file": item.name, "reason": unsafe})
            continue
        ext = item.name[item.name.rindex("."):]
        if ext == names.MESSAGE_EXT:
            entry["pending_messages"] += 1
        elif ext == names.EVENT_EXT:
            entry["pending_events"] += 1
        else:
            entry["pending_vectors"] += 1
        entry["pending_bytes"] += st.st_size
        if ext != names.VECTOR_EXT and (oldest is None or st.st_mtime < oldest):
            oldest = st.st_mtime
        if ids is not None and ext != names.EVENT_EXT:
            ids[ext].add(item.name[names.ITEM_ID])
    if oldest is not None:
        entry["oldest_pending_at"] = iso(oldest)
        entry["oldest_pending_age_s"] = round(max(0.0, now - oldest), 3)


def _open(parent_fd: int, name: str) -> int | None:
    """The directory, or None when it is gone or this user may not open it (an unopenable
    session directory is listed among the unsafe entries instead)."""
    try:
        return atomic.open_dir(name, dir_fd=parent_fd)
    except (FileNotFoundError, PermissionError):
        return None


def _listed(area_fd: int | None, session_id: str) -> list[str]:
    """The names in a session's directory of an area ([] when it is not there or may not be
    opened)."""
    fd = _open(area_fd, session_id) if area_fd is not None else None
    if fd is None:
        return []
    try:
        return os.listdir(fd)
    finally:
        os.close(fd)


def _open_area(store_fd: int, area: str) -> int | None:
    """An area's directory (outbox.layout), or None when it is missing or this user may not
    open it."""
    try:
        return layout.open_area(store_fd, area)
    except PermissionError:
        return None


def _session_dirs(fd: int | None) -> list[str]:
    if fd is None:
        return []
    entries = list(os.scandir(fd))
    valid = session_ids_among([e.name for e in entries])
    return sorted(e.name for e in entries
                  if e.name in valid and e.is_dir(follow_symlinks=False))


def backlog(store_path: str, now: float | None = None) -> dict[str, Any]:
    """The pending area only (what the watcher publishes after each round): totals of pending
    messages, events, vectors, bytes and the oldest pending message or event, by file time
    (files are created once and never edited, so a file's mtime is when it was written)."""
    now = time.time() if now is None else now
    total = {**_zero(), "sessions": 0}
    oldest = None
    store_fd = atomic.open_dir(store_path)
    try:
        for sid in _session_dirs(store_fd):
            fd = _open(store_fd, sid)
            if fd is None:
                continue
            entry = _zero()
            try:
                _scan_pending(fd, entry, None, now)
            finally:
                os.close(fd)
            if entry["pending_messages"] or entry["pending_events"] or entry["pending_vectors"]:
                total["sessions"] += 1
            for key in ("pending_messages", "pending_events", "pending_vectors", "pending_bytes"):
                total[key] += entry[key]
            age = entry["oldest_pending_age_s"]
            if age is not None and (oldest is None or age > oldest[0]):
                oldest = (age, entry["oldest_pending_at"])
    finally:
        os.close(store_fd)
    if oldest is not None:
        total["oldest_pending_age_s"], total["oldest_pending_at"] = oldest
    return total


def survey(store_path: str, now: float | None = None,
           gaps: Callable[[str], Any] | None = None) -> dict[str, Any]:
    """Per session and in total: pending messages/events/vectors and bytes, the age of the
    oldest pending, quarantined items, and messages (pending or imported) without a vector.

    `gaps(session_id)`, when given, tells the session's messages without a vector from the
    ledger (outbox.store.Store.vector_gaps: their count, and whether a name is one), so the
    imported area is never listed; None from it (or no `gaps`) lists the imported area.
    Sessions with nothing to report are counted but not listed.
    """
    now = time.time() if now is None else now
    sessions: list[dict[str, Any]] = []
    totals = {**_zero(), "quarantined": 0, "missing_vectors": 0, "unsafe": 0}
    oldest = None
    store_fd = atomic.open_dir(store_path)
    imported_fd = _open_area(store_fd, IMPORTED)
    quarantine_fd = _open_area(store_fd, QUARANTINED)
    try:
        all_ids = sorted(set(_session_dirs(store_fd)) | set(_session_dirs(imported_fd))
                         | set(_session_dirs(quarantine_fd)))
        for sid in all_ids:
            entry = {"session_id": sid, **_zero(), "quarantined": 0, "missing_vectors": 0}
            ids = {names.MESSAGE_EXT: set(), names.VECTOR_EXT: set()}
            fd = _open(store_fd, sid)
            if fd is not None:
                try:
                    _scan_pending(fd, entry, ids, now)
                finally:
                    os.close(fd)
            found = gaps(sid) if gaps is not None else None
            if found is not None:
                entry["missing_vectors"] = _missing(store_fd, imported_fd, sid, *found,
                                                    entry.get("unsafe", ()))
            else:
                for name in _listed(imported_fd, sid):
                    parsed = names.parse_final_name(name)
                    if parsed is not None and parsed[2] != names.EVENT_EXT:
                        ids[parsed[2]].add(parsed[1])
                entry["missing_vectors"] = len(ids[names.MESSAGE_EXT] - ids[names.VECTOR_EXT])
            entry["quarantined"] = _quarantined_items(_listed(quarantine_fd, sid))
            totals["unsafe"] += len(entry.get("unsafe", ()))
            for key in ("pending_messages", "pending_events", "pending_vectors",
                        "pending_bytes", "quarantined", "missing_vectors"):
                totals[key] += entry[key]
            age = entry["oldest_pending_age_s"]
            if age is not None and (oldest is None or age > oldest[0]):
                oldest = (age, entry["oldest_pending_at"])
            if any(entry.get(k) for k in ("pending_messages", "pending_events",
                                          "pending_vectors", "quarantined", "missing_vectors",
                                          "unsafe")):
                sessions.append(entry)
    finally:
        for fd in (store_fd, imported_fd, quarantine_fd):
            if fd is not None:
                os.close(fd)
    if oldest is not None:
        totals["oldest_pending_age_s"], totals["oldest_pending_at"] = oldest
    totals["sessions"] = len(all_ids)
    totals["sessions_listed"] = len(sessions)
    unsafe_entries = _unsafe_entries(store_path)
    totals["unsafe"] += len(unsafe_entries)
    strays = _strays(store_path)
    totals["strays"] = len(strays)
    return {"sessions": sessions, "totals": totals, "unsafe_entries": unsafe_entries,
            "strays": strays}


def _missing(store_fd: int, imported_fd: int | None, session_id: str, count: int,
             lacks: Callable[[str], bool], unsafe: Any) -> int:
    """The count of messages without a vector, from the ledger's `count` of them, read as the
    listings would be: a pending entry that can never be a record (`unsafe`) is neither a
    message nor a vector."""
    missing = count
    for item in unsafe:
        name = item["file"]
        if name.endswith(names.MESSAGE_EXT) and lacks(name):
            missing -= 1
        elif name.endswith(names.VECTOR_EXT):
            message = names.sibling(name, names.MESSAGE_EXT)
            vector_imported = _exists(imported_fd, session_id, name)
            message_here = _exists(imported_fd, session_id, message) or (
                _exists(store_fd, session_id, message)
                and not any(u["file"] == message for u in unsafe))
            if message_here and not vector_imported:
                missing += 1
    return missing


def _exists(area_fd: int | None, session_id: str, name: str) -> bool:
    if area_fd is None:
        return False
    try:
        os.stat(f"{session_id}/{name}", dir_fd=area_fd, follow_symlinks=False)
        return True
    except (FileNotFoundError, NotADirectoryError):
        return False


def _strays(store_path: str) -> list[dict[str, str]]:
    """Entries that follow no naming rule of the store (outbox.entries.find_strays): no
    command reads them, so each is shown, never counted as pending."""
    from agent_memory.outbox.entries import find_strays
    store_fd = atomic.open_dir(store_path)
    try:
        return [{"entry": e["entry"], "kind": e["kind"]} for e in find_strays(store_fd)]
    finally:
        os.close(store_fd)


def _unsafe_entries(store_path: str) -> list[dict[str, str]]:
    """Entries named like a session that are not directories (the next sync sets them aside)
    or that this user may not open (left in place)."""
    from agent_memory.outbox.entries import find_unsafe_entries
    store_fd = atomic.open_dir(store_path)
    try:
        return [{"entry": e["entry"], "reason": e["reason"]}
                for e in find_unsafe_entries(store_fd)]
    finally:
        os.close(store_fd)


def _quarantined_items(listed: list[str]) -> int:
    """Quarantined records: messages and events, and vectors set aside alone (damaged ones
    whose message went on); a vector beside its quarantined message is part of that item."""
    final = {n for n in listed if names.is_final(n)}
    return sum(1 for n in final if not n.endswith(names.VECTOR_EXT)
               or names.sibling(n, names.MESSAGE_EXT) not in final)
