"""The watcher's vector backfill: messages without a vector are embedded (sync.vectors.backfill)
in a worker thread beside the rounds, so a slow embedder never holds up forwarding. An
unreachable or failing embedder gets its own capped, jittered backoff; texts it refused are not
sent again for the watcher's life; an embedder that refuses this configuration's credentials
is reported as such (sync.links.failures.account) and waited for long. Lives on the watcher's
event loop.

Each backfill first looks whether any vector is missing at all (sync.vectors.missing, from the
directory listings): only then is the derived index opened, so an agent whose writes all got
their vectors never imports numpy nor holds the index's arrays (about 16 MB resident). Nor does
a backfill start while a served write's vector is still being made, and one that new messages
prompted leaves those written a moment ago to their writers, looking again later: a backfill
then would embed them twice, and open the index for it."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Callable

from agent_memory.sync.agent.backoff import Backoff
from agent_memory.sync.links.failures import Credentials, account
from agent_memory.sync.vectors.missing import FRESH, SOME, MissingVectors, nothing_to_do
from agent_memory.outbox.survey import iso


class _Stopped(Exception):
    """Raised from the backfill's progress callback once the watcher stops."""


class VectorBackfill:
    def __init__(self, store, config, options, report, log, stopping: Callable[[], bool],
                 vectors_in_flight: Callable[[], bool] = lambda: False,
                 publish: Callable[[], None] = lambda: None) -> None:
        self.store = store
        self.config = config
        self.options = options
        self.report = report
        self.log = log
        self._stopping = stopping
        self._vectors_in_flight = vectors_in_flight  # served writes' vectors, or writing now
        self._publish = publish  # the watcher's state published again: `status` sees the end
        self._task: asyncio.Future | None = None
        self._backoff = Backoff(options.backoff_initial, options.backoff_max,
                                options.backoff_factor)
        self._credentials = Backoff(options.credentials_backoff_initial,
                                    options.credentials_backoff_max, 2.0)
        self._retry_at = 0.0
        self._last = float("-inf")
        self._new_messages = False
        self.unembeddable: set[str] = set()  # texts the embedder refused: not sent again
        self._missing = MissingVectors(store)
        self._look_again = False  # only fresh messages lacked a vector: look again later

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
        """Start a backfill unless one runs, the embedder is backed off, a served write's
        vector is being made (then at a later call), or (not `force`) no message came since the
        last one, `backfill_interval` ago at least."""
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
        if self._vectors_in_flight():  # their messages would look unembedded, or commands
            # are writing (sync.agent.handoff.busy): start after
            self._new_messages = True
            return
        from agent_memory.sync.vectors.backfill import backfill
        self._new_messages = False
        self._last = now
        self._task = asyncio.ensure_future(asyncio.to_thread(self._blocking, backfill, force))
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

    def _blocking(self, backfill: Callable[..., dict[str, Any]], force: bool) -> dict[str, Any]:
        def progress(*_args: Any, **_kwargs: Any) -> None:
            if self._stopping():
                raise _Stopped()
        started = time.perf_counter()
        seen = self._missing.look(grace=not force)
        if seen != SOME:
            self._look_again = seen == FRESH
            model = self.config.embedding_model
            return nothing_to_do(self.store, model["model"], int(model["dimension"]), started)
        return backfill(self.store, self.config, progress=progress, skip=set(self.unembeddable))

    def _done(self, task: asyncio.Future) -> None:
        report = self.report
        if self._look_again:
            self._look_again = False
            self._new_messages = True  # after backfill_interval, those are no longer fresh
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
            self._publish()
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
        self._publish()
