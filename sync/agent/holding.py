"""What the watcher holds for its life, apart from its loop: the store's sync lock, and the
SIGTERM/SIGINT handlers that end it (sync.agent.watcher is the loop and its scheduler).

- The lock (sync.lock, an flock: a kill -9 frees it) is taken before anything else and kept
  until the watcher exits. A lock held by another watcher (the holder's pid is the pid that
  watcher published) is a refusal: the summary names it and the watcher exits 0. A lock held
  by a one-shot `sync` or an inline forward is waited for: that holder finishes soon.
- The first signal asks the watcher to stop (the batch in flight finishes); a second one
  cancels that batch (nothing is lost: an imported but unmoved file is imported again later
  and the logger answers the repeat as success). The handlers in place before are put back.
"""

from __future__ import annotations

import signal
import time
from typing import Any, Callable

from agent_memory.sync.agent import published
from agent_memory.sync.lock import SyncLock


def take_lock(lock: SyncLock, store_path: str, identity: dict[str, Any], log,
              stop_reason: Callable[[], "str | None"]) -> dict[str, Any] | None:
    """Take the sync lock (waiting for a one-shot holder); None once held, else the summary of
    the refusal (a watcher holds it, or a stop came while waiting)."""
    announced = None
    while True:
        if lock.acquire(0.2, identity):
            return None
        holder = lock.holder()
        watcher = published.watcher_pid(store_path, holder)
        if watcher is not None:
            log.warning("watcher_refused", reason="another watcher holds the store",
                        holder_pid=watcher)
            return {"watching": False, "refused": True, "holder_pid": watcher,
                    "reason": f"another watcher (pid {watcher}) holds the sync lock of "
                              "this store"}
        if stop_reason() is not None:
            return {"watching": False, "refused": False, "holder_pid": holder,
                    "reason": f"stopped by {stop_reason()} while waiting for the lock"}
        if holder != announced:
            announced = holder
            log.info("waiting_for_lock", holder_pid=holder,
                     reason="a one-shot sync or an inline forward holds the lock")
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline and stop_reason() is None:
            time.sleep(0.05)


class StopSignals:
    """SIGTERM and SIGINT while the watcher runs: `stop(name)` on the first (unless a stop was
    asked already: `stopping()`), `force()` on any after it. A context manager: the previous
    handlers come back on exit."""

    SIGNALS = (signal.SIGTERM, signal.SIGINT)

    def __init__(self, stopping: Callable[[], bool], stop: Callable[[str], None],
                 force: Callable[[], None]) -> None:
        self._stopping = stopping
        self._stop = stop
        self._force = force
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> "StopSignals":
        self._previous = {sig: signal.signal(sig, self._on_signal) for sig in self.SIGNALS}
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)

    def _on_signal(self, signum: int, _frame: Any) -> None:
        if not self._stopping():
            self._stop(signal.Signals(signum).name)
        else:
            self._force()  # second signal: stop now
