"""One command at a time, in this process, by the command line's own code (`cli.main.run` on
the command's argv): the same validation, outbox write, forwarding through the
project's agent (started after the command in auto mode, as the CLI does), budgets and answers.

The CLI's code assumes one command per process at a time, so calls from any thread (or event
loop) are serialized by one process-wide lock. The process keeps its configuration and stores
warm between calls (cli.warm), as the MCP server does."""

from __future__ import annotations

import json
import threading
from typing import Any

_LOCK = threading.Lock()
_WARM = None  # cli.warm.Warm, made by the first call: the process's configuration and stores


def _warm():
    global _WARM
    if _WARM is None:
        from agent_memory.cli.warm import Warm
        _WARM = Warm()
    return _WARM


def run(argv: list[str]) -> tuple[int, dict[str, Any]]:
    """(exit code, the command's JSON answer as a dict)."""
    from agent_memory.cli import agent_client
    from agent_memory.cli.main import run as run_argv
    lines: list[str] = []
    with _LOCK:
        agent_client.reap_started()
        rc = run_argv(argv, lines.append, warm=_warm())
    if len(lines) != 1:  # only --help prints otherwise; no method asks for it
        return 1, {"success": False, "error": {
            "code": "INTERNAL_ERROR", "message": f"the command answered {len(lines)} lines"}}
    return rc, json.loads(lines[0])


def answer(argv: list[str]) -> tuple[str, Any]:
    """(store, data) of a command that succeeded; its failure raised as an AgentMemoryError
    (KeyboardInterrupt when it was interrupted)."""
    rc, envelope = run(argv)
    if envelope.get("success"):
        return envelope.get("store", "file"), envelope.get("data")
    error = envelope.get("error") or {}
    if error.get("code") == "INTERRUPTED":
        raise KeyboardInterrupt
    from agent_memory.api.errors import from_answer
    raise from_answer(rc, error)
