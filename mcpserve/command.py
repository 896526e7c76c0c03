"""`agent-memory mcp`: the CLI's commands as Model Context Protocol tools, on the official `mcp`
SDK (mcpserve.server), imported by this command only: over stdio (mcpserve.stdio) for a client
that starts the server beside it, or with `--listen` over streamable HTTP (mcpserve.http_serve)
for many clients at once, from containers, sandboxes or other machines. Both serve the same
tools, run the same way (mcpserve.calls).

Over stdio, stdout carries the protocol alone (fd 1 points at stderr while it serves, so a stray
print or a child's output cannot reach it); logs go to stderr, and so does the command's
closing answer (cli.main). Over HTTP, stdout is free: the closing answer is printed there, as
every command's is.
"""

from __future__ import annotations

import os
from typing import Any

from agent_memory.mcpserve import tools as mcp_tools


def run(ctx, args) -> tuple[dict[str, Any], str]:
    from agent_memory.cli.errors import UsageError
    try:
        tools = mcp_tools.selected(args.tools)
    except ValueError as exc:
        raise UsageError(str(exc), field="--tools") from None
    if args.listen is None:
        from agent_memory.mcpserve import listen
        stray = listen.http_only_given(args)
        if stray:
            raise UsageError(f"{', '.join(stray)}: only with --listen (served over HTTP)",
                             field=stray[0])
        return _serve_stdio(args, tools), "file"
    from agent_memory.mcpserve import listen
    plan = listen.plan(args)
    if args.systemd_unit:
        from agent_memory.mcpserve.unit import unit_answer
        return unit_answer(args, plan, tools), "file"
    return _serve_http(args, tools, plan), "file"


def _runner(args):
    from agent_memory.cli.warm import Warm
    from agent_memory.mcpserve.calls import Runner
    # the server's calls share one holder: the configuration, the stores, the identity stay warm
    return Runner(global_values(args), root_given=args.project_root is not None, warm=Warm())


def _serve_stdio(args, tools) -> dict[str, Any]:
    import anyio
    from agent_memory.mcpserve.server import build_server
    from agent_memory.mcpserve.stdio import serve
    runner = _runner(args)
    try:
        anyio.run(serve, build_server(runner.call, tools))
    except KeyboardInterrupt:
        pass
    _freeze()
    return {"calls": runner.calls}


def _serve_http(args, tools, plan) -> dict[str, Any]:
    from agent_memory.mcpserve.http_serve import serve
    from agent_memory.mcpserve.server import build_server
    runner = _runner(args)
    url = serve(build_server(runner.call, tools), runner, plan)
    _freeze()
    return {"url": url, "calls": runner.calls, "refused_while_stopping": runner.refused}


def _freeze() -> None:
    """Everything the server loaded lives until the process ends: frozen, the interpreter's
    last collections skip it, and a client that left sees the process gone at once
    (finalizing the SDK's, pydantic's and the commands' objects took 0.3 to 0.5 s)."""
    import gc
    gc.freeze()


def global_values(args) -> dict[str, Any]:
    """The server's global options, for every call."""
    root = args.project_root
    return {"config": args.config, "store": args.store, "no_agent": args.no_agent,
            "project_root": None if root is None else os.path.abspath(root)}
