"""`verify [--repair]`: check the whole store (outbox.verify); exit 1 when it finds damage.
`--repair` first re-files what strays hold and sets them aside (outbox.repair), and rebuilds
the ledger (outbox.ledger) from the files."""

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
        repaired["ledger"] = _rebuild_ledger(store)
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


def _rebuild_ledger(store) -> str:
    """The ledger emptied, then every session listed and decoded into it again (so `verify`,
    which follows, compares it with the files anew)."""
    from agent_memory.outbox.ledger import LedgerUnavailable
    try:
        store.ledger.rebuild(store.session_ids())
    except LedgerUnavailable:
        store.ledger.remove_files()  # the next use creates it anew
        return "removed"
    return "rebuilt"
