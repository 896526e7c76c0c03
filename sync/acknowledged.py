"""When the store acknowledged each pending message of a session: its sequence number (the
store's count of the session's messages when it was written) and its write time.

This is what sync.plan's `acknowledged_order` puts a session's pending files in before they
go: the order the store reads a session in (sequence number, then name), which names alone
do not give (messages sharing one `--occurred-at`, or back-dated, are named by that moment and
a random uuid). It is read from the pending files themselves here, which a forward reads
anyway and which are few; the one function below is the place to take it from elsewhere (a
derived per-session index) without touching the plan or the engine.
"""

from __future__ import annotations

import json
from typing import Any, Iterable

from agent_memory.outbox.atomic import UnsafeFile


def acknowledged(store: Any, files: Iterable[Any]) -> dict[str, tuple[int, str]]:
    """`{name: (sequence_number, written_at)}` of the pending `.msg` files among `files`
    (outbox.store.StoredFile, one session's). A file that is gone (moved by a concurrent
    syncer), unsafe or undecodable is left out: the engine reads it again and sets it aside
    or skips it as it always did."""
    found: dict[str, tuple[int, str]] = {}
    for file in files:
        try:
            value = json.loads(store.read_bytes(file))
        except (OSError, UnsafeFile, ValueError):
            continue
        if not isinstance(value, dict):
            continue
        number, written = value.get("sequence_number"), value.get("written_at")
        if isinstance(number, int) and not isinstance(number, bool) \
                and isinstance(written, str):
            found[file.name] = (number, written)
    return found
