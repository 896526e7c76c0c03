"""`sync` (alias `import`): forward every pending event and message to the logger."""

from __future__ import annotations

from typing import Any

from cli import inputs
from cli.context import Context
from cli.errors import CliError, LoggerUnreachableError, RefusedError


def _totals(reports: list[dict[str, Any]]) -> dict[str, int]:
    return {"imported": sum(r["imported"] for r in reports),
            "events_applied": sum(r["events_applied"] for r in reports),
            "failed": sum(len(r["failed"]) for r in reports),
            "waiting": sum(len(r["waiting"]) for r in reports),
            "quarantined": sum(len(r["quarantined"]) for r in reports),
            "pending": sum(r["pending"] for r in reports)}


def run(ctx: Context, args) -> tuple[dict[str, Any], str]:
    inputs.positive(args.batch_items, "--batch-items")
    inputs.positive(args.batch_bytes, "--batch-bytes")
    inputs.positive(args.quarantine_after, "--quarantine-after")
    inputs.positive(args.sessions_in_flight, "--sessions-in-flight")
    if ctx.config.logger is None:
        raise LoggerUnreachableError("no logger is configured (ailogger_client section): "
                                     "nothing can be forwarded")
    if getattr(args, "watch", False):
        from cli import watch_cmd
        return watch_cmd.run(ctx, args)
    store = ctx.store()
    from sync.lock import SyncLock
    holder = SyncLock(store.path).holder()
    if holder is not None:  # a watcher or another sync: it does the work; cron returns at once
        return {"skipped": True, "holder_pid": holder,
                "reason": "another process holds the sync lock and forwards this store"}, "file"
    if not store.has_pending():
        return {"skipped": False, "sessions": [], "totals": _totals([])}, "file"

    from sync.engine import Limits
    from sync.failures import Failed, Refused, Unreachable
    from sync.log import get_logger
    from sync.runner import LockBusy, run as run_sync
    log = get_logger()
    limits = Limits(batch_items=args.batch_items, batch_bytes=args.batch_bytes,
                    quarantine_after=args.quarantine_after,
                    sessions_in_flight=args.sessions_in_flight)
    try:
        reports, warnings = run_sync(
            store, ctx.config, limits=limits,
            progress=lambda event, fields: log.info(event, **fields))
    except LockBusy as exc:
        return {"skipped": True, "holder_pid": exc.holder,
                "reason": "another process holds the sync lock and forwards this store"}, "file"
    except Unreachable as exc:
        raise LoggerUnreachableError(f"logger unreachable: {exc}; pending files stay pending "
                                     "(what was confirmed before is in .imported/)") from None
    except Refused as exc:
        raise RefusedError(exc.statement, code=exc.code) from None
    except Failed as exc:
        raise CliError(f"the logger failed: {exc}", code="LOGGER_FAILED") from None
    sessions = [r.as_dict() for r in reports]
    data = {"skipped": False, "sessions": sessions, "totals": _totals(sessions)}
    if warnings:
        data["warnings"] = warnings
    if data["totals"]["failed"]:
        raise RefusedError(f"{data['totals']['failed']} item(s) refused by the logger; "
                           "they stay pending (see details)", code="IMPORT_ITEMS_FAILED",
                           **data)
    return data, "logger"
