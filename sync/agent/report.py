"""What a watcher knows about itself and publishes: its status, its last round, its last
error, its totals, the backlog measured from the files, and (when it serves as the project's
agent) the agent's socket and idle deadline. Written to `.agent-memory/.watcher.json` through
sync.agent.published; the watcher's summary on exit comes from here too."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from typing import Any, Callable

from agent_memory.sync.agent import published
from agent_memory.sync.engine import SessionReport
from agent_memory.outbox.survey import iso


class WatcherReport:
    def __init__(self, store_path: str, log) -> None:
        self.path = store_path
        self.log = log
        self.pid = os.getpid()
        self.started = iso()
        self.status = "starting"
        self.last_sync: dict[str, Any] | None = None
        self.last_success: str | None = None
        self.last_error: dict[str, Any] | None = None
        self.last_backfill: dict[str, Any] | None = None
        self.embed_error: dict[str, Any] | None = None
        self.backlog: dict[str, Any] | None = None
        self.agent: dict[str, Any] | None = None
        self.next_attempt: float | None = None  # wall-clock time of the next try, backing off
        self.totals = {"rounds": 0, "imported": 0, "events_applied": 0, "items_refused": 0,
                       "waiting": 0, "quarantined": 0, "errors": 0, "vectors_written": 0,
                       "answers": 0}
        self.last_publish = 0.0
        self._publishing = threading.Lock()  # the loop and a worker thread both publish
        self._worker: asyncio.Future | None = None  # the publication after a round
        self._again = False

    def account(self, reports: list[SessionReport], full: bool, seconds: float,
                extra_imported: int) -> int:
        """Count one round; returns how many items it moved (imported or applied)."""
        imported = sum(r.imported for r in reports) + extra_imported
        events = sum(r.events_applied for r in reports)
        refused = sum(len(r.failed) for r in reports)
        waiting = sum(len(r.waiting) for r in reports)
        quarantined = sum(len(r.quarantined) for r in reports)
        for key, value in (("imported", imported), ("events_applied", events),
                           ("items_refused", refused), ("waiting", waiting),
                           ("quarantined", quarantined), ("rounds", 1)):
            self.totals[key] += value
        if not reports and not full:
            return 0
        self.last_sync = {"at": iso(), "kind": "rescan" if full else "events",
                          "sessions": len(reports), "imported": imported,
                          "events_applied": events, "refused": refused, "waiting": waiting,
                          "quarantined": quarantined, "seconds": round(seconds, 3)}
        if imported or events or refused or quarantined:
            self.log.info("round", **self.last_sync)
        for report in reports:
            for item in report.failed:
                self.log.warning("refused", session_id=report.session_id, **item)
            for item in report.quarantined:
                self.log.warning("quarantined", session_id=report.session_id,
                                 **{k: v for k, v in item.items() if k != "detail"})
        return imported + events

    def publish_state(self, agent: dict[str, Any] | None, force_backlog: bool,
                      stopped_by: str | None = None, stopped: bool = False) -> None:
        """Publish now, with the agent's part (`agent`: None when it does not serve)."""
        if agent is not None:
            self.agent = {**agent, "serving": True}
        elif self.agent is not None:
            self.agent = {**self.agent, "serving": False}
        self.publish(force_backlog, stopped_by, stopped)

    def publish_soon(self, agent: Callable[[], "dict[str, Any] | None"],
                     stopped_by: Callable[[], "str | None"]) -> None:
        """Publish after a round in a worker thread, beside the loop (on the loop): the backlog
        survey and the fsyncs never hold up the next round or a command's vector. Asked again
        while one runs, it publishes once more when that one is done (the file always ends up
        current)."""
        if self._worker is not None and not self._worker.done():
            self._again = True
            return
        self._again = False
        self._worker = asyncio.ensure_future(asyncio.to_thread(
            lambda: self.publish_state(agent(), True, stopped_by())))

        def done(task: asyncio.Future) -> None:
            if not task.cancelled() and task.exception() is not None:
                self.log.warning("state_not_published", error=str(task.exception()))
            if self._again and stopped_by() is None:
                self.publish_soon(agent, stopped_by)
        self._worker.add_done_callback(done)

    async def published(self) -> None:
        """Wait for a publication in flight (on stop)."""
        if self._worker is not None:
            await asyncio.gather(self._worker, return_exceptions=True)

    def publish(self, force_backlog: bool, stopped_by: str | None = None,
                stopped: bool = False) -> None:
        with self._publishing:
            self._publish(force_backlog, stopped_by, stopped)

    def _publish(self, force_backlog: bool, stopped_by: str | None, stopped: bool) -> None:
        if force_backlog or self.backlog is None:
            try:
                from agent_memory.outbox.survey import backlog
                self.backlog = backlog(self.path)
            except OSError as exc:
                self.backlog = {"unavailable": str(exc)}
        next_attempt = None
        if self.next_attempt is not None and self.status == "backing_off":
            next_attempt = iso(self.next_attempt)
        state = {"pid": self.pid, "started": self.started, "updated": iso(),
                 "status": self.status, "store": self.path,
                 "last_sync": self.last_sync, "last_success": self.last_success,
                 "last_error": self.last_error, "next_attempt": next_attempt,
                 "backlog": self.backlog, "totals": dict(self.totals),
                 "embedder": {"last_backfill": self.last_backfill,
                              "last_error": self.embed_error},
                 "agent": self.agent}
        if stopped:
            state["stopped"] = iso()
            state["stop_reason"] = stopped_by
        try:
            published.write(self.path, state)
        except OSError as exc:
            self.log.warning("state_not_published", error=str(exc))
        self.last_publish = time.monotonic()

    def summary(self, reason: str | None) -> dict[str, Any]:
        return {"watching": False, "refused": False, "pid": self.pid, "started": self.started,
                "stopped": iso(), "reason": reason,
                **self.totals, "last_error": self.last_error, "backlog": self.backlog}
