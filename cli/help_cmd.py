"""`help TOPIC`: a help topic as the command's one JSON answer: the exit codes (the table of
cli.exit_codes, as every other place that states them), or the environment variables the
commands read (cli.commands.ENVIRONMENT)."""

from __future__ import annotations

from typing import Any

from agent_memory.cli.context import Context


def run(ctx: Context, args) -> tuple[dict[str, Any], str]:
    if args.topic == "exit-codes":
        from agent_memory.cli.exit_codes import TABLE
        return {"topic": "exit-codes", "exit_codes": [
            {"exit_code": row.code, "name": row.name, "meaning": row.meaning,
             "when": row.detail, "error_codes": list(row.error_codes)} for row in TABLE]}, "file"
    from agent_memory.cli.commands import ENVIRONMENT
    return {"topic": "environment", "variables": [
        {"name": name, "what": what} for name, what in ENVIRONMENT]}, "file"
