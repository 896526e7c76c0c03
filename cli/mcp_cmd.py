"""`agent-memory mcp`: the CLI's commands as Model Context Protocol tools over stdio, on the
official `mcp` SDK (cli.mcp_server), imported by this command only.

Each tool call is the CLI's own code path (cli.main.run) on the argv its tool builds
(cli.mcp_tools), in a worker thread, one call at a time (the CLI's code assumes one command per
process at a time). So a tool answers what the command prints: a `write` lands in the outbox
first, served commands go through the project's agent, and a command that found no agent
starts one, as on the command line. The server's global options (`--config`, `--store`,
`--project-root`, `--no-agent`) go into every call's argv. Without `--project-root`, the
project is the client's first root (its git top level, as for a working directory) where the
client offers roots, else the working directory's.

stdout carries the protocol alone (the SDK points fd 1 at stderr while it serves, so a stray
print or a child's output cannot reach it); logs go to stderr, and so does the command's
closing answer (cli.main).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anyio

from agent_memory.cli import mcp_tools
from agent_memory.cli.errors import CliError


def run(ctx, args) -> tuple[dict[str, Any], str]:
    try:
        tools = mcp_tools.selected(args.tools)
    except ValueError as exc:
        from agent_memory.cli.errors import UsageError
        raise UsageError(str(exc), field="--tools") from None
    from agent_memory.cli.mcp_server import build_server, serve
    from functools import partial
    from agent_memory.cli.warm import Warm
    # the server's calls share one holder: the configuration, the stores, the identity stay warm
    runner = Runner(global_argv(args), root_given=args.project_root is not None,
                    run_argv=partial(ctx.run_argv, warm=Warm()))
    try:
        anyio.run(serve, build_server(runner.call, tools))
    except KeyboardInterrupt:
        pass
    # Everything the server loaded lives until the process ends: frozen, the interpreter's
    # last collections skip it, and the client that left sees the process gone at once
    # (finalizing the SDK's, pydantic's and the commands' objects took 0.3 to 0.5 s).
    import gc
    gc.freeze()
    return {"calls": runner.calls}, "file"


def global_argv(args) -> list[str]:
    """The server's global options, for every call."""
    argv = []
    if args.config is not None:
        argv.append(f"--config={args.config}")
    if args.store != "auto":
        argv.append(f"--store={args.store}")
    if args.project_root is not None:
        argv.append(f"--project-root={os.path.abspath(args.project_root)}")
    if args.no_agent:
        argv.append("--no-agent")
    return argv


class Runner:
    """Runs the tools' argvs through the CLI, one at a time."""

    def __init__(self, global_argv: list[str], root_given: bool, run_argv) -> None:
        self.global_argv = global_argv
        self.root_given = root_given
        self.run_argv = run_argv  # cli.main.run, handed down through the Context
        self.calls = 0
        self._lock = anyio.Lock()

    async def call(self, ctx, argv: list[str]) -> dict[str, Any]:
        from mcp.server.mcpserver.exceptions import ToolError
        prefix = list(self.global_argv)
        if not self.root_given:
            root = await client_root(ctx)
            if root is not None:
                prefix.append(f"--project-root={root}")
        async with self._lock:
            self.calls += 1
            rc, line = await anyio.to_thread.run_sync(run_command, self.run_argv,
                                                      [*prefix, *argv])
        envelope = decoded(line)
        if envelope.get("success"):
            return mcp_tools.answer(envelope)
        raise ToolError(mcp_tools.error_text(rc, envelope))


def run_command(run_argv, argv: list[str]) -> tuple[int, str]:
    """One command by the CLI's own code (`run_argv`, cli.main.run): (exit code, the JSON line
    it would print)."""
    from agent_memory.cli import output
    _reap_children()
    lines: list[str] = []
    rc = run_argv(argv, lines.append)
    if len(lines) != 1:  # cannot happen with the tools' argvs (no --help among them)
        error = CliError(f"the command answered {len(lines)} lines", code="INTERNAL_ERROR")
        return 1, output.render(output.failure_envelope(error))
    return rc, lines[0]


def decoded(line: str) -> dict[str, Any]:
    """The command's JSON line as what the SDK can send, which must be UTF-8: where the CLI
    escaped lone surrogates (a path on disk that is not UTF-8, as `status` shows it), each
    becomes U+FFFD."""
    envelope = json.loads(line)
    if "\\ud" in line:  # only the CLI's ASCII fallback writes surrogates as escapes
        import re
        text = json.dumps(envelope, ensure_ascii=False)
        envelope = json.loads(re.sub("[\ud800-\udfff]", "\ufffd", text))
    return envelope


def _reap_children() -> None:
    """Collect the exit status of agents this server started (cli.agent_client) that have
    exited since: unlike a CLI process, the server outlives them. Between calls only, under the
    lock, so no command's own child (git) is taken from it."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass


async def client_root(ctx) -> str | None:
    """The project from the client's roots: the first local directory among them, taken as a
    working directory is (its git top level, else itself); None when the client offers none."""
    capabilities = ctx.client_capabilities
    if capabilities is None or capabilities.roots is None:
        return None
    import warnings
    from urllib.parse import unquote, urlparse
    from mcp import MCPDeprecationWarning
    try:
        with warnings.catch_warnings():  # roots are deprecated in the newest protocol only
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            listed = await ctx.session.list_roots()
    except Exception as exc:  # noqa: BLE001 - a client that fails this still gets its answer
        sys.stderr.write(f"agent-memory: mcp: the client's roots could not be listed ({exc}); "
                         "using the working directory\n")
        return None
    for root in listed.roots:
        uri = urlparse(str(root.uri))
        path = unquote(uri.path)
        if uri.scheme == "file" and os.path.isdir(path):
            from agent_memory.outbox.availability import git_toplevel
            return git_toplevel(path) or path
    return None
