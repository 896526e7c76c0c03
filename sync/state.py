"""The sync engine's memory across runs: how often the logger refused each pending item.

A small JSON file (`.agent-memory/.sync-state.json`) rewritten atomically (temporary, fsync,
rename, fsync the directory) and written only by the holder of the sync lock. It is derived
bookkeeping, not the source of truth: deleting it only resets the refusal counts. An unreadable
state file is never silently taken as empty: it is set aside under a new name and
the run reports it.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from typing import Any

from agent_memory.outbox import atomic
from agent_memory.outbox.contract import format_utc
from agent_memory.outbox.store import utc_now

STATE_NAME = ".sync-state.json"


class SyncState:
    def __init__(self, store_path: str) -> None:
        self.path = os.path.join(store_path, STATE_NAME)
        self._dir = store_path
        self.warnings: list[str] = []
        self.refusals: dict[str, dict[str, Any]] = {}
        self._dirty = False
        self._load()

    def _load(self) -> None:
        try:
            with open(self.path, "rb") as handle:
                raw = handle.read()
        except FileNotFoundError:
            return
        try:
            document = json.loads(raw)
            refusals = document["refusals"]
            if not isinstance(refusals, dict):
                raise ValueError("refusals is not an object")
        except (ValueError, KeyError, TypeError) as exc:
            aside = f"{self.path}.unreadable-{format_utc(utc_now()).replace(':', '.')}"
            os.rename(self.path, aside)
            self.warnings.append(f"unreadable sync state set aside as {os.path.basename(aside)} "
                                 f"({exc}); refusal counts start again")
            return
        self.refusals = refusals

    def count(self, item_id: str) -> int:
        return int(self.refusals.get(item_id, {}).get("count", 0))

    def refused_within(self, item_id: str, seconds: float) -> dict[str, Any] | None:
        """The item's refusal record when its last refusal is less than `seconds` old."""
        entry = self.refusals.get(item_id)
        if not entry or seconds <= 0 or not entry.get("last"):
            return None
        last = datetime.fromisoformat(entry["last"].replace("Z", "+00:00"))
        return entry if (utc_now() - last).total_seconds() < seconds else None

    def refused(self, item_id: str, code: str, statement: str) -> int:
        """Record one more refusal of an item; returns the new count."""
        now = format_utc(utc_now())
        entry = self.refusals.setdefault(item_id, {"count": 0, "first": now})
        entry.update(count=int(entry["count"]) + 1, code=code, statement=statement, last=now)
        self._dirty = True
        return entry["count"]

    def forget(self, item_id: str) -> None:
        if self.refusals.pop(item_id, None) is not None:
            self._dirty = True

    def save(self) -> None:
        if not self._dirty:
            return
        data = json.dumps({"format_version": 1, "refusals": self.refusals}, indent=1).encode()
        temp = f"{self.path}.tmp-{os.getpid()}"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(temp, self.path)
        dir_fd = atomic.open_dir(self._dir)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
        self._dirty = False
