"""Entry point: parse, dispatch, print exactly one JSON object, exit with the documented code."""

from __future__ import annotations

import errno
import sys

from agent_memory.cli import output
from agent_memory.cli.errors import CliError, NoRoomError, StoreUnavailableError, UsageError
from agent_memory.outbox.atomic import UnsafePathError
from agent_memory.cli.parser import VERSION, build, command_in


def _dispatch(ctx, args) -> tuple[object, str]:
    command = args.command
    if command == "session":
        from agent_memory.cli import session_cmd
        return session_cmd.run(ctx, args)
    if command == "write":
        from agent_memory.cli import write_cmd
        return write_cmd.run(ctx, args)
    if command in ("read", "get", "sessions"):
        from agent_memory.cli import read_cmd
        return read_cmd.run(ctx, args)
    if command in ("search", "working-set"):
        from agent_memory.cli import retrieval_cmd
        return retrieval_cmd.run(ctx, args)
    if command == "embed":
        from agent_memory.cli import embed_cmd
        return embed_cmd.run(ctx, args)
    if command in ("sync", "import"):
        from agent_memory.cli import sync_cmd
        return sync_cmd.run(ctx, args)
    if command == "status":
        from agent_memory.cli import status_cmd
        return status_cmd.run(ctx, args)
    if command == "config":
        from agent_memory.cli import config_cmd
        return config_cmd.run(ctx, args)
    if command == "store":
        from agent_memory.cli import store_cmd
        return store_cmd.run(ctx, args)
    if command == "agent":
        from agent_memory.cli import agent_cmd
        return agent_cmd.run(ctx, args)
    if command == "gc":
        from agent_memory.cli import gc_cmd
        return gc_cmd.run(ctx, args)
    if command == "verify":
        from agent_memory.cli import verify_cmd
        return verify_cmd.run(ctx, args)
    raise UsageError(f"unknown command {command!r}")


# Run by the agent when one answers (cli.agent_client.serve); `status` only with --probe.
SERVED = frozenset({"read", "get", "sessions", "search", "working-set"})


def execute(ctx, args) -> tuple[int, dict]:
    """Run one parsed command: (exit code, the envelope to print). The agent runs served
    commands through here too, so both paths answer the same bytes."""
    try:
        data, store = _dispatch(ctx, args)
        return 0, output.success_envelope(data, store)
    except CliError as exc:
        return exc.exit_code, output.failure_envelope(exc)
    except UnsafePathError as exc:
        error = StoreUnavailableError(f"refused: {exc.strerror}", code="STORE_UNSAFE_PATH")
        return error.exit_code, output.failure_envelope(error)
    except PermissionError as exc:  # e.g. a session directory of another owner or mode
        error = StoreUnavailableError(
            f"permission denied: {exc.filename or 'the store'}: this user may not read or write "
            "it; fix its owner or mode", code="STORE_PERMISSION_DENIED")
        return error.exit_code, output.failure_envelope(error)
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            return _unexpected(exc)
        error = NoRoomError(f"no space left on the device for the store ({exc.strerror}): "
                            "nothing was written; free some space (`agent-memory gc` removes "
                            "old confirmed files) and try again")
        return error.exit_code, output.failure_envelope(error)
    except Exception as exc:  # unexpected: still one JSON object, and the trace on stderr
        return _unexpected(exc)


def serve_command(argv: list[str], project_root: str, config_source: str | None,
                  route) -> dict:
    """A read-side command (SERVED, `status --probe`) the project's agent runs for a caller:
    this very code on the caller's arguments, in the agent's store and configuration, its fleet
    calls over the agent's open links (`route`): {"ok", "exit_code", "line"}, or {"ok": False,
    "error"} for arguments the agent does not serve. The shell hands this function to the agent
    (cli.watch_cmd), so the agent never reaches back up into the CLI."""
    from agent_memory.cli.context import Context
    try:
        args = build(command_in(argv)).parse_args(argv)
    except (SystemExit, CliError) as exc:  # the caller parsed it: never happens in use
        return {"ok": False, "error": f"arguments not served: {exc}"}
    if args.command not in SERVED and not (args.command == "status" and args.probe):
        return {"ok": False, "error": f"{args.command!r} is not served by the agent"}
    args.project_root = project_root
    args.config = config_source
    ctx = Context(args, route=route)
    try:
        rc, envelope = execute(ctx, args)
    finally:
        ctx.close()
    return {"ok": True, "exit_code": rc, "line": output.render(envelope)}


def _unexpected(exc: BaseException) -> tuple[int, dict]:
    import traceback
    traceback.print_exception(exc, file=sys.stderr)
    error = CliError(f"unexpected failure: {type(exc).__name__}: {exc}", code="INTERNAL_ERROR")
    return 1, output.failure_envelope(error)


def _check_utf8(argv: list[str]) -> None:
    """Every argument must be UTF-8 (bytes that are not arrive as lone surrogates)."""
    for position, token in enumerate(argv, 1):
        try:
            token.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise UsageError(f"argument {position} is not valid UTF-8 (at character "
                             f"{exc.start})") from None


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    parser = build(command_in(argv))
    ctx = None
    try:
        _check_utf8(argv)
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # --help: argparse printed the help text itself
            return int(exc.code or 0)
        if args.version:
            output.success({"version": VERSION}, "file")
            return 0
        if args.command is None:
            raise UsageError("no command given: run `agent-memory --help` for the list")
        if args.command in ("session", "config", "store", "agent") and args.action is None:
            raise UsageError(f"`{args.command}` needs an action: run "
                             f"`agent-memory {args.command} --help`")
        from agent_memory.cli.context import Context
        ctx = Context(args)
        if args.command in SERVED or (args.command == "status" and args.probe):
            from agent_memory.cli import agent_client
            served = agent_client.serve(ctx, args, argv)
            if served is not None:
                rc, line = served
                output.emit(line)
                return rc
        rc, envelope = execute(ctx, args)
        output.emit(output.render(envelope))
        if ctx.agent_wanted:  # no agent answered this command: start one for the next
            from agent_memory.cli import agent_client
            agent_client.after_command(ctx)
        return rc
    except CliError as exc:
        output.failure(exc)
        return exc.exit_code
    except KeyboardInterrupt:
        output.failure(CliError("interrupted", code="INTERRUPTED"))
        return 130
    finally:
        if ctx is not None:
            ctx.close()


if __name__ == "__main__":
    sys.exit(main())
