"""The commands the project's agent runs for its callers (those the command registry,
cli.commands, declares served: the reads, and `status --probe`): the CLI's own code on the
caller's arguments. The shell hands `serve_command` to the agent when it starts one
(cli.watch_cmd, through the Context), so the agent never reaches back up into the CLI."""

from __future__ import annotations

from agent_memory.cli import output, registry
from agent_memory.cli.dispatch import execute
from agent_memory.cli.errors import CliError
from agent_memory.cli.parser import parse


def serve_command(argv: list[str], project_root: str, config_source: str | None,
                  route) -> dict:
    """A read-side command (served by the registry's word) the project's agent runs for a caller:
    this very code on the caller's arguments, in the agent's store and configuration, its fleet
    calls over the agent's open links (`route`): {"ok", "exit_code", "line"}, or {"ok": False,
    "error"} for arguments the agent does not serve."""
    from agent_memory.cli.context import Context
    try:
        args = parse(argv)
    except (SystemExit, CliError) as exc:  # the caller parsed it: never happens in use
        return {"ok": False, "error": f"arguments not served: {exc}"}
    handling = registry.handling(args)
    if not handling.served:
        return {"ok": False, "error": f"{args.command!r} is not served by the agent"}
    args.project_root = project_root
    args.config = config_source
    ctx = Context(args, route=route)
    try:
        rc, envelope = execute(ctx, args, handling)
    finally:
        ctx.close()
    return {"ok": True, "exit_code": rc, "line": output.render(envelope)}
