"""Which files the watcher hears about: watchdog reports creations and moves under the store,
and only new final-named files (or new session directories) in the pending area start a round.
Our own moves to `.imported/`, temporaries and state files are ignored, so a round never wakes
the next one."""

from __future__ import annotations

import os
from typing import Callable

from agent_memory.outbox import names
from agent_memory.outbox.contract import is_valid_session_id

# (kind, session_id, file name or None for a new session directory); kind is "message" or
# "session"
Notify = Callable[[str, str, "str | None"], None]


def classify(store_path: str, path: str,
             is_directory: bool) -> tuple[str, str, str | None] | None:
    """("session", id, None) for a new session directory in the pending area, ("session", id,
    name) for a new final file there, ("message", id, name) for a new `.msg`, None for anything
    else."""
    rel = os.path.relpath(path, store_path)
    parts = rel.split(os.sep)
    if len(parts) == 1 and is_directory and is_valid_session_id(parts[0]):
        return "session", parts[0], None
    if len(parts) != 2 or is_directory:
        return None
    if is_valid_session_id(parts[0]) and names.is_final(parts[1]):
        kind = "message" if parts[1].endswith(names.MESSAGE_EXT) else "session"
        return kind, parts[0], parts[1]
    return None


def start_observer(store_path: str, notify: Notify):
    """A started watchdog observer calling `notify(kind, session_id, name)` from its own thread
    for each file that matters (the caller hops to its loop); stop() and join() it when done."""
    from watchdog.events import (DirCreatedEvent, DirMovedEvent, FileCreatedEvent,
                                 FileMovedEvent, FileSystemEventHandler)
    from watchdog.observers import Observer

    class Handler(FileSystemEventHandler):
        def on_any_event(self, event) -> None:
            path = getattr(event, "dest_path", "") or event.src_path
            found = classify(store_path, os.fsdecode(path), event.is_directory)
            if found is not None:
                notify(*found)

    observer = Observer()
    observer.schedule(Handler(), store_path, recursive=True,
                      event_filter=[FileCreatedEvent, FileMovedEvent, DirCreatedEvent,
                                    DirMovedEvent])
    observer.daemon = True
    observer.start()
    return observer
