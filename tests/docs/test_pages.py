"""The README and docs/ as a reader meets them: the README stays short, every relative link and
anchor leads somewhere, and every `agent-memory ...` line a page shows parses through the real
parser (a renamed option breaks this test, not the reader). In-process, no subprocess."""

from __future__ import annotations

import argparse
import os

import pytest

from agent_memory.cli import parser as cli_parser
from agent_memory.cli.errors import CliError
from markdown import (ROOT, abbreviated, anchors, code_blocks, commands_in, links, pages, read,
                      shell_lines)

README_LINES = 150
# Pages other branches write (the LangChain middleware's guide, MCP over HTTP): linked from
# here already; checked like every other link once they exist.
WRITTEN_ELSEWHERE = {os.path.join("docs", "guide", "langchain.md"),
                     os.path.join("docs", "guide", "mcp-http.md")}


def test_the_readme_stays_short():
    lines = read("README.md").count("\n")
    assert lines <= README_LINES, (f"README.md has {lines} lines (at most {README_LINES}): move "
                                   "the detail into a page under docs/ and link it")


def test_the_readme_keeps_the_two_quick_start_commands():
    """`.ci/run` runs `make test`; the README promises `make run` and `make test`."""
    text = read("README.md")
    assert "make run    #" in text and "make test   #" in text


def _targets():
    for page in pages():
        for target in links(read(page)):
            if "://" in target or target.startswith("mailto:"):
                continue
            yield page, target


def test_every_relative_link_and_anchor_resolves():
    broken = []
    for page, target in _targets():
        path, _, anchor = target.partition("#")
        resolved = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
        if not os.path.exists(os.path.join(ROOT, resolved)):
            if resolved not in WRITTEN_ELSEWHERE:
                broken.append(f"{page}: {target}")
            continue
        if anchor and resolved.endswith(".md") and anchor not in anchors(read(resolved)):
            broken.append(f"{page}: {target} (no such heading)")
    assert broken == []


def test_the_link_check_can_fail():
    assert links("see [a](docs/nowhere.md) and `[b](c.md)`") == ["docs/nowhere.md"]
    assert "where-a-call-goes" in anchors(read(os.path.join("docs", "dev", "layout.md")))


def _command_lines():
    for page in pages():
        for language, body, _before in code_blocks(read(page)):
            if language not in ("", "sh", "console", "shell", "bash"):
                continue
            for line in shell_lines(body):
                for words in commands_in(line):
                    yield page, line, words


def test_every_agent_memory_line_in_the_docs_parses():
    seen, failures = 0, []
    for page, line, words in _command_lines():
        seen += 1
        if abbreviated(words):
            failures.append(f"{page}: {line}\n    not spelled out: {abbreviated(words)}")
            continue
        try:
            cli_parser.parse(words)
        except SystemExit as exc:  # --help: argparse printed it
            if exc.code:
                failures.append(f"{page}: {line}")
        except CliError as exc:
            failures.append(f"{page}: {line}\n    {exc.message}")
    assert seen > 80  # the pages' commands were found
    assert failures == [], "\n".join(failures)


def test_a_line_with_a_renamed_option_is_caught():
    (words,) = commands_in("agent-memory read --session-id s1 --page 2   # a typo")
    with pytest.raises(CliError):
        cli_parser.parse(words)
    assert isinstance(cli_parser.parse(["read", "--session-id", "s1"]), argparse.Namespace)
