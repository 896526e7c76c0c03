"""The purge journal: `.agent-memory/.purge/<event id>.json`, one intent per purge under way
(sync.forgetting says what an intent holds and does). Written once like a record (atomic
create, fsync), removed once its purge is done, so a killed purge is found and finished."""

from __future__ import annotations

import json
import os
from typing import Any

from agent_memory.outbox import atomic, encoding, names


def intents(store) -> list[str]:
    """The names of the unfinished purges, sorted ([] when there is none: one listing)."""
    try:
        fd = atomic.open_dir(names.PURGE_DIR, dir_fd=store._fd)
    except FileNotFoundError:
        return []
    try:
        return sorted(n for n in os.listdir(fd) if n.endswith(".json"))
    finally:
        os.close(fd)


def read(store, name: str) -> dict[str, Any]:
    """An intent; FileNotFoundError when a concurrent command finished it, OSError or
    ValueError when it does not read."""
    fd = atomic.open_dir(names.PURGE_DIR, dir_fd=store._fd)
    try:
        return json.loads(atomic.read_file(fd, name))
    finally:
        os.close(fd)


def add(store, name: str, intent: dict[str, Any]) -> None:
    """Journal an intent before its purge starts."""
    fd = atomic.ensure_dir(store._fd, names.PURGE_DIR)
    try:
        atomic.create_exclusive(fd, name, encoding.encode(intent))
    finally:
        os.close(fd)


def drop(store, name: str) -> None:
    """Remove a finished intent (durably: the directory is fsynced)."""
    try:
        fd = atomic.open_dir(names.PURGE_DIR, dir_fd=store._fd)
    except FileNotFoundError:
        return
    try:
        os.unlink(name, dir_fd=fd)
    except FileNotFoundError:
        return
    else:
        os.fsync(fd)
    finally:
        os.close(fd)
