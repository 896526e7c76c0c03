"""`agent_memory.AsyncMemory`: Memory's methods as coroutines. Each call runs in a worker
thread (asyncio.to_thread), so an event loop never blocks on a command, and no asyncio object
outlives a call: one AsyncMemory may be used from several threads, each with its own loop.

A cancelled call still completes in its thread (a write lands in the outbox all the same);
the caller just stops waiting for it."""

from __future__ import annotations

import asyncio
import functools
import os
from typing import Any

from agent_memory.api.memory import Memory

# Memory's methods that run a command (messages(), a generator, is served by read pages).
METHODS = ("init_store", "open_session", "close_session", "reopen_session", "delete_session",
           "sessions", "write", "read", "get", "preview", "search", "working_set",
           "relations", "path", "leaves", "graph", "info", "delete", "mark", "status", "sync",
           "agent", "command")


class AsyncMemory:
    """A project's memory for asyncio code: the same parameters and results as Memory."""

    def __init__(self, project_root: str | os.PathLike | None = None, config: str | None = None,
                 *, store: str = "auto", no_agent: bool = False) -> None:
        self.memory = Memory(project_root, config, store=store, no_agent=no_agent)

    def __repr__(self) -> str:
        return "Async" + repr(self.memory)

    async def messages(self, session_id: str, **options: Any) -> list:
        """Every message of the session in arrival order (all its `read` pages)."""
        return await asyncio.to_thread(lambda: list(self.memory.messages(session_id,
                                                                         **options)))


def _coroutine(name: str):
    method = getattr(Memory, name)

    @functools.wraps(method)
    async def call(self: AsyncMemory, *args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(getattr(self.memory, name), *args, **kwargs)
    return call


for _name in METHODS:
    setattr(AsyncMemory, _name, _coroutine(_name))
del _name
