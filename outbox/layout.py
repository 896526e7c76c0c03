"""Where the store's files lie: the three areas (pending, imported, quarantined), the session
directories in each, and the path shown for a file. The one place that opens them; the Store
and the outbox's own upkeep (cleanup, repair) go through here, nothing above the outbox does.

Every directory is opened relative to the store's descriptor without following a symbolic
link (outbox.atomic); a descriptor handed out here is the caller's to close."""

from __future__ import annotations

import os

from agent_memory.outbox import atomic, names
from agent_memory.outbox.contract import is_valid_session_id

PENDING = "pending"
IMPORTED = "imported"
QUARANTINED = "quarantined"
AREAS = (PENDING, IMPORTED, QUARANTINED)
_AREA_DIRS = {PENDING: "", IMPORTED: names.IMPORTED_DIR, QUARANTINED: names.QUARANTINE_DIR}


def relpath(session_id: str, area: str, name: str) -> str:
    """A file's path relative to the project root, for answers and warnings."""
    folder = _AREA_DIRS[area] + "/" if _AREA_DIRS[area] else ""
    return f"{names.STORE_DIR}/{folder}{session_id}/{name}"


def may_open(name: str, dir_fd: int | None = None) -> bool:
    """Can this user open the directory `name`? (Scans skip one it may not, so one session
    with a wrong mode or owner never stops the others; it is reported as an unsafe entry.)"""
    try:
        os.close(atomic.open_dir(name, dir_fd=dir_fd))
    except PermissionError:
        return False
    except OSError:
        pass  # gone meanwhile, or not a directory: other checks judge that
    return True


def open_area(store_fd: int, area: str, create: bool = False) -> int | None:
    """A descriptor of an area's directory (the store itself for pending), or None when it
    does not exist."""
    if area == PENDING:
        return os.dup(store_fd)
    if create:
        return atomic.ensure_dir(store_fd, _AREA_DIRS[area])
    try:
        return atomic.open_dir(_AREA_DIRS[area], dir_fd=store_fd)
    except FileNotFoundError:
        return None


def open_session(store_fd: int, session_id: str, area: str = PENDING,
                 create: bool = False) -> int | None:
    """A descriptor of a session's directory in `area`, or None when it does not exist."""
    if not is_valid_session_id(session_id):
        raise ValueError(f"invalid session id: {session_id!r}")
    area_fd = open_area(store_fd, area, create)
    if area_fd is None:
        return None
    try:
        if create:
            return atomic.ensure_dir(area_fd, session_id)
        try:
            return atomic.open_dir(session_id, dir_fd=area_fd)
        except FileNotFoundError:
            return None
    finally:
        os.close(area_fd)


def open_set_aside(store_fd: int, name: str) -> int:
    """A directory of `.quarantine/` that holds what is no session's record, set aside
    (`.unsafe`, `.stray`), created when missing."""
    quarantine_fd = open_area(store_fd, QUARANTINED, create=True)
    try:
        return atomic.ensure_dir(quarantine_fd, name)
    finally:
        os.close(quarantine_fd)


def session_entries(area_fd: int) -> list[os.DirEntry]:
    """The session directories of an area this user may open, unsorted (entries named like a
    session that are not directories, or may not be opened, are outbox.entries' to report)."""
    return [e for e in os.scandir(area_fd)
            if is_valid_session_id(e.name) and e.is_dir(follow_symlinks=False)
            and may_open(e.name, area_fd)]
