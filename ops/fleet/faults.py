"""Fault switches of the reference fleet, kept in one JSON file in the data directory.

Tests need a logger that refuses, stalls, hangs up or disappears, set at start (flags of `up`)
or at run time (`ops.fleet.control`). A file is the one medium every process of a service sees
(the server, its gate and the logger's forked queue worker): writers replace it atomically,
readers re-read it only when its stat changes, so checking it on every request costs a stat().

Switches per service (`logger`, `embedder`):
  refuse_pattern  logger only: items/appends whose text matches this regex are refused
                  (code INJECTED_REFUSAL; per item in an import, answer-borne for append)
  delay           seconds every HTTP request waits before it is handled
  drop            connections are closed without an answer (the client sees a transport error)
  down            the public port stops listening (connect refused) until cleared
  hold_vectors    logger only: no message gets a vector (all stay "pending")
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

INJECTED_REFUSAL = "INJECTED_REFUSAL"

DEFAULTS: dict[str, Any] = {
    "refuse_pattern": None,
    "delay": 0.0,
    "drop": False,
    "down": False,
    "hold_vectors": False,
}


@dataclass(frozen=True)
class Faults:
    """The switches of one service at one moment."""

    refuse_pattern: str | None = None
    delay: float = 0.0
    drop: bool = False
    down: bool = False
    hold_vectors: bool = False

    def refuses(self, text: str) -> bool:
        return bool(self.refuse_pattern) and re.search(self.refuse_pattern, text) is not None


def _validated(service: str, values: dict[str, Any]) -> dict[str, Any]:
    unknown = set(values) - set(DEFAULTS)
    if unknown:
        raise ValueError(f"unknown fault switch(es) for {service}: {sorted(unknown)}")
    out = dict(values)
    if out.get("refuse_pattern") is not None:
        re.compile(out["refuse_pattern"])  # refuse a bad pattern here, not in the server
    if "delay" in out:
        out["delay"] = float(out["delay"] or 0.0)
        if out["delay"] < 0:
            raise ValueError("delay must be >= 0")
    for flag in ("drop", "down", "hold_vectors"):
        if flag in out:
            out[flag] = bool(out[flag])
    return out


def read_all(path: Path) -> dict[str, dict[str, Any]]:
    """Every service's switches (defaults filled in); a missing file means no faults."""
    try:
        raw = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raw = {}
    return {svc: {**DEFAULTS, **(raw.get(svc) or {})} for svc in ("logger", "embedder")}


def write_all(path: Path, faults: dict[str, dict[str, Any]]) -> None:
    """Replace the file atomically so a reader never sees half of it."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(faults, sort_keys=True))
    os.replace(tmp, path)


def update(path: Path, service: str, **changes: Any) -> dict[str, Any]:
    """Change some switches of one service; returns that service's switches now."""
    if service not in ("logger", "embedder"):
        raise ValueError(f"unknown service {service!r}")
    current = read_all(path)
    current[service].update(_validated(service, changes))
    write_all(path, current)
    return current[service]


def reset(path: Path, initial: dict[str, dict[str, Any]] | None = None) -> None:
    """All switches off (or set to `initial`)."""
    fresh = {svc: dict(DEFAULTS) for svc in ("logger", "embedder")}
    for svc, values in (initial or {}).items():
        fresh[svc].update(_validated(svc, values))
    write_all(path, fresh)


class FaultReader:
    """Current switches of one service, re-read only when the file changes."""

    def __init__(self, path: Path, service: str) -> None:
        self.path = Path(path)
        self.service = service
        self._key: tuple | None = None
        self._faults = Faults()

    def current(self) -> Faults:
        try:
            st = os.stat(self.path)
            key = (st.st_mtime_ns, st.st_size, st.st_ino)
        except FileNotFoundError:
            key = None
        if key != self._key:
            try:
                values = read_all(self.path)[self.service]
                self._faults = Faults(**values)
                self._key = key
            except (ValueError, TypeError, OSError):
                pass  # a file being replaced or invalid: keep the last good switches
        return self._faults
