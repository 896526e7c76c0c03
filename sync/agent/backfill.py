"""The watcher's vector backfill: messages without a vector are embedded (sync.vectors.backfill)
in a worker thread beside the rounds, so a slow embedder never holds up forwarding. An
unreachable or failing embedder gets its own capped, jittered backoff; texts it refused are not
sent again for the watcher's life; an embedder that refuses this configuration's credentials
is reported as such (sync.links.failures.account) and waited for long. Lives on the watcher's
event loop."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Callable

from agent_memory.sync.agent.backoff import Backoff
from agent_memory.sync.links.failures import Credentials, account
from agent_memory.outbox.survey import iso


class _Stopped(Exception):
    """Raised from the backfill's progress callback once the watcher stops."""


class VectorBackfill:
    def __init__(self, store, config, options, report, log,
                 stopping: Callable[[], bool]) -> None:
        self.store = store
        self.config = config
        self.options = options
        self.report = report
        self.log = log
        self._stopping = stopping
        self._task: asyncio.Future | None = None
        self._backoff = Backoff(options.backoff_initial, options.backoff_max,
                                options.backoff_factor)
        self._credentials = Backoff(options.credentials_backoff_initial,
                                    options.credentials_backoff_max, 2.0)
        self._retry_at = 0.0
        self._last = float("-inf")
        self._new_messages = False
        self.unembeddable: set[str] = set()  # texts the embedder refused: not sent again

    def take(self, config) -> None:
        """A configuration reloaded in place: the next backfill uses it, at once (a delay
        earned with the old one, a refused certificate say, is forgotten)."""
        self.config = config
        self._backoff.reset()
        self._credentials.reset()
        self._retry_at = 0.0

    def note_new_message(self) -> None:
        self._new_messages = True

    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def maybe_start(self, force: bool) -> None:
        """Start a backfill unless one runs, the embedder is backed off, or (not `force`) no
        message came since the last one, `backfill_interval` ago at least."""
        opts = self.options
        if not opts.backfill or self.config.embedder is None or self._stopping():
            return
        if self.running():
            return
        now = time.monotonic()
        if now < self._retry_at:
            return
        if not force and not (self._new_messages and now - self._last >= opts.backfill_interval):
            return
        from agent_memory.sync.vectors.backfill import backfill
        self._new_messages = False
        self._last = now
        self._task = asyncio.ensure_future(asyncio.to_thread(self._blocking, backfill))
        self._task.add_done_callback(self._done)

    async def finish(self) -> None:
        """Wait for the backfill in flight (it stops after its current batch)."""
        if not self.running():
            return
        self.log.info("waiting_for_backfill")
        try:
            await asyncio.shield(self._task)
        except BaseException:  # noqa: BLE001 - its outcome is logged by _done
            pass

    def _blocking(self, backfill: Callable[..., dict[str, Any]]) -> dict[str, Any]:
        def progress(*_args: Any, **_kwargs: Any) -> None:
            if self._stopping():
                raise _Stopped()
        return backfill(self.store, self.config, progress=progress, skip=set(self.unembeddable))

    def _done(self, task: asyncio.Future) -> None:
        report = self.report
        try:
            result = task.result()
        except (_Stopped, asyncio.CancelledError):
            return
        except Exception as exc:  # noqa: BLE001 - any failure: back off
            # a refused credential is no outage: retrying soon will not fix it (the long
            # delay of the logger's health, sync.agent.health)
            backoff = self._credentials if isinstance(exc, Credentials) else self._backoff
            delay = backoff.failed()
            self._retry_at = time.monotonic() + delay
            said = account(exc)
            report.embed_error = {"at": iso(), **said,
                                  "message": str(said["message"])[:2000],
                                  "retry_in_s": round(delay, 3)}
            self.log.warning("embedder_" + str(said["kind"]),
                             error=report.embed_error["message"], retry_in_s=round(delay, 3))
            return
        self._backoff.reset()
        self._credentials.reset()
        report.embed_error = None
        result = dict(result) if isinstance(result, dict) else {"result": result}
        self.unembeddable.update(item["message_id"] for item in result.get("unembeddable") or ())
        written = int(result.get("written", 0) or 0)
        report.totals["vectors_written"] += written
        report.last_backfill = {"at": iso(), **result}
        if written or result.get("mismatched") or result.get("unembeddable"):
            self.log.info("backfill", **result)
