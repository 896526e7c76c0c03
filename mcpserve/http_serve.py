"""`agent-memory mcp --listen`: the MCP server over streamable HTTP, the SDK's own transport
(its StreamableHTTPSessionManager, served by uvicorn as the SDK serves it) behind the door of
mcpserve.guard.

One endpoint, `/mcp`, for every protocol version the SDK speaks: a client of 2026-07-28 sends
each request on its own (no initialize handshake, no session); an older one opens a session
with `initialize`, and the server may ask it for its roots on the stream of the call that
needs them.

Stopping (SIGTERM, or SIGINT as Ctrl-C sends it): calls that had begun run to their end and
are answered; calls arriving meanwhile are refused as tool errors that ran nothing
(mcpserve.calls.Runner.stop); once every answer is out (mcpserve.guard.Guard.settled), the
event streams are ended, the listening socket closes, open connections are given GRACE
seconds to close, and the process exits 0. A command is never cut: its worker thread is waited
for, and every write it makes is atomic.

sse-starlette (the SDK's event streams) would end every stream at the signal itself, the
answers of the running calls with them: its automatic drain is turned off, and the stop ends
the streams itself once the answers are out.
"""

from __future__ import annotations

import contextlib
import signal
import socket
import sys

import anyio
import uvicorn
from sse_starlette.sse import AppStatus

GRACE = 2  # seconds for open connections (an idle event stream) to close once calls are done
# The largest request taken (413 beyond): a write's text may be 1 MiB, and JSON writes each
# control character in it as 6 bytes; the SDK's default (4 MiB) would refuse such a text.
MAX_BODY = 16 << 20


def bind(plan) -> socket.socket:
    """The listening socket, bound now: its port is known before the server starts (PORT 0),
    and an address in use is a usage error that says so."""
    from agent_memory.cli.errors import UsageError
    family, kind, proto, _, where = socket.getaddrinfo(
        plan.host, plan.port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(where)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise UsageError(f"--listen {plan.host}:{plan.port}: cannot listen there "
                         f"({exc.strerror})", code="ADDRESS_UNAVAILABLE",
                         field="--listen") from None
    sock.set_inheritable(False)
    return sock


def security_settings(names: frozenset[str]):
    """The SDK's own Host and Origin check, given the same names as the guard (which answers
    first, with 403): a second lock on the same door."""
    from mcp.server.transport_security import TransportSecuritySettings
    hosts, origins = [], []
    for name in sorted(names):
        shown = f"[{name}]" if ":" in name else name
        hosts += [shown, f"{shown}:*"]
        origins += [f"{scheme}://{shown}{port}" for scheme in ("http", "https")
                    for port in ("", ":*")]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                     allowed_hosts=hosts, allowed_origins=origins)


def serve(server, runner, plan) -> str:
    """Serve until SIGTERM or SIGINT; the URL it served at."""
    from agent_memory.mcpserve.guard import Guard
    sock = bind(plan)
    url = plan.url(sock.getsockname()[1])
    app = server.streamable_http_app(streamable_http_path="/mcp",
                                     transport_security=security_settings(plan.names),
                                     host=plan.host, max_request_body_size=MAX_BODY)
    guard = Guard(app, plan.names, plan.token)
    config = uvicorn.Config(guard, lifespan="on", ws="none",
                            log_config=None, access_log=False, server_header=False,
                            ssl_certfile=plan.cert, ssl_keyfile=plan.key,
                            timeout_graceful_shutdown=GRACE)
    AppStatus.disable_automatic_graceful_drain()
    http = _Server(config, runner, guard)
    guarded = "a bearer token required" if plan.token else "no token"
    sys.stderr.write(f"agent-memory: mcp: serving {url} ({guarded}; Host and Origin "
                     f"checked); SIGTERM or Ctrl-C stops it\n")
    sys.stderr.flush()
    try:
        anyio.run(http.serve, [sock])
    finally:
        sock.close()
    return url


class _Server(uvicorn.Server):
    """uvicorn's server, with this command's own stop."""

    def __init__(self, config, runner, guard) -> None:
        super().__init__(config)
        self.runner = runner  # mcpserve.calls.Runner
        self.guard = guard  # mcpserve.guard.Guard

    @contextlib.contextmanager
    def capture_signals(self):
        """SIGTERM and SIGINT start the stop; the handlers before are put back after, and
        (unlike uvicorn's own) the signal is not raised again: the stop is clean, the exit 0."""
        wanted = (signal.SIGINT, signal.SIGTERM)
        before = {sig: signal.signal(sig, self.handle_exit) for sig in wanted}
        try:
            yield
        finally:
            for sig, handler in before.items():
                signal.signal(sig, handler)

    def handle_exit(self, sig, frame) -> None:
        self.runner.stop()
        super().handle_exit(sig, frame)

    async def shutdown(self, sockets=None) -> None:
        # Still listening: the running calls' own exchanges (an older client's roots) still
        # arrive, and a new call is refused as a tool error rather than by a closed port.
        await self.runner.drain()
        await self.guard.settled(GRACE)  # the answers out, whole
        AppStatus.should_exit = True  # now the event streams (an older client's GET) end
        await super().shutdown(sockets)
