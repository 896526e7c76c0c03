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

import os
import re
import stat
import time
from typing import Any

from agent_memory.outbox import atomic, names, records
from agent_memory.outbox.store import IMPORTED, Store

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
        fd = store.session_fd(session_id, IMPORTED)
        if fd is None:
            continue
        try:
            removed = _collect_session(fd, session_id, cutoff, dry_run, report)
            if removed and not dry_run:
                os.fsync(fd)
            left = os.listdir(fd)
        finally:
            os.close(fd)
        if not left and remove_empty_dirs and not dry_run:
            if store.remove_empty_session_dir(session_id, IMPORTED):
                report["sessions_emptied"] += 1
    return report


def _collect_session(fd: int, session_id: str, cutoff: float, dry_run: bool,
                     report: dict[str, Any]) -> int:
    removed = 0
    for name in sorted(os.listdir(fd)):
        parsed = names.parse_final_name(name)
        if parsed is None or parsed[2] not in _KIND:
            continue
        try:
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            continue
        if max(info.st_ctime, info.st_mtime) > cutoff:
            continue
        if not stat.S_ISREG(info.st_mode) or not _is_ours(fd, name, parsed[1], parsed[2]):
            report["kept_unrecognised"].append(
                f"{names.STORE_DIR}/{names.IMPORTED_DIR}/{session_id}/{name}")
            continue
        if not dry_run:
            try:
                os.unlink(name, dir_fd=fd)
            except FileNotFoundError:
                continue
        removed += 1
        report["removed_files"] += 1
        report["removed_bytes"] += info.st_size
    return removed


def _is_ours(fd: int, name: str, item_id: str, ext: str) -> bool:
    """Does the file hold the record its name says (so it is ours to remove)?"""
    try:
        record = records.decode(atomic.read_file(fd, name), records.KINDS[_KIND[ext]])
    except (OSError, records.RecordError):
        return False
    return record.message_id == item_id
