"""A command called with typed values (an MCP tool's arguments, a Python API method's
parameters) instead of a command line: the
values checked by the command line's own checks (cli.option_types, the declared choices), with
argparse's words and exit 2, and put into the Namespace argparse would have made, without an
argv or a parse. And back: a parsed command's command line, for the one place that needs text,
the request to the project's agent."""

from __future__ import annotations

import argparse
import json

from agent_memory.cli import option_types
from agent_memory.cli.argv import options
from agent_memory.cli.commands import GLOBALS
from agent_memory.cli.errors import UsageError
from agent_memory.cli.registry import (FLAG, INTEGER, JSON, NAMES, POSITIONALS, SECONDS, TEXTS,
                                       Command, Option, command_of, commands)

_CHECKS = {INTEGER: option_types.integer, SECONDS: option_types.seconds}
_LISTS = (TEXTS, NAMES, POSITIONALS)


def command(words: list[str]) -> Command:
    """The command a command line's words name (`["session", "open"]`); UsageError in
    argparse's words for one it does not know."""
    found = commands().get(words[0]) if words else None
    if found is None:
        choices = ", ".join(repr(name) for name in commands())
        given = repr(words[0]) if words else "none"
        raise UsageError(f"agent-memory: argument COMMAND: invalid choice: {given} (choose "
                         f"from {choices})")
    if not found.actions:
        return found
    if len(words) < 2:
        from agent_memory.cli.parser import needs_action
        raise needs_action(found.name)
    action = found.actions.get(words[1])
    if action is None:
        choices = ", ".join(repr(name) for name in found.actions)
        given = repr(words[1])
        raise UsageError(f"agent-memory {found.name}: argument ACTION: invalid choice: {given} "
                         f"(choose from {choices})")
    return action


def namespace(command: Command, values: dict, global_values: dict) -> argparse.Namespace:
    """The Namespace of `command` with `values` (by option name; None: left out, the default
    applies) and the global options' `global_values` (by dest, checked as the command line
    checks them). UsageError as argparse words it for a value the command line would refuse,
    a required option missing, an unknown one."""
    prog = " ".join(["agent-memory", *command.words])
    parsed = {option.dest: option.default for option in GLOBALS}
    for option in GLOBALS:
        value = global_values.get(option.dest)
        if value is not None and value is not False:
            parsed[option.dest] = _checked("agent-memory", option, value)
    parsed.update(version=False, command=command.top.name)
    if command.parent is not None:
        parsed["action"] = command.name
    values = dict(values)
    missing = []
    for option in command.all_options:
        value = values.pop(option.name, None)
        if value is None or (value is False and option.kind == FLAG) \
                or (option.kind == POSITIONALS and not isinstance(value, str) and not value):
            if option.required:
                missing.append(option.metavar if option.positional else option.flag)
            parsed[option.dest] = list(option.default) if option.kind == TEXTS \
                else option.default
            continue
        parsed[option.dest] = _checked(prog, option, value)
    if missing:  # argparse's order: a required option missing is told first
        raise UsageError(f"{prog}: the following arguments are required: {', '.join(missing)}")
    unknown = options([], **values)  # None and False left out, as the command line does
    if unknown:
        raise UsageError(f"agent-memory: unrecognized arguments: {' '.join(unknown)}")
    return argparse.Namespace(**parsed)


def _checked(prog: str, option: Option, value):
    """One value as the command line's parse would give it."""
    if option.tool_pair is not None and isinstance(value, (list, tuple)):
        value = option.tool_pair.join(value)
    if option.kind == JSON and isinstance(value, dict):
        value = json.dumps(value, ensure_ascii=False)
    if option.kind == FLAG:
        return True
    if option.kind in _LISTS:
        items = [value] if isinstance(value, str) else list(value)
        return [_text(prog, option, item) for item in items]
    if option.kind in _CHECKS:
        try:  # the text the command line would have carried, checked whole as there
            value = _CHECKS[option.kind](str(value))
        except argparse.ArgumentTypeError as exc:
            raise UsageError(f"{prog}: argument {option.flag}: {exc}") from None
    else:
        value = _text(prog, option, value)
    if option.choices is not None and value not in option.choices:
        choices = ", ".join(repr(choice) for choice in option.choices)
        raise UsageError(f"{prog}: argument {option.flag}: invalid choice: {value!r} (choose "
                         f"from {choices})")
    return value


def _text(prog: str, option: Option, value) -> str:
    """A text value: UTF-8, as every argument of the command line must be."""
    if not isinstance(value, str):
        raise UsageError(f"{prog}: argument {option.flag}: not a text: {value!r}",
                         field=option.flag)
    at = option_types.not_utf8_at(value)
    if at is not None:
        raise UsageError(f"{prog}: argument {option.flag} is not valid UTF-8 (at character "
                         f"{at})", field=option.flag)
    return value


def argv_of(args: argparse.Namespace) -> list[str]:
    """The command line that parses to `args` (cli.argv.options: each option that differs from
    its default as `--name=value`), positionals after `--`."""
    command = command_of(args)
    changed, positionals = {}, []
    for option in (*GLOBALS, *command.all_options):
        value = getattr(args, option.dest)
        if value is None or value == option.default:
            continue
        if option.positional:
            positionals.extend(value if option.kind == POSITIONALS else [value])
        else:
            changed[option.name] = value
    argv = options(command.words, **changed)
    return [*argv, "--", *positionals] if positionals else argv
