"""The command line: argparse built from the command registry (cli.commands), with usage errors
raised as the JSON contract's; `parse` is the whole of it, in one call."""

from __future__ import annotations

import argparse
import os

TYPE_CHECKING = False  # typing costs the write path 3 ms: annotations only
if TYPE_CHECKING:
    from typing import NoReturn

    from agent_memory.cli.registry import Command, Option

from agent_memory.cli import option_types
from agent_memory.cli.commands import COMMANDS, GLOBALS
from agent_memory.cli import exit_codes
from agent_memory.cli.errors import UsageError
from agent_memory.cli.exit_codes import MEANINGS, OK, USAGE
from agent_memory.cli.registry import (FLAG, INTEGER, NAMES, POSITIONAL, POSITIONALS, SECONDS,
                                       TEXTS)

# The write path pays for every millisecond of start-up, and argparse spends some on what a
# command line that parses never shows: a translation lookup for each of its own messages
# (gettext stats the locale directories every time; no catalogue ships for it) and a help
# formatter per option that imports shutil for the terminal width. Messages stay argparse's
# English; the width comes from os directly (COLUMNS first, as shutil would).
argparse._ = lambda message: message
argparse.ngettext = lambda singular, plural, n: singular if n == 1 else plural


class _Formatter(argparse.HelpFormatter):
    """argparse's help, with the description and epilog kept line by line: a line is a
    paragraph, wrapped to the width; an indented line (an example's command) is kept as it is."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        import textwrap
        lines = []
        for line in text.splitlines():
            if line.startswith("  ") or not line:
                lines.append(indent + line)
            else:
                lines.append(textwrap.fill(line, width, initial_indent=indent,
                                           subsequent_indent=indent))
        return "\n".join(lines)


def _formatter(prog: str) -> argparse.HelpFormatter:
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(1).columns
        except OSError:
            columns = 80
    return _Formatter(prog, width=max(columns - 2, 20))


from agent_memory.sync.identity import VERSION  # noqa: E402 - one version string, read by the agent too


class Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as exceptions, so they print as the JSON contract."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("formatter_class", _formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


_TYPES = {INTEGER: option_types.integer, SECONDS: option_types.seconds}
_ACTIONS = {FLAG: "store_true", TEXTS: "append", NAMES: "extend"}


def add_option(parser, option: Option, suppress: bool = False) -> None:
    """One declared option as argparse's; `suppress`: a global option repeated after the
    command name, which must not overwrite the value given before it. Its earlier spellings
    (`aliases`) are accepted too, without a line in the help."""
    kwargs = {"help": argparse.SUPPRESS if option.hidden else
              option.described().replace("%", "%%")}
    if option.kind in _ACTIONS:
        kwargs["action"] = _ACTIONS[option.kind]
    if option.kind == NAMES:
        kwargs["nargs"] = "+"
    if option.kind in _TYPES:
        kwargs["type"] = _TYPES[option.kind]
    if option.choices is not None:
        kwargs["choices"] = option.choices
    if option.metavar is not None:
        kwargs["metavar"] = option.metavar
    if option.kind == POSITIONAL:
        parser.add_argument(option.flag, **kwargs)
        return
    if option.kind == POSITIONALS:
        parser.add_argument(option.flag, nargs="+", **kwargs)
        return
    if option.required:
        kwargs["required"] = True
    if option.dest != option.name:
        kwargs["dest"] = option.dest
    kwargs["default"] = argparse.SUPPRESS if suppress else option.default
    parser.add_argument(option.flag, **kwargs)
    if option.aliases:
        kwargs.update(help=argparse.SUPPRESS, dest=option.dest, default=argparse.SUPPRESS)
        kwargs.pop("required", None)
        parser.add_argument(*option.aliases, **kwargs)


def _globals(parser: argparse.ArgumentParser, suppress: bool) -> None:
    """The global options, accepted before or after the command name."""
    for option in GLOBALS:
        add_option(parser, option, suppress)


def _command(sub: argparse._SubParsersAction, command: Command) -> None:
    """A (sub)command parser with its options, its actions', and the global options again."""
    parser = sub.add_parser(command.name, help=command.help, description=_described(command),
                            epilog=_epilog(command))
    _globals(parser, suppress=True)
    groups = {name: parser.add_argument_group(name, description)
              for name, description in command.groups.items()}
    for option in command.all_options:
        add_option(groups[option.group] if option.group else parser, option)
    if command.actions:
        actions = parser.add_subparsers(dest="action", metavar="ACTION", parser_class=Parser)
        for action in command.actions.values():
            _command(actions, action)


def _described(command: Command) -> str:
    """A command's --help description: its line, then its description's paragraphs."""
    if not command.description:
        return command.help
    return command.help + "\n\n" + " ".join(command.description.split())


def _epilog(command: Command) -> str | None:
    """A command's --help epilog: its examples, then the exit codes it can answer."""
    if command.actions:
        return None  # each action has its own
    lines = []
    if command.examples:
        lines.append("examples:")
        for example in command.examples:
            lines += [f"  # {example.says}", f"  {example.line}"]
        lines.append("")
    lines.append("exit codes (all of them: agent-memory help exit-codes):")
    lines += [f"{code}: {MEANINGS[code]}" for code in sorted({OK, USAGE, *command.exit_codes})]
    return "\n".join(lines)


_VALUED_GLOBALS = tuple(o.flag for o in GLOBALS if o.kind != FLAG)


def command_in(argv: list[str]) -> str | None:
    """The command name in `argv` (the first word that is not a global option or its value)."""
    at = _command_at(argv)
    return None if at is None else argv[at]


def _command_at(argv: list[str]) -> int | None:
    """Where the command name is in `argv`, or None."""
    skip = False
    for index, token in enumerate(argv):
        if skip:
            skip = False
            continue
        if token in _VALUED_GLOBALS:
            skip = True
            continue
        if not token.startswith("-"):
            return index
    return None


def parse(argv: list[str]) -> argparse.Namespace:
    """A command line parsed, with only its own command's options built (`build`): every
    argument UTF-8, argparse's parse, and a command (with its action) named unless --version
    is asked. UsageError for any fault; SystemExit for --help, whose text argparse printed."""
    at = _command_at(argv)
    only = None if at is None else argv[at]
    # the command alone when nothing before it asks the top level's help, which lists them all
    lean = only in COMMANDS and not any(token.startswith(("-h", "--h")) for token in argv[:at])
    parser = build(only, lean=lean)
    bad = option_types.first_not_utf8(argv)
    if bad is not None:  # bytes that are not UTF-8 arrive as lone surrogates
        raise _not_utf8(argv, *bad)
    args = parser.parse_args(argv)
    if args.version:
        return args
    if args.command is None:
        raise UsageError("no command given: run `agent-memory --help` for the list")
    if COMMANDS[args.command].actions and args.action is None:
        raise needs_action(args.command)
    return args


def needs_action(command: str) -> UsageError:
    """A command with actions named without one (`agent-memory session`)."""
    return UsageError(f"`{command}` needs an action: run `agent-memory {command} --help`")


def _not_utf8(argv: list[str], position: int, at: int) -> UsageError:
    """The usage error for argument `position` (from 1), not UTF-8 from character `at`: it names
    the option whose value it is (`--text=...`, or the word after a valued option), in the words
    a typed call (MCP, the Python API) uses for the same value; else its position."""
    token, options, prog = argv[position - 1], {}, "agent-memory"
    where = _command_at(argv)
    command = COMMANDS.get(argv[where]) if where is not None else None
    positionals = []
    if command is not None:
        after = argv[where + 1:]
        action = command.actions.get(after[0]) if command.actions and after else None
        if action is not None:
            command, where = action, where + 1
        prog = " ".join(["agent-memory", *command.words])
        options = {option.flag: option for option in command.all_options}
        positionals = [option for option in command.all_options if option.positional]
    options.update((option.flag, option) for option in GLOBALS)
    ended = "--" in argv[:position - 1]  # after `--`, every word is a positional
    flag = None
    if not ended and token.startswith("--") and token.split("=", 1)[0] in options:
        flag = token.split("=", 1)[0]
        at -= len(flag) + 1  # counted in the value, as when it is a word of its own
    elif not ended and position >= 2 and argv[position - 2] in options \
            and options[argv[position - 2]].kind != FLAG:
        flag = argv[position - 2]
    elif (ended or not token.startswith("-")) and len(positionals) == 1 \
            and where is not None and position - 1 > where:
        flag = positionals[0].metavar  # the command's one positional, as argparse names it
    if flag is None:
        return UsageError(f"argument {position} is not valid UTF-8 (at character {at})")
    return UsageError(f"{prog}: argument {flag} is not valid UTF-8 (at character {at})",
                      field=flag)


def build(only: str | None = None, lean: bool = False) -> Parser:
    """The parser. With `only`, just that command gets its options; the others are listed by
    name (`lean`: left out, for a command line naming `only` and not asking the top level's
    help), which keeps start-up short on the write path (an agent pays it on every message)."""
    parser = Parser(
        prog="agent-memory",
        description="Record and read AI agents' dialogue messages. Every write lands first in "
                    "the project's append-only outbox (.agent-memory/) and is forwarded to the "
                    "fleet's AI Logger. Every command prints one JSON object on stdout.",
        epilog="Run `agent-memory COMMAND --help` for a command's options and examples.\n\n"
               "exit codes (agent-memory help exit-codes):\n" + "\n".join(
                   f"{row.code}: {row.meaning}" for row in exit_codes.TABLE))
    _globals(parser, suppress=False)
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for name, command in COMMANDS.items():
        if only is not None and name != only:
            if not lean:
                commands.add_parser(name, help=command.help)
        else:
            _command(commands, command)
    return parser
