"""`embed`: fill every missing `.emb` (pending and imported) with the configured model.

Exit 7 when the embedder is not configured, unreachable or refuses the configured model: a
vector is what this command is for. Progress goes to stderr when it is a terminal.
"""

from __future__ import annotations

import sys
from typing import Any

from agent_memory.cli.context import Context
from agent_memory.cli.errors import EmbeddingUnavailableError, UsageError


def _progress():
    if not sys.stderr.isatty():
        return None

    def show(written: int, missing: int) -> None:
        sys.stderr.write(f"\rembed: {written}/{missing} vectors written")
        sys.stderr.flush()
        if written >= missing:
            sys.stderr.write("\n")
    return show


def run(ctx: Context, args) -> tuple[dict[str, Any], str]:
    if args.batch < 1:
        raise UsageError("--batch must be at least 1")
    from agent_memory.sync.links.failures import Credentials, Failed, Refused, Unreachable
    from agent_memory.sync.links.logger import INTERACTIVE
    from agent_memory.sync.vectors.backfill import backfill
    store = ctx.store()
    try:
        report = backfill(store, ctx.config, progress=_progress(), batch=args.batch,
                          policy=INTERACTIVE)
    except Credentials as exc:
        from agent_memory.cli import fleet_errors
        fleet_errors.raise_for(exc, service="embedder")
    except Unreachable as exc:
        raise EmbeddingUnavailableError(f"embedder unavailable: {exc}",
                                        **getattr(exc, "report", {})) from None
    except Refused as exc:
        raise EmbeddingUnavailableError(f"the embedder refused the configured model: "
                                        f"{exc.statement}", refusal=exc.code,
                                        **getattr(exc, "report", {})) from None
    except Failed as exc:
        raise CliError(f"the embedder failed: {exc}", code="EMBEDDER_FAILED") from None
    return report, "file"
