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
    if getattr(args, "watch", False):
        if ctx.config.logger is None:  # a service manager should show it: it cannot forward
            raise LoggerUnreachableError("no logger is configured (ailogger_client section): "
                                         "a watcher has nothing to forward to")
        from agent_memory.cli import watch_cmd
        return watch_cmd.run(ctx, args)
    store = ctx.store()
    if ctx.config.logger is None:
        return _without_a_logger(store), "file"
    lock_wait = 0.0
    held = _held_by_another(ctx, store, args)
    if isinstance(held, tuple):
        return held  # the agent's round
    if isinstance(held, dict):
        return held, "file"
    if held is not None:
        lock_wait = held
    elif not store.has_pending():
        return _tidied(store, {"skipped": False, "sessions": [], "totals": _totals([])}), "file"

    from agent_memory.sync.engine import Limits
    from agent_memory.sync.links.failures import Failed, Refused, Unreachable
    from agent_memory.sync.log import get_logger
    from agent_memory.sync.runner import LockBusy, run as run_sync
    log = get_logger()
    limits = Limits(**_limits(args))
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
        _raise_for(exc)
    return _answer([r.as_dict() for r in reports], warnings)


def _tidied(store, data: dict[str, Any]) -> dict[str, Any]:
    """What a whole-store sync does even with nothing to forward: the temporaries killed
    writers left removed, the strays said (logged, and listed under `warnings`)."""
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
    return data


def _without_a_logger(store) -> dict[str, Any]:
    """`sync` where no logger is configured: the file store is the whole memory, which is not an
    outage. Exit 0 with `skipped` and the reason, so a cron job of a file-store-only project
    does not report a failure every run; what waits is counted (it is forwarded once a logger
    is configured). A configured logger that does not answer stays exit 4."""
    from agent_memory.outbox.survey import backlog
    waiting = backlog(store.path)
    messages, events = waiting["pending_messages"], waiting["pending_events"]
    return _tidied(store, {
        "skipped": True, "logger_configured": False,
        "reason": f"no logger is configured (no ailogger_client section): nothing was "
                  f"forwarded; the file store keeps everything ({messages} message(s) and "
                  f"{events} session event(s) wait to be forwarded once a logger is configured)",
        "pending": {"messages": messages, "events": events}})


def _limits(args) -> dict[str, int]:
    return {"batch_items": args.batch_items, "batch_bytes": args.batch_bytes,
            "quarantine_after": args.quarantine_after,
            "sessions_in_flight": args.sessions_in_flight}


def _raise_for(exc: BaseException):
    """A fleet failure that stopped the sync, with the exit code of its kind (cli.fleet_errors):
    4 unreachable, 6 credentials refused, 1 refused or failed."""
    from agent_memory.cli import fleet_errors
    fleet_errors.raise_for(exc, refusal=lambda code, statement: RefusedError(
        statement, code=code), unreachable_note="; pending files stay pending (what was "
                                                "confirmed before is in .imported/)")


def _answer(sessions: list[dict[str, Any]], warnings: list[str]) -> tuple[dict[str, Any], str]:
    """The report of a sync, whoever ran it (this command, or the agent's round): exit 1 with
    the report in the details when an item was refused."""
    data = {"skipped": False, "sessions": sessions, "totals": _totals(sessions)}
    if warnings:
        data["warnings"] = warnings
    if data["totals"]["failed"]:
        raise RefusedError(f"{data['totals']['failed']} item(s) refused by the logger; "
                           "they stay pending (see details)", code="IMPORT_ITEMS_FAILED",
                           **data)
    return data, "logger"


def _by_the_agent(ctx: Context, args, holder: int) -> tuple[dict[str, Any], str] | float | None:
    """The agent of this configuration holds the store: it runs a round now and this command
    answers that round's report as its own (the same fields, the same exit codes). A number of
    seconds to wait for the lock when the agent stopped instead; None when no agent of this
    configuration answers (a one-shot sync or an inline forward holds the lock)."""
    from agent_memory.cli import agent_client
    if agent_client.mode(ctx) == "off":
        return None
    if not ctx.store().has_pending():  # nothing to do, as inline: the logger is not asked
        return {"skipped": False, "sessions": [], "totals": _totals([])}, "file"
    answer = agent_client.sync_round(ctx, _limits(args))
    if answer is None or answer.get("mismatch"):
        return None if answer is None else HELD_WAIT
    if not answer.get("ok"):
        return HELD_WAIT  # it is stopping: the lock is free soon, and this command syncs
    import sys
    sys.stderr.write(f"agent-memory: note: the project's watcher (pid {holder}) ran this sync\n")
    if isinstance(answer.get("failure"), dict):
        from agent_memory.sync.links import failures
        _raise_for(failures.from_dict(answer["failure"]))
    return _answer(list(answer.get("sessions") or []), list(answer.get("warnings") or []))


def _held_by_another(ctx: Context, store, args) -> Any:
    """Is the store's sync lock held? None: no. The answer when the holder is the project's
    agent of this very configuration and version (it ran a round for this command). A number of
    seconds to wait for the lock when the holder runs with another identity and lets go (an
    autostarted agent hands over; a one-shot sync finishes). The "skipped" answer when a
    one-shot sync or an inline forward of this configuration holds it (cron steps aside).
    StoreHeldError when it keeps the store (an agent started by hand or by systemd)."""
    from agent_memory.sync import identity
    from agent_memory.sync.lock import SyncLock
    lock = SyncLock(store.path)
    holder = lock.holder()
    if holder is None:
        return None
    theirs = lock.holder_identity()
    if theirs is None or not identity.differences(identity.of(store.path, ctx.config), theirs):
        done = _by_the_agent(ctx, args, holder)
        if done is not None:
            return done
        return {"skipped": True, "holder_pid": holder,
                "reason": f"another process (pid {holder}) holds the sync lock and forwards "
                          "this store with this configuration"}
    from agent_memory.cli import agent_client
    claimed = agent_client.claim(ctx)
    if claimed == "same":
        return {"skipped": True, "holder_pid": holder,
                "reason": f"the project's watcher (pid {holder}) forwards this store with this "
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
