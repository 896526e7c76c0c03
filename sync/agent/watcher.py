"""`agent-memory sync --watch`: the store drains by itself, and the project's agent answers
the CLI.

Life of a watcher. This module is the loop and the scheduler only; the agent's socket
(sync.agent_server), the answers to commands waiting for their files (sync.handoff), the vector
backfill (sync.backfill_runner), the file events (sync.file_events), the backoff (sync.backoff)
and the published state (sync.watcher_report) live in their own modules.
- It takes the store's sync lock and keeps it until it exits (an flock: a kill -9 frees it). A
  second watcher finding the lock held by a watcher (the holder's pid is the pid the running
  watcher published) refuses and exits 0 naming it. A lock held by a one-shot `sync` or an
  inline forward of `write` is waited for: that holder finishes soon.
- Holding the lock, it serves as the project's agent when given a server (cli.watch_cmd does):
  CLI commands ask it over a Unix socket instead of importing the fleet clients themselves.
  `handoff.deliver()` is how a served `write` or `session` command learns what became of its
  file.
- `watchdog` reports new final-named `.msg`/`.ses`/`.emb` files in session directories. Events
  are debounced: a round starts once no event came for `debounce` seconds, or `max_delay` after
  the first one, so what arrives together is forwarded together; a file a command waits for
  starts its round at once. A full rescan every `rescan` seconds catches whatever events missed
  (files written while no watcher ran, lost events, refused items to retry).
- A round runs the sync engine session by session (the same code as `sync`: ordered, batched,
  confirmed files moved to `.imported/`). One logger request is in flight at a time, so a logger
  that comes back is drained in batches, never flooded.
- The logger unreachable (or failing): no rounds for a capped, jittered, growing delay
  (x`backoff_factor` from `backoff_initial` up to `backoff_max`, equal jitter). Meanwhile a
  single cheap `health` request every `probe_interval` seconds tells when it is back; the
  drain then starts at once with a full round. The logger refusing this configuration's
  credentials is no outage: retrying will not fix it, so there are no probes and the delay
  is long (x2 from `credentials_backoff_initial`, 60 s, up to `credentials_backoff_max`, 15
  min); a changed configuration (a certificate renewed in place included) is tried at once. A served write during the backoff is answered
  "not delivered yet" at once, or tries a round itself when a probe is due.
- Messages without a vector are embedded in a worker thread, beside the rounds, with their own
  backoff when the embedder is unreachable.
- With `idle_exit` (an autostarted agent has it), it exits once it has served no request and
  moved no file for `idle_exit` seconds, even with files pending (a logger down for the
  weekend, or a typo in its host, must not keep an agent alive for ever: the next command or
  cron's `sync` forwards them, or starts a new agent); a watcher started by hand or by systemd
  never idles out. Any watcher exits when its store directory is removed.
- It follows its configuration on disk (sync.identity): about once a second it stats the
  document and the files it names; a change of content is read and validated. An autostarted
  agent then hands over (it stops, and the next command runs with the new document, then
  starts a new agent); a hand-started or systemd watcher reloads in place: new links, the
  backoff reset, a line in the log. A document that no longer validates is logged and the
  one in use is kept until a valid one appears.
- SIGTERM / SIGINT: the batch in flight finishes (its confirmed files move), then the watcher
  publishes its final state, releases the lock and returns its summary (exit 0). A second signal
  cancels the batch in flight: nothing is lost either way (an imported but unmoved file is
  imported again later and the logger answers the repeat as success).

Logs are structlog JSON lines on stderr; the caller prints the summary on stdout.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import threading
import time
from typing import Any, Callable

from agent_memory.outbox.store import Store
from agent_memory.sync.agent import file_events, published
from agent_memory.sync import identity
from agent_memory.sync.agent.backfill import VectorBackfill
from agent_memory.sync.agent.backoff import Backoff
from agent_memory.sync.config import Config
from agent_memory.sync.engine import Limits, SessionReport
from agent_memory.sync.links.failures import Credentials, Failed, Refused, Unreachable, describe, pending_reason
from agent_memory.sync.agent.handoff import Handoff
from agent_memory.sync.lock import SyncLock
from agent_memory.sync.links.logger import RetryPolicy
from agent_memory.sync.agent.report import WatcherReport
from agent_memory.outbox.survey import iso

PROBE_POLICY = RetryPolicy(attempts=1)
DEFAULT_IDLE_EXIT = 900.0
CONFIG_CHECK_S = 1.0  # how often the configuration's files are stat'ed for a change
NOTED_FOR_S = 30.0  # how long a file's first announcement makes a second one no news


class WatchOptions:
    def __init__(self, *, debounce: float = 0.02, max_delay: float = 0.25,
                 rescan: float = 30.0, backoff_initial: float = 1.0, backoff_max: float = 30.0,
                 backoff_factor: float = 1.5, probe_interval: float = 1.0,
                 probe_timeout: float = 5.0, backfill: bool = True,
                 backfill_interval: float = 2.0, limits: Limits | None = None,
                 idle_exit: float | None = None, autostarted: bool = False,
                 credentials_backoff_initial: float = 60.0,
                 credentials_backoff_max: float = 900.0) -> None:
        self.credentials_backoff_initial = max(0.01, credentials_backoff_initial)
        self.credentials_backoff_max = max(self.credentials_backoff_initial,
                                           credentials_backoff_max)
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
        self.idle_exit = idle_exit if idle_exit and idle_exit > 0 else None  # None: never
        self.autostarted = autostarted  # started by a CLI command, not by hand or systemd


class _StopNow(Exception):
    """Raised from the engine's progress callback after a batch once a stop was asked."""


class Watcher:
    def __init__(self, store: Store, config: Config, options: WatchOptions | None = None,
                 log=None, server_factory: Callable[["Watcher"], Any] | None = None) -> None:
        if config.logger is None:
            raise ValueError("the watcher needs a logger (ailogger_client section)")
        self.store = store
        self.path = store.path
        self.config = config
        self.identity = identity.of(self.path, config)
        self._config_mark = identity.signature(config)
        self._config_rejected: tuple | None = None  # the mark of a document that did not load
        self._following = threading.Lock()  # the loop and request threads both follow it
        self._links_stale = False  # the configuration changed: reopen the links between rounds
        self._next_config_check = 0.0
        self.options = options or WatchOptions()
        if log is None:
            from agent_memory.sync.log import get_logger
            log = get_logger("agent-memory.watch")
        self.log = log
        self.pid = os.getpid()
        self.stop_reason: str | None = None
        self.lock = SyncLock(self.path)
        self.report = WatcherReport(self.path, log)
        self._server_factory = server_factory
        self._server = None
        self._store_inode = os.stat(self.path).st_ino
        # event bookkeeping (filled by the watchdog thread through the loop)
        self._dirty: set[str] = set()
        self._noted: dict[str, float] = {}  # file names announced lately (one round each)
        self._urgent = False  # a command waits for a file: no debounce
        self._first_event: float | None = None
        self._last_event = 0.0
        self._last_activity = time.monotonic()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None
        self._main_task: asyncio.Task | None = None
        self._ready = threading.Event()  # the loop runs: deliver() may use it
        self.engine_lock: asyncio.Lock | None = None  # one round (or vector write) at a time
        self._publishing: asyncio.Future | None = None  # the state written after a round
        self._publish_again = False
        # the fleet links (one pool for the rounds and the commands served) and the backoff
        from agent_memory.sync.links.resident import Pool
        self.pool = Pool()
        self._backoff = Backoff(self.options.backoff_initial, self.options.backoff_max,
                                self.options.backoff_factor)
        self._credentials_backoff = Backoff(self.options.credentials_backoff_initial,
                                            self.options.credentials_backoff_max, 2.0)
        self._last_failure: BaseException | None = None
        self._back_announced = False  # "logger_back" logged since the last failure
        self._retry_at: float | None = None
        self._next_probe = 0.0
        self._next_rescan = 0.0
        self.backfill = VectorBackfill(store, config, self.options, self.report, log,
                                       lambda: self.stop_reason is not None)
        self.handoff = Handoff(self)
        self._round_imported = 0

    # =========================================================================== entry point ===
    def run(self) -> tuple[dict[str, Any], bool]:
        """Watch until a signal (or idle, or a stop request); returns (summary, ran). `ran` is
        False when another watcher holds the store (the summary then names its pid)."""
        previous = {sig: signal.signal(sig, self._on_signal)
                    for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            holder = self._take_lock()
            if holder is not None:
                return holder, False
            try:
                from agent_memory.outbox.cleanup import remove_orphan_temporaries
                remove_orphan_temporaries(self.store)
                self._start_server()  # at once: a command must never find the lock without it
                self.report.publish(force_backlog=True)
                self.log.info("watcher_started", pid=self.pid, store=self.path,
                              rescan_s=self.options.rescan, debounce_s=self.options.debounce,
                              idle_exit_s=self.options.idle_exit)
                try:
                    asyncio.run(self._main())
                except asyncio.CancelledError:
                    pass
                self.report.status = "stopped"
                self._publish(force_backlog=True, stopped=True)
            finally:
                self._stop_server()
                self.lock.release()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        summary = self.report.summary(self.stop_reason)
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

    def request_stop(self, reason: str) -> None:
        """Stop as on SIGTERM (thread-safe: the agent's `stop` request)."""
        if self.stop_reason is None:
            self.stop_reason = reason
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._wake_up)

    def _take_lock(self) -> dict[str, Any] | None:
        """Take the sync lock; a summary of the refusal when a watcher holds it."""
        announced = None
        while True:
            if self.lock.acquire(0.2, self.identity):
                return None
            holder = self.lock.holder()
            watcher = published.watcher_pid(self.path, holder)
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

    # ========================================================================= the agent ===
    def _start_server(self) -> None:
        if self._server_factory is None:
            return
        try:
            self._server = self._server_factory(self)
            self._server.start()
        except Exception as exc:  # noqa: BLE001 - the watcher still drains; CLIs go inline
            self._server = None
            self.log.warning("agent_not_serving", error=f"{type(exc).__name__}: {exc}")
            return
        self.log.info("agent_serving", socket=self._server.path)

    def _stop_server(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.stop()

    def touch(self) -> None:
        """A request came: the idle clock starts again (thread-safe enough: one float)."""
        self._last_activity = time.monotonic()

    def serving_loop(self, timeout: float) -> asyncio.AbstractEventLoop | None:
        """The running loop, once ready (waiting up to `timeout` for a starting watcher); None
        when stopping (thread-safe: the agent's request threads call it)."""
        self._ready.wait(timeout)
        loop = self._loop
        if loop is None or self.stop_reason is not None or not self._ready.is_set():
            return None
        return loop

    def wants_round(self, kind: str, session_id: str, name: str, urgent: bool) -> None:
        """A command appended the file `name` of `session_id` (on the loop): it joins the next
        round, which starts at once, without debounce, when the command waits for it. The
        watchdog event of the same file is the same news: one round, not two."""
        self._note_event(kind, session_id, name)
        if urgent:
            self._urgent = True
            self._wake_up()

    def backing_off(self) -> str | None:
        """Why no round is tried now (the logger failed and no probe is due yet): a command
        that waits is answered at once. None when a round may run; a due probe becomes that
        round (on the loop)."""
        now = time.monotonic()
        if self._retry_at is not None and now < self._retry_at:
            if now < self._next_probe:
                failure = self._last_failure
                return pending_reason(failure) if isinstance(failure, Unreachable) else \
                    f"the logger failed: {(self.report.last_error or {}).get('message', '')}"
            self._retry_at = now
        return None

    # ============================================================================ main loop ===
    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        self.engine_lock = asyncio.Lock()
        self._main_task = asyncio.current_task()
        loop = self._loop
        self.pool.attach(loop)
        observer = file_events.start_observer(
            self.path, lambda kind, session_id, name: loop.call_soon_threadsafe(
                self._note_event, kind, session_id, name))
        try:
            # the fleet client's import (about 0.6 s) is paid now, not by the first request
            try:
                await self.ensure_link()
            except Exception as exc:  # noqa: BLE001 - the first round reports and backs off
                self.log.warning("logger_link_not_ready", error=describe(exc)[:2000])
            self._ready.set()
            self._publish(force_backlog=True)
            await self._loop_forever()
        except asyncio.CancelledError:
            self.log.warning("stop_forced", reason="second signal: the batch in flight was "
                                                   "abandoned (it is imported again later)")
        finally:
            self.report.status = "stopping"
            self._stop_server()
            self.handoff.stopping()
            logging.getLogger("watchdog").setLevel(logging.CRITICAL)
            observer.stop()
            await self.handoff.finish()
            await self.backfill.finish()
            if self._publishing is not None:
                await asyncio.gather(self._publishing, return_exceptions=True)
            await self.pool.aclose()
            self.pool.detach()
            await asyncio.to_thread(observer.join, 5.0)

    async def _loop_forever(self) -> None:
        opts = self.options
        self._next_rescan = time.monotonic()  # the first round is a full one
        while self.stop_reason is None:
            now = time.monotonic()
            if now >= self._next_config_check:
                self._next_config_check = now + CONFIG_CHECK_S
                self.follow_config()
                if self.stop_reason is not None:
                    break
            if self._links_stale:
                await self._reopen_links()
            if self._retry_at is not None and now < self._retry_at:
                # backing off: no rounds; one cheap probe per probe_interval
                if self._idle(now):
                    self._idle_exit()
                    break
                if now >= self._next_probe:
                    if await self._probe():
                        self.log.info("logger_back", after_failures=self._backoff.failures)
                        self._back_announced = True
                        self._retry_at = now  # drain at once
                        continue
                    self._next_probe = time.monotonic() + opts.probe_interval
                await self._sleep(min(self._retry_at, self._next_probe, self._next_config_check,
                                      self._idle_at()) - time.monotonic())
                continue
            if self._retry_at is not None or now >= self._next_rescan:
                await self._round(full=True)
                continue
            if self._dirty:
                ready = min(self._last_event + opts.debounce,
                            (self._first_event or now) + opts.max_delay)
                if now < ready and not self._urgent:
                    await self._sleep(ready - now)
                    continue
                await self._round(full=False)
                continue
            if self._idle(now):
                self._idle_exit()
                break
            self.backfill.maybe_start(force=False)
            await self._sleep(min(self._next_rescan, self._next_config_check, self._idle_at())
                              - now)

    def _idle(self, now: float) -> bool:
        """No request served and no file moved for `idle_exit` seconds (pending files or not:
        they stay pending for the next command, agent or cron `sync`)."""
        return now >= self._idle_at() and not self.backfill.running()

    def _idle_at(self) -> float:
        idle_exit = self.options.idle_exit
        return float("inf") if idle_exit is None else self._last_activity + idle_exit

    def _idle_exit(self) -> None:
        self.stop_reason = "idle"
        try:
            pending = self.store.has_pending()
        except OSError:
            pending = None
        self.log.info("agent_idle_exit", idle_exit_s=self.options.idle_exit,
                      left_pending=pending)

    def _store_removed(self) -> bool:
        try:
            return os.stat(self.path).st_ino != self._store_inode
        except FileNotFoundError:
            return True
        except OSError:
            return False

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
    def _note_event(self, kind: str, session_id: str,
                    name: str | None) -> None:  # the loop's thread
        now = time.monotonic()
        if name is not None:
            # A file is announced twice (its watchdog event, and the command that wrote it
            # asking the agent): the second is no news. The round that took the first started
            # after the file was linked, so it saw the file.
            for old in [n for n, at in self._noted.items() if now - at > NOTED_FOR_S]:
                del self._noted[old]
            if name in self._noted:
                return
            self._noted[name] = now
        self._dirty.add(session_id)
        if kind == "message":
            self.backfill.note_new_message()
        if self._first_event is None:
            self._first_event = now
        self._last_event = now
        self._wake_up()

    # ============================================================================== rounds ===
    async def _round(self, full: bool) -> None:
        async with self.engine_lock:
            await self._round_locked(full)

    async def _round_locked(self, full: bool) -> None:
        started = time.monotonic()
        if full:
            if self._store_removed():
                self.stop_reason = "store removed"
                self.log.warning("store_removed", store=self.path)
                return
            from agent_memory.sync.engine import tidy
            for done in tidy(self.store):
                event = done.pop("event")
                done.pop("message")
                (self.log.info if event == "orphan_temporaries_removed" else
                 self.log.warning)(event, **done)
            session_ids = self.store.pending_session_ids()
            self._dirty.clear()
        else:
            session_ids = sorted(self._dirty)
            self._dirty.clear()
        self._urgent = False
        self._first_event = None
        self.report.status = "syncing"
        self._round_imported = 0
        reports: list[SessionReport] = []
        error: BaseException | None = None
        try:
            if session_ids:
                link = await self.ensure_link()
                from agent_memory.sync.engine import SyncEngine
                engine = SyncEngine.for_store(self.store, link, self.options.limits,
                                              self._progress)
                for warning in engine.state.warnings:
                    self.log.warning("sync_state", detail=warning)
                for session_id in session_ids:
                    if self.stop_reason is not None:
                        break
                    report = await engine.sync_session(session_id)
                    reports.append(report)
                    self.report.totals["answers"] += self.handoff.settle(report)
                    self._round_imported = 0
        except _StopNow:
            pass
        except (Unreachable, Failed, Refused) as exc:
            error = exc
        except Exception as exc:  # a bug or an OS error: logged, backed off, never a crash loop
            self.log.exception("round_failed")
            error = exc
        finally:
            moved = self.report.account(reports, full, time.monotonic() - started,
                                        self._round_imported)
            self._round_imported = 0
            if moved:
                self.touch()
        if error is not None:
            self.handoff.round_failed(error)
            await self._failed(error)
        else:
            if self._backoff.failures and not self._back_announced:
                # the backoff ran out before a probe saw the logger answer: the round did
                self.log.info("logger_back", after_failures=self._backoff.failures)
            if self._backoff.failures:
                self.log.info("logger_drained", after_failures=self._backoff.failures)
            self._backoff.reset()
            self._credentials_backoff.reset()
            self._last_failure = None
            self._retry_at = None
            self.report.last_success = iso()
            self.report.status = "idle"
        if full:
            self._next_rescan = time.monotonic() + self.options.rescan
        self.backfill.maybe_start(force=full)
        self._publish_soon()

    def _progress(self, event: str, fields: dict[str, Any]) -> None:
        """The engine's callback after each committed batch."""
        self._round_imported = fields.get("imported", 0)
        self.log.info(event, **fields)
        if time.monotonic() - self.report.last_publish > 1.0:
            self._publish(force_backlog=False)
        if self.stop_reason is not None:
            raise _StopNow()

    async def _failed(self, exc: BaseException) -> None:
        credentials = isinstance(exc, Credentials)
        backoff = self._credentials_backoff if credentials else self._backoff
        delay = backoff.failed()
        self._last_failure = exc
        self._back_announced = False
        self.report.totals["errors"] += 1
        now = time.monotonic()
        self._retry_at = now + delay
        # no probes while credentials are refused: a probe would only be refused as well
        self._next_probe = self._retry_at if credentials else \
            now + min(self.options.probe_interval, delay)
        self.report.next_attempt = time.time() + delay
        kind = ("credentials" if credentials else "unreachable" if isinstance(exc, Unreachable)
                else "refused" if isinstance(exc, Refused) else "failed")
        message = describe(exc) if not isinstance(exc, Unreachable) else str(exc)
        self.report.last_error = {"at": iso(), "kind": kind,
                                  "message": message[:2000],
                                  "consecutive_failures": backoff.failures,
                                  "retry_in_s": round(delay, 3)}
        if credentials:
            from agent_memory.sync.links.failures import FIXES
            self.report.last_error.update(credentials=exc.kind, fix=FIXES.get(exc.kind))
        self.report.status = "backing_off"
        self.log.warning("logger_" + kind, error=message[:2000],
                         failures=backoff.failures, retry_in_s=round(delay, 3))
        await self._close_link()

    # ====================================================================== configuration ===
    def follow_config(self) -> bool:
        """Has the configuration's content changed on disk since it was read? (thread-safe:
        the loop calls it about once a second, the agent's request threads when a command
        brings another digest of the same document.) An autostarted agent then hands over (it
        stops); a hand-started one takes the new document at once (`config`, `identity`) and
        reopens its links between rounds. A document that does not load is logged once and the
        one in use is kept."""
        with self._following:
            mark = identity.signature(self.config)
            if mark == self._config_mark or mark == self._config_rejected:
                return False
            from agent_memory.sync import config as config_mod
            try:
                fresh = config_mod.load(self.config.source)
                if fresh.logger is None:
                    raise config_mod.ConfigInvalid(self.config.source, [
                        "no ailogger_client section: the watcher has nothing to forward to"])
            except config_mod.ConfigInvalid as exc:
                self._config_rejected = mark
                self.log.warning("config_invalid_kept", problems=exc.problems,
                                 reason="the configuration in use is kept until the document "
                                        "validates again")
                return False
            self._config_rejected = None
            self._config_mark = identity.signature(fresh)
            if identity.digest(fresh) == self.identity["digest"]:
                return False  # touched, not changed
            if self.options.autostarted:
                self.log.info("config_changed", action="handover",
                              digest=identity.digest(fresh)[:12])
                self.request_stop("configuration changed on disk")
                return True
            self.config = fresh
            self.backfill.config = fresh
            self.identity = identity.of(self.path, fresh)
            self._links_stale = True
            self.log.info("config_reloaded", config=self.config.source,
                          digest=self.identity["digest"][:12])
            if self._loop is not None:
                self._loop.call_soon_threadsafe(self._wake_up)
            return True

    async def _reopen_links(self) -> None:
        """After a reload (on the loop, between rounds): links made with the old document are
        closed, and a backoff earned with it is forgotten: the next round tries at once."""
        self._links_stale = False
        await self.pool.keep_only(self.config)
        self._backoff.reset()
        self._credentials_backoff.reset()
        self._retry_at = None
        self._next_rescan = time.monotonic()

    # ======================================================================= logger link ===
    async def ensure_link(self):
        """The agent's one logger link for its configuration (the pool's: the commands it
        serves use the same)."""
        return await self.pool.logger(self.config)

    async def _close_link(self) -> None:
        await self.pool.drop_logger(self.config)

    async def _probe(self) -> bool:
        """One `health` request: does the logger answer at all?"""
        from agent_memory.sync.links.logger import LoggerLink
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

    # ============================================================================= publish ===
    def agent_info(self) -> dict[str, Any] | None:
        """The agent's part of the published state (None when it does not serve)."""
        server = self._server
        if server is None:
            return None
        idle_exit = self.options.idle_exit
        deadline = None
        if idle_exit is not None:
            deadline = iso(time.time() + max(
                0.0, self._last_activity + idle_exit - time.monotonic()))
        return {"socket": server.path, "autostarted": self.options.autostarted,
                "idle_exit_s": idle_exit, "idle_deadline": deadline,
                "config": self.identity["config"], "config_digest": self.identity["digest"],
                "version": self.identity["version"],
                "requests": server.requests, "refused_peers": server.refused_peers}

    def _publish_soon(self) -> None:
        """Publish after a round in a worker thread, beside the loop: the backlog survey and the
        fsyncs never hold up the next round or a command's vector. Asked again while one runs,
        it publishes once more when that one is done (the file always ends up current)."""
        if self._publishing is not None and not self._publishing.done():
            self._publish_again = True
            return
        self._publish_again = False
        self._publishing = asyncio.ensure_future(asyncio.to_thread(self._publish, True))
        self._publishing.add_done_callback(self._published)

    def _published(self, task: asyncio.Future) -> None:
        if not task.cancelled() and task.exception() is not None:
            self.log.warning("state_not_published", error=str(task.exception()))
        if self._publish_again and self.stop_reason is None:
            self._publish_soon()

    def _publish(self, force_backlog: bool, stopped: bool = False) -> None:
        info = self.agent_info()
        if info is not None:
            self.report.agent = {**info, "serving": True}
        elif self.report.agent is not None:
            self.report.agent = {**self.report.agent, "serving": False}
        self.report.publish(force_backlog, self.stop_reason, stopped)


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
