"""Process entry of the reference logger: `python -m ops.fleet.logger.main --data DIR`.

Started by `ops.fleet up` in its own process group with QUEUEMGR_MP_START_METHOD=fork (the
queue worker then costs ~0.1 s per job instead of seconds). The SQLite file and the faults file
live in DIR, named to every process through the environment (ops.fleet.layout.DATA_ENV).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

from ops.fleet import layout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ops.fleet.logger.main")
    parser.add_argument("--data", required=True, type=Path)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--embed-port", type=int, default=None,
                        help="the embedder's port (default: the one announced in DATA)")
    parser.add_argument("--embed-model", default="hash-1024")
    args = parser.parse_args(argv)
    data = args.data.resolve()
    os.environ[layout.DATA_ENV] = str(data)
    os.environ.setdefault("QUEUEMGR_MP_START_METHOD", "fork")

    from ops.fleet.embedder.models import ModelRefusal, default_dimension
    from ops.fleet.logger import commands, forking, store
    from ops.fleet.logger.vectors import Vectorizer

    try:
        dimension = default_dimension(args.embed_model)
    except ModelRefusal as refusal:
        print(f"logger: {refusal.message}", file=sys.stderr)
        return 2
    store.connect(layout.db_path(data))  # create the schema before anything forks
    forking.install()  # before the queue manager exists: job starts stay O(1)
    commands.VECTORS = Vectorizer(data, args.embed_model, dimension, args.embed_port)

    def build_app(port: int):
        from mcp_proxy_adapter.api.app import create_app
        from mcp_proxy_adapter.commands.hooks import register_custom_commands_hook

        from ops.fleet.serve import base_app_config

        register_custom_commands_hook(commands.register)
        return create_app(title="reference-logger", description="agent-memory reference AI "
                          "Logger", version="1.0", app_config=base_app_config(port, queue=True))

    def background() -> list:
        return [commands.VECTORS.run(store.connect)]

    from ops.fleet.serve import serve

    asyncio.run(serve("logger", data, args.port, build_app, background))
    return 0


if __name__ == "__main__":
    sys.exit(main())
