"""The commands the project's agent runs for its callers (those the command registry,
cli.commands, declares served: the reads, and `status --probe`): the CLI's own code on the
caller's arguments. The shell hands `serve_command` to the agent when it starts one
(cli.watch_cmd, through the Context), so the agent never reaches back up into the CLI.

A served command runs against the agent's own configuration and open store: the caller's
identity (its store's real path, its configuration's path and content) matched them before it
was served, and the caller opened the store itself (its availability and git-ignore check), so
nothing is read, opened or checked again per request."""

from __future__ import annotations

from agent_memory.cli import output, registry
from agent_memory.cli.dispatch import execute
from agent_memory.cli.errors import CliError
from agent_memory.cli.parser import parse
from agent_memory.outbox.store import Store
from agent_memory.sync.config import Config


class _AgentsOwn:
    """What a served command's Context takes instead of loading and opening (the interface of
    cli.warm.Warm): the agent's configuration and store, which the agent keeps open and closes;
    a command never closes a store it was handed."""

    def __init__(self, store: Store, config: Config) -> None:
        self._store = store
        self._config = config

    def config(self, _explicit: str | None) -> Config:
        return self._config

    def store(self, _project_root: str) -> Store:
        return self._store


def serve_command(argv: list[str], store: Store, config: Config, route) -> dict:
    """A read-side command (served by the registry's word) the project's agent runs for a caller:
    this very code on the caller's arguments, in the agent's `store` and `config`, its fleet
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
    args.project_root = store.project_root
    args.config = config.source
    ctx = Context(args, route=route, warm=_AgentsOwn(store, config))
    try:
        rc, envelope = execute(ctx, args, handling)
    finally:
        ctx.close()
    return {"ok": True, "exit_code": rc, "line": output.render(envelope)}
