"""Clean-up of a store before a whole-store pass (the caller holds the sync lock): entries that
only look like sessions are set aside to `.quarantine/.unsafe/`, and the temporaries that
writers killed midway left anywhere in the store are removed. Neither ever touches a record:
a temporary never held one under a final name, and a set-aside entry was never one."""

from __future__ import annotations

import os
import stat
import time

from agent_memory.outbox import atomic, encoding, layout, names
from agent_memory.outbox.entries import UNOPENABLE_SESSION, find_unsafe_entries
from agent_memory.outbox.store import utc_now

UNSAFE_DIR = ".unsafe"  # in .quarantine/: entries named like a session that were not directories
ORPHAN_TEMPORARY_AGE_S = 1.0


def temporary_writer(name: str) -> int | None:
    """The pid of the writer of a temporary file, from its name, or None when `name` is not a
    temporary. Two shapes are written: `.tmp-<pid>-<random>` (records, outbox.atomic) and
    `<final name>.tmp-<pid>` (the state documents, the vector index)."""
    if name.startswith(names.TEMP_PREFIX):
        pid = name[len(names.TEMP_PREFIX):].split("-", 1)[0]
    elif ".tmp-" in name:
        pid = name.rsplit(".tmp-", 1)[1]
    else:
        return None
    return int(pid) if pid.isdigit() else None


def _remove_orphans(dir_fd: int, now: float, min_age_s: float) -> int:
    removed = 0
    for name in os.listdir(dir_fd):
        pid = temporary_writer(name)
        if pid is None:
            continue
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            if _alive(pid) or now - st.st_mtime < min_age_s or not stat.S_ISREG(st.st_mode):
                continue
            os.unlink(name, dir_fd=dir_fd)
            removed += 1
        except FileNotFoundError:
            continue  # linked and cleaned up by its writer, or by another syncer
    if removed:
        os.fsync(dir_fd)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def exists(dir_fd: int, name: str) -> bool:
    """Is there an entry `name` in the directory (a symbolic link counts, unfollowed)?"""
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def unsafe_entries(store) -> list[dict[str, str]]:
    """Entries of the store named like a session that are not real directories (a symbolic
    link, a file, a FIFO) or that this user may not open: never entered, never followed."""
    return find_unsafe_entries(store._fd)

def set_aside_unsafe(store) -> list[dict[str, str]]:
    """Move every unsafe entry to `.quarantine/.unsafe/` beside a `<name>.reason.json`
    (the caller holds the sync lock); what was moved, with where it went."""
    found = unsafe_entries(store)
    if not found:
        return []
    unsafe_fd = layout.open_set_aside(store._fd, UNSAFE_DIR)
    moved = []
    try:
        for item in found:
            if item["reason"] == UNOPENABLE_SESSION:
                # Its records are sound; only its mode or owner is wrong, and a directory
                # that may not be written cannot be renamed anyway. It stays, reported.
                moved.append({**item, "moved_to": None})
                continue
            target = item["name"]
            while exists(unsafe_fd, target):  # set aside before: keep both
                target = f"{item['name']}.{utc_now().strftime('%Y%m%dT%H%M%S%f')}"
            try:
                atomic.create_exclusive(unsafe_fd, target + ".reason.json",
                                        encoding.encode({**item, "moved_to": target}))
                os.rename(item["name"], target, src_dir_fd=store._fd, dst_dir_fd=unsafe_fd)
            except FileNotFoundError:
                continue  # removed meanwhile
            moved.append({**item, "moved_to": f"{names.STORE_DIR}/{names.QUARANTINE_DIR}/"
                                              f"{UNSAFE_DIR}/{target}"})
        if any(m["moved_to"] for m in moved):
            os.fsync(unsafe_fd)
            os.fsync(store._fd)
    finally:
        os.close(unsafe_fd)
    return moved

def remove_orphan_temporaries(store, min_age_s: float = ORPHAN_TEMPORARY_AGE_S) -> int:
    """Remove the temporaries that writers killed midway left anywhere in the store: the
    session directories of every area (pending, imported, quarantined), the store itself
    (state documents) and its other directories (the vector index); how many. A temporary
    never held a record under a final name, so removing it loses nothing. Its name carries
    its writer's pid: one whose writer is alive, or written less than `min_age_s` ago, is
    left alone. (A writer in another pid namespace whose temporary is removed in the moment
    before it links it fails loudly; it never reports a write it did not make.)
    Directories this user may not open are skipped (status reports them); symbolic links
    are never followed.

    A session directory of the imported or quarantined area (they grow with everything ever
    confirmed) is listed only when it changed since it was last swept (its inode and mtime,
    kept in the ledger, outbox.ledger; one changed less than SWEPT_RACY_S before a sweep is
    not remembered, since a temporary landing within the same mtime tick would not change
    it): so a sweep costs what changed, not what was imported."""
    removed = 0
    now = time.time()
    remembered = _swept(store)
    swept: dict[str, str] = {}
    folders: list[tuple[int, str]] = [(os.dup(store._fd), "")]
    while folders:
        fd, path = folders.pop()
        try:
            kept = _remembered_path(path)
            if kept:
                seen = _seen(os.fstat(fd))
                if remembered.get(path) == seen:
                    continue
            removed += _remove_orphans(fd, now, min_age_s)
            if kept:
                info = os.fstat(fd)
                if info.st_mtime < now - SWEPT_RACY_S:
                    swept[path] = _seen(info)
                continue  # a session directory holds records, not directories
            below = [entry.name for entry in os.scandir(fd)
                     if entry.is_dir(follow_symlinks=False)]
            for name in below:
                try:
                    folders.append((atomic.open_dir(name, dir_fd=fd),
                                    f"{path}/{name}" if path else name))
                except OSError:
                    continue  # removed meanwhile, or not ours to open
        finally:
            os.close(fd)
    if swept:
        _note_swept(store, swept)
    return removed


SWEPT_RACY_S = 2.0
_REMEMBERED_AREAS = (names.IMPORTED_DIR, names.QUARANTINE_DIR)


def _remembered_path(path: str) -> bool:
    """A session directory of the imported or quarantined area (`.imported/<session>`)."""
    parts = path.split("/")
    return len(parts) == 2 and parts[0] in _REMEMBERED_AREAS and not parts[1].startswith(".")


def _seen(info: os.stat_result) -> str:
    return f"{info.st_ino}:{info.st_mtime_ns}"


def _swept(store) -> dict[str, str]:
    from agent_memory.outbox.ledger import LedgerUnavailable
    try:
        with store.ledger.transaction():
            return store.ledger.swept()
    except LedgerUnavailable:
        return {}  # every directory is listed


def _note_swept(store, swept: dict[str, str]) -> None:
    from agent_memory.outbox.ledger import LedgerUnavailable
    try:
        with store.ledger.transaction(write=True):
            store.ledger.note_swept(swept)
    except LedgerUnavailable:
        pass
