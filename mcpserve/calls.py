"""The MCP server's tool calls (mcpserve.command), whatever the transport: each runs the CLI's
own code path (cli.perform) on the command its tool declares (cli.commands), its arguments
checked as the command line checks them and made the command's parsed options directly
(cli.typed: no argv, no parse), in a worker thread, one call at a time (the CLI's code assumes
one command per process at a time). So a tool answers what the command prints: a `write` lands
in the outbox first, served commands go through the project's agent, and a command that found
no agent starts one, as on the command line. The server's global options (`--config`,
`--store`, `--project-root`, `--no-agent`) go into every call. Without `--project-root`, the
project is the client's first root (its git top level, as for a working directory) where the
client offers roots, else the server's working directory.

Calls from many clients at once (streamable HTTP) queue for their turn; a call the client
cancels or leaves is the "may have landed" case of a command killed mid-way: once its command
started it runs to its end (cancellation waits for the worker thread), and a retry with the
same `message_id` finds it. A server told to stop (`stop`) refuses calls that had not begun
and waits for those that had (`drain`).
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any

import anyio

from agent_memory.mcpserve import tools as mcp_tools

STOPPING = 130  # the exit code of a command stopped before it ran, as a shell's (cli.perform)


class Runner:
    """Runs the tools' commands by the CLI's code, one at a time."""

    def __init__(self, global_values: dict[str, Any], root_given: bool, warm=None) -> None:
        self.global_values = global_values
        self.warm = warm  # cli.warm.Warm: what the calls keep between them
        self.root_given = root_given
        self.calls = 0
        self.refused = 0  # calls that arrived after `stop`: not run
        self._lock = anyio.Lock()
        self._stopping = False
        self._active = 0  # calls begun and not yet answered

    async def call(self, ctx, tool, arguments: dict[str, Any]) -> dict[str, Any]:
        from mcp.server.mcpserver.exceptions import ToolError
        if self._stopping:
            self.refused += 1
            raise ToolError(stopping_text())
        self._active += 1
        try:
            given = dict(self.global_values)
            if not self.root_given:
                root = await client_root(ctx)
                if root is not None:
                    given["project_root"] = root
            async with self._lock:
                rc, envelope = await anyio.to_thread.run_sync(self._run, tool, arguments, given)
        finally:
            self._active -= 1
        envelope = utf8(envelope)
        if envelope.get("success"):
            from agent_memory.cli.budget_apply import tool_answer
            return tool_answer(envelope)
        raise ToolError(mcp_tools.error_text(rc, envelope))

    def _run(self, tool, arguments: dict[str, Any], given: dict[str, Any]
             ) -> tuple[int, dict[str, Any]]:
        """In the worker thread: counted here, where the command really starts (a client that
        leaves can cancel the call before its thread does, and it then never ran)."""
        self.calls += 1
        return run_tool(tool, arguments, given, self.warm)

    def stop(self) -> None:
        """From now on, refuse every call that has not begun (safe from a signal handler: it
        only sets a flag the event loop's thread reads)."""
        self._stopping = True

    async def drain(self, poll: float = 0.02) -> None:
        """Return once no call that had begun is still running (after `stop`, none begins)."""
        while self._active:
            await anyio.sleep(poll)


def stopping_text() -> str:
    """A call refused because the server is stopping, as a command's error (nothing ran)."""
    return json.dumps({"code": "SERVER_STOPPING",
                       "message": "the MCP server is stopping: this call was not run (nothing "
                                  "was written); call again once the server is back",
                       "exit_code": STOPPING, "meaning": "interrupted before it ran"})


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
    working directory is (its git top level, else itself); None when the client offers none.
    A client of protocol 2026-07-28 is never asked: roots are deprecated there, and a server
    sends no request of its own on a call's stream."""
    capabilities = ctx.client_capabilities
    if capabilities is None or capabilities.roots is None:
        return None
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
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
