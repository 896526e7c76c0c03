"""Running the engine the way each caller needs: the one-shot `sync`, and the inline forward of
`write` and `session` commands. Both take the store's sync lock, so at most one process
forwards a store at a time and per-session order (time order) is kept."""

from __future__ import annotations

import asyncio
from typing import Any

from agent_memory.outbox.store import Store
from agent_memory.sync import delivery
from agent_memory.sync.config import Config
from agent_memory.sync.engine import Limits, SessionReport, SyncEngine, tidy
from agent_memory.sync.lock import SyncLock
from agent_memory.sync.links.logger import BATCH, INTERACTIVE, LoggerLink, RetryPolicy


class LockBusy(Exception):
    """Another process holds the sync lock (its pid, when known, is `.holder`; the identity it
    published, when it did, is `.identity`)."""

    def __init__(self, holder: int | None, identity: dict[str, Any] | None = None) -> None:
        super().__init__(f"the sync lock is held by pid {holder}")
        self.holder = holder
        self.identity = identity

    def reason(self, store: Store, config: Config) -> str:
        """Why a file stays pending, in words that are true: the holder delivers it only when
        it forwards with this very configuration and version."""
        from agent_memory.sync import identity
        different = (identity.differences(identity.of(store.path, config), self.identity)
                     if self.identity is not None else [])
        if not different:
            return (f"another process (pid {self.holder}) is forwarding this store; it will "
                    "deliver this too")
        return (f"another process (pid {self.holder}) holds this store's sync lock with "
                f"{identity.describe(self.identity, different)}: while it holds the store, "
                "pending files are forwarded with its configuration, not this one; this file "
                "stays pending. If that process is the project's watcher started by hand or by "
                "systemd, stop it (`agent-memory agent stop`) or run it with this "
                "configuration")


async def _run(store: Store, config: Config, policy: RetryPolicy, limits: Limits,
               session_id: str | None, progress,
               answer_for: str | None = None) -> tuple[list[SessionReport], list[str]]:
    async with LoggerLink(config, policy) as link:
        engine = SyncEngine.for_store(store, link, limits, progress,
                                      track_outcomes=session_id is not None)
        state = engine.state
        if session_id is None:
            for done in tidy(store):
                state.warnings.append(done["message"])
                if done["event"] == "stray" and progress is not None:
                    progress("stray", {"entry": done["entry"], "detail": done["message"]})
            reports = await engine.sync_all()
        else:
            reports = [await engine.sync_session(session_id)]
            if answer_for is not None:
                await _complete_answer(link, reports[0], answer_for)
    return reports, state.warnings


async def _complete_answer(link: LoggerLink, report: SessionReport, name: str) -> None:
    """The interactive answer of a message confirmed through messages_import gets the logger's
    sequence number (sync.delivery.completed)."""
    outcome = report.outcomes.get(name)
    settled = delivery.from_outcome(outcome) if outcome is not None else None
    if settled is None or not delivery.lacks_number(settled, name):
        return
    from agent_memory.outbox import names
    done = await delivery.completed(link, settled, names.parse_final_name(name)[1])
    outcome.info["answer"] = done.answer


def run(store: Store, config: Config, *, session_id: str | None = None,
        policy: RetryPolicy = BATCH, limits: Limits | None = None, lock_wait: float = 0.0,
        progress=None, answer_for: str | None = None) -> tuple[list[SessionReport], list[str]]:
    """Sync the store (or one session) under the sync lock.

    Raises LockBusy when the lock is not free within `lock_wait`, and the engine's Unreachable,
    Refused or Failed when the logger cannot be used.
    """
    from agent_memory.sync import identity
    lock = SyncLock(store.path)
    if lock_wait > 0 and lock.holder() is not None:
        # the holder is letting go (an agent handing over exits, a sync finishes): the fleet
        # client's import (about half a second) is paid meanwhile, not after
        from agent_memory.sync.links.logger import import_client
        import_client()
    if not lock.acquire(lock_wait, identity.of(store.path, config)):
        raise LockBusy(lock.holder(), lock.holder_identity())
    try:
        return asyncio.run(_run(store, config, policy, limits or Limits(), session_id, progress,
                                answer_for))
    finally:
        lock.release()


def forward_session(store: Store, config: Config, session_id: str, lock_wait: float,
                    answer_for: str | None = None) -> SessionReport:
    """The inline forward of an interactive command: this session's pending files, in order,
    with the "transport failure twice in a row" rule for unreachable."""
    reports, _warnings = run(store, config, session_id=session_id, policy=INTERACTIVE,
                             lock_wait=lock_wait, answer_for=answer_for)
    return reports[0]


def deliver(store: Store, config: Config, session_id: str, name: str,
            lock_wait: float, busy_raises: bool = False) -> delivery.Delivery:
    """Forward the session of a file a command just appended, inline, and say what became of
    that file. Never raises for the logger's sake: every outcome is a Delivery (LockBusy is
    raised instead with `busy_raises`)."""
    from agent_memory.sync.links.failures import Failed, Refused, Unreachable
    try:
        report = forward_session(store, config, session_id, lock_wait=lock_wait, answer_for=name)
    except LockBusy as exc:
        if busy_raises:
            raise
        return delivery.pending(exc.reason(store, config))
    except (Unreachable, Refused, Failed) as exc:  # the file is kept, whatever the failure
        return delivery.from_failure(exc)
    outcome = report.outcomes.get(name)
    if outcome is None:  # moved meanwhile by another syncer: it was confirmed there
        return delivery.confirmed(None)
    return delivery.from_outcome(outcome) or delivery.pending("not sent in this run")
