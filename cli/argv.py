"""A command's argv from typed values, for the Python API (api.memory), which runs the CLI's own
code in process on it (the MCP server calls commands without one: cli.typed): each option as
`--name=value`, so a value starting with `-` stays a value and nothing is quoted (no shell ever
sees it). Standard library only."""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def options(command: list[str], **values: Any) -> list[str]:
    """`command`, then each option given (`_` written `-`): None and False are left out, True
    is a bare flag, a list or tuple repeats the option, a dict is its JSON."""
    argv = list(command)
    for name, value in values.items():
        if value is None or value is False:
            continue
        flag = "--" + name.replace("_", "-")
        if value is True:
            argv.append(flag)
        elif isinstance(value, (list, tuple)):
            argv.extend(f"{flag}={item}" for item in value)
        elif isinstance(value, dict):
            argv.append(f"{flag}={json.dumps(value, ensure_ascii=False)}")
        else:
            argv.append(f"{flag}={value}")
    return argv
