"""Entry point: parse, dispatch, print exactly one JSON object, exit with the documented code."""

from __future__ import annotations

import sys
from functools import partial

from agent_memory.cli import output
from agent_memory.cli.errors import CliError
from agent_memory.cli.perform import INTERRUPTED, interrupted, perform
from agent_memory.cli.parser import VERSION, parse


def main(argv: list[str] | None = None) -> int:
    return run(sys.argv[1:] if argv is None else argv, output.emit)


def _to_stderr(line: str) -> None:
    sys.stderr.write(line)
    sys.stderr.flush()


def run(argv: list[str], emit, warm=None) -> int:
    """One command: its one JSON line handed to `emit` (main prints it), then, when no agent
    answered, the agent started for the next command (cli.perform); the exit code. `warm`
    (cli.warm.Warm): what a long-lived caller (the Python API) keeps between its commands."""
    try:
        try:
            args = parse(argv)
        except SystemExit as exc:  # --help: argparse printed the help text itself
            return int(exc.code or 0)
        if args.version:
            emit(output.render(output.success_envelope({"version": VERSION}, "file")))
            return 0
    except CliError as exc:
        emit(output.render(output.failure_envelope(exc)))
        return exc.exit_code
    except KeyboardInterrupt:
        emit(output.render(interrupted()))
        return INTERRUPTED
    if args.command == "mcp" and args.listen is None and not args.systemd_unit:
        emit = _to_stderr  # stdout is the stdio protocol's channel: its closing answer is a log line
    return perform(args, partial(output.answer, emit), lambda: argv, warm=warm)


if __name__ == "__main__":
    sys.exit(main())
