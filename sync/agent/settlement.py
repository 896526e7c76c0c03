"""The agent's memory of what became of recently forwarded files, and the commands waiting to
hear it. A `write` served by the agent asks for its file's Delivery; the watcher's rounds
settle files and wake whoever waits. Lives on the watcher's event loop (not thread-safe)."""

from __future__ import annotations

import asyncio
from collections import OrderedDict

from agent_memory.sync import delivery
from agent_memory.sync.delivery import Delivery

RECENT = 4096


class Settlements:
    def __init__(self) -> None:
        self._recent: OrderedDict[str, Delivery] = OrderedDict()
        self._waiters: dict[str, list[asyncio.Future]] = {}

    def known(self, name: str) -> Delivery | None:
        return self._recent.get(name)

    def remember(self, name: str, settled: Delivery) -> None:
        self._recent[name] = settled
        self._recent.move_to_end(name)
        while len(self._recent) > RECENT:
            self._recent.popitem(last=False)

    def record(self, outcomes: dict) -> None:
        """Every settled outcome of one session's forward (name -> engine Outcome)."""
        for name, outcome in outcomes.items():
            settled = delivery.from_outcome(outcome)
            if settled is not None:
                self.remember(name, settled)

    def wait(self, name: str) -> asyncio.Future:
        future = asyncio.get_running_loop().create_future()
        self._waiters.setdefault(name, []).append(future)
        return future

    def forget_waiter(self, name: str, future: asyncio.Future) -> None:
        waiters = self._waiters.get(name)
        if waiters and future in waiters:
            waiters.remove(future)
            if not waiters:
                del self._waiters[name]

    def waited(self) -> list[str]:
        """Names somebody waits for."""
        return list(self._waiters)

    def resolve(self, name: str, settled: Delivery) -> None:
        for future in self._waiters.pop(name, ()):
            if not future.done():
                future.set_result(settled)

    def resolve_all(self, settled: Delivery) -> None:
        """A round failed: every waiting command hears it now rather than at its deadline."""
        for name in list(self._waiters):
            self.resolve(name, settled)
