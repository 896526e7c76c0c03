"""What the doc tests read in the project's Markdown: its files, fenced code blocks, links, and
the `agent-memory ...` command lines a reader would type."""

from __future__ import annotations

import os
import re
import shlex

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def pages() -> list[str]:
    """README.md, CHANGELOG.md and every page under docs/, as paths relative to the root."""
    found = ["README.md", "CHANGELOG.md"]
    for folder, _dirs, files in os.walk(os.path.join(ROOT, "docs")):
        found += [os.path.relpath(os.path.join(folder, name), ROOT)
                  for name in sorted(files) if name.endswith(".md")]
    return sorted(found)


def read(page: str) -> str:
    with open(os.path.join(ROOT, page), encoding="utf-8") as handle:
        return handle.read()


FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)


def code_blocks(text: str) -> list[tuple[str, str, str]]:
    """(language, body, the text just before the block) of every fenced block."""
    return [(m.group(1), m.group(2), text[:m.start()].rstrip().rsplit("\n", 1)[-1])
            for m in FENCE.finditer(text)]


def shell_lines(body: str) -> list[str]:
    """The lines of a shell block, continuations (a trailing backslash) joined."""
    joined, lines = "", []
    for line in body.splitlines():
        if line.rstrip().endswith("\\"):
            joined += line.rstrip()[:-1] + " "
            continue
        lines.append(joined + line)
        joined = ""
    return lines


# Shell values a reader substitutes: each becomes a value of the right form, so the line parses
# as it would once typed.
PLACEHOLDERS = {"$FLEET_TOKEN": "token", "$PWD": "/tmp/project", "$HOME": "/home/you",
                "$M": "6f1c8f0e-4b8e-4d53-9d5e-8a3c1f2e7b10", "$USER": "you"}


SEPARATORS = {"&&", "||", ";", "|", "(", ")", "&"}
REDIRECTIONS = {">", ">>", "<", ">&", "<&", "&>"}


def commands_in(line: str) -> list[list[str]]:
    """The agent-memory command lines in one shell line, as the shell would split them (quotes
    kept whole): after `&&`, `;`, `|` or `(`, a `$ ` prompt, `VAR=value`, cron's schedule or
    another command's `--` (`claude mcp add NAME -- agent-memory mcp`); comments and
    redirections left out. [] when it runs no agent-memory."""
    for name, value in PLACEHOLDERS.items():
        line = line.replace(f'"{name}"', value).replace(name, value)
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.commenters = "#"
    lexer.wordchars += "$*?[]{}~:,=+@%^!"
    try:
        tokens = list(lexer)
    except ValueError:
        return []
    found, words, skip = [], [], False
    for token in tokens + [";"]:
        if skip:
            skip = False
            continue
        if token in REDIRECTIONS:
            if words and words[-1].isdigit():
                words.pop()  # 2>&1: the descriptor's number
            skip = True
            continue
        if token not in SEPARATORS:
            words.append(token)
            continue
        for at, word in enumerate(words):
            if word == "agent-memory" and (at == 0 or words[at - 1] == "--" or all(
                    re.fullmatch(r"[\d*/,-]+|\$|[A-Z_]+=.*", w) for w in words[:at])):
                found.append(words[at + 1:])  # after a prompt, VAR=value, cron's fields, `--`
                break
        words = []
    return found


LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def links(text: str) -> list[str]:
    """The targets of the Markdown links outside code blocks and inline code."""
    outside = FENCE.sub("", text)
    outside = re.sub(r"`[^`\n]*`", "", outside)
    return LINK.findall(outside)


def anchors(text: str) -> set[str]:
    """The anchors GitHub makes of a page's headings."""
    found = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *$", FENCE.sub("", text), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        found.add(slug)
    return found


def abbreviated(words: list[str]) -> list[str]:
    """The options of a command line that are not spelled out as declared (argparse takes an
    unambiguous prefix, `--older` for `--older-than`: a page must not rely on it, since a new
    option can make it ambiguous)."""
    from agent_memory.cli.commands import COMMANDS, GLOBALS
    declared = {"--help", "-h", "--version"}
    for option in GLOBALS:
        declared.update((option.flag, *option.aliases))
    for command in COMMANDS.values():
        for each in (command, *command.actions.values()):
            for option in each.all_options:
                declared.update((option.flag, *option.aliases))
    return [word.split("=", 1)[0] for word in words if word.startswith("--") and word != "--"
            and word.split("=", 1)[0] not in declared]
