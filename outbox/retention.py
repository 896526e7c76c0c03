"""`.imported/` retention: remove what the logger confirmed long ago, and nothing else.

Only `.msg` and `.emb` files in `.imported/<session>/` go, and only when they are regular files
with a final name, moved in more than `older_than` seconds ago (their inode change time, which
the move into `.imported/` sets; a file's content never changes), and whose record decodes and
names the message its file name does. Session events (`.ses`) stay: they are tiny, and the open
event is what re-opens a session the logger does not know. Pending files, quarantined files,
temporaries and anything agent-memory did not write are never touched. A session directory
left empty is removed only by a caller holding the sync lock (no forward can be moving a file
into it then).
"""

from __future__ import annotations

import re
import stat
import time
from typing import Any

from agent_memory.outbox import names, records
from agent_memory.outbox.store import IMPORTED, Store, StoredFile

_DURATION = re.compile(r"(\d+(?:\.\d+)?)([smhdw])", re.ASCII)  # matched whole (fullmatch)
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_KIND = {names.MESSAGE_EXT: "message", names.VECTOR_EXT: "vector"}


def parse_duration(text: str) -> float:
    """"90s", "15m", "12h", "30d", "2w" -> seconds; ValueError otherwise."""
    match = _DURATION.fullmatch(text)
    if match is None:
        raise ValueError(f"{text!r} is not a duration like 90s, 15m, 12h, 30d or 2w")
    return float(match.group(1)) * _UNIT_S[match.group(2)]


def collect(store: Store, older_than: float, remove_empty_dirs: bool,
            dry_run: bool = False) -> dict[str, Any]:
    """Remove (or, dry, count) what retention allows; the report."""
    cutoff = time.time() - older_than
    report: dict[str, Any] = {"removed_files": 0, "removed_bytes": 0, "sessions_emptied": 0,
                              "kept_unrecognised": [], "dry_run": dry_run}
    for session_id in store.session_ids():
        _collect_session(store, session_id, cutoff, dry_run, report)
        if remove_empty_dirs and not dry_run and not store.entries(session_id, IMPORTED):
            if store.remove_empty_session_dir(session_id, IMPORTED):
                report["sessions_emptied"] += 1
    return report


def _collect_session(store: Store, session_id: str, cutoff: float, dry_run: bool,
                     report: dict[str, Any]) -> None:
    doomed: dict[str, int] = {}  # name -> size
    for name in store.entries(session_id, IMPORTED):
        parsed = names.parse_final_name(name)
        if parsed is None or parsed[2] not in _KIND:
            continue
        file = StoredFile(session_id, IMPORTED, name)
        try:
            info = store.stat(file)
        except FileNotFoundError:
            continue
        if max(info.st_ctime, info.st_mtime) > cutoff:
            continue
        if not stat.S_ISREG(info.st_mode) or not _is_ours(store, file, parsed[1], parsed[2]):
            report["kept_unrecognised"].append(file.relpath)
            continue
        doomed[name] = info.st_size
    removed = list(doomed) if dry_run else store.remove(session_id, IMPORTED, list(doomed))
    report["removed_files"] += len(removed)
    report["removed_bytes"] += sum(doomed[name] for name in removed)


def _is_ours(store: Store, file: StoredFile, item_id: str, ext: str) -> bool:
    """Does the file hold the record its name says (so it is ours to remove)?"""
    try:
        record = store.load(file, _KIND[ext])
    except (OSError, records.RecordError):
        return False
    return record.message_id == item_id
