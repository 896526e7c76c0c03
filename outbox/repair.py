"""`verify --repair`: what becomes of the strays of the pending area (outbox.entries): entries
that follow no naming rule, so no command reads them.

An earlier release accepted ids that ended in a newline (a pattern checked with `re.match` and
`$`), and named a message's file, or a session's directory, after such an id: an acknowledged
message then lay where no scan looks. Repair recovers what it can and deletes nothing:
- a stray file that holds a message, once its ids and times are stripped of surrounding
  whitespace and control characters and then pass every check a `write` makes, is re-filed:
  written anew under its final name in its session's directory (pending, so the next sync
  forwards it, with its `message_id`, `occurred_at` and sequence number as recorded), unless the
  store already holds that message;
- a session event is re-filed the same way only into a session the store holds nothing of (an
  `open` written over a session that exists could be refused by the logger and hold back the
  session's own messages);
- a stray directory named like no session is searched the same way, one level down;
- every stray then moves to `.agent-memory/.quarantine/.stray/` (its session's directory there,
  for one found inside a session), beside a `<name>.reason.json` that says what was re-filed.
Vectors are not re-filed: `embed` makes them again.
"""

from __future__ import annotations

import json
import os
from typing import Any

from agent_memory.outbox import atomic, contract, encoding, layout, names
from agent_memory.outbox.cleanup import exists
from agent_memory.outbox.entries import strays
from agent_memory.outbox.store import IMPORTED, PENDING, QUARANTINED, Store, utc_now

STRAY_DIR = ".stray"  # in .quarantine/
_EDGES = "".join(chr(c) for c in range(33)) + "\x7f\x85\xa0\u2028\u2029\ufeff"


def repair(store: Store) -> dict[str, Any]:
    """Re-file what the strays hold and set every stray aside: {"refiled": [...],
    "set_aside": [...]}, each entry naming the stray and where it went."""
    refiled: list[dict[str, str]] = []
    set_aside: list[dict[str, str]] = []
    for stray in strays(store):
        found = _refile_from(store, stray)
        refiled.extend(found)
        moved = _set_aside(store, stray, found)
        if moved is not None:
            set_aside.append({"entry": stray["entry"], "moved_to": moved})
    return {"refiled": refiled, "set_aside": set_aside}


# --- re-filing ---------------------------------------------------------------------------------
def _refile_from(store: Store, stray: dict[str, Any]) -> list[dict[str, str]]:
    parent = store._fd if stray["session_id"] is None else store._session_dir(stray["session_id"])
    if parent is None:
        return []
    try:
        if stray["kind"] == "file":
            done = _refile(store, parent, stray["name"], stray["entry"])
            return [done] if done else []
        if stray["kind"] != "directory" or stray["session_id"] is not None:
            return []
        try:
            fd = atomic.open_dir(stray["name"], dir_fd=parent)
        except OSError:
            return []
        try:
            out = []
            # events first: an `open` is re-filed only into a session that holds nothing yet
            for inner in sorted(os.listdir(fd), key=lambda n: (not n.endswith(names.EVENT_EXT), n)):
                done = _refile(store, fd, inner, f"{stray['entry']}/{inner}")
                if done:
                    out.append(done)
            return out
        finally:
            os.close(fd)
    finally:
        if parent != store._fd:
            os.close(parent)


def _refile(store: Store, dir_fd: int, name: str, shown: str) -> dict[str, str] | None:
    """Re-file the record the file `name` holds, if it holds one this release accepts."""
    try:
        value = json.loads(atomic.read_file(dir_fd, name))
    except (OSError, ValueError):
        return None  # not a regular file, too large, not JSON: set aside as it is
    if not isinstance(value, dict):
        return None
    record = _normalised(value)
    if record is None:
        return None
    if "text" in record:
        return _refile_message(store, record, shown)
    if "event" in record:
        return _refile_event(store, record, shown)
    return None


def _strip(value: Any) -> Any:
    return value.strip(_EDGES) if isinstance(value, str) else value


def _normalised(value: dict[str, Any]) -> dict[str, Any] | None:
    """The record with its ids and times stripped of surrounding whitespace and control
    characters, if it then decodes and passes a write's checks; else None."""
    from agent_memory.outbox import records
    record = dict(value)
    for key in ("session_id", "message_id", "event_id", "occurred_at", "written_at",
                "corrects_message_id"):
        if key in record:
            record[key] = _strip(record[key])
    if isinstance(record.get("relations"), list):
        record["relations"] = [{**r, "to_message_id": _strip(r.get("to_message_id")),
                                "kind": _strip(r.get("kind"))} if isinstance(r, dict) else r
                               for r in record["relations"]]
    if isinstance(record.get("message_ids"), list):
        record["message_ids"] = [_strip(m) for m in record["message_ids"]]
    kind = records.MessageRecord if "text" in record else (
        records.SessionEvent if "event" in record else None)
    if kind is None:
        return None
    try:
        decoded = records.decode(json.dumps(record).encode(), kind)
        contract.parse_occurred_at(decoded.occurred_at)
    except ValueError:  # records.RecordError is a ValueError
        return None
    ids = [decoded.message_id] if kind is records.MessageRecord else (
        [decoded.event_id] + ([decoded.message_id] if decoded.message_id else [])
        + list(decoded.message_ids or []))
    if kind is records.MessageRecord:
        ids += [r.to_message_id for r in decoded.relations]
        ids += [decoded.corrects_message_id] if decoded.corrects_message_id else []
        if decoded.sender_kind not in contract.PARTICIPANT_KINDS or \
                decoded.receiver_kind not in contract.PARTICIPANT_KINDS:
            return None
    if not contract.is_valid_session_id(decoded.session_id) or \
            not all(contract.is_uuid4(i) for i in ids):
        return None
    return records.as_dict(decoded)


def _refile_message(store: Store, record: dict[str, Any], shown: str) -> dict[str, str] | None:
    session_id, message_id = record["session_id"], record["message_id"]
    if store.find_message(message_id, session_id) is not None:
        return {"entry": shown, "message_id": message_id, "refiled_as": None,
                "reason": "the store already holds this message"}
    name = names.final_name(_moment(record["occurred_at"]), message_id, names.MESSAGE_EXT)
    file = store.add_record(session_id, name, encoding.encode(record))
    return {"entry": shown, "message_id": message_id, "refiled_as": file.relpath}


def _refile_event(store: Store, record: dict[str, Any], shown: str) -> dict[str, str] | None:
    session_id = record["session_id"]
    if store.files(session_id, None, (PENDING, IMPORTED, QUARANTINED)):
        return {"entry": shown, "event_id": record["event_id"], "refiled_as": None,
                "reason": f"session {session_id} already holds records here: an event "
                          "written over them could hold its messages back"}
    name = names.final_name(_moment(record["occurred_at"]), record["event_id"],
                            names.EVENT_EXT)
    file = store.add_record(session_id, name, encoding.encode(record))
    return {"entry": shown, "event_id": record["event_id"], "refiled_as": file.relpath}


def _moment(stored: str):
    return contract.parse_occurred_at(stored)


# --- setting aside -----------------------------------------------------------------------------
def _set_aside(store: Store, stray: dict[str, Any], refiled: list[dict[str, str]]) -> str | None:
    """Move the stray to .quarantine/.stray/ (under its session's name when it lay in one),
    with a reason file; where it went, or None when it was gone meanwhile."""
    target_fd = layout.open_set_aside(store._fd, STRAY_DIR)
    where = f"{names.STORE_DIR}/{names.QUARANTINE_DIR}/{STRAY_DIR}/"
    source_fd = store._fd if stray["session_id"] is None \
        else store._session_dir(stray["session_id"])
    try:
        if stray["session_id"] is not None:
            inner = atomic.ensure_dir(target_fd, stray["session_id"])
            os.close(target_fd)
            target_fd = inner
            where += stray["session_id"] + "/"
        target = stray["name"]
        while exists(target_fd, target) or exists(target_fd, target + ".reason.json"):
            target = f"{stray['name']}.{utc_now().strftime('%Y%m%dT%H%M%S%f')}"
        reason = {"entry": stray["entry"], "reason": "stray", "kind": stray["kind"],
                  "refiled": refiled, "moved_to": where + target}
        try:
            os.rename(stray["name"], target, src_dir_fd=source_fd, dst_dir_fd=target_fd)
        except FileNotFoundError:
            return None
        atomic.create_exclusive(target_fd, target + ".reason.json", encoding.encode(reason))
        os.fsync(target_fd)
        os.fsync(source_fd)
        return where + target
    finally:
        os.close(target_fd)
        if source_fd is not None and source_fd != store._fd:
            os.close(source_fd)

