"""Process entry of the reference embedder: `python -m ops.fleet.embedder.main --data DIR`.

Started by `ops.fleet up` in its own process group; logs go to the file it is given as
stdout/stderr, never to the caller of `up`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

from ops.fleet import layout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ops.fleet.embedder.main")
    parser.add_argument("--data", required=True, type=Path)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--model", default=None)
    args = parser.parse_args(argv)
    os.environ[layout.DATA_ENV] = str(args.data.resolve())

    from ops.fleet.embedder import commands, models

    if args.model:
        os.environ[commands.MODEL_ENV] = args.model
    try:
        models.check_default(commands.default_model_name())
    except models.ModelRefusal as refusal:
        print(f"embedder: cannot serve model: {refusal.message}", file=sys.stderr)
        return 2

    def build_app(port: int):
        from mcp_proxy_adapter.api.app import create_app
        from mcp_proxy_adapter.commands.command_registry import registry

        from ops.fleet.serve import base_app_config

        for cls in commands.COMMANDS:
            registry.register(cls, "custom")
        return create_app(title="reference-embedder", description="agent-memory reference "
                          "embedding service", version="1.0", app_config=base_app_config(
                              port, queue=False))

    from ops.fleet.serve import serve

    asyncio.run(serve("embedder", args.data, args.port, build_app))
    return 0


if __name__ == "__main__":
    sys.exit(main())
