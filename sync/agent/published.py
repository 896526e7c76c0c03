"""What the watcher publishes about itself.

The watcher's state is a small JSON document, `.agent-memory/.watcher.json`, rewritten
atomically (temporary file, rename) by the watcher only, while it holds the sync lock. It is a
report, never the source of truth: whether a watcher is alive is decided by the lock (an flock,
freed by the kernel even on kill -9), and the backlog that `status` prints is measured from the
files themselves (outbox.survey). A state file left behind by a killed watcher is therefore
reported as stale, never believed. So it is not fsynced: a crash of the machine can leave it
old, empty or torn, which readers report as stale or unreadable (`read`), and the next
publication replaces it; the two fsyncs it took after every round competed with the commands
the agent was serving for the disk.
"""

from __future__ import annotations

import json
import os
from typing import Any

from agent_memory.outbox import atomic

STATE_NAME = ".watcher.json"
FORMAT_VERSION = 1
_TEMP_PREFIX = STATE_NAME + ".tmp-"


# --- the state document --------------------------------------------------------------------------
def write(store_path: str, state: dict[str, Any]) -> None:
    """Replace the state document atomically (readers see the old or the new one, whole)."""
    data = json.dumps({"format_version": FORMAT_VERSION, **state}, separators=(",", ":"),
                      ensure_ascii=False).encode() + b"\n"
    temp = f"{_TEMP_PREFIX}{os.getpid()}"
    dir_fd = atomic.open_dir(store_path)
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC,
                     atomic.FILE_MODE, dir_fd=dir_fd)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.rename(temp, STATE_NAME, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    finally:
        os.close(dir_fd)


def read(store_path: str) -> dict[str, Any] | None:
    """The published state; None when there is none. An unreadable document is reported as
    `{"unreadable": reason}`, never taken as absent."""
    try:
        fd = os.open(os.path.join(store_path, STATE_NAME),
                     os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return {"unreadable": f"cannot open: {exc.strerror or exc}"}
    try:
        raw = os.read(fd, 1 << 20)
    finally:
        os.close(fd)
    try:
        document = json.loads(raw)
        if not isinstance(document, dict):
            raise ValueError("not a JSON object")
    except ValueError as exc:
        return {"unreadable": str(exc)}
    return document


def watcher_pid(store_path: str, holder: int | None) -> int | None:
    """`holder` when the process holding the sync lock is a watcher (its published pid), else
    None (no holder, or a one-shot `sync` / an inline forward)."""
    if holder is None or holder <= 0:
        return None
    state = read(store_path)
    if state is None or state.get("pid") != holder or state.get("status") == "stopped":
        return None
    return holder
