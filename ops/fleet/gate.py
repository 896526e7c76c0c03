"""The public listener of a service: a byte pipe in front of the framework's server.

Two fault switches cannot be done inside an HTTP application: hanging up without an answer
(`drop`) and not listening at all (`down`). The gate owns the public port and forwards bytes
to the app's private socket, so it can close a connection instead of forwarding a request, and
close its listening socket (connect refused) and re-open it on the SAME port later while the
service process, its data and its queue keep running. WebSocket traffic (the embedder's /ws)
is just bytes to it.

The gate runs its own event loop on its own thread: the app's handlers do blocking sqlite work
(a write can wait up to 30 s for a lock the queue worker holds), and a gate on the app's loop would
then stop following `down`/`up` and stop forwarding, which is not the fault asked for.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import threading
from typing import Callable

from ops.fleet.faults import Faults

_CHUNK = 256 * 1024
_HANGUP_GRACE = 1.0  # seconds the app may still answer a caller that has hung up


class Gate:
    """Forward 127.0.0.1:`port` to 127.0.0.1:`upstream_port`, obeying drop/down."""

    def __init__(self, port: int, upstream_port: int, faults: Callable[[], Faults]) -> None:
        self.port = port
        self.upstream_port = upstream_port
        self.faults = faults
        self._server: asyncio.base_events.Server | None = None
        self._sock: socket.socket | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._failed_start: Exception | None = None
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
        """Bind the public socket now (port 0 = a free port), so the port is known early.

        Made with protocol IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets whose
        protocol number says TCP, and accepted sockets take the listener's. Without it an
        answer's body waits behind its headers for the client's delayed ACK (40 ms on Linux)."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
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

    def start(self, sock: socket.socket) -> None:
        """Serve on a thread of its own: listen on `sock` unless `down`, then follow `down`."""
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(self._run(sock, ready))
            finally:
                loop.close()

        self._thread = threading.Thread(target=run, name="gate", daemon=True)
        self._thread.start()
        ready.wait()
        if self._failed_start is not None:  # e.g. listen() refused: the service cannot start
            raise self._failed_start

    def stop(self, timeout: float = 5.0) -> None:
        """Stop listening, hang up every connection, and end the gate's thread."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        try:
            loop.call_soon_threadsafe(self._stopping.set)
        except RuntimeError:
            pass  # the loop already ended
        thread.join(timeout)

    async def _run(self, sock: socket.socket, ready: threading.Event) -> None:
        self._stopping = asyncio.Event()
        try:
            if not self.faults().down:
                await self.open(sock)
            else:
                sock.close()
        except Exception as exc:  # handed to start(), which raises it in the service's thread
            self._failed_start = exc
            return
        finally:
            ready.set()
        watch = asyncio.create_task(self.watch())
        await self._stopping.wait()
        watch.cancel()
        await self.close()

    async def watch(self, interval: float = 0.02) -> None:
        """Follow the `down` switch until cancelled. One failed tick is reported and the next
        tick tries again: a gate that stopped following the switch would leave the service down
        (or up) for good."""
        failed: str | None = None
        while True:
            try:
                down = self.faults().down
                if down and self._server is not None:
                    await self.close()
                elif not down and self._server is None:
                    await self.open()
                failed = None
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - e.g. the port still held: next tick
                if repr(exc) != failed:  # once per distinct failure, not 50 times a second
                    print(f"gate {self.port}: {type(exc).__name__}: {exc}", file=sys.stderr,
                          flush=True)
                failed = repr(exc)
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
        asked = asyncio.ensure_future(self._pipe(reader, up_writer, writer, check=True))
        answered = asyncio.ensure_future(self._pipe(up_reader, writer, up_writer, check=False))
        try:
            await asked
            # The caller hung up. Waiting for the app's server to close its side as well kept
            # both of the gate's sockets until the server's keep-alive timeout (75 s here):
            # two descriptors per request in this process for as long, which under a test
            # suite's load pushed it past the 1,024 that select()-based code can watch. What
            # the app still sends in the grace below goes through; then both are closed.
            await asyncio.wait_for(asyncio.shield(answered), _HANGUP_GRACE)
        except asyncio.TimeoutError:
            pass
        finally:
            answered.cancel()
            asked.cancel()
            await asyncio.gather(asked, answered, return_exceptions=True)
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
