"""`gc --older-than DURATION [--dry-run]`: `.imported/` retention (outbox.retention)."""

from __future__ import annotations

from typing import Any

from agent_memory.cli.context import Context
from agent_memory.cli.errors import UsageError


def run(ctx: Context, args) -> tuple[dict[str, Any], str]:
    from agent_memory.outbox.retention import collect, parse_duration
    from agent_memory.sync.lock import SyncLock
    try:
        older_than = parse_duration(args.older_than)
    except ValueError as exc:
        raise UsageError(f"--older-than: {exc}", field="--older-than") from None
    store = ctx.store()
    lock = SyncLock(store.path)
    holding = lock.acquire(0.0)  # an agent holds it for its life: then empty dirs stay
    try:
        report = collect(store, older_than, remove_empty_dirs=holding, dry_run=args.dry_run)
    finally:
        if holding:
            lock.release()
    return {**report, "older_than_s": older_than}, "file"
