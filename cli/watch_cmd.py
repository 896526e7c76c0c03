"""`sync --watch`: run the watcher until SIGTERM/SIGINT, then print its summary (one JSON
object on stdout; logs are JSON lines on stderr). A second watcher on the same store answers at
once, exit 0, with the holder's pid."""

from __future__ import annotations

import os
import sys
from typing import Any

from cli.context import Context
from cli.errors import UsageError


def _non_negative(value: float, flag: str) -> float:
    if value is None or value < 0:
        raise UsageError(f"{flag} must be 0 or more seconds")
    return value


def _positive(value: float, flag: str) -> float:
    if value is None or not value > 0:
        raise UsageError(f"{flag} must be more than 0 seconds")
    return value


def run(ctx: Context, args) -> tuple[dict[str, Any], str]:
    from sync.engine import Limits
    from sync.log import get_logger
    from sync.watcher import Watcher, WatchOptions, install_log_bridge
    options = WatchOptions(
        debounce=_non_negative(args.debounce, "--debounce"),
        max_delay=_non_negative(args.max_delay, "--max-delay"),
        rescan=_positive(args.rescan_interval, "--rescan-interval"),
        backoff_initial=_positive(args.backoff_initial, "--backoff-initial"),
        backoff_max=_positive(args.backoff_max, "--backoff-max"),
        probe_interval=_positive(args.probe_interval, "--probe-interval"),
        backfill=not args.no_backfill,
        limits=Limits(batch_items=args.batch_items, batch_bytes=args.batch_bytes,
                      quarantine_after=args.quarantine_after,
                      refused_holdoff=_non_negative(args.retry_refused_after,
                                                    "--retry-refused-after")))
    store = ctx.store()
    log = get_logger("agent-memory.watch")
    install_log_bridge(log)
    # For the watcher's whole life, whatever writes to file descriptor 1 (a library's stray
    # print included) lands on stderr: stdout carries the one summary object, printed after.
    sys.stdout.flush()
    real_stdout = os.dup(1)
    os.dup2(2, 1)
    try:
        summary, ran = Watcher(store, ctx.config, options, log).run()
    finally:
        sys.stdout.flush()
        os.dup2(real_stdout, 1)
        os.close(real_stdout)
    return summary, ("logger" if ran else "file")
