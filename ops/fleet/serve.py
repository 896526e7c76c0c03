"""Run one service process: the framework app on a private socket, the gate on the public port.

Shared by the logger and the embedder so both start, announce readiness and stop the same way:
the app is served by hypercorn on a private loopback socket, over TLS when the fleet's security
says so (ops.fleet.security); every HTTP request first waits the
`delay` switch; the gate (ops.fleet.gate) owns the public port and implements `drop`/`down`.
Readiness is announced by writing `<service>.ready` ({"port", "pid"}) in the data directory once
the app answers on its private socket, which is what `ops.fleet up` waits for.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import socket
from pathlib import Path
from typing import Any, Callable

from ops.fleet import layout, security
from ops.fleet.delivery import with_lean_delivery
from ops.fleet.faults import FaultReader, Faults
from ops.fleet.gate import Gate


def with_delay(app: Any, faults: Callable[[], Faults]) -> Any:
    """ASGI wrapper: hold every HTTP request for the `delay` switch before handling it."""

    async def delayed(scope: dict, receive: Any, send: Any) -> None:
        if scope.get("type") == "http":
            delay = faults().delay
            if delay > 0:
                await asyncio.sleep(delay)
        await app(scope, receive, send)

    return delayed


async def _answers(port: int, path: str = "/health", timeout: float = 2.0,
                   context: Any = None) -> bool:
    """One HTTP GET on loopback (over TLS with `context`); True on a 200 answer."""
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(
            "127.0.0.1", port, ssl=context,
            server_hostname="127.0.0.1" if context is not None else None), timeout)
    except (OSError, asyncio.TimeoutError):
        return False
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        await writer.drain()
        line = await asyncio.wait_for(reader.readline(), timeout)
        return b" 200 " in line
    except (OSError, asyncio.TimeoutError):
        return False
    finally:
        writer.close()


def write_ready(data: Path, service: str, port: int) -> None:
    path = layout.ready_path(data, service)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"port": port, "pid": os.getpid()}))
    os.replace(tmp, path)


def base_app_config(port: int, queue: bool) -> dict[str, Any]:
    """The adapter configuration both services share (loopback, no registration; the token of
    the fleet's security, when it has one: ops.fleet.security)."""
    config: dict[str, Any] = {
        "server": {"host": "127.0.0.1", "port": port, "protocol": "http", "debug": False,
                   "log_level": "WARNING"},
        "registration": {"enabled": False},
        "queue_manager": {"enabled": False},
        **security.app_auth(security.read(layout.data_dir_from_env())),
    }
    if queue:
        config["queue_manager"] = {
            "enabled": True,
            "in_memory": True,
            "max_concurrent_jobs": 2,
            "shutdown_timeout": 3.0,
            "completed_job_retention_seconds": 600,
            # Each retained job keeps its parameters and result in the queue processes; the
            # adapter's default cap is derived from RLIMIT_NOFILE (thousands). Swept every 60 s.
            "max_retained_terminal_jobs": 64,
        }
    return config


async def watch_owner(owner: int, interval: float = 1.0) -> None:
    """Stop the whole fleet process group once the owner process is gone: the same SIGTERM
    that `down` sends, so every service and queue worker shuts down the usual way."""
    while True:
        await asyncio.sleep(interval)
        try:
            os.kill(owner, 0)
        except ProcessLookupError:
            os.killpg(os.getpgid(0), signal.SIGTERM)
            return
        except PermissionError:
            continue


async def serve(service: str, data: Path, port: int, build_app: Callable[[int], Any],
                background: Callable[[], list] | None = None) -> None:
    """Serve until SIGTERM/SIGINT. `build_app(public_port)` returns the ASGI app."""
    import hypercorn.asyncio
    import hypercorn.config

    logging.getLogger().setLevel(logging.WARNING)
    data = Path(data)
    reader = FaultReader(layout.faults_path(data), service)
    secured = security.read(data)

    private = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    private.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    private.bind(("127.0.0.1", 0))
    private_port = private.getsockname()[1]

    # The gate reads the switches on its own thread, through a reader of its own.
    gate = Gate(port, private_port, FaultReader(layout.faults_path(data), service).current)
    public = gate.bind()  # fail early (port taken) and learn the port; listen comes later

    app = with_delay(with_lean_delivery(build_app(gate.port)), reader.current)
    cfg = hypercorn.config.Config()
    cfg.bind = [f"fd://{private.fileno()}"]
    cfg.loglevel = "WARNING"
    cfg.accesslog = None
    cfg.keep_alive_timeout = 75
    cfg.graceful_timeout = 2
    security.serve_tls(cfg, secured)
    context = security.client_context(secured)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)

    server = asyncio.create_task(hypercorn.asyncio.serve(app, cfg, shutdown_trigger=stop.wait))
    tasks: list[asyncio.Task] = []
    try:
        while not await _answers(private_port, timeout=5.0, context=context):
            if server.done():
                server.result()  # raise the reason it stopped
                raise RuntimeError(f"{service}: server stopped before answering")
            await asyncio.sleep(0.01)
        gate.start(public)
        for coro in (background() if background else []):
            tasks.append(asyncio.create_task(coro))
        if os.environ.get(layout.OWNER_ENV, "").isdigit():
            tasks.append(asyncio.create_task(watch_owner(int(os.environ[layout.OWNER_ENV]))))
        write_ready(data, service, gate.port)
        await server
    finally:
        for task in tasks:
            task.cancel()
        gate.stop()
        try:
            layout.ready_path(data, service).unlink()
        except FileNotFoundError:
            pass
