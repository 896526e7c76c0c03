"""A running reference fleet as a Python object: what tests, the pipeline and the benchmark hold.

    fleet = Fleet(data_dir).start()
    fleet.logger_port, fleet.embedder_port, fleet.config_path, fleet.control
    fleet.restart()        # stop the processes, start them again: same ports, same data
    fleet.stop()           # both process groups, queue workers included
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ops.fleet import launcher
from ops.fleet.control import FleetControl


class Fleet:
    def __init__(self, data: Path, embed_model: str = launcher.DEFAULT_MODEL,
                 logger_port: int = 0, embedder_port: int = 0,
                 faults: dict[str, dict[str, Any]] | None = None,
                 owner_pid: int | None = None, real_embedder: bool = False,
                 protocol: str = "http", token: str | None = None) -> None:
        self.owner_pid = owner_pid
        self.protocol = protocol
        self.token = token
        self.real_embedder = real_embedder
        if real_embedder:
            embed_model = "all-MiniLM-L6-v2"
        self.data_dir = Path(data).resolve()
        self.embedding_model = embed_model
        self.dimension = launcher.model_dimension(embed_model)
        self.logger_port = logger_port
        self.embedder_port = embedder_port
        self.initial_faults = faults
        self.logger_pid: int | None = None
        self.embedder_pid: int | None = None
        self.config_path: Path | None = None
        self.control = FleetControl(self.data_dir)
        self.running = False

    def start(self, timeout: float = 60.0) -> "Fleet":
        started = launcher.start(self.data_dir, self.logger_port, self.embedder_port,
                                 self.embedding_model, self.initial_faults, timeout,
                                 self.owner_pid, self.real_embedder, self.protocol, self.token)
        self.logger_port = started["logger"]["port"]
        self.logger_pid = started["logger"]["pid"]
        self.embedder_port = started["embedder"]["port"]
        self.embedder_pid = started["embedder"]["pid"]
        self.config_path = Path(started["config"])
        self.running = True
        return self

    def stop(self, grace: float = 5.0) -> dict[str, Any]:
        report = launcher.stop(self.data_dir, grace)
        self.running = False
        return report

    def restart(self, timeout: float = 60.0) -> "Fleet":
        """Go down for real (processes gone) and come back on the same ports with the same data."""
        self.stop()
        return self.start(timeout)

    def status(self) -> dict[str, Any]:
        return launcher.status(self.data_dir)

    # --- client construction, as agent-memory does it -------------------------------------------
    @property
    def security(self) -> dict[str, Any]:
        """How this fleet is reached (ops.fleet.security): protocol, token, certificate files."""
        from ops.fleet import security
        return security.read(self.data_dir)

    def logger_section(self, timeout: float = 10) -> dict[str, Any]:
        from ops.fleet import security
        return security.client_section(self.security, self.logger_port, timeout)

    def embedding_kwargs(self, timeout: float = 10) -> dict[str, Any]:
        from ops.fleet import security
        return security.embed_kwargs(self.security, self.embedder_port, timeout)

    def logger_client(self, timeout: float = 10):
        from ailogger_client import AiLoggerClient

        return AiLoggerClient(self.logger_section(timeout))

    def read_session(self, session_id: str) -> list[dict[str, Any]]:
        """Every message the logger holds for a session (full mode), following continuations."""
        import asyncio

        async def go() -> list[dict[str, Any]]:
            out: list[dict[str, Any]] = []
            continuation = None
            async with self.logger_client() as client:
                while True:
                    if continuation is None:
                        answer = await client.messages_read(
                            session_id=session_id, start_sequence_number=0, block_size=1000,
                            mode="full")
                    else:
                        answer = await client.messages_read(
                            session_id=session_id, continuation=continuation,
                            block_size=1000, mode="full")
                    data = answer["data"]
                    out.extend(data["messages"])
                    if not data["more"]:
                        return out
                    continuation = data["continuation"]
        return asyncio.run(go())

    def embedding_client(self, timeout: float = 10):
        from embed_client import EmbeddingClient

        return EmbeddingClient(**self.embedding_kwargs(timeout))

    def __repr__(self) -> str:
        return (f"Fleet(data={str(self.data_dir)!r}, logger={self.logger_port}, "
                f"embedder={self.embedder_port}, running={self.running})")
