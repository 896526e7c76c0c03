"""The one JSON object each command prints on stdout."""

from __future__ import annotations

import json
import sys
from typing import Any

from cli.errors import CliError


def _write(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def success(data: Any, store: str) -> None:
    _write({"success": True, "store": store, "data": data})


def failure(error: CliError) -> None:
    body: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.details:
        body["details"] = error.details
    _write({"success": False, "error": body})
