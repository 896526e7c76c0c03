"""Where the store's files lie: the three areas (pending, imported, quarantined), the session
directories in each, and the path shown for a file. The one place that opens them; the Store
and the outbox's own upkeep (cleanup, repair) go through here, nothing above the outbox does.

Every directory is opened relative to the store's descriptor without following a symbolic
link (outbox.atomic); a descriptor handed out here is the caller's to close."""

from __future__ import annotations

import os

from agent_memory.outbox import atomic, names
from agent_memory.outbox.contract import is_valid_session_id, session_ids_among

PENDING = "pending"
IMPORTED = "imported"
QUARANTINED = "quarantined"
AREAS = (PENDING, IMPORTED, QUARANTINED)
_AREA_DIRS = {PENDING: "", IMPORTED: names.IMPORTED_DIR, QUARANTINED: names.QUARANTINE_DIR}
_AREA_PARTS = {area: (folder,) if folder else () for area, folder in _AREA_DIRS.items()}
# Where each area's session directories lie as answers and warnings show a file (relative to
# the project root): `<SHOWN_DIRS[area]><session_id>/<name>` (outbox.store.StoredFile.relpath).
SHOWN_DIRS = {area: f"{names.STORE_DIR}/{folder}/" if folder else f"{names.STORE_DIR}/"
              for area, folder in _AREA_DIRS.items()}


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
    _check(session_id)
    if not create:
        return atomic.open_dirs(store_fd, [_AREA_PARTS[area] + (session_id,)])[0]
    area_fd = open_area(store_fd, area, create)
    try:
        return atomic.ensure_dir(area_fd, session_id)
    finally:
        os.close(area_fd)


def open_session_dirs(store_fd: int, session_id: str,
                      areas: tuple[str, ...]) -> dict[str, int | None]:
    """The session's directory in each of `areas`, {area: descriptor, or None where there is
    none}, the session id checked once: all one operation of the Store works in, opened once.
    Every descriptor is the caller's to close."""
    _check(session_id)
    return dict(zip(areas, atomic.open_dirs(store_fd, [_AREA_PARTS[area] + (session_id,)
                                                       for area in areas])))


def _check(session_id: str) -> None:
    if not is_valid_session_id(session_id):
        raise ValueError(f"invalid session id: {session_id!r}")


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
    entries = list(os.scandir(area_fd))
    valid = session_ids_among([e.name for e in entries])
    return [e for e in entries
            if e.name in valid and e.is_dir(follow_symlinks=False) and may_open(e.name, area_fd)]
