"""Check a whole store the way nothing else does: every name, every record, every vector, and
duplicates across the pending and imported areas. Reads only; `verify --repair` (outbox.repair)
is what moves strays.

Damage (the store is not what agent-memory writes): an entry named like a record that is not a
regular file or is over the size limit; a record that does not decode, or whose id or session
disagrees with its name; a vector whose dimension disagrees with its length or whose message id
disagrees with its name; one message id under two names or in two areas; an entry named like a
session that is not a directory; a stray (an entry of the pending area that follows no naming
rule, outbox.entries). Warnings (harmless, but worth knowing): temporaries older than
an hour (a writer was killed midway; nothing was lost, the temporary was never visible under a
final name), a vector without its message, vectors of another model than the configuration's.
Files already in `.quarantine/` are counted, not judged: they were set aside with a reason.
"""

from __future__ import annotations

import time
from typing import Any

from agent_memory.outbox import atomic, names, records
from agent_memory.outbox.store import IMPORTED, PENDING, QUARANTINED, Store, StoredFile

STALE_TEMPORARY_S = 3600.0
_KIND = {names.MESSAGE_EXT: "message", names.EVENT_EXT: "event", names.VECTOR_EXT: "vector"}


def verify(store: Store, model: str | None = None,
           dimension: int | None = None) -> dict[str, Any]:
    """The report: `damage` and `warnings` (lists of {file, problem}) and what was checked."""
    damage: list[dict[str, str]] = []
    warnings: list[dict[str, str]] = []
    checked = {"sessions": 0, "messages": 0, "events": 0, "vectors": 0, "quarantined": 0}
    from agent_memory.outbox.cleanup import unsafe_entries
    from agent_memory.outbox.entries import STRAY_PROBLEM, strays
    for entry in unsafe_entries(store):
        damage.append({"file": entry["entry"], "problem": entry["reason"]})
    for entry in strays(store):
        damage.append({"file": entry["entry"], "problem": f"a {entry['kind']} that "
                                                         f"{STRAY_PROBLEM}"})
    seen: dict[str, str] = {}  # message id -> relpath of its first .msg
    now = time.time()
    for session_id in store.session_ids():
        checked["sessions"] += 1
        for area in (PENDING, IMPORTED, QUARANTINED):
            _check_dir(store, session_id, area, model, dimension, seen, checked, damage,
                       warnings, now)
    ledger = _check_ledger(store)
    damage.extend(ledger.pop("disagreements"))
    return {"ok": not damage, "checked": checked, "damage": damage, "warnings": warnings,
            "ledger": ledger}


def _check_ledger(store: Store) -> dict[str, Any]:
    """The ledger (outbox.ledger) against the files: for each session it claims to know as it
    is, every row against its file. A disagreement is damage (`verify --repair` rebuilds the
    ledger); a ledger that cannot be used is said, not damage (commands then read the files)."""
    from agent_memory.outbox.ledger import LedgerUnavailable
    from agent_memory.outbox.ledger_catchup import disagreements
    found: list[dict[str, str]] = []
    try:
        with store.ledger.transaction():
            sessions = set(store.ledger.sessions())
        for session_id in sorted(sessions | set(store.session_ids())):
            try:
                found.extend(disagreements(store.ledger, session_id))
            except PermissionError:
                continue  # a session this user may not open: reported above
    except LedgerUnavailable as exc:
        return {"usable": False, "reason": str(exc), "disagreements": []}
    return {"usable": True, "sessions": len(sessions), "disagreements": found}


def _check_dir(store: Store, session_id: str, area: str, model: str | None,
               dimension: int | None, seen: dict[str, str], checked: dict[str, int],
               damage: list, warnings: list, now: float) -> None:
    listed = store.entries(session_id, area)
    messages = {n[:-len(names.MESSAGE_EXT)] for n in listed if n.endswith(names.MESSAGE_EXT)}
    for name in listed:
        file = StoredFile(session_id, area, name)
        relpath = file.relpath
        if name.startswith(names.TEMP_PREFIX):
            try:
                age = now - store.stat(file).st_mtime
            except FileNotFoundError:
                continue
            if age > STALE_TEMPORARY_S:
                warnings.append({"file": relpath, "problem": f"a temporary {int(age)} s old: "
                                 "a writer was killed midway (it never held a record)"})
            continue
        parsed = names.parse_final_name(name)
        if parsed is None:
            continue  # reason files, notes: not records
        if area == QUARANTINED:
            if parsed[2] != names.VECTOR_EXT:
                checked["quarantined"] += 1
            continue
        item_id, ext = parsed[1], parsed[2]
        try:
            record = store.load(file, _KIND[ext])
        except FileNotFoundError:
            continue  # moved by a concurrent syncer
        except atomic.UnsafeFile as exc:
            damage.append({"file": relpath, "problem": exc.reason})
            continue
        except records.RecordError as exc:
            damage.append({"file": relpath, "problem": f"does not decode: {exc}"})
            continue
        if ext == names.MESSAGE_EXT:
            checked["messages"] += 1
            _check_message(record, item_id, session_id, relpath, seen, damage)
        elif ext == names.EVENT_EXT:
            checked["events"] += 1
            if record.event_id != item_id or record.session_id != session_id:
                damage.append({"file": relpath, "problem": "the event's id or session is not "
                                                           "the one its name and directory say"})
        else:
            checked["vectors"] += 1
            _check_vector(record, item_id, name, messages, relpath, model, dimension, damage,
                          warnings)


def _check_message(record: Any, item_id: str, session_id: str, relpath: str,
                   seen: dict[str, str], damage: list) -> None:
    if record.message_id != item_id or record.session_id != session_id:
        damage.append({"file": relpath, "problem": "the message's id or session is not the "
                                                   "one its name and directory say"})
        return
    first = seen.setdefault(record.message_id, relpath)
    if first != relpath:
        damage.append({"file": relpath, "problem": f"message {record.message_id} is also "
                                                   f"stored as {first}"})


def vector_problem(record: records.VectorRecord, item_id: str) -> str | None:
    """What makes a decoded vector damaged (None when it is sound). NaN and infinities never
    get this far: they are not JSON numbers, so such a file does not decode."""
    if record.message_id != item_id:
        return "the vector names another message than its file name"
    if record.dimension != len(record.embedding):
        return f"dimension {record.dimension} but {len(record.embedding)} values"
    return None


def _check_vector(record: Any, item_id: str, name: str, messages: set[str], relpath: str,
                  model: str | None, dimension: int | None, damage: list,
                  warnings: list) -> None:
    problem = vector_problem(record, item_id)
    if problem is not None:
        damage.append({"file": relpath, "problem": problem})
    elif model is not None and (record.model, record.dimension) != (model, dimension):
        warnings.append({"file": relpath, "problem": f"a vector of {record.model} "
                         f"({record.dimension}), not the configured {model} ({dimension})"})
    if name[:-len(names.VECTOR_EXT)] not in messages:
        warnings.append({"file": relpath, "problem": "a vector without its message beside it"})
