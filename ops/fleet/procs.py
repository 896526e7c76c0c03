"""Process-group bookkeeping for the fleet: find, signal and wait for whole groups.

Each service runs in its own process group (its queue worker forks inside it), so stopping a
service means stopping its group: SIGTERM, a grace period, then SIGKILL. Liveness is read from
/proc so that zombies (already dead, not yet reaped) do not count as running.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path


def _stat_fields(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except (OSError, ValueError):
        return None
    # "pid (comm) state ppid pgrp ..." - comm may contain spaces and parentheses.
    return raw[raw.rindex(")") + 2:].split()


def alive(pid: int) -> bool:
    fields = _stat_fields(pid)
    return fields is not None and fields[0] not in ("Z", "X")


def group_members(pgid: int, zombies: bool = False) -> list[int]:
    """Processes of a process group: the live ones, and with `zombies` also those that exited
    but whose parent has not collected them yet (their pids still exist)."""
    members = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        fields = _stat_fields(int(entry.name))
        if fields and (zombies or fields[0] not in ("Z", "X")) and int(fields[2]) == pgid:
            members.append(int(entry.name))
    return members


def _wait_gone(pgid: int, seconds: float) -> list[int]:
    """Wait until no pid of the group exists any more (zombies collected by their parent);
    the pids still there after `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        _reap(pgid)
        left = group_members(pgid, zombies=True)
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.02)


def _reap(pid: int) -> None:
    """Collect our own child's exit status, if it is our child (else nothing to do)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def stop_group(pgid: int, grace: float = 5.0) -> dict:
    """SIGTERM the group, wait up to `grace`, then SIGKILL what is left; return once every
    process of the group has exited and been collected (no pid of it exists any more). Reports
    what happened; `unreaped` lists pids whose parent did not collect them within 5 s."""
    report = {"pid": pgid, "stopped": True, "killed": False}
    if not group_members(pgid):
        report["stopped"] = False  # nothing was running
        _finish(pgid, report)
        return report
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        _reap(pgid)
        if not group_members(pgid):
            _finish(pgid, report)
            return report
        time.sleep(0.02)
    report["killed"] = True
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + 5.0
    while group_members(pgid) and time.monotonic() < deadline:
        _reap(pgid)
        time.sleep(0.02)
    _finish(pgid, report)
    return report


def _finish(pgid: int, report: dict) -> None:
    left = _wait_gone(pgid, 5.0)
    if left:
        report["unreaped"] = left
