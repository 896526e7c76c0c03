"""The agent's open fleet links: one logger link and one embedder link per configuration
content, kept open between requests on the agent's own event loop.

A command run inline opens a link for each call (`asyncio.run` around `async with`), paying the
connection setup every time. In the agent, its rounds, the answers it completes and the commands
it serves (through sync.links.route.Route) all use the links of one Pool: a warm HTTP connection
pool per configuration, one logger link in the whole agent. The watcher attaches the pool to its
loop when it runs; request threads hand their calls to that loop. A link whose call failed for
transport reasons is closed and opened again by the next call, so a restarted service is picked
up at once; links made with a configuration the agent no longer runs with are closed
(`keep_only`).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Awaitable, Callable

from agent_memory.sync.config import Config
from agent_memory.sync.links.failures import Unreachable

ATTACH_WAIT = 30.0  # a request that came while the agent was starting waits this long for it


def _key(config: Config, kind: str) -> tuple:
    """Links are shared by configurations of the same content: the document and the files it
    names (a certificate renewed in place gets a new link)."""
    from agent_memory.sync import identity
    return (kind, identity.digest(config))


class Pool:
    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._attached = threading.Event()
        self._links: dict[tuple, Any] = {}

    # --- the loop's side -------------------------------------------------------------------
    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """Serve on `loop` (the agent's), from now until `detach`."""
        self._loop = loop
        self._attached.set()

    def detach(self) -> None:
        self._attached.clear()
        self._loop = None

    async def logger(self, config: Config):
        """The open logger link for `config` (opened now if none is)."""
        from agent_memory.sync.links.logger import INTERACTIVE, LoggerLink
        return await self._link(_key(config, "logger"), lambda: LoggerLink(config, INTERACTIVE))

    async def drop_logger(self, config: Config, failed: Any = None) -> None:
        """Close the logger link for `config`; with `failed`, only while it is still that link:
        a call that failed on it must not close the fresh one another call opened since."""
        await self._drop(_key(config, "logger"), failed)

    async def call(self, config: Config, command: str, params: dict[str, Any]) -> Any:
        link = await self.logger(config)
        try:
            return await link.call(command, **params)
        except Unreachable:
            await self.drop_logger(config, link)
            raise

    async def embed(self, config: Config, texts: list[str], budget: float | None,
                    policy) -> Any:
        from agent_memory.sync.links.embedder import EmbedderLink, embed_within
        key = _key(config, "embedder")
        link = await self._link(key, lambda: EmbedderLink(config))
        try:
            return await embed_within(link, texts, budget, policy)
        except Unreachable:
            await self._drop(key, link)
            raise

    async def keep_only(self, config: Config) -> None:
        """Close the links made with any other configuration (the agent reloaded its own)."""
        keep = {_key(config, "logger"), _key(config, "embedder")}
        for key in [k for k in self._links if k not in keep]:
            await self._drop(key)

    async def aclose(self) -> None:
        for key in list(self._links):
            await self._drop(key)

    async def _link(self, key: tuple, make: Callable[[], Any]) -> Any:
        link = self._links.get(key)
        if link is None:
            link = make()
            await link.__aenter__()
            self._links[key] = link
        return link

    async def _drop(self, key: tuple, failed: Any = None) -> None:
        link = self._links.get(key)
        if link is None or (failed is not None and link is not failed):
            return
        del self._links[key]
        await link.__aexit__(None, None, None)

    # --- the request threads' side -----------------------------------------------------------
    def run(self, work: Callable[[], Awaitable[Any]], timeout: float | None = None) -> Any:
        """Run `work()` on the agent's loop and wait for its result (from another thread)."""
        if not self._attached.wait(ATTACH_WAIT) or self._loop is None:
            raise Unreachable("the agent is not running its loop (starting or stopping)")
        future = asyncio.run_coroutine_threadsafe(work(), self._loop)
        try:
            return future.result(timeout)
        except BaseException:
            future.cancel()
            raise
