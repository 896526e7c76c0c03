"""`sync` (alias `import`): forward every pending event and message to the logger."""

from __future__ import annotations

from typing import Any

from agent_memory.cli import inputs
from agent_memory.cli.context import Context
from agent_memory.cli.errors import LoggerUnreachableError, RefusedError, StoreHeldError

# How long a one-shot sync of another configuration waits for the store: an autostarted agent
# handing over, or a one-shot sync or inline forward finishing.
HELD_WAIT = 30.0


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
        from agent_memory.cli import watch_cmd
        return watch_cmd.run(ctx, args)
    store = ctx.store()
    lock_wait = 0.0
    held = _held_by_another(ctx, store)
    if isinstance(held, dict):
        return held, "file"
    if held is not None:
        lock_wait = held
    elif not store.has_pending():
        data = {"skipped": False, "sessions": [], "totals": _totals([])}
        from agent_memory.outbox.cleanup import remove_orphan_temporaries
        orphans = remove_orphan_temporaries(store)  # what killed writers left, anywhere
        if orphans:
            data["warnings"] = [f"removed {orphans} temporaries left by writers killed midway "
                                "(none held a record)"]
        from agent_memory.sync.engine import strays
        found = strays(store)
        if found:
            from agent_memory.sync.log import get_logger
            log = get_logger()
            for stray in found:
                log.warning("stray", entry=stray["entry"], detail=stray["message"])
            data.setdefault("warnings", []).extend(stray["message"] for stray in found)
        return data, "file"

    from agent_memory.sync.engine import Limits
    from agent_memory.sync.links.failures import Failed, Refused, Unreachable
    from agent_memory.sync.log import get_logger
    from agent_memory.sync.runner import LockBusy, run as run_sync
    log = get_logger()
    limits = Limits(batch_items=args.batch_items, batch_bytes=args.batch_bytes,
                    quarantine_after=args.quarantine_after,
                    sessions_in_flight=args.sessions_in_flight)
    try:
        reports, warnings = run_sync(
            store, ctx.config, limits=limits, lock_wait=lock_wait,
            progress=lambda event, fields: log.info(event, **fields))
    except LockBusy as exc:
        _still_held(ctx, store, exc.holder, exc.identity)
        return {"skipped": True, "holder_pid": exc.holder,
                "reason": f"another process (pid {exc.holder}) holds the sync lock and "
                          "forwards this store with this configuration"}, "file"
    except (Unreachable, Refused, Failed) as exc:
        from agent_memory.cli import fleet_errors
        fleet_errors.raise_for(exc, refusal=lambda code, statement: RefusedError(
            statement, code=code), unreachable_note="; pending files stay pending (what was "
                                                    "confirmed before is in .imported/)")
    sessions = [r.as_dict() for r in reports]
    data = {"skipped": False, "sessions": sessions, "totals": _totals(sessions)}
    if warnings:
        data["warnings"] = warnings
    if data["totals"]["failed"]:
        raise RefusedError(f"{data['totals']['failed']} item(s) refused by the logger; "
                           "they stay pending (see details)", code="IMPORT_ITEMS_FAILED",
                           **data)
    return data, "logger"


def _held_by_another(ctx: Context, store) -> dict[str, Any] | float | None:
    """Is the store's sync lock held? None: no. The "skipped" answer when the holder forwards
    with this very configuration and version (cron steps aside). A number of seconds to wait for
    the lock when the holder runs with another identity and lets go (an autostarted agent hands
    over; a one-shot sync finishes). StoreHeldError when it keeps the store (an agent started
    by hand or by systemd)."""
    from agent_memory.sync import identity
    from agent_memory.sync.lock import SyncLock
    lock = SyncLock(store.path)
    holder = lock.holder()
    if holder is None:
        return None
    theirs = lock.holder_identity()
    if theirs is None or not identity.differences(identity.of(store.path, ctx.config), theirs):
        return {"skipped": True, "holder_pid": holder,
                "reason": f"another process (pid {holder}) holds the sync lock and forwards "
                          "this store with this configuration"}
    from agent_memory.cli import agent_client
    claimed = agent_client.claim(ctx)
    if claimed == "same":
        return {"skipped": True, "holder_pid": holder,
                "reason": f"the project's agent (pid {holder}) forwards this store with this "
                          "configuration"}
    if isinstance(claimed, dict):
        raise StoreHeldError(agent_client.describe_conflict(claimed) + "; nothing was "
                             "forwarded, pending files stay pending", holder_pid=claimed.get("pid"),
                             holder=_shown(claimed))
    return HELD_WAIT


def _still_held(ctx: Context, store, holder: int | None, theirs: dict[str, Any] | None) -> None:
    """The lock stayed busy: fine when its holder forwards with this configuration, else a
    StoreHeldError that names it."""
    from agent_memory.sync import identity
    mine = identity.of(store.path, ctx.config)
    if theirs is None or not identity.differences(mine, theirs):
        return
    different = identity.differences(mine, theirs)
    raise StoreHeldError(
        f"another process (pid {holder}) holds this store's sync lock with "
        f"{identity.describe(theirs, different)} and did not let go within {HELD_WAIT:g} s; "
        "nothing was forwarded with this configuration, pending files stay pending; try again "
        "when it is done", holder_pid=holder)


def _shown(agent: dict[str, Any]) -> dict[str, Any]:
    return {key: agent.get(key) for key in ("pid", "autostarted", "config", "config_digest",
                                            "version")}
