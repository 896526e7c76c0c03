"""The public listener of a service: a byte pipe in front of the framework's server.

Two fault switches cannot be done inside an HTTP application: hanging up without an answer
(`drop`) and not listening at all (`down`). The gate owns the public port and forwards bytes
to the app's private socket, so it can close a connection instead of forwarding a request, and
close its listening socket (connect refused) and re-open it on the SAME port later while the
service process, its data and its queue keep running. WebSocket traffic (the embedder's /ws)
is just bytes to it.
"""

from __future__ import annotations

import asyncio
import os
import socket
from typing import Callable

from ops.fleet.faults import Faults

_CHUNK = 256 * 1024


class Gate:
    """Forward 127.0.0.1:`port` to 127.0.0.1:`upstream_port`, obeying drop/down."""

    def __init__(self, port: int, upstream_port: int, faults: Callable[[], Faults]) -> None:
        self.port = port
        self.upstream_port = upstream_port
        self.faults = faults
        self._server: asyncio.base_events.Server | None = None
        self._sock: socket.socket | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        # Processes forked later (the logger's queue) must not hold the public socket, or
        # `down` could not make connects fail while they live.
        os.register_at_fork(after_in_child=self._forget_in_child)

    def _forget_in_child(self) -> None:
        if self._sock is not None:
            try:
                self._sock.close()
            except OSError:
                pass

    @property
    def listening(self) -> bool:
        return self._server is not None

    def bind(self) -> socket.socket:
        """Bind the public socket now (port 0 = a free port), so the port is known early."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.port))
        self.port = sock.getsockname()[1]
        self._sock = sock
        return sock

    async def open(self, sock: socket.socket | None = None) -> None:
        if self._server is not None:
            return
        if sock is None:
            sock = self.bind()
        self._server = await asyncio.start_server(self._handle, sock=sock, backlog=512)

    async def close(self) -> None:
        """Stop listening and hang up every open connection (a service that went away)."""
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        for writer in list(self._writers):
            _abort(writer)
        await server.wait_closed()

    async def watch(self, interval: float = 0.02) -> None:
        """Follow the `down` switch for the life of the process."""
        while True:
            down = self.faults().down
            if down and self._server is not None:
                await self.close()
            elif not down and self._server is None:
                try:
                    await self.open()
                except OSError:
                    pass  # port still held (e.g. TIME_WAIT of a listener): retry next tick
            await asyncio.sleep(interval)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.faults().drop:
            _abort(writer)
            return
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except OSError:
            _abort(writer)
            return
        self._writers.update((writer, up_writer))
        try:
            await asyncio.gather(
                self._pipe(reader, up_writer, writer, check=True),
                self._pipe(up_reader, writer, up_writer, check=False),
            )
        finally:
            self._writers.discard(writer)
            self._writers.discard(up_writer)
            for w in (writer, up_writer):
                if not w.is_closing():
                    w.close()

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                    other: asyncio.StreamWriter, check: bool) -> None:
        try:
            while True:
                data = await reader.read(_CHUNK)
                if not data:
                    break
                if check and self.faults().drop:
                    _abort(writer)  # the request never reaches the app...
                    _abort(other)   # ...and the caller is hung up on
                    return
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            try:
                if writer.can_write_eof() and not writer.is_closing():
                    writer.write_eof()
            except (OSError, RuntimeError):
                pass


def _abort(writer: asyncio.StreamWriter) -> None:
    if writer.transport is not None:
        writer.transport.abort()
