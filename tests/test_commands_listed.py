"""The README's command list (under "### Commands") names exactly the commands the registry
declares (cli.commands), each action of a command with actions: a command added on one side
only fails here."""

from __future__ import annotations

import os
import re

from agent_memory.cli import registry

README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")


def command_list(readme: str) -> list[str]:
    """The lines of the README's command list: its first code block under "### Commands"."""
    section = readme.split("\n### Commands\n", 1)[1]
    block = section.split("```", 2)[1]
    return block.splitlines()[1:]


def listed(lines: list[str], with_actions: set[str]) -> set[str]:
    """The commands the list names: a line indented by two spaces starts with one (its action
    next, more after `|`: "agent start | stop | status"); an alias is said "(alias: NAME)"."""
    found = set()
    for line in lines:
        found.update(re.findall(r"\(alias: ([a-z-]+)\)", line))
        if not re.match(r"  [a-z]", line):
            continue
        words = line.split()
        name, at = words[0], 1
        if name not in with_actions:
            found.add(name)
            continue
        found.add(f"{name} {words[at]}")
        while at + 2 < len(words) and words[at + 1] == "|":
            at += 3 if words[at + 2] == name else 2
            found.add(f"{name} {words[at]}")
    return found


def declared() -> set[str]:
    names = set()
    for name, command in registry.commands().items():
        names.update({f"{name} {action}" for action in command.actions} or {name})
    return names


def with_actions() -> set[str]:
    return {name for name, command in registry.commands().items() if command.actions}


def test_the_readme_lists_every_command_the_registry_declares():
    with open(README, encoding="utf-8") as handle:
        lines = command_list(handle.read())
    assert listed(lines, with_actions()) == declared()


def test_a_command_on_one_side_only_is_seen():
    with open(README, encoding="utf-8") as handle:
        lines = command_list(handle.read())
    assert "archive" in listed([*lines, "  archive         [--older-than DURATION]"],
                               with_actions()) - declared()
    assert "agent restart" in listed([*lines, "  agent start | restart"], with_actions())
    assert listed([line for line in lines if not line.startswith("  embed ")],
                  with_actions()) != declared()
