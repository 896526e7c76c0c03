"""`verify [--repair]`: check the whole store (outbox.verify); exit 1 when it finds damage.
`--repair` first re-files what strays hold and sets them aside (outbox.repair)."""

from __future__ import annotations

from typing import Any

from agent_memory.cli.context import Context
from agent_memory.cli.errors import CliError


def run(ctx: Context, args) -> tuple[dict[str, Any], str]:
    from agent_memory.outbox.verify import verify
    model = ctx.config.embedding_model
    store = ctx.store()
    repaired = None
    if args.repair:
        from agent_memory.outbox.repair import repair
        repaired = repair(store)
    report = verify(store, model["model"], int(model["dimension"]))
    if repaired is not None:
        report["repair"] = repaired
    if not report["ok"]:
        raise CliError(f"{len(report['damage'])} damaged entr"
                       f"{'y' if len(report['damage']) == 1 else 'ies'} in the store (see "
                       "details; `sync` sets records aside to .agent-memory/.quarantine/, "
                       "`verify --repair` what follows no naming rule)",
                       code="STORE_DAMAGED", **report)
    return report, "file"
