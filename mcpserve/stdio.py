"""The MCP server's stdin and stdout, read and written by its event loop (serve, below).

The SDK's stdio transport reads each line in a worker thread, and writes and flushes each
answer in two more: three hand-offs between threads per call, about 0.85 ms of a 15 ms `write`
(ops/bench/mcp_bench.py). Here the loop reads and writes the pipes itself (asyncio's pipe
transports) and hands the SDK the same lines and takes the same answers (its `stdio_server`
given explicit streams), so the protocol stays the SDK's own.

As the SDK does while it serves, fd 0 reads the null device and fd 1 writes to stderr, so a
stray print or a child's output never reaches the client; the wire is kept on private
descriptors (not inherited by children) and put back at the end.

Only pipes and sockets, which is how MCP clients start a server: the loop makes the wire
non-blocking, and a terminal's descriptor is shared with the shell that would then read from
a non-blocking terminal. Anything else (a terminal, a file, one socket for both) is left to
the SDK's transport (`wired()` is False).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
import sys

LINE_LIMIT = 1 << 28  # the longest line taken from the client (256 MiB); longer ends the session


def wired() -> bool:
    """Are stdin and stdout two pipes or sockets (Node's child processes get a socket each)?
    Not one socket for both: asyncio's writing end takes a readable socket for a closed one."""
    try:
        ends = [os.fstat(fd) for fd in (0, 1)]
    except OSError:
        return False
    if (ends[0].st_dev, ends[0].st_ino) == (ends[1].st_dev, ends[1].st_ino):
        return False
    return all(stat.S_ISFIFO(end.st_mode) or stat.S_ISSOCK(end.st_mode) for end in ends)


class _Lines:
    """stdin's lines as text, as the SDK iterates its own (`async for line in stdin`)."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def __aiter__(self) -> "_Lines":
        return self

    async def __anext__(self) -> str:
        line = await self._reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


class _Answers:
    """stdout as the SDK writes to it (`await stdout.write(text)`, `await stdout.flush()`);
    a client gone shows as BrokenPipeError or ConnectionResetError at the flush."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()


@contextlib.asynccontextmanager
async def streams():
    """(lines, answers) on the wire, for `mcp.server.stdio.stdio_server(lines, answers)`;
    fds 0 and 1 diverted meanwhile."""
    loop = asyncio.get_running_loop()
    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)
    given = {fd: os.get_blocking(fd) for fd in (wire_in, wire_out)}  # as the client gave them
    null = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
    finally:
        os.close(null)
    read_transport = write_transport = None
    try:
        reader = asyncio.StreamReader(limit=LINE_LIMIT)
        read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader),
            os.fdopen(wire_in, "rb", 0, closefd=False))
        write_transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(wire_out, "wb", 0, closefd=False))
        writer = asyncio.StreamWriter(write_transport, protocol, None, loop)
        yield _Lines(reader), _Answers(writer)
    finally:  # no await here: a cancelled session must still put the wire back
        for transport in (read_transport, write_transport):
            if transport is not None:
                transport.close()  # stops watching the descriptor now; it never closes it
        for fd, std in ((wire_in, 0), (wire_out, 1)):
            with contextlib.suppress(OSError):
                os.set_blocking(fd, given[fd])  # the client, or a shell, may share it
            os.dup2(fd, std)
            os.close(fd)


async def serve(server) -> None:
    """Serve over stdio until the client goes away: stdin at its end, or its end of stdout
    closed (the SDK's writer then meets a broken pipe: nobody reads any more, which is the
    client leaving, not a failure). A call already running completes first: its command runs
    in a worker thread that cancellation waits for (mcpserve.calls.Runner.call). The wire is read
    and written by the loop itself where it is a pipe or a socket (streams, above)."""
    try:
        if not wired():
            await server.run_stdio_async()
            return
        from mcp.server.stdio import stdio_server
        lowlevel = server._lowlevel_server
        async with streams() as (lines, answers):
            async with stdio_server(lines, answers) as (read_stream, write_stream):
                await lowlevel.run(read_stream, write_stream,
                                   lowlevel.create_initialization_options())
    except* (BrokenPipeError, ConnectionResetError):
        pass
