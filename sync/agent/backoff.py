"""How long to stay away from a service that failed: capped exponential growth with equal
jitter (never 0, never above the cap), so a fleet of watchers coming back after an outage
spreads out instead of arriving together."""

from __future__ import annotations

import random


class Backoff:
    def __init__(self, initial: float, maximum: float, factor: float) -> None:
        self.initial = max(0.01, initial)
        self.maximum = max(self.initial, maximum)
        self.factor = max(1.0, factor)
        self.failures = 0

    def failed(self) -> float:
        """Count one more failure in a row; the seconds to wait before the next try."""
        self.failures += 1
        base = min(self.maximum, self.initial * self.factor ** (self.failures - 1))
        return base / 2 + random.uniform(0, base / 2)

    def reset(self) -> None:
        self.failures = 0
