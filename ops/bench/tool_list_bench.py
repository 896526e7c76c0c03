"""Benchmark: what the MCP server's tool list costs a conversation. Every turn of a
conversation carries the `tools/list` answer, so its size is paid again and again: the
characters of its JSON (as sent: aliases, no nulls) and an estimate in tokens (4 characters a
token), for all tools and for each `--tools` group.

    python -m ops.bench.tool_list_bench

Prints one JSON object.
"""

from __future__ import annotations

import asyncio
import json

from agent_memory.mcpserve import tools as mcp_tools
from agent_memory.mcpserve.server import build_server


def measure(selection: str | None) -> dict[str, int]:
    server = build_server(lambda ctx, argv: None, mcp_tools.selected(selection))
    tools = asyncio.run(server.list_tools())
    listed = {"tools": [t.model_dump(mode="json", by_alias=True, exclude_none=True)
                        for t in tools]}
    chars = len(json.dumps(listed, ensure_ascii=False))
    return {"tools": len(tools), "chars": chars, "tokens": round(chars / 4)}


def main() -> None:
    report = {name or "all": measure(name) for name in (None, *mcp_tools.GROUPS)}
    print(json.dumps(report))


if __name__ == "__main__":
    main()
