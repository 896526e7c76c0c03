"""`embed`: fill every missing `.emb` (pending and imported) with the configured model.

Exit 7 when the embedder is not configured, unreachable or refuses the configured model: a
vector is what this command is for. Progress goes to stderr when it is a terminal.
"""

from __future__ import annotations

import sys
from typing import Any

from cli.context import Context
from cli.errors import CliError, EMBEDDING_UNAVAILABLE, UsageError
from outbox import contract


class EmbeddingUnavailableError(CliError):
    exit_code = EMBEDDING_UNAVAILABLE
    code = contract.EMBEDDING_UNAVAILABLE


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
    from sync.failures import Credentials, Failed, Refused, Unreachable
    from sync.logger_link import INTERACTIVE
    from sync.vectors import backfill
    store = ctx.store()
    try:
        report = backfill(store, ctx.config, progress=_progress(), batch=args.batch,
                          policy=INTERACTIVE)
    except Credentials as exc:
        from cli import fleet_errors
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
