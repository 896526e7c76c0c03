"""The agent's open fleet links, shared by the commands it serves.

A command run inline opens a logger or embedder link for each call (`asyncio.run` around
`async with`), paying the connection setup every time. In the agent (`install()` is called by
`sync --watch`), `sync.runner.direct` and `sync.embedder_link.embed_now` hand their calls to one
event loop thread here instead, whose links stay open between requests: a warm HTTP connection
pool per configuration. A link whose call failed for transport reasons is closed and opened
again by the next call, so a restarted service is picked up at once.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Awaitable, Callable

from sync.config import Config
from sync.failures import Unreachable

_pool: "Pool | None" = None


def install() -> "Pool":
    global _pool
    if _pool is None:
        _pool = Pool()
    return _pool


def uninstall() -> None:
    global _pool
    pool, _pool = _pool, None
    if pool is not None:
        pool.close()


def active() -> "Pool | None":
    return _pool


def _key(config: Config, section: str) -> tuple:
    """Links are shared by configurations of the same content: the document and the files it
    names (a certificate renewed in place gets a new link)."""
    from sync import identity
    return (section, identity.digest(config))


class Pool:
    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="resident-links",
                                        daemon=True)
        self._thread.start()
        self._links: dict[tuple, Any] = {}

    def run(self, work: Callable[[], Awaitable[Any]], timeout: float | None = None) -> Any:
        """Run `work()` on the pool's loop and wait for its result (from any other thread)."""
        future = asyncio.run_coroutine_threadsafe(work(), self._loop)
        try:
            return future.result(timeout)
        except BaseException:
            future.cancel()
            raise

    async def _link(self, key: tuple, make: Callable[[], Any]) -> Any:
        link = self._links.get(key)
        if link is None:
            link = make()
            await link.__aenter__()
            self._links[key] = link
        return link

    async def _drop(self, key: tuple) -> None:
        link = self._links.pop(key, None)
        if link is not None:
            await link.__aexit__(None, None, None)

    def logger_call(self, config: Config, command: str, params: dict[str, Any]) -> Any:
        from sync.logger_link import INTERACTIVE, LoggerLink
        key = ("logger", *_key(config, "ailogger_client"))

        async def work() -> Any:
            link = await self._link(key, lambda: LoggerLink(config, INTERACTIVE))
            try:
                return await link.call(command, **params)
            except Unreachable:
                await self._drop(key)
                raise
        return self.run(work)

    def embed(self, config: Config, texts: list[str], budget: float | None, policy) -> Any:
        from sync.embedder_link import EmbedderLink
        key = ("embedder", *_key(config, "embedding_client"))

        async def work() -> Any:
            link = await self._link(key, lambda: EmbedderLink(config))
            try:
                if budget is None:
                    return await link.embed(texts, policy=policy)
                return await asyncio.wait_for(link.embed(texts, policy=policy), budget)
            except asyncio.TimeoutError:
                await self._drop(key)
                raise Unreachable(f"the embedder did not answer within {budget} s") from None
            except Unreachable:
                await self._drop(key)
                raise
        return self.run(work)

    def keep_only(self, config: Config) -> None:
        """Close the links made with any other configuration (the agent reloaded its own)."""
        keep = {("logger", *_key(config, "ailogger_client")),
                ("embedder", *_key(config, "embedding_client"))}

        async def drop_others() -> None:
            for key in [k for k in self._links if k not in keep]:
                await self._drop(key)
        try:
            self.run(drop_others, timeout=10.0)
        except Exception:  # noqa: BLE001 - a link that will not close is dropped anyway
            pass

    def close(self) -> None:
        async def close_all() -> None:
            for key in list(self._links):
                await self._drop(key)
        try:
            self.run(close_all, timeout=10.0)
        except Exception:  # noqa: BLE001 - closing at exit: nothing more to do
            pass
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5.0)
        self._loop.close()
