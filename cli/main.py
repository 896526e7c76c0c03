"""Entry point: parse, dispatch, print exactly one JSON object, exit with the documented code."""

from __future__ import annotations

import sys

from agent_memory.cli import output, registry
from agent_memory.cli.errors import CliError, UsageError
from agent_memory.cli.option_types import not_utf8_at
from agent_memory.cli.perform import INTERRUPTED, interrupted, perform
from agent_memory.cli.parser import VERSION, build, command_in


def _check_utf8(argv: list[str]) -> None:
    """Every argument must be UTF-8 (bytes that are not arrive as lone surrogates)."""
    for position, token in enumerate(argv, 1):
        at = not_utf8_at(token)
        if at is not None:
            raise UsageError(f"argument {position} is not valid UTF-8 (at character {at})")


def main(argv: list[str] | None = None) -> int:
    return run(sys.argv[1:] if argv is None else argv, output.emit)


def _to_stderr(line: str) -> None:
    sys.stderr.write(line)
    sys.stderr.flush()


def run(argv: list[str], emit, warm=None) -> int:
    """One command: its one JSON line handed to `emit` (main prints it), then, when no agent
    answered, the agent started for the next command (cli.perform); the exit code. `warm`
    (cli.warm.Warm): what a long-lived caller (the Python API) keeps between its commands."""
    parser = build(command_in(argv))
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
        if registry.commands()[args.command].actions and args.action is None:
            raise UsageError(f"`{args.command}` needs an action: run "
                             f"`agent-memory {args.command} --help`")
    except CliError as exc:
        emit(output.render(output.failure_envelope(exc)))
        return exc.exit_code
    except KeyboardInterrupt:
        emit(output.render(interrupted()))
        return INTERRUPTED
    if args.command == "mcp":  # stdout is the protocol's channel: its closing answer is a log line
        emit = _to_stderr

    def answer(rc: int, envelope) -> None:
        emit(envelope if isinstance(envelope, str) else output.render(envelope))

    return perform(args, answer, lambda: argv, warm=warm)


if __name__ == "__main__":
    sys.exit(main())
