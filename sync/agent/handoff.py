"""How the agent answers a `write` or `session` command that appended a file and asks what
became of it (the `deliver` request): the file's round starts at once, and the command hears
one Delivery (sync.delivery) as soon as the round settles the file, or "pending" when it cannot
be settled within the command's wait (or at once while the agent is still starting). Its
vector is made in a worker thread once the file is settled and no other command waits or asked
lately (so writes back to back are not slowed by the vectors of the ones before), and the
answer does not wait for it: the `.emb` is written beside the `.msg` as soon as the embedder
answers (within the command's budget), and the backfill makes any that did not come.

The watcher (sync.agent.watcher) owns the loop and the rounds; this module only asks it for a
round, through the narrow Rounds it is given, and listens to what the rounds settle
(sync.agent.settlement). Nothing here ever loses a file: every answer other than "confirmed"
leaves it pending for a later round.
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Callable

from agent_memory.outbox import names
from agent_memory.outbox.store import IMPORTED, QUARANTINED
from agent_memory.sync import delivery
from agent_memory.sync.agent.settlement import Settlements
from agent_memory.sync.delivery import Delivery
from agent_memory.sync.engine import SessionReport


class Rounds:
    """What the handoff needs of the agent's loop, and nothing more: who it is (`pid`, `log`),
    the idle clock (`touch`), the running loop (`serving_loop(timeout)`), a round for a file
    (`wants_round(kind, session_id, name, urgent)`), why no round runs now (`backing_off()`),
    the lock rounds hold (`engine_lock()`), the logger link (`logger_link()`, awaitable) and
    whether its start is over (`ready()`: its links made, its first round next)."""

    def __init__(self, *, pid: int, log, touch: Callable[[], None],
                 serving_loop: Callable[[float], Any], wants_round: Callable[..., None],
                 backing_off: Callable[[], "str | None"], engine_lock: Callable[[], Any],
                 logger_link: Callable[[], Any],
                 ready: Callable[[], bool] = lambda: True) -> None:
        self.ready = ready
        self.pid = pid
        self.log = log
        self.touch = touch
        self.serving_loop = serving_loop
        self.wants_round = wants_round
        self.backing_off = backing_off
        self.engine_lock = engine_lock
        self.logger_link = logger_link


QUIET_S = 0.1  # a settled write's vector waits until no file was asked about for this long
DEFER_MAX_S = 2.0  # but never longer than this: a steady stream of writes still gets its vectors
BUSY_S = 0.5  # the backfill waits until no command asked about its file for this long


class Handoff:
    def __init__(self, store, rounds: Rounds) -> None:
        self.rounds = rounds
        self.store = store
        self.settlements = Settlements()
        self._background: set[asyncio.Future] = set()  # vectors of fire-and-forget writes
        self._asking = 0  # commands whose file is being settled now (the loop's thread)
        self._last_asked = 0.0  # when the last of them asked (time.monotonic)

    # ================================================================ the request threads ===
    def deliver(self, session_id: str, name: str, wait: float,
                embed: Callable[[], Any] | None = None) -> Delivery:
        """What became of a file a command just appended (thread-safe; the agent's request
        threads call it). `embed()` makes its `.emb` record, in a worker thread once the file is
        settled; it is written beside the `.msg` wherever that is by then."""
        rounds = self.rounds
        rounds.touch()
        if not rounds.ready():  # its first round is a full one, which forwards the file
            return delivery.pending(f"the project's agent (pid {rounds.pid}) is starting; it "
                                    "forwards this file as soon as it is up (the file is safe "
                                    "in the outbox)")
        loop = rounds.serving_loop(wait + 30.0)
        if loop is None:
            return delivery.pending(f"the agent (pid {rounds.pid}) is stopping; the file "
                                    "stays pending and is delivered later")
        future = asyncio.run_coroutine_threadsafe(self._deliver(session_id, name, wait, embed),
                                                  loop)
        try:
            return future.result(wait + 60.0)
        except (FutureTimeout, asyncio.CancelledError):
            future.cancel()
            return self._not_in_time(session_id, name, wait)

    # ===================================================================== the loop's side ===
    def settle(self, report: SessionReport) -> int:
        """Remember a session's outcomes and wake the commands waiting for its files; how
        many were answered."""
        self.settlements.record(report.outcomes)
        answered = 0
        for name in self.settlements.waited():
            settled = self.settlements.known(name)
            if settled is None:
                if names.parse_final_name(name) is None \
                        or self.store.area_of(report.session_id, name) is None:
                    continue
                settled = self._already_settled(report.session_id, name)
            if settled is not None:
                self.settlements.resolve(name, settled)
                answered += 1
        return answered

    def round_failed(self, exc: BaseException) -> None:
        """Every waiting command hears the round's failure now rather than at its deadline."""
        self.settlements.resolve_all(delivery.from_failure(exc))

    def stopping(self) -> None:
        self.settlements.resolve_all(delivery.pending(
            f"the agent (pid {self.rounds.pid}) stopped; the file stays pending and is "
            "delivered later"))

    async def _deliver(self, session_id: str, name: str, wait: float,
                       embed: Callable[[], Any] | None) -> Delivery:
        """The file's delivery, then its vector: made while the command waits, the vector (an
        HTTP call, a queued job and a WebSocket in embed-client) competed with the round for
        the two cores and slowed the answer it does not change. It is in flight from the
        start, so no backfill takes it meanwhile."""
        settled = asyncio.Event()
        if embed is not None:
            vector = asyncio.ensure_future(self._make_vector(session_id, name, embed, settled))
            self._background.add(vector)
            vector.add_done_callback(self._background.discard)
        self._asking += 1
        self._last_asked = time.monotonic()
        try:
            return await self._settle_file(session_id, name, wait)
        finally:
            self._asking -= 1
            self._last_asked = time.monotonic()
            settled.set()

    def hold_background(self) -> None:
        """Background work waits from now as after a command's request (`busy`): the agent
        starts serving, and the first commands are on their way."""
        self._last_asked = time.monotonic()

    def busy(self) -> bool:
        """Should background work wait (the loop's thread)? A served write's vector is still
        being made (its message would look unembedded), or commands are writing: one waits for
        its file, or one asked less than BUSY_S ago. The backfill is never urgent; started
        in the middle of writes (the agent's first round ends with one, for what was written
        while it started) its embedder client's import and calls slowed the next writes."""
        return bool(self._background) or self._asking > 0 \
            or time.monotonic() - self._last_asked < BUSY_S

    async def finish(self, timeout: float = 5.0) -> None:
        """On stop: let the vectors in flight be written (the backfill of a later run makes
        any that are cut short)."""
        if self._background:
            await asyncio.wait(list(self._background), timeout=timeout)

    async def _quiet(self) -> None:
        """Until no command waits for its file and none asked for QUIET_S: writes back to
        back (an MCP client's, the Python API's) then find the agent's rounds, its two cores
        and its engine lock free of the vectors of the writes before them (1.37x the time of
        the same writes spaced apart, measured, when each vector was made at once). Their
        vectors come in the first pause, one after the other (or after DEFER_MAX_S)."""
        deadline = time.monotonic() + DEFER_MAX_S
        while time.monotonic() < deadline:
            left = self._last_asked + QUIET_S - time.monotonic()
            if self._asking == 0 and left <= 0:
                return
            await asyncio.sleep(max(left, QUIET_S / 3))

    async def _make_vector(self, session_id: str, name: str, embed: Callable[[], Any],
                           after: asyncio.Event) -> None:
        await after.wait()
        await self._quiet()
        try:
            record = await asyncio.to_thread(embed)
        except Exception as exc:  # noqa: BLE001 - the backfill embeds it later
            self.rounds.log.info("no_vector_on_write", file=name, error=str(exc)[:500])
            return
        if record is None:
            return
        from agent_memory.sync.vectors.emb import write_vector
        async with self.rounds.engine_lock():  # no round moves the .msg while its .emb is written
            try:
                write_vector(self.store, session_id, name, record)  # False: backfill was first
            except OSError as exc:
                self.rounds.log.warning("vector_not_written", file=name, error=str(exc))

    async def _settle_file(self, session_id: str, name: str, wait: float) -> Delivery:
        rounds = self.rounds
        kind = "message" if name.endswith(names.MESSAGE_EXT) else "session"
        if wait <= 0:  # fire and forget: the answer never depends on a round's timing
            rounds.wants_round(kind, session_id, name, urgent=False)
            return delivery.pending(f"handed to the agent (pid {rounds.pid}), which delivers "
                                    "it")
        settled = self.settlements.known(name) or self._already_settled(session_id, name)
        if settled is not None:
            return await self._completed(settled, name)
        backing_off = rounds.backing_off()
        if backing_off is not None:
            rounds.wants_round(kind, session_id, name, urgent=False)
            return delivery.pending(backing_off)
        future = self.settlements.wait(name)
        rounds.wants_round(kind, session_id, name, urgent=True)
        try:
            settled = await asyncio.wait_for(asyncio.shield(future), wait)
        except asyncio.TimeoutError:
            return self._not_in_time(session_id, name, wait)
        finally:
            self.settlements.forget_waiter(name, future)
        return await self._completed(settled, name)

    def _already_settled(self, session_id: str, name: str) -> Delivery | None:
        where = self.store.area_of(session_id, name)
        if where == IMPORTED:
            return delivery.confirmed(None)
        if where == QUARANTINED:
            return Delivery("quarantined", code="QUARANTINED",
                            statement="the file was set aside in .quarantine/")
        return None

    def _not_in_time(self, session_id: str, name: str, wait: float) -> Delivery:
        if self.store.area_of(session_id, name) == IMPORTED:
            return delivery.confirmed(None)
        return delivery.pending(f"the agent (pid {self.rounds.pid}) did not confirm it within "
                                f"{wait} s; it stays pending and the agent delivers it")

    async def _completed(self, settled: Delivery, name: str) -> Delivery:
        """A confirmed message carries the logger's append answer, sequence number included."""
        if not delivery.lacks_number(settled, name):
            return settled
        try:
            link = await self.rounds.logger_link()
        except Exception:  # noqa: BLE001 - confirmed either way; the answer lacks its number
            return settled
        done = await delivery.completed(link, settled, names.parse_final_name(name)[1])
        self.settlements.remember(name, done)
        return done
