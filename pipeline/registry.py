"""The named checks of `python -m pipeline`, in the order they run."""

from __future__ import annotations

from typing import Any, Callable


class CheckFailed(Exception):
    """A promise not kept: what was expected and what was seen."""

    def __init__(self, what: str, expected: Any, seen: Any) -> None:
        super().__init__(what)
        self.what = what
        self.expected = expected
        self.seen = seen


class Check:
    def __init__(self, name: str, description: str, run: Callable) -> None:
        self.name = name
        self.description = description
        self.run = run


CHECKS: dict[str, Check] = {}


def check(name: str, description: str):
    """Register a check: a function taking the pipeline Run; it raises CheckFailed."""
    def register(run: Callable) -> Callable:
        if name in CHECKS:
            raise ValueError(f"duplicate check {name}")
        CHECKS[name] = Check(name, description, run)
        return run
    return register


def expect(condition: bool, what: str, expected: Any, seen: Any) -> None:
    if not condition:
        raise CheckFailed(what, expected, seen)
