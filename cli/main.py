"""Entry point: parse, dispatch, print exactly one JSON object, exit with the documented code."""

from __future__ import annotations

import sys

from agent_memory.cli import output
from agent_memory.cli.dispatch import SERVED, execute
from agent_memory.cli.errors import CliError, UsageError
from agent_memory.cli.parser import VERSION, build, command_in


def _check_utf8(argv: list[str]) -> None:
    """Every argument must be UTF-8 (bytes that are not arrive as lone surrogates)."""
    for position, token in enumerate(argv, 1):
        try:
            token.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise UsageError(f"argument {position} is not valid UTF-8 (at character "
                             f"{exc.start})") from None


def main(argv: list[str] | None = None) -> int:
    return run(sys.argv[1:] if argv is None else argv, output.emit)


def _to_stderr(line: str) -> None:
    sys.stderr.write(line)
    sys.stderr.flush()


def run(argv: list[str], emit, warm=None) -> int:
    """One command: its one JSON line handed to `emit` (main prints it; the MCP server,
    cli.mcp_cmd, keeps it as a tool's answer), then, when no agent answered, the agent started
    for the next command (after the answer: the caller waits on it); the exit code. `warm`
    (cli.warm.Warm): what a long-lived caller keeps between its commands."""
    parser = build(command_in(argv))
    ctx = None
    try:
        _check_utf8(argv)
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # --help: argparse printed the help text itself
            return int(exc.code or 0)
        if args.version:
            emit(output.render(output.success_envelope({"version": VERSION}, "file")))
            return 0
        if args.command is None:
            raise UsageError("no command given: run `agent-memory --help` for the list")
        if args.command in ("session", "config", "store", "agent") and args.action is None:
            raise UsageError(f"`{args.command}` needs an action: run "
                             f"`agent-memory {args.command} --help`")
        if args.command == "mcp":  # stdout is the protocol's channel: its closing answer is a log line
            emit = _to_stderr
        from agent_memory.cli.context import Context
        from agent_memory.cli.served import serve_command
        ctx = Context(args, serve_command=serve_command, run_argv=run, warm=warm)
        if args.command in SERVED or (args.command == "status" and args.probe):
            from agent_memory.cli import agent_client
            served = agent_client.serve(ctx, args, argv)
            if served is not None:
                rc, line = served
                emit(line)
                return rc
        rc, envelope = execute(ctx, args)
        emit(output.render(envelope))
        if ctx.agent_wanted:  # no agent answered this command: start one for the next
            from agent_memory.cli import agent_client
            agent_client.after_command(ctx)
        return rc
    except CliError as exc:
        emit(output.render(output.failure_envelope(exc)))
        return exc.exit_code
    except KeyboardInterrupt:
        emit(output.render(output.failure_envelope(CliError("interrupted", code="INTERRUPTED"))))
        return 130
    finally:
        if ctx is not None:
            ctx.close()


if __name__ == "__main__":
    sys.exit(main())
