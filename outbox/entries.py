"""What an entry of the store's pending area is: a session directory this user may open, or an
entry that only looks like one (a symbolic link, a file, a FIFO named like a session, or a
session directory this user may not open). Scans skip the latter, so one bad entry never stops
the others; `status` and `verify` report them and sync sets the first kind aside
(outbox.cleanup)."""

from __future__ import annotations

import os

from agent_memory.outbox import atomic, names
from agent_memory.outbox.contract import is_valid_session_id


UNOPENABLE_SESSION = ("a session directory this user may not open (permission denied): "
                      "left in place; fix its owner or mode and the next sync takes it")


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


def find_unsafe_entries(store_fd: int) -> list[dict[str, str]]:
    """Entries of the pending area named like a session that are not real directories, or
    that this user may not open. `entry` is the path to show, `name` the entry's name."""
    found = []
    for entry in os.scandir(store_fd):
        if not is_valid_session_id(entry.name):
            continue
        if not entry.is_dir(follow_symlinks=False):
            kind = "a symbolic link" if entry.is_symlink() else "not a directory"
            reason = f"{kind}, named like a session"
        elif not may_open(entry.name, store_fd):
            reason = UNOPENABLE_SESSION
        else:
            continue
        found.append({"entry": f"{names.STORE_DIR}/{entry.name}", "name": entry.name,
                      "reason": reason})
    return found
