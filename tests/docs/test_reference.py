"""The registry is the one source of the reference: the generated pages match it byte for byte,
every option has help and states its default there (not in its help's prose), every command
has an example, and every example parses through the real parser. All in-process: no
subprocess per example."""

from __future__ import annotations

import argparse
import shlex

import pytest

from agent_memory.cli import parser as cli_parser
from agent_memory.cli.budget import DEFAULT_CLI, DEFAULT_MCP
from agent_memory.cli.commands import BUDGET, ENVIRONMENT, GLOBALS
from agent_memory.cli.errors import CliError
from agent_memory.cli.registry import commands
from markdown import abbreviated
from ops import docgen


def declared():
    """Every command and action, with its options (the global ones under "agent-memory")."""
    found = [("agent-memory", GLOBALS)]
    for command in docgen.commands():
        found.append((" ".join(command.words), command.all_options))
    return found


def parses(words: list[str]) -> argparse.Namespace:
    """A command line through the real parser (--help counts as parsing: argparse prints it)."""
    try:
        return cli_parser.parse(words)
    except SystemExit as exc:
        assert exc.code == 0, words
        return argparse.Namespace()


def test_the_generated_reference_is_what_the_registry_renders_now():
    assert docgen.stale() == [], ("the reference is out of date with the command registry: run "
                                  "`make docs` and commit docs/reference/")


def test_every_option_has_help():
    missing = [f"{where} {option.flag}" for where, options in declared() for option in options
               if not (option.help or "").strip()]
    assert missing == [], f"options without help (give them help= in cli/commands.py): {missing}"


def test_defaults_are_declared_not_written_into_the_help():
    """A default stated in a help's prose drifts from the code: it belongs in `default` (the
    parse's) or `default_text` (worked out later), which the help and the reference show."""
    in_prose = [f"{where} {option.flag}" for where, options in declared() for option in options
                if "default" in (option.help or "").lower()]
    assert in_prose == [], f"defaults written in help texts: {in_prose}"
    budget = {option.flag: option for option in BUDGET}["--max-chars"]
    assert str(DEFAULT_CLI) in budget.default_text and str(DEFAULT_MCP) in budget.default_text


def test_every_command_has_an_example_and_each_parses_to_its_command():
    without = [" ".join(c.words) for c in docgen.commands() if not c.examples]
    assert without == [], f"commands without an example: {without}"
    for command in docgen.commands():
        for example in command.examples:
            words = shlex.split(example.line)
            assert words[0] == "agent-memory", example.line
            assert abbreviated(words) == [], example.line
            args = parses(words[1:])
            assert args.command == command.top.name, example.line
            if command.parent is not None:
                assert args.action == command.name, example.line


def test_an_example_with_a_renamed_option_fails_to_parse():
    """The check above can fail: a line with an option the parser does not know is refused."""
    with pytest.raises(CliError):
        cli_parser.parse(["search", "--query", "q", "--scope", "session", "--page-number", "2"])


def test_every_environment_variable_an_option_names_is_listed():
    listed = {name for name, _what in ENVIRONMENT}
    named = {option.env for _where, options in declared() for option in options if option.env}
    assert named <= listed


def test_earlier_spellings_still_parse_to_the_same_options():
    old = parses(["search", "--query", "q", "--scope", "project", "--target", "p",
                  "--page-offset", "2"])
    new = parses(["search", "--query", "q", "--scope", "project", "--target", "p",
                  "--offset", "2"])
    assert old.page_offset == new.page_offset == 2


def test_a_command_help_shows_its_examples_exit_codes_and_defaults(monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")  # one line per option, whatever the terminal
    built = cli_parser.build("write")
    sub = next(a for a in built._actions if isinstance(a, argparse._SubParsersAction))
    text = sub.choices["write"].format_help()
    assert "examples:" in text and "exit codes" in text
    assert "agent-memory write --session-id chat-42" in text
    assert "[env: AGENT_MEMORY_EMBED_BUDGET]" in text and "(human|model|tool|system)" in text


def test_hidden_options_stay_out_of_the_help_and_the_reference():
    sync = commands()["sync"]
    hidden = [option.flag for option in sync.options if option.hidden]
    assert hidden == ["--autostarted"]
    built = cli_parser.build("sync")
    sub = next(a for a in built._actions if isinstance(a, argparse._SubParsersAction))
    assert "--autostarted" not in sub.choices["sync"].format_help()
    assert "--autostarted" not in docgen.render_cli()


def _parsed(argv: list[str], lean: bool):
    """What a parser built for `argv`'s command (lean or not) makes of it: the options, or
    the exit and what it printed (--help), or the error."""
    import contextlib
    import io
    at = cli_parser._command_at(argv)
    built = cli_parser.build(None if at is None else argv[at], lean=lean)
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            return sorted(vars(built.parse_args(argv)).items(), key=str)
    except SystemExit as exc:
        return ("exit", exc.code, out.getvalue(), err.getvalue())
    except CliError as exc:
        return ("error", str(exc))


def test_the_lean_parser_answers_every_command_line_as_the_whole_one(monkeypatch):
    """The parser a command line gets holds its command alone (the others cost the write path
    their parsers): parsed, helped or refused, every command line answers the same as with
    every command listed; one asking the top level's help gets them all."""
    monkeypatch.setenv("COLUMNS", "120")
    heads = [[], ["--store", "file"], ["--version"], ["--bogus"]]
    tails = [[], ["--help"], ["--bogus"], ["x"], ["--session-id", "s"], ["--store", "nope"],
             ["open", "--help"], ["--", "x"]]
    compared = 0
    for name in commands():
        for head in heads:
            for tail in tails:
                argv = [*head, name, *tail]
                assert _parsed(argv, lean=True) == _parsed(argv, lean=False), argv
                compared += 1
    assert compared > 500
    import contextlib
    import io
    for argv in (["--help", "write"], ["--he", "read"], ["--no-agent", "-h", "sync"]):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
            cli_parser.parse(argv)
        assert all(f"\n    {name} " in out.getvalue() for name in commands()), argv
