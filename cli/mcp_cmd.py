"""`agent-memory mcp`: the CLI's commands as Model Context Protocol tools over stdio, on the
official `mcp` SDK (cli.mcp_server), imported by this command only.

Each tool call is the CLI's own code path (cli.perform) on the command its tool declares
(cli.commands), its arguments checked as the command line checks them and made the command's
parsed options directly (cli.typed: no argv, no parse), in a worker thread, one call at a time
(the CLI's code assumes one command per process at a time). So a tool answers what the command
prints: a `write` lands in the outbox first, served commands go through the project's agent,
and a command that found no agent starts one, as on the command line. The server's global
options (`--config`, `--store`, `--project-root`, `--no-agent`) go into every call. Without
`--project-root`, the project is the client's first root (its git top level, as for a working
directory) where the client offers roots, else the working directory's.

stdout carries the protocol alone (the SDK points fd 1 at stderr while it serves, so a stray
print or a child's output cannot reach it); logs go to stderr, and so does the command's
closing answer (cli.main).
"""

from __future__ import annotations

import os
import re
import sys
from typing import Any

import anyio

from agent_memory.cli import mcp_tools


def run(ctx, args) -> tuple[dict[str, Any], str]:
    try:
        tools = mcp_tools.selected(args.tools)
    except ValueError as exc:
        from agent_memory.cli.errors import UsageError
        raise UsageError(str(exc), field="--tools") from None
    from agent_memory.cli.mcp_server import build_server, serve
    from agent_memory.cli.warm import Warm
    # the server's calls share one holder: the configuration, the stores, the identity stay warm
    runner = Runner(global_values(args), root_given=args.project_root is not None, warm=Warm())
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


def global_values(args) -> dict[str, Any]:
    """The server's global options, for every call."""
    root = args.project_root
    return {"config": args.config, "store": args.store, "no_agent": args.no_agent,
            "project_root": None if root is None else os.path.abspath(root)}


class Runner:
    """Runs the tools' commands by the CLI's code, one at a time."""

    def __init__(self, global_values: dict[str, Any], root_given: bool, warm=None) -> None:
        self.global_values = global_values
        self.warm = warm  # cli.warm.Warm: what the calls keep between them
        self.root_given = root_given
        self.calls = 0
        self._lock = anyio.Lock()

    async def call(self, ctx, tool, arguments: dict[str, Any]) -> dict[str, Any]:
        from mcp.server.mcpserver.exceptions import ToolError
        given = dict(self.global_values)
        if not self.root_given:
            root = await client_root(ctx)
            if root is not None:
                given["project_root"] = root
        async with self._lock:
            rc, envelope = await anyio.to_thread.run_sync(self._run, tool, arguments, given)
        envelope = utf8(envelope)
        if envelope.get("success"):
            return mcp_tools.answer(envelope)
        raise ToolError(mcp_tools.error_text(rc, envelope))

    def _run(self, tool, arguments: dict[str, Any], given: dict[str, Any]
             ) -> tuple[int, dict[str, Any]]:
        """In the worker thread: counted here, where the command really starts (a client that
        leaves can cancel the call before its thread does, and it then never ran)."""
        self.calls += 1
        return run_tool(tool, arguments, given, self.warm)


def run_tool(tool, arguments: dict[str, Any], global_values: dict[str, Any], warm=None
             ) -> tuple[int, dict[str, Any]]:
    """One tool's command by the CLI's own code: (exit code, its envelope)."""
    from agent_memory.cli.perform import perform_values
    _reap_children()
    return perform_values(tool.command, mcp_tools.values(tool, arguments), global_values, warm)


def utf8(value: Any) -> Any:
    """The answer as what the SDK can send, which must be UTF-8: each lone surrogate (a path on
    disk that is not UTF-8, as `status` shows it) becomes U+FFFD."""
    if isinstance(value, str):
        return _SURROGATES.sub("\ufffd", value) if _SURROGATES.search(value) else value
    if isinstance(value, dict):
        return {utf8(key): utf8(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [utf8(item) for item in value]
    return value


_SURROGATES = re.compile("[\ud800-\udfff]")


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
