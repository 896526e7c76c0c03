"""How `write` and `session` commands forward what they just appended, and what they answer.

`--store auto`: the file is written first, then this session's pending files are forwarded
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


def forward(ctx: Context, file: StoredFile, file_answer: dict[str, Any],
            wait: float) -> tuple[dict[str, Any], str]:
    """Forward the session of `file` and answer for `file`."""
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
