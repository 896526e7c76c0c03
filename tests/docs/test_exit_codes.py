"""The exit codes come from one table (cli/exit_codes.py): its constants, the CLI's failure
classes, the Python API's exceptions, the parser's help, `help exit-codes`, the generated
reference and the troubleshooting guide all agree with it, so a code added in one place only
fails here."""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import re

import agent_memory
from agent_memory import cli
from agent_memory.api import errors as api_errors
from agent_memory.cli import exit_codes, main
from agent_memory.cli import errors as cli_errors
from agent_memory.cli import parser as cli_parser
from markdown import read

CODES = {row.code for row in exit_codes.TABLE}


def _all_subclasses(cls) -> set[type]:
    found = set()
    for sub in cls.__subclasses__():
        found |= {sub, *_all_subclasses(sub)}
    return found


def test_the_table_and_its_constants_are_one():
    constants = {name: value for name, value in vars(exit_codes).items()
                 if name.isupper() and isinstance(value, int)}
    assert {row.name: row.code for row in exit_codes.TABLE} == constants
    assert len(CODES) == len(exit_codes.TABLE)  # no number twice
    assert exit_codes.MEANINGS == {row.code: row.meaning for row in exit_codes.TABLE}
    assert cli_errors.MEANINGS is exit_codes.MEANINGS and api_errors.MEANINGS is exit_codes.MEANINGS


def test_every_failure_class_of_the_command_line_carries_a_code_of_the_table():
    for info in pkgutil.iter_modules(cli.__path__):  # every command module, its classes too
        if not info.name.startswith(("mcp", "_")):  # the MCP SDK, and `python -m`
            importlib.import_module(f"agent_memory.cli.{info.name}")
    classes = _all_subclasses(cli_errors.CliError) | {cli_errors.CliError}
    strays = {f"{cls.__module__}.{cls.__name__}": cls.exit_code for cls in classes
              if cls.exit_code not in CODES}
    assert strays == {}, "failure classes whose exit code is not in cli/exit_codes.py"
    used = {cls.exit_code for cls in classes}
    unused = {row.code for row in exit_codes.TABLE if row.api_class} - used
    assert unused == set(), f"table rows no failure of the command line answers: {unused}"


def test_the_python_api_has_one_exception_per_failure_row():
    classes = {cls.__name__: cls for cls in _all_subclasses(api_errors.AgentMemoryError)}
    named = {row.api_class: row.code for row in exit_codes.TABLE if row.api_class}
    assert set(classes) == set(named), "api/errors.py and the table's api_class disagree"
    assert {name: cls.exit_code for name, cls in classes.items()} == named
    assert set(named) <= set(agent_memory.__all__), "exported from agent_memory (_LAZY)"
    assert set(api_errors._BY_EXIT_CODE) == set(named.values())
    for row in exit_codes.TABLE:
        if row.api_class:
            raised = api_errors.from_answer(row.code, {"code": "X", "message": "m"})
            assert type(raised).__name__ == row.api_class and raised.meaning == row.meaning


def test_the_help_states_every_code_of_the_table():
    epilog = cli_parser.build().epilog
    for row in exit_codes.TABLE:
        assert f"{row.code}: {row.meaning}" in epilog
    stated = {int(n) for n in re.findall(r"^(\d+): ", epilog, re.M)}
    assert stated == CODES


def test_help_exit_codes_answers_the_table():
    lines = []
    rc = main.run(["help", "exit-codes"], lines.append)
    answer = json.loads(lines[0])
    assert rc == 0 and answer["success"] is True
    assert [(e["exit_code"], e["name"], e["meaning"]) for e in answer["data"]["exit_codes"]] == \
        [(row.code, row.name, row.meaning) for row in exit_codes.TABLE]


def test_each_command_states_only_codes_of_the_table():
    from ops import docgen
    for command in docgen.commands():
        assert set(command.exit_codes) <= CODES, command.words


def test_the_docs_state_every_code_of_the_table():
    reference = read(os.path.join("docs", "reference", "cli.md"))
    table = reference[reference.index("## Exit codes"):]
    stated = {int(n) for n in re.findall(r"^\| (\d+) \|", table, re.M)}
    assert stated == CODES
    guide = read(os.path.join("docs", "guide", "troubleshooting.md"))
    headed = {int(n) for n in re.findall(r"^## Exit (\d+)\b", guide, re.M)}
    assert headed == CODES, ("docs/guide/troubleshooting.md needs one \"## Exit N\" section per "
                             "exit code of cli/exit_codes.py")
