"""One call to the fleet, made the way this process can: through the agent's open links when
the command runs inside the agent (a Route over its sync.links.resident.Pool), else over a link
opened for this call and closed after it.

Commands get their Route from their Context (`ctx.route`); the agent hands the one over its
pool to the commands it serves, so nothing decides the way from a global.
"""

from __future__ import annotations

import asyncio
from typing import Any

from agent_memory.sync.config import Config
from agent_memory.sync.links.failures import Unreachable


class Route:
    def __init__(self, pool=None) -> None:
        self.pool = pool

    def call(self, config: Config, command: str, **params: Any) -> Any:
        """One logger command with no outbox (reads, and `--store logger`): its answer's data.
        Raises sync.links.failures' Unreachable (Credentials), Refused or Failed."""
        if self.pool is not None:
            return self.pool.run(lambda: self.pool.call(config, command, params))
        from agent_memory.sync.links.logger import INTERACTIVE, LoggerLink

        async def once() -> Any:
            async with LoggerLink(config, INTERACTIVE) as link:
                return await link.call(command, **params)
        return asyncio.run(once())

    def embed(self, config: Config, texts: list[str], *, budget: float | None = None,
              policy=None) -> list[list[float]]:
        """One vector per text, of the configured model; with `budget`, the whole call
        (connection, retries and answer, not the import) must finish within it or the embedder
        counts as unreachable. An embedder whose port refuses is given up at once, before the
        0.9 s embed-client import."""
        from agent_memory.sync.links.embedder import EmbedderLink, embed_within, port_open
        from agent_memory.sync.links.logger import INTERACTIVE
        policy = policy or INTERACTIVE
        if not port_open(config, timeout=min(0.5, budget) if budget else 0.5):
            raise Unreachable("the embedder does not accept connections at "
                              f"{(config.embedder or {}).get('server')}")
        if self.pool is not None:
            return self.pool.run(lambda: self.pool.embed(config, texts, budget, policy))

        async def once() -> list[list[float]]:
            async with EmbedderLink(config, timeout=budget, policy=policy) as link:
                return await embed_within(link, texts, budget, policy)
        return asyncio.run(once())
