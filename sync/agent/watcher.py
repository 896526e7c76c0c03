"""`agent-memory sync --watch`: the store drains by itself, and the project's agent answers
the CLI.

Life of a watcher. This module is the loop and the scheduler only; its collaborators live in
their own modules of sync.agent: the sync lock and the stop signals (holding), the control
socket (server, service, reached through a narrow port), the answers to commands
waiting for their files (handoff), the vector backfill (backfill), the file events
(file_events), the logger's health and backoff (health), the configuration followed on disk
(following) and the published state (report); the fleet links are sync.links.resident's pool.
- It takes the store's sync lock and keeps it until it exits (an flock: a kill -9 frees it). A
  second watcher finding the lock held by a watcher (the holder's pid is the pid the running
  watcher published) refuses and exits 0 naming it. A lock held by a one-shot `sync` or an
  inline forward of `write` is waited for: that holder finishes soon.
- Holding the lock, it serves as the project's agent when given a server (cli.watch_cmd does):
  CLI commands ask it over a Unix socket instead of importing the fleet clients themselves.
  It listens once its logger link is made (the fleet client imported) and its first round has
  forwarded what was written while it started (or a second after the link), so an agent that
  answers serves at once, and no command waits behind its start.
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
import threading
import time
from typing import Any, Callable

from agent_memory.outbox.store import Store
from agent_memory.outbox.survey import iso
from agent_memory.sync.agent import file_events
from agent_memory.sync.agent.backfill import VectorBackfill
from agent_memory.sync.agent.following import ConfigFollower
from agent_memory.sync.agent.handoff import Handoff, Rounds
from agent_memory.sync.agent.holding import StopSignals, take_lock
from agent_memory.sync.agent.health import LoggerHealth
from agent_memory.sync.agent.port import AgentPort
from agent_memory.sync.agent.report import WatcherReport
from agent_memory.sync.agent.rounds import RoundResult
from agent_memory.sync.config import Config
from agent_memory.sync.engine import Limits, SessionReport
from agent_memory.sync.links.failures import Failed, Refused, Unreachable, describe
from agent_memory.sync.lock import SyncLock

DEFAULT_IDLE_EXIT = 900.0
CONFIG_CHECK_S = 1.0  # how often the configuration's files are stat'ed for a change
LISTEN_BY_S = 1.0  # the agent listens after its first round, or this long after its link
FIRST_CALL_S = 2.0  # the link's first call (a health request) at start waits no longer
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
                 log=None, server_factory: Callable[[AgentPort], Any] | None = None) -> None:
        if config.logger is None:
            raise ValueError("the watcher needs a logger (ailogger_client section)")
        self.store = store
        self.path = store.path
        self.options = options or WatchOptions()
        if log is None:
            from agent_memory.sync.log import get_logger
            log = get_logger("agent-memory.watch")
        self.log = log
        self.following = ConfigFollower(self.path, config, log)
        self._links_stale = False  # the configuration changed: reopen the links between rounds
        self._next_config_check = 0.0
        self.pid = os.getpid()
        self.stop_reason: str | None = None
        self.lock = SyncLock(self.path)
        self.report = WatcherReport(self.path, log)
        self._server_factory = server_factory
        self._server = None
        self._listening = False  # _listen() was called
        self._store_inode = os.stat(self.path).st_ino
        # event bookkeeping (filled by the watchdog thread through the loop)
        self._dirty: set[str] = set()
        self._noted: dict[str, float] = {}  # file names announced lately (one round each)
        self._strays_said: set[str] = set()  # strays logged already (each once)
        self._urgent = False  # a command waits for a file: no debounce
        self._first_event: float | None = None
        self._last_event = 0.0
        self._last_activity = time.monotonic()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None
        self._main_task: asyncio.Task | None = None
        self._ready = threading.Event()  # the loop runs: deliver() may use it
        self.engine_lock: asyncio.Lock | None = None  # one round (or vector write) at a time
        # the fleet links (one pool for the rounds and the commands served) and their health
        from agent_memory.sync.links.resident import Pool
        self.pool = Pool()
        self.health = LoggerHealth(self.options, self.report, log)
        self._next_rescan = 0.0
        self.handoff = Handoff(store, Rounds(
            pid=self.pid, log=log, touch=self.touch, serving_loop=self.serving_loop,
            wants_round=self.wants_round, backing_off=self.backing_off,
            engine_lock=lambda: self.engine_lock, logger_link=self.ensure_link,
            ready=self._ready.is_set))
        self.backfill = VectorBackfill(store, config, self.options, self.report, log,
                                       lambda: self.stop_reason is not None,
                                       self.handoff.busy, self._publish_soon)
        self._round_imported = 0

    @property
    def config(self) -> Config:
        """The configuration in use (it follows the document on disk: sync.agent.following)."""
        return self.following.config

    @property
    def identity(self) -> dict[str, Any]:
        return self.following.identity

    # =========================================================================== entry point ===
    def run(self) -> tuple[dict[str, Any], bool]:
        """Watch until a signal (or idle, or a stop request); returns (summary, ran). `ran` is
        False when another watcher holds the store (the summary then names its pid)."""
        with StopSignals(lambda: self.stop_reason is not None, self.request_stop,
                         self._force_stop):
            holder = take_lock(self.lock, self.path, self.identity, self.log,
                               lambda: self.stop_reason)
            if holder is not None:
                return holder, False
            try:
                from agent_memory.outbox.cleanup import remove_orphan_temporaries
                remove_orphan_temporaries(self.store)
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
        summary = self.report.summary(self.stop_reason)
        self.log.info("watcher_stopped", **{k: v for k, v in summary.items()
                                            if k in ("reason", "rounds", "imported")})
        return summary, True

    def _force_stop(self) -> None:
        """A second signal: the batch in flight is abandoned (thread-safe)."""
        loop = self._loop
        if loop is not None and self._main_task is not None:
            loop.call_soon_threadsafe(self._main_task.cancel)

    def request_stop(self, reason: str) -> None:
        """Stop as on SIGTERM (thread-safe: the agent's `stop` request)."""
        if self.stop_reason is None:
            self.stop_reason = reason
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._wake_up)

    # ========================================================================= the agent ===
    def _start_server(self) -> None:
        if self._server_factory is None:
            return
        try:
            self._server = self._server_factory(self.port())
            self._server.start()
        except Exception as exc:  # noqa: BLE001 - the watcher still drains; CLIs go inline
            self._server = None
            self.log.warning("agent_not_serving", error=f"{type(exc).__name__}: {exc}")
            return
        self.log.info("agent_serving", socket=self._server.path)

    def _listen(self) -> None:
        """Serve from now on (once): after the first round that leaves nothing new behind it
        (the files written while it started, and its first calls of each logger command, are
        behind it), or LISTEN_BY_S after the logger link was made. Until then a command sees an agent
        starting (its start lock held, nothing answering) and does not wait on it
        (cli.agent_client): a write is answered at once, its file left to the round, rather
        than behind that round (what was written while the agent started, a backlog); a
        command that finds the sync lock held meanwhile (a watcher started by hand) asks again
        within its --wait (cli.forwarding)."""
        if self._listening or self.stop_reason is not None:
            return
        self._listening = True
        self._start_server()
        self.handoff.hold_background()  # no backfill under the first commands it serves

    def _stop_server(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.stop()

    def port(self) -> AgentPort:
        """What the agent's service may use of this watcher (sync.agent.port)."""
        return AgentPort(
            store=self.store, pid=self.pid, identity=lambda: self.identity,
            config=lambda: self.config, autostarted=self.options.autostarted,
            refused_holdoff=self.options.limits.refused_holdoff, describe=self.describe,
            stopping=lambda: self.stop_reason is not None, stop=self.request_stop,
            touch=self.touch, follow_config=self.follow_config, deliver=self.handoff.deliver,
            pool=lambda: self.pool, serving_loop=self.serving_loop, sync_now=self.sync_now)

    def describe(self) -> dict[str, Any]:
        """Who is serving, as `ping` answers it: pid, store, the agent's part of the published
        state, status."""
        return {"pid": os.getpid(), "store": self.store.path, **(self.agent_info() or {}),
                "status": self.report.status}

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
        """Why no round is tried now (sync.agent.health): a waiting command is answered at
        once."""
        return self.health.backing_off()

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
            # the fleet client's import (about 0.6 s) is paid now, not by the first request,
            # and so is its first call (about 0.1 s: its HTTP transport's import, a TLS
            # context), which the first write served would pay when the first round had
            # nothing to send
            try:
                link = await self.ensure_link()
                await asyncio.wait_for(link.health(), FIRST_CALL_S)
            except Exception as exc:  # noqa: BLE001 - the first round reports and backs off
                self.log.warning("logger_link_not_ready", error=describe(exc)[:2000])
            self._ready.set()
            self._publish(force_backlog=True)
            self._loop.call_later(LISTEN_BY_S, self._listen)
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
            await self.report.published()
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
            health = self.health
            if health.waiting(now):  # backing off: no rounds, a probe now and then
                if self._idle(now):
                    self._idle_exit()
                    break
                if await health.probe_if_due(self.config, now):
                    continue  # the logger is back: drain at once
                await self._sleep(min(health.retry_at, health.next_probe,
                                      self._next_config_check, self._idle_at())
                                  - time.monotonic())
                continue
            if health.failed_before() or now >= self._next_rescan:
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
            idle_at = self._idle_at()
            if idle_at <= now:  # idle, but a backfill runs: look again shortly
                idle_at = now + 0.05
            await self._sleep(min(self._next_rescan, self._next_config_check, idle_at) - now)

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
        """Sleep up to `seconds`, woken early by a file event or a stop. It always yields to
        the loop: a loop whose next deadline is already past (the idle deadline while a
        backfill still runs in its worker thread) would otherwise spin without ever letting
        the thread's completion in, and never idle out."""
        if seconds <= 0 or self.stop_reason is not None:
            await asyncio.sleep(0)
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

    async def sync_now(self, limits: Limits | None = None) -> "RoundResult":
        """A full round now, asked by a one-shot `sync` (on the loop): tried even while backing
        off (the command wants to hear how the logger is now), with the command's batch bounds;
        what it did (sync.agent.rounds.RoundResult)."""
        async with self.engine_lock:
            return await self._round_locked(True, limits)

    async def _round_locked(self, full: bool, limits: Limits | None = None) -> "RoundResult":
        started = time.monotonic()
        result = RoundResult()
        if full:
            if self._store_removed():
                self.stop_reason = "store removed"
                self.log.warning("store_removed", store=self.path)
                result.error = Failed("the store directory was removed")
                return result
            from agent_memory.sync.engine import tidy
            for done in tidy(self.store):
                event = done.pop("event")
                result.warnings.append(done.pop("message"))
                if event == "stray":  # logged once in the agent's life, not every full round
                    if done["entry"] in self._strays_said:
                        continue
                    self._strays_said.add(done["entry"])
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
        link = None
        try:
            if session_ids:
                link = await self.ensure_link()
                from agent_memory.sync.engine import SyncEngine
                engine = SyncEngine.for_store(self.store, link, limits or self.options.limits,
                                              self._progress)
                for warning in engine.state.warnings:
                    self.log.warning("sync_state", detail=warning)
                result.warnings.extend(engine.state.warnings)
                for session_id in session_ids:
                    if self.stop_reason is not None:
                        result.cut_short = True
                        break
                    report = await engine.sync_session(session_id)
                    reports.append(report)
                    self.report.totals["answers"] += self.handoff.settle(report)
                    self._round_imported = 0
        except _StopNow:
            result.cut_short = True
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
            self.health.failed(error)
            if link is not None:
                await self.pool.drop_logger(self.config, link)
        else:
            self.health.succeeded()
            self.report.last_success = iso()
            self.report.status = "idle"
        if full:
            self._next_rescan = time.monotonic() + self.options.rescan
        if not self._dirty:  # what was written while it started is settled: serve now
            self._listen()
        self.backfill.maybe_start(force=full)
        self._publish_soon()
        result.reports, result.error = reports, error
        return result

    def _progress(self, event: str, fields: dict[str, Any]) -> None:
        """The engine's callback after each committed batch."""
        self._round_imported = fields.get("imported", 0)
        self.log.info(event, **fields)
        if time.monotonic() - self.report.last_publish > 1.0:
            self._publish(force_backlog=False)
        if self.stop_reason is not None:
            raise _StopNow()

    # ====================================================================== configuration ===
    def follow_config(self) -> bool:
        """Has the configuration's content changed on disk (sync.agent.following)? Thread-safe:
        the loop asks about once a second, the agent's request threads when a command brings
        another digest of the same document. An autostarted agent then hands over (it stops);
        a hand-started one takes the new document at once and reopens its links between
        rounds, its backoff forgotten."""
        fresh = self.following.look()
        if fresh is None:
            return False
        if self.options.autostarted:
            from agent_memory.sync import identity
            self.log.info("config_changed", action="handover",
                          digest=identity.digest(fresh)[:12])
            self.request_stop("configuration changed on disk")
            return True
        self.following.take(fresh)
        self.backfill.take(fresh)
        self._links_stale = True
        self.log.info("config_reloaded", config=fresh.source,
                      digest=self.identity["digest"][:12])
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._wake_up)
        return True

    async def _reopen_links(self) -> None:
        """After a reload (on the loop, between rounds): links made with the old document are
        closed, and a backoff earned with it is forgotten: the next round tries at once."""
        self._links_stale = False
        await self.pool.keep_only(self.config)
        self.health.forget()
        self._next_rescan = time.monotonic()

    # ======================================================================= logger link ===
    async def ensure_link(self):
        """The agent's one logger link for its configuration (the pool's: the commands it
        serves use the same)."""
        return await self.pool.logger(self.config)

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

    def _publish(self, force_backlog: bool, stopped: bool = False) -> None:
        self.report.publish_state(self.agent_info(), force_backlog, self.stop_reason, stopped)

    def _publish_soon(self) -> None:
        self.report.publish_soon(self.agent_info, lambda: self.stop_reason)



__all__ = ["Watcher", "WatchOptions"]
