"""Entry point: parse, dispatch, print exactly one JSON object, exit with the documented code."""

from __future__ import annotations

import sys

from cli import output
from cli.errors import CliError, StoreUnavailableError, UsageError
from outbox.atomic import UnsafePathError
from cli.parser import VERSION, build, command_in


def _dispatch(ctx, args) -> tuple[object, str]:
    command = args.command
    if command == "session":
        from cli import session_cmd
        return session_cmd.run(ctx, args)
    if command == "write":
        from cli import write_cmd
        return write_cmd.run(ctx, args)
    if command in ("read", "get", "sessions"):
        from cli import read_cmd
        return read_cmd.run(ctx, args)
    if command in ("search", "working-set"):
        from cli import retrieval_cmd
        return retrieval_cmd.run(ctx, args)
    if command == "embed":
        from cli import embed_cmd
        return embed_cmd.run(ctx, args)
    if command in ("sync", "import"):
        from cli import sync_cmd
        return sync_cmd.run(ctx, args)
    if command == "status":
        from cli import status_cmd
        return status_cmd.run(ctx, args)
    if command == "config":
        from cli import config_cmd
        return config_cmd.run(ctx, args)
    if command == "store":
        from cli import store_cmd
        return store_cmd.run(ctx, args)
    raise UsageError(f"unknown command {command!r}")


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    parser = build(command_in(argv))
    ctx = None
    try:
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # --help: argparse printed the help text itself
            return int(exc.code or 0)
        if args.version:
            output.success({"version": VERSION}, "file")
            return 0
        if args.command is None:
            raise UsageError("no command given: run `agent-memory --help` for the list")
        if args.command in ("session", "config", "store") and args.action is None:
            raise UsageError(f"`{args.command}` needs an action: run "
                             f"`agent-memory {args.command} --help`")
        from cli.context import Context
        ctx = Context(args)
        data, store = _dispatch(ctx, args)
        output.success(data, store)
        return 0
    except CliError as exc:
        output.failure(exc)
        return exc.exit_code
    except UnsafePathError as exc:
        error = StoreUnavailableError(f"refused: {exc.strerror}", code="STORE_UNSAFE_PATH")
        output.failure(error)
        return error.exit_code
    except KeyboardInterrupt:
        output.failure(CliError("interrupted", code="INTERRUPTED"))
        return 130
    except Exception as exc:  # unexpected: still one JSON object, and the trace on stderr
        import traceback
        traceback.print_exc(file=sys.stderr)
        output.failure(CliError(f"unexpected failure: {type(exc).__name__}: {exc}",
                                code="INTERNAL_ERROR"))
        return 1
    finally:
        if ctx is not None:
            ctx.close()


if __name__ == "__main__":
    sys.exit(main())
