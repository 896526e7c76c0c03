"""What an entry of the store's pending area is: a session directory this user may open, or an
entry that only looks like one (a symbolic link, a file, a FIFO named like a session, or a
session directory this user may not open). Scans skip the latter, so one bad entry never stops
the others; `status` and `verify` report them and sync sets the first kind aside
(outbox.cleanup).

A stray is an entry that follows no naming rule of the store: beside the session directories,
a name that is not a session id (and not one of the store's own dot-entries); inside a session
directory, a name that is neither a record's final name nor a writer's temporary. No scan reads
a stray, so one that holds an acknowledged message (an id that once ended in a newline) would be
lost in silence: `status` counts each, `verify` reports each, `sync` logs each, and `verify
--repair` re-files what decodes and sets the rest aside (outbox.repair)."""

from __future__ import annotations

import os

from agent_memory.outbox import atomic, names
from agent_memory.outbox.layout import may_open
from agent_memory.outbox.contract import is_valid_session_id


UNOPENABLE_SESSION = ("a session directory this user may not open (permission denied): "
                      "left in place; fix its owner or mode and the next sync takes it")


def strays(store) -> list[dict[str, str]]:
    """The strays of a Store's pending area (find_strays)."""
    return find_strays(store._fd)


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


def find_strays(store_fd: int) -> list[dict[str, str]]:
    """Every stray of the pending area (see above): `entry` the path to show, `name` its name,
    `session_id` the session directory holding it (None beside the sessions), `kind`."""
    found = []
    for entry in os.scandir(store_fd):
        if entry.name.startswith("."):  # the store's own: areas, state, lock, log, temporaries
            continue
        if not is_valid_session_id(entry.name):
            found.append(_stray(entry, None))
            continue
        if not entry.is_dir(follow_symlinks=False):
            continue  # named like a session: an unsafe entry (find_unsafe_entries)
        try:
            fd = atomic.open_dir(entry.name, dir_fd=store_fd)
        except OSError:
            continue  # unopenable: an unsafe entry; gone: nothing to say
        try:
            found.extend(_stray(inner, entry.name) for inner in os.scandir(fd)
                         if not names.is_final(inner.name)
                         and not inner.name.startswith(names.TEMP_PREFIX))
        finally:
            os.close(fd)
    return sorted(found, key=lambda item: item["entry"])


def _stray(entry: os.DirEntry, session_id: str | None) -> dict[str, str]:
    where = f"{names.STORE_DIR}/" + (f"{session_id}/" if session_id is not None else "")
    if entry.is_symlink():
        kind = "symbolic link"
    elif entry.is_dir(follow_symlinks=False):
        kind = "directory"
    elif entry.is_file(follow_symlinks=False):
        kind = "file"
    else:
        kind = "other"
    return {"entry": where + entry.name, "name": entry.name, "session_id": session_id,
            "kind": kind}


STRAY_PROBLEM = ("does not follow the store's naming rule, so no command reads it (an "
                 "acknowledged message here would never be forwarded): `agent-memory verify "
                 "--repair` re-files a record it holds and sets the rest aside")
