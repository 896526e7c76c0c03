"""`agent-memory sync --watch`: the store drains by itself.

Life of a watcher:
- It takes the store's sync lock and keeps it until it exits (an flock: a kill -9 frees it). A
  second watcher finding the lock held by a watcher (the holder's pid is the pid the running
  watcher published) refuses and exits 0 naming it. A lock held by a one-shot `sync` or an
  inline forward of `write` is waited for: that holder finishes soon.
- `watchdog` reports new final-named `.msg`/`.ses`/`.emb` files in session directories (and
  hand-off tickets, see sync.handoff). Events are debounced: a round starts once no event came
  for `debounce` seconds, or `max_delay` after the first one, so what arrives together is
  forwarded together. A full rescan every `rescan` seconds catches whatever events missed (files
  written while no watcher ran, lost events, refused items to retry).
- A round runs the sync engine session by session (the same code as `sync`: ordered, batched,
  confirmed files moved to `.imported/`). One logger request is in flight at a time, so a logger
  that comes back is drained in batches, never flooded.
- The logger unreachable (or failing): no rounds for a capped, jittered, growing delay
  (x`backoff_factor` from `backoff_initial` up to `backoff_max`, equal jitter). Meanwhile a
  single cheap `health` request every `probe_interval` seconds tells when it is back; the
  drain then starts at once with a full round.
- Messages without a vector are embedded by `sync.vectors.backfill` in a worker thread, beside
  the rounds, with its own backoff when the embedder is unreachable.
- SIGTERM / SIGINT: the batch in flight finishes (its confirmed files move), then the watcher
  publishes its final state, releases the lock and returns its summary (exit 0). A second signal
  cancels the batch in flight: nothing is lost either way (an imported but unmoved file is
  imported again later and the logger answers the repeat as success).
- It publishes its state (`sync.watcher_state`) after every round: pid, started, status, last
  sync, last error, backlog.

Logs are structlog JSON lines on stderr; the caller prints the summary on stdout.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import signal
import time
from collections import OrderedDict
from typing import Any, Callable

from outbox import names
from outbox.contract import excerpts, is_valid_session_id
from outbox.store import IMPORTED, PENDING, QUARANTINED, Store
from sync import handoff, watcher_state
from sync.config import Config
from sync.engine import Limits, Outcome, SessionReport
from sync.failures import Failed, Refused, Unreachable, describe
from sync.lock import SyncLock
from sync.logger_link import RetryPolicy

# The watcher backs off by itself: each call tries twice, quickly, then the round gives up.
WATCH_POLICY = RetryPolicy(attempts=2, initial=0.05, maximum=0.3)
PROBE_POLICY = RetryPolicy(attempts=1)
_RECENT_ANSWERS = 4096


class WatchOptions:
    def __init__(self, *, debounce: float = 0.02, max_delay: float = 0.25,
                 rescan: float = 30.0, backoff_initial: float = 1.0, backoff_max: float = 30.0,
                 backoff_factor: float = 1.5, probe_interval: float = 1.0,
                 probe_timeout: float = 5.0, backfill: bool = True,
                 backfill_interval: float = 2.0, limits: Limits | None = None) -> None:
        self.debounce = max(0.0, debounce)
        self.max_delay = max(self.debounce, max_delay)
        self.rescan = max(0.1, rescan)
        self.backoff_initial = max(0.01, backoff_initial)
        self.backoff_max = max(self.backoff_initial, backoff_max)
        self.backoff_factor = max(1.0, backoff_factor)
        self.probe_interval = max(0.05, probe_interval)
        self.probe_timeout = probe_timeout
        self.backfill = backfill
        self.backfill_interval = backfill_interval
        self.limits = limits or Limits()


class _StopNow(Exception):
    """Raised from the engine's progress callback after a batch once a stop was asked."""


class Watcher:
    def __init__(self, store: Store, config: Config, options: WatchOptions | None = None,
                 log=None) -> None:
        if config.logger is None:
            raise ValueError("the watcher needs a logger (ailogger_client section)")
        self.store = store
        self.path = store.path
        self.config = config
        self.options = options or WatchOptions()
        if log is None:
            from sync.log import get_logger
            log = get_logger("agent-memory.watch")
        self.log = log
        self.pid = os.getpid()
        self.started = watcher_state.iso()
        self.stop_reason: str | None = None
        self.lock = SyncLock(self.path)
        # event bookkeeping (filled by the watchdog thread through the loop)
        self._dirty: set[str] = set()
        self._tickets_flag = False
        self._new_messages = False
        self._first_event: float | None = None
        self._last_event = 0.0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None
        self._main_task: asyncio.Task | None = None
        # logger link and backoff
        self._link = None
        self._failures = 0
        self._back_announced = False  # "logger_back" logged since the last failure
        self._retry_at: float | None = None
        self._next_probe = 0.0
        self._next_rescan = 0.0
        # embedding backfill
        self._backfill_task: asyncio.Future | None = None
        self._embed_failures = 0
        self._embed_retry_at = 0.0
        self._unembeddable: set[str] = set()  # texts the embedder refused: not sent again
        self._last_backfill = float("-inf")
        # what is published
        self.status = "starting"
        self.last_sync: dict[str, Any] | None = None
        self.last_success: str | None = None
        self.last_error: dict[str, Any] | None = None
        self.last_backfill: dict[str, Any] | None = None
        self.embed_error: dict[str, Any] | None = None
        self.backlog: dict[str, Any] | None = None
        self.totals = {"rounds": 0, "imported": 0, "events_applied": 0, "items_refused": 0,
                       "waiting": 0, "quarantined": 0, "errors": 0, "vectors_written": 0,
                       "answers": 0}
        self._recent: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._answers: handoff.Answers | None = None
        self._last_publish = 0.0
        self._round_imported = 0

    # =========================================================================== entry point ===
    def run(self) -> tuple[dict[str, Any], bool]:
        """Watch until a signal; returns (summary, ran). `ran` is False when another watcher
        holds the store (the summary then names its pid)."""
        previous = {sig: signal.signal(sig, self._on_signal)
                    for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            holder = self._take_lock()
            if holder is not None:
                return holder, False
            try:
                watcher_state.remove_stale_temporaries(self.path)
                self._publish(force_backlog=True)
                self.log.info("watcher_started", pid=self.pid, store=self.path,
                              rescan_s=self.options.rescan, debounce_s=self.options.debounce)
                try:
                    asyncio.run(self._main())
                except asyncio.CancelledError:
                    pass
                self.status = "stopped"
                self._publish(force_backlog=True, stopped=True)
            finally:
                if self._answers is not None:
                    self._answers.close()
                self.lock.release()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        summary = self._summary()
        self.log.info("watcher_stopped", **{k: v for k, v in summary.items()
                                            if k in ("reason", "rounds", "imported")})
        return summary, True

    def _on_signal(self, signum: int, _frame: Any) -> None:
        name = signal.Signals(signum).name
        loop = self._loop
        if self.stop_reason is None:
            self.stop_reason = name
            if loop is not None:
                loop.call_soon_threadsafe(self._wake_up)
        elif loop is not None and self._main_task is not None:
            loop.call_soon_threadsafe(self._main_task.cancel)  # second signal: stop now

    def _take_lock(self) -> dict[str, Any] | None:
        """Take the sync lock; a summary of the refusal when a watcher holds it."""
        announced = None
        while True:
            if self.lock.acquire(0.2):
                return None
            holder = self.lock.holder()
            watcher = watcher_state.watcher_pid(self.path, holder)
            if watcher is not None:
                self.log.warning("watcher_refused", reason="another watcher holds the store",
                                 holder_pid=watcher)
                return {"watching": False, "refused": True, "holder_pid": watcher,
                        "reason": f"another watcher (pid {watcher}) holds the sync lock of "
                                  "this store"}
            if self.stop_reason is not None:
                return {"watching": False, "refused": False, "holder_pid": holder,
                        "reason": f"stopped by {self.stop_reason} while waiting for the lock"}
            if holder != announced:
                announced = holder
                self.log.info("waiting_for_lock", holder_pid=holder,
                              reason="a one-shot sync or an inline forward holds the lock")
            deadline = time.monotonic() + 1.0
            while time.monotonic() < deadline and self.stop_reason is None:
                time.sleep(0.05)

    # ============================================================================ main loop ===
    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        self._main_task = asyncio.current_task()
        self._answers = handoff.Answers(self.path)
        observer = self._start_observer()
        try:
            # the fleet client's import (about 0.6 s) is paid now, not by the first hand-off
            try:
                await self._ensure_link()
            except Exception as exc:  # noqa: BLE001 - the first round reports and backs off
                self.log.warning("logger_link_not_ready", error=describe(exc)[:2000])
            await self._loop_forever()
        except asyncio.CancelledError:
            self.log.warning("stop_forced", reason="second signal: the batch in flight was "
                                                   "abandoned (it is imported again later)")
        finally:
            self.status = "stopping"
            logging.getLogger("watchdog").setLevel(logging.CRITICAL)
            observer.stop()
            if self._backfill_task is not None and not self._backfill_task.done():
                self.log.info("waiting_for_backfill")
                try:
                    await asyncio.shield(self._backfill_task)
                except BaseException:  # noqa: BLE001 - its outcome is logged by its callback
                    pass
            await self._close_link()
            await asyncio.to_thread(observer.join, 5.0)

    async def _loop_forever(self) -> None:
        opts = self.options
        self._next_rescan = time.monotonic()  # the first round is a full one
        while self.stop_reason is None:
            now = time.monotonic()
            if self._retry_at is not None and now < self._retry_at:
                # backing off: no rounds; one cheap probe per probe_interval
                if now >= self._next_probe:
                    if await self._probe():
                        self.log.info("logger_back", after_failures=self._failures)
                        self._back_announced = True
                        self._retry_at = now  # drain at once
                        continue
                    self._next_probe = time.monotonic() + opts.probe_interval
                await self._sleep(min(self._retry_at, self._next_probe) - time.monotonic())
                continue
            if self._retry_at is not None or now >= self._next_rescan:
                await self._round(full=True)
                continue
            if self._dirty or self._tickets_flag:
                ready = min(self._last_event + opts.debounce,
                            (self._first_event or now) + opts.max_delay)
                if now < ready:
                    await self._sleep(ready - now)
                    continue
                await self._round(full=False)
                continue
            self._maybe_backfill(force=False)
            await self._sleep(self._next_rescan - now)

    async def _sleep(self, seconds: float) -> None:
        """Sleep up to `seconds`, woken early by a file event or a stop."""
        if seconds <= 0 or self.stop_reason is not None:
            return
        self._wake.clear()
        try:
            await asyncio.wait_for(self._wake.wait(), seconds)
        except asyncio.TimeoutError:
            pass

    def _wake_up(self) -> None:
        if self._wake is not None:
            self._wake.set()

    # ======================================================================== file events ===
    def _start_observer(self):
        from watchdog.events import (DirCreatedEvent, DirMovedEvent, FileCreatedEvent,
                                     FileMovedEvent, FileSystemEventHandler)
        from watchdog.observers import Observer

        watcher = self
        loop = self._loop

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event) -> None:  # the observer's thread
                path = getattr(event, "dest_path", "") or event.src_path
                found = watcher._classify(os.fsdecode(path), event.is_directory)
                if found is not None:
                    loop.call_soon_threadsafe(watcher._note_event, *found)

        observer = Observer()
        observer.schedule(Handler(), self.path, recursive=True,
                          event_filter=[FileCreatedEvent, FileMovedEvent, DirCreatedEvent,
                                        DirMovedEvent])
        observer.daemon = True
        observer.start()
        return observer

    def _classify(self, path: str, is_directory: bool) -> tuple[str, str | None] | None:
        """("session", id) for a new final file or session directory in the pending area,
        ("ticket", None) for a new hand-off ticket, None for anything else (our own moves to
        `.imported/`, temporaries, state files)."""
        rel = os.path.relpath(path, self.path)
        parts = rel.split(os.sep)
        if len(parts) == 1 and is_directory and is_valid_session_id(parts[0]):
            return "session", parts[0]
        if len(parts) != 2 or is_directory:
            return None
        if parts[0] == handoff.HANDOFF_DIR and parts[1].endswith(handoff.WAIT_EXT):
            return "ticket", None
        if is_valid_session_id(parts[0]) and names.is_final(parts[1]):
            return ("message" if parts[1].endswith(names.MESSAGE_EXT) else "session"), parts[0]
        return None

    def _note_event(self, kind: str, session_id: str | None) -> None:  # the loop's thread
        now = time.monotonic()
        if kind == "ticket":
            self._tickets_flag = True
        else:
            self._dirty.add(session_id)
            if kind == "message":
                self._new_messages = True
        if self._first_event is None:
            self._first_event = now
        self._last_event = now
        self._wake_up()

    # ============================================================================== rounds ===
    async def _round(self, full: bool) -> None:
        started = time.monotonic()
        if full:
            session_ids = self.store.pending_session_ids()
            self._dirty.clear()
        else:
            session_ids = sorted(self._dirty)
            self._dirty.clear()
        self._tickets_flag = False
        self._first_event = None
        self.status = "syncing"
        self._round_imported = 0
        reports: list[SessionReport] = []
        synced: set[str] = set()
        error: BaseException | None = None
        try:
            if session_ids:
                link = await self._ensure_link()
                from sync.engine import SyncEngine
                from sync.state import SyncState
                state = SyncState(self.path)
                for warning in state.warnings:
                    self.log.warning("sync_state", detail=warning)
                engine = SyncEngine(self.store, link, state, self.options.limits,
                                    self._progress)
                for session_id in session_ids:
                    if self.stop_reason is not None:
                        break
                    report = await engine.sync_session(session_id)
                    reports.append(report)
                    synced.add(session_id)
                    self._remember(report)
                    self._round_imported = 0
        except _StopNow:
            pass
        except (Unreachable, Failed, Refused) as exc:
            error = exc
        except Exception as exc:  # a bug or an OS error: logged, backed off, never a crash loop
            self.log.exception("round_failed")
            error = exc
        finally:
            self._account(reports, full, time.monotonic() - started)
        if error is None:
            try:
                await self._answer_tickets(synced)
            except (Unreachable, Failed, Refused) as exc:
                error = exc
        if error is not None:
            await self._failed(error)
        else:
            if self._failures and not self._back_announced:
                # the backoff ran out before a probe saw the logger answer: the round did
                self.log.info("logger_back", after_failures=self._failures)
            if self._failures:
                self.log.info("logger_drained", after_failures=self._failures)
            self._failures = 0
            self._retry_at = None
            self.last_success = watcher_state.iso()
            self.status = "idle"
        if full:
            self._next_rescan = time.monotonic() + self.options.rescan
            try:
                self._answers.collect_garbage()
            except OSError:
                pass
        self._maybe_backfill(force=full)
        self._publish(force_backlog=True)

    def _progress(self, event: str, fields: dict[str, Any]) -> None:
        """The engine's callback after each committed batch."""
        self._round_imported = fields.get("imported", 0)
        self.log.info(event, **fields)
        if time.monotonic() - self._last_publish > 1.0:
            self._publish(force_backlog=False)
        if self.stop_reason is not None:
            raise _StopNow()

    def _account(self, reports: list[SessionReport], full: bool, seconds: float) -> None:
        imported = sum(r.imported for r in reports) + self._round_imported
        events = sum(r.events_applied for r in reports)
        refused = sum(len(r.failed) for r in reports)
        waiting = sum(len(r.waiting) for r in reports)
        quarantined = sum(len(r.quarantined) for r in reports)
        self.totals["rounds"] += 1
        self.totals["imported"] += imported
        self.totals["events_applied"] += events
        self.totals["items_refused"] += refused
        self.totals["waiting"] += waiting
        self.totals["quarantined"] += quarantined
        self._round_imported = 0
        if not reports and not full:
            return
        self.last_sync = {"at": watcher_state.iso(), "kind": "rescan" if full else "events",
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

    async def _failed(self, exc: BaseException) -> None:
        opts = self.options
        self._failures += 1
        self._back_announced = False
        self.totals["errors"] += 1
        base = min(opts.backoff_max,
                   opts.backoff_initial * opts.backoff_factor ** (self._failures - 1))
        delay = base / 2 + random.uniform(0, base / 2)  # equal jitter: never 0, never > base
        now = time.monotonic()
        self._retry_at = now + delay
        self._next_probe = now + min(opts.probe_interval, delay)
        kind = ("unreachable" if isinstance(exc, Unreachable) else
                "refused" if isinstance(exc, Refused) else "failed")
        message = describe(exc) if not isinstance(exc, Unreachable) else str(exc)
        self.last_error = {"at": watcher_state.iso(), "kind": kind, "message": message[:2000],
                           "consecutive_failures": self._failures,
                           "retry_in_s": round(delay, 3)}
        self.status = "backing_off"
        self.log.warning("logger_" + kind, error=message[:2000], failures=self._failures,
                         retry_in_s=round(delay, 3))
        await self._close_link()

    # ======================================================================= logger link ===
    async def _ensure_link(self):
        if self._link is None:
            from sync.logger_link import LoggerLink
            link = LoggerLink(self.config, WATCH_POLICY)
            await link.__aenter__()
            self._link = link
        return self._link

    async def _close_link(self) -> None:
        link, self._link = self._link, None
        if link is not None:
            await link.__aexit__(None, None, None)

    async def _probe(self) -> bool:
        """One `health` request: does the logger answer at all?"""
        from sync.logger_link import LoggerLink
        try:
            async with LoggerLink(self.config, PROBE_POLICY) as link:
                await asyncio.wait_for(link.health(), self.options.probe_timeout)
        except Refused:
            return True  # it answered
        except (Unreachable, Failed, asyncio.TimeoutError, OSError):
            return False
        except Exception:  # noqa: BLE001 - anything else: not back yet
            return False
        return True

    # ============================================================================ hand-off ===
    def _remember(self, report: SessionReport) -> None:
        """Keep recent outcomes of messages: tickets may arrive after the round."""
        for name, outcome in report.outcomes.items():
            parsed = names.parse_final_name(name)
            if parsed is None:
                continue
            message_id = parsed[1]  # the item id: a message's, or a session event's
            if outcome.status == Outcome.CONFIRMED:
                answer = {"status": "confirmed", "answer": outcome.info.get("answer")}
            elif outcome.status == Outcome.WAITING:
                answer = {"status": "waiting", "waits_for": outcome.info.get("waits_for")}
            elif outcome.status in (Outcome.REFUSED, Outcome.QUARANTINED):
                answer = {"status": "refused", "where": outcome.status,
                          "code": outcome.info.get("code") or "REFUSED",
                          "statement": outcome.info.get("statement")
                          or outcome.info.get("reason")}
            else:
                continue
            self._recent[message_id] = answer
            self._recent.move_to_end(message_id)
        while len(self._recent) > _RECENT_ANSWERS:
            self._recent.popitem(last=False)

    async def _answer_tickets(self, synced: set[str]) -> None:
        """Answer every waiting ticket whose item this watcher has settled."""
        waiting = self._answers.waiting()
        for message_id, ticket in waiting.items():
            answer = self._recent.get(message_id)
            session_id, name = ticket["session_id"], ticket["file"]
            if not is_valid_session_id(session_id) or not names.is_final(name):
                continue
            if answer is None:
                where = self.store.area_of(session_id, name)
                if where == PENDING:
                    if session_id not in synced:
                        self._note_event("session", session_id)
                    continue
                if where == IMPORTED and not name.endswith(names.MESSAGE_EXT):
                    answer = {"status": "confirmed", "answer": None}  # an event: no numbers
                elif where == IMPORTED:
                    link = await self._ensure_link()
                    entry = await link.call("message_get", message_id=message_id)
                    answer = {"status": "confirmed", "answer": _append_answer(entry)}
                elif where == QUARANTINED:
                    answer = {"status": "refused", "where": "quarantined",
                              "code": "QUARANTINED",
                              "statement": "the message was set aside in .quarantine/"}
                else:
                    continue
                self._recent[message_id] = answer
            if answer["status"] == "confirmed" and name.endswith(names.MESSAGE_EXT) \
                    and not _has_number(answer["answer"]):
                link = await self._ensure_link()
                entry = await link.call("message_get", message_id=message_id)
                answer = {"status": "confirmed",
                          "answer": _append_answer(entry, answer["answer"])}
                self._recent[message_id] = answer
            if self._answers.answer(message_id, answer):
                self.totals["answers"] += 1

    # ============================================================================ backfill ===
    def _maybe_backfill(self, force: bool) -> None:
        opts = self.options
        if not opts.backfill or self.config.embedder is None or self.stop_reason is not None:
            return
        if self._backfill_task is not None and not self._backfill_task.done():
            return
        now = time.monotonic()
        if now < self._embed_retry_at:
            return
        if not force and not (self._new_messages
                              and now - self._last_backfill >= opts.backfill_interval):
            return
        from sync.vectors import backfill
        self._new_messages = False
        self._last_backfill = now
        self._backfill_task = asyncio.ensure_future(
            asyncio.to_thread(self._backfill_blocking, backfill))
        self._backfill_task.add_done_callback(self._backfill_done)

    def _backfill_blocking(self, backfill: Callable[..., dict[str, Any]]) -> dict[str, Any]:
        def progress(*_args: Any, **_kwargs: Any) -> None:
            if self.stop_reason is not None:
                raise _StopNow()
        return backfill(self.store, self.config, progress=progress,
                        skip=set(self._unembeddable))

    def _backfill_done(self, task: asyncio.Future) -> None:
        opts = self.options
        try:
            result = task.result()
        except _StopNow:
            return
        except asyncio.CancelledError:
            return
        except Exception as exc:  # noqa: BLE001 - Unreachable or anything else: back off
            self._embed_failures += 1
            base = min(opts.backoff_max,
                       opts.backoff_initial * opts.backoff_factor ** (self._embed_failures - 1))
            delay = base / 2 + random.uniform(0, base / 2)
            self._embed_retry_at = time.monotonic() + delay
            kind = "unreachable" if isinstance(exc, Unreachable) else "failed"
            self.embed_error = {"at": watcher_state.iso(), "kind": kind,
                                "message": (str(exc) or type(exc).__name__)[:2000],
                                "retry_in_s": round(delay, 3)}
            self.log.warning("embedder_" + kind, error=self.embed_error["message"],
                             retry_in_s=round(delay, 3))
            return
        self._embed_failures = 0
        self.embed_error = None
        result = dict(result) if isinstance(result, dict) else {"result": result}
        self._unembeddable.update(item["message_id"] for item in result.get("unembeddable") or ())
        written = int(result.get("written", 0) or 0)
        self.totals["vectors_written"] += written
        self.last_backfill = {"at": watcher_state.iso(), **result}
        if written or result.get("mismatched") or result.get("unembeddable"):
            self.log.info("backfill", **result)

    # ============================================================================= publish ===
    def _publish(self, force_backlog: bool, stopped: bool = False) -> None:
        if force_backlog or self.backlog is None:
            try:
                self.backlog = watcher_state.backlog(self.path)
            except OSError as exc:
                self.backlog = {"unavailable": str(exc)}
        next_attempt = None
        if self._retry_at is not None and self.status == "backing_off":
            next_attempt = watcher_state.iso(time.time() + max(0.0, self._retry_at
                                                              - time.monotonic()))
        state = {"pid": self.pid, "started": self.started, "updated": watcher_state.iso(),
                 "status": self.status, "store": self.path,
                 "last_sync": self.last_sync, "last_success": self.last_success,
                 "last_error": self.last_error, "next_attempt": next_attempt,
                 "backlog": self.backlog, "totals": dict(self.totals),
                 "embedder": {"last_backfill": self.last_backfill,
                              "last_error": self.embed_error}}
        if stopped:
            state["stopped"] = watcher_state.iso()
            state["stop_reason"] = self.stop_reason
        try:
            watcher_state.write(self.path, state)
        except OSError as exc:
            self.log.warning("state_not_published", error=str(exc))
        self._last_publish = time.monotonic()

    def _summary(self) -> dict[str, Any]:
        return {"watching": False, "refused": False, "pid": self.pid, "started": self.started,
                "stopped": watcher_state.iso(), "reason": self.stop_reason,
                **self.totals, "last_error": self.last_error, "backlog": self.backlog}


def _has_number(answer: Any) -> bool:
    return isinstance(answer, dict) and "sequence_number" in answer


def _append_answer(entry: Any, known: dict[str, Any] | None = None) -> dict[str, Any]:
    """The append answer's five facts from a `message_get` entry (and what the import said)."""
    entry = entry if isinstance(entry, dict) else {}
    known = known or {}
    audience = entry.get("audience") or known.get("audience")
    if audience is None and "receiver_kind" in entry:  # a messages_read entry carries these
        audience = {"receiver_kind": entry["receiver_kind"],
                    "receiver_identity": entry.get("receiver_identity")}
    answer = {"message_id": entry.get("message_id", known.get("message_id")),
              "sequence_number": entry.get("sequence_number"), "audience": audience}
    if known.get("text_head") is not None:
        answer["text_head"] = known["text_head"]
        answer["text_tail"] = known.get("text_tail")
    elif isinstance(entry.get("text"), str):
        answer.update(excerpts(entry["text"]))
    return answer


def install_log_bridge(log) -> None:
    """Route the standard library's log records (watchdog, the fleet clients) through structlog,
    so stderr carries JSON lines only."""

    class Bridge(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            try:
                method = getattr(log, record.levelname.lower(), log.warning)
                method("library_log", logger=record.name, message=record.getMessage())
            except Exception:  # noqa: BLE001 - logging must never break the watcher
                pass

    root = logging.getLogger()
    root.handlers[:] = [Bridge()]
    root.setLevel(logging.WARNING)


__all__ = ["Watcher", "WatchOptions", "install_log_bridge"]
