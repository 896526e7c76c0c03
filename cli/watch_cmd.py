"""`sync --watch`: run the watcher until SIGTERM/SIGINT (or a stop request, or idle when
`--idle-exit` is given), then print its summary (one JSON object on stdout; logs are JSON lines
on stderr). A second watcher on the same store answers at once, exit 0, with the holder's pid.

The watcher is the project's agent: once it holds the sync lock it serves the CLI on the store's
socket (sync.agent.server, sync.agent.service) with the fleet links it keeps open
(sync.links.resident.Pool)."""

from __future__ import annotations

import os
import sys
from typing import Any

from agent_memory.cli.context import Context
from agent_memory.cli.errors import UsageError


def _non_negative(value: float, flag: str) -> float:
    if value is None or value < 0:
        raise UsageError(f"{flag} must be 0 or more seconds")
    return value


def _positive(value: float, flag: str) -> float:
    if value is None or not value > 0:
        raise UsageError(f"{flag} must be more than 0 seconds")
    return value


def run(ctx: Context, args) -> tuple[dict[str, Any], str]:
    from agent_memory.sync.engine import Limits
    from agent_memory.sync.log import get_logger, install_log_bridge
    from agent_memory.sync.agent.watcher import Watcher, WatchOptions
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
    idle_exit = args.idle_exit
    if idle_exit is not None and not idle_exit > 0:
        raise UsageError("--idle-exit must be more than 0 seconds")
    options.idle_exit = idle_exit
    options.autostarted = args.autostarted
    from agent_memory.sync.agent import lifecycle
    lifecycle.keep_start_lock()  # an autostarted agent holds .agent.lock for its life
    store = ctx.store()
    if not args.autostarted:  # an autostarted agent of another identity hands the store over
        from agent_memory.cli import agent_client
        agent_client.claim(ctx)
    # For the watcher's whole life, whatever is written to stdout (a library's stray print
    # included) lands on stderr: stdout carries the one summary object, printed after. And
    # stderr never blocks it (sync.agent.stderr_pump): a pipe nobody reads must not stall the loop
    # and the commands the agent serves.
    from agent_memory.sync.agent.stderr_pump import StderrPump
    sys.stdout.flush()
    sys.stderr.flush()
    real_stdout = os.dup(1)
    os.dup2(2, 1)
    pump = StderrPump(2)
    streams = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = pump
    try:
        log = get_logger("agent-memory.watch")
        install_log_bridge(log)
        summary, ran = Watcher(store, ctx.config, options, log,
                               server_factory=_server_factory(ctx, log)).run()
    finally:
        pump.close()
        sys.stdout, sys.stderr = streams
        os.dup2(real_stdout, 1)
        os.close(real_stdout)
    return summary, ("logger" if ran else "file")


def _server_factory(ctx: Context, log):
    from agent_memory.sync.agent.service import AgentService
    from agent_memory.sync.agent import channel
    from agent_memory.sync.agent.server import AgentServer

    def make(port):
        service = AgentService(port, ctx.serve_command)
        return AgentServer(channel.socket_path(port.store.path), service.handle, log)
    return make
