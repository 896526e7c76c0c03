"""The one JSON object each command prints on stdout."""

from __future__ import annotations

import json
import sys

TYPE_CHECKING = False  # typing costs the write path 3 ms: annotations only
if TYPE_CHECKING:
    from typing import Any

from cli.errors import CliError


def render(envelope: dict[str, Any]) -> str:
    """The exact line printed (the agent sends this line, so both paths print the same bytes)."""
    return json.dumps(envelope, ensure_ascii=False, separators=(",", ":")) + "\n"


def emit(line: str) -> None:
    sys.stdout.write(line)
    sys.stdout.flush()


def success_envelope(data: Any, store: str) -> dict[str, Any]:
    return {"success": True, "store": store, "data": data}


def failure_envelope(error: CliError) -> dict[str, Any]:
    body: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.details:
        body["details"] = error.details
    return {"success": False, "error": body}


def success(data: Any, store: str) -> None:
    emit(render(success_envelope(data, store)))


def failure(error: CliError) -> None:
    emit(render(failure_envelope(error)))
