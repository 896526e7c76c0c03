"""`agent start|stop|status`: the project's resident agent by hand (commands start it by
themselves in mode "auto"; see cli.agent_client)."""

from __future__ import annotations

import os
import time
from typing import Any

from agent_memory.cli import agent_client
from agent_memory.cli.context import Context
from agent_memory.cli.errors import CliError, LoggerUnreachableError, UsageError
from agent_memory.sync.agent import channel, lifecycle


def _ping(store_path: str) -> dict[str, Any] | None:
    try:
        answer = channel.ask(store_path, {"protocol": channel.PROTOCOL}, "ping", {}, timeout=5.0)
    except channel.AgentLost:
        return None
    return answer if answer and answer.get("ok") else None


def agent_status(store_path: str, ctx: Context | None = None) -> dict[str, Any]:
    """Whether an agent answers on the store's socket, and what it says of itself: its
    configuration (path and digest) and version, and whether they are this command's
    (`matches`; `differs` lists what is not)."""
    answer = _ping(store_path)
    if answer is None:
        path = channel.socket_path(store_path)
        shown = {"running": False, "socket": path, "stale_socket": os.path.lexists(path)}
        starting = lifecycle.starting(store_path)
        if starting is not None and starting["pid"] is not None:  # it answers once it is up
            shown.update(starting=True, pid=starting["pid"])
        return shown
    shown = {"running": True, **{k: v for k, v in answer.items() if k != "ok"}}
    mine = _identity(store_path, ctx)
    if mine is not None:
        from agent_memory.sync import identity
        theirs = {"store": answer.get("store"), "config": answer.get("config"),
                  "digest": answer.get("config_digest"), "version": answer.get("version")}
        different = identity.differences(mine, theirs)
        shown["matches"] = not different
        shown["differs"] = different
        if different:
            shown["note"] = agent_client.describe_conflict(answer)
    return shown


def _identity(store_path: str, ctx: Context | None) -> dict[str, Any] | None:
    """This command's identity, when its configuration loads (status works without one)."""
    if ctx is None:
        return None
    try:
        from agent_memory.sync import identity
        return identity.of(store_path, ctx.config)
    except CliError:
        return None


def run(ctx: Context, args) -> tuple[dict[str, Any], str]:
    store_path = ctx.store().path
    if args.action == "status":
        return agent_status(store_path, ctx), "file"
    if args.timeout is None or args.timeout <= 0:
        raise UsageError("--timeout must be more than 0 seconds")
    deadline = time.monotonic() + args.timeout
    if args.action == "start":
        if ctx.config.logger is None:
            raise LoggerUnreachableError("no logger is configured (ailogger_client section): "
                                         "an agent has nothing to serve")
        started = None
        agent_client.claim(ctx)  # an autostarted agent of another identity hands over
        while time.monotonic() < deadline:
            shown = agent_status(store_path, ctx)
            if shown["running"]:
                return {"started_now": started is not None, **shown}, "file"
            if started is None:
                started = agent_client.start(ctx)
            time.sleep(0.05)
        raise CliError(f"the agent did not answer within {args.timeout} s (see "
                       f"{os.path.join(store_path, channel.LOG_NAME)})",
                       code="AGENT_NOT_STARTED")
    answer = _ping(store_path)  # stop
    if answer is not None:
        pid = answer["pid"]
        try:
            channel.ask(store_path, {"protocol": channel.PROTOCOL}, "stop", {}, timeout=5.0)
        except channel.AgentLost:
            pass  # it went away on its own
    else:  # an agent still starting does not answer yet: it is stopped by SIGTERM, as it
        # would stop on its socket's request (before its handlers are in place, it just exits)
        starting = lifecycle.starting(store_path)
        pid = starting["pid"] if starting is not None else None
        if pid is None or not lifecycle.alive(pid):
            return {"running": False, "stopped": False}, "file"
        import signal
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    while lifecycle.alive(pid):
        if time.monotonic() >= deadline:
            raise CliError(f"the agent (pid {pid}) did not exit within {args.timeout} s",
                           code="AGENT_NOT_STOPPED")
        time.sleep(0.05)
    return {"running": False, "stopped": True, "pid": pid}, "file"
