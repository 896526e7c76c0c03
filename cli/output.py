"""The one JSON object each command prints on stdout."""

from __future__ import annotations

import json
import sys

TYPE_CHECKING = False  # typing costs the write path 3 ms: annotations only
if TYPE_CHECKING:
    from typing import Any

from agent_memory.cli.errors import CliError


def render(envelope: dict[str, Any]) -> str:
    """The exact line printed (the agent sends this line, so both paths print the same bytes).

    UTF-8 as it is, unless something in it cannot be UTF-8 (an argument that was not valid
    UTF-8 reaches us as lone surrogates, and may be quoted in an error): then the whole line is
    ASCII with JSON escapes, so stdout always carries one parseable JSON object."""
    line = json.dumps(envelope, ensure_ascii=False, separators=(",", ":"))
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        line = json.dumps(envelope, ensure_ascii=True, separators=(",", ":"))
    if _BREAKS.intersection(line):  # line breaks to some readers: escaped like the others
        line = line.translate(_ESCAPE_BREAKS)
    return line + "\n"


# Characters JSON leaves unescaped inside strings that Unicode-aware readers (Python's
# splitlines, JavaScript) take as line breaks; they can only occur inside strings here.
_BREAKS = frozenset("\x85\u2028\u2029")
_ESCAPE_BREAKS = {ord(c): f"\\u{ord(c):04x}" for c in _BREAKS}


def emit(line: str) -> None:
    sys.stdout.write(line)
    sys.stdout.flush()


def answer(emit, rc: int, envelope: dict[str, Any] | str) -> None:
    """A command's answer as the command line gives it (cli.main hands it to cli.perform, bound
    to its `emit`): the envelope's one line, or the line the agent printed for it, as it is."""
    emit(envelope if isinstance(envelope, str) else render(envelope))


def success_envelope(data: Any, store: str) -> dict[str, Any]:
    return {"success": True, "store": store, "data": data}


def failure_envelope(error: CliError) -> dict[str, Any]:
    body: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.details:
        body["details"] = error.details
    return {"success": False, "error": body}
