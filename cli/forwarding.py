"""How `write` and `session` commands forward what they just appended, and what they answer.

`--store auto`: the file is written first. When a live watcher holds the sync lock, the file
is handed to it (sync.handoff: a ticket, then its answer within `--wait` seconds; the fleet
client is not imported). Otherwise this session's pending files are forwarded inline
through the sync engine. Confirmed: the logger's answer (`"store": "logger"`). Logger
unreachable, or another process forwarding the store: the file stays pending (`"store": "file"`,
exit 0): nothing is lost, `sync` or the watcher delivers it. Refused: exit 1 with the logger's
code; the file stays pending (and is quarantined after repeated refusals).
"""

from __future__ import annotations

from typing import Any

from cli.context import Context
from cli.errors import CliError, LoggerUnreachableError, RefusedError
from outbox.store import StoredFile


def live_watcher(ctx: Context) -> int | None:
    """The pid of a live watcher holding this store's sync lock, else None."""
    from sync import watcher_state
    from sync.lock import SyncLock
    store = ctx.store()
    return watcher_state.watcher_pid(store.path, SyncLock(store.path).holder())


def forward(ctx: Context, file: StoredFile, file_answer: dict[str, Any],
            wait: float) -> tuple[dict[str, Any], str]:
    """Forward the session of `file` and answer for `file`."""
    watcher = live_watcher(ctx)
    if watcher is not None:
        return hand_off(ctx, file, file_answer, wait, watcher)
    from sync.engine import Outcome
    from sync.failures import Failed, Refused, Unreachable
    from sync.runner import LockBusy, forward_session
    try:
        report = forward_session(ctx.store(), ctx.config, file.session_id, lock_wait=wait,
                                 answer_for=file.name)
    except LockBusy as exc:
        return {**file_answer, "forwarded": False,
                "reason": f"another process (pid {exc.holder}) is forwarding this store; "
                          "it will deliver this too"}, "file"
    except Unreachable as exc:
        return {**file_answer, "forwarded": False,
                "reason": f"logger unreachable: {exc}"}, "file"
    except Refused as exc:
        raise RefusedError(f"{exc.statement} (kept pending in {file.relpath})",
                           code=exc.code) from None
    except Failed as exc:
        raise CliError(f"the logger failed: {exc} (kept pending in {file.relpath})",
                       code="LOGGER_FAILED") from None
    outcome = report.outcomes.get(file.name)
    if outcome is None:  # moved meanwhile by another syncer: it was confirmed there
        return {**file_answer, "forwarded": True}, "logger"
    if outcome.status == Outcome.CONFIRMED:
        return outcome.info["answer"], "logger"
    if outcome.status == Outcome.WAITING:
        return {**file_answer, "forwarded": False, "waits_for": outcome.info["waits_for"],
                "reason": "it refers to a message the logger refused; it waits for it"}, "file"
    info = outcome.info
    where = "quarantined" if outcome.status == Outcome.QUARANTINED else "kept pending"
    raise RefusedError(f"{info.get('statement') or info.get('reason')} ({where}: {file.relpath})",
                       code=info.get("code") or "REFUSED")


def hand_off(ctx: Context, file: StoredFile, file_answer: dict[str, Any], wait: float,
             watcher: int) -> tuple[dict[str, Any], str]:
    """A live watcher holds the sync lock: it forwards the file (its watchdog saw it); wait up
    to `wait` seconds for its answer through a ticket (sync.handoff). No fleet client import."""
    from sync import handoff, watcher_state
    from sync.lock import SyncLock
    store = ctx.store()
    pending = {**file_answer, "forwarded": False, "watcher_pid": watcher}
    if wait <= 0:
        return {**pending, "reason": f"handed to the watcher (pid {watcher}), which delivers "
                                     "it"}, "file"
    lock = SyncLock(store.path)
    ticket = handoff.Ticket(store.path, file.session_id, file.name, file.item_id)
    try:
        done = ticket.wait(wait, alive=lambda: watcher_state.watcher_pid(
            store.path, lock.holder()) == watcher)
    finally:
        ticket.close()
    if done is None:
        imported = _imported(store, file)
        if imported:  # confirmed, but the answer did not come back in time
            return {**file_answer, "outbox": "imported", "file": imported,
                    "forwarded": True}, "logger"
        return {**pending, "reason": f"the watcher (pid {watcher}) did not confirm it within "
                                     f"{wait} s; it stays pending and the watcher delivers "
                                     "it"}, "file"
    status = done.get("status")
    if status == "confirmed":
        if isinstance(done.get("answer"), dict):
            return done["answer"], "logger"
        return {**file_answer, "outbox": "imported", "forwarded": True,
                "file": StoredFile(file.session_id, "imported", file.name).relpath}, "logger"
    if status == "waiting":
        return {**pending, "waits_for": done.get("waits_for"),
                "reason": "it refers to a message the logger refused; it waits for it"}, "file"
    where = "quarantined" if done.get("where") == "quarantined" else "kept pending"
    raise RefusedError(f"{done.get('statement') or 'refused by the logger'} ({where}: "
                       f"{file.relpath})", code=done.get("code") or "REFUSED")


def _imported(store, file: StoredFile) -> str | None:
    """The file's path in `.imported/` when it is there."""
    import os
    from outbox.store import IMPORTED
    fd = store.session_fd(file.session_id, IMPORTED)
    if fd is None:
        return None
    try:
        os.stat(file.name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    finally:
        os.close(fd)
    return StoredFile(file.session_id, IMPORTED, file.name).relpath


def direct(ctx: Context, command: str, **params: Any) -> tuple[Any, str]:
    """`--store logger`: the logger or nothing; no outbox file."""
    from sync.failures import Failed, Refused, Unreachable
    from sync import runner
    try:
        return runner.direct(ctx.config, command, **params), "logger"
    except Unreachable as exc:
        raise LoggerUnreachableError(f"logger unreachable: {exc}") from None
    except Refused as exc:
        raise RefusedError(exc.statement, code=exc.code) from None
    except Failed as exc:
        raise CliError(f"the logger failed: {exc}", code="LOGGER_FAILED") from None
