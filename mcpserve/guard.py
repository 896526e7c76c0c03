"""The door of `agent-memory mcp --listen` (mcpserve.http): every HTTP request passes here
before the SDK's transport sees it. A request whose Host or Origin names another server is
answered 403 (DNS-rebinding protection: a web page on another name that resolves to this
machine cannot reach the project's dialogues); with a token, a request without
`Authorization: Bearer <token>`, or with another token, is answered 401, the token compared in
constant time. A refused request reaches no tool: nothing is run, nothing written.

Each refusal is one line on stderr naming the peer and why, never the token or anything the
request carried beyond its Host and Origin.
"""

from __future__ import annotations

import hmac
import json
import sys
from urllib.parse import urlsplit


def host_name(header: str) -> str:
    """A Host header's name: lower case, without its port; an IPv6 address without its
    brackets."""
    value = header.strip().lower()
    if value.startswith("["):
        return value[1:value.index("]")] if "]" in value else value
    name, sep, port = value.rpartition(":")
    return name if sep and port.isdigit() else value


def origin_name(header: str) -> str | None:
    """An Origin header's host name, or None when it is not an http(s) origin (`null`, a
    file: or extension origin)."""
    try:
        parts = urlsplit(header.strip())
        name = parts.hostname
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not name:
        return None
    return name.lower()


def bearer(header: str | None) -> bytes | None:
    """The token of an `Authorization: Bearer <token>` header (the scheme in any case)."""
    if header is None:
        return None
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    return token.strip().encode("latin-1", "replace")


class Guard:
    """ASGI middleware: the checks above, then the SDK's app."""

    def __init__(self, app, names: frozenset[str], token: str | None) -> None:
        self.app = app
        self.names = names
        self._token = None if token is None else token.encode("ascii")
        self.in_flight = 0  # admitted requests not yet answered whole, but the event streams

    async def settled(self, limit: float, poll: float = 0.02) -> None:
        """Return once every admitted request but an event stream (GET) has been answered
        whole, or after `limit` seconds."""
        import anyio
        with anyio.move_on_after(limit):
            while self.in_flight:
                await anyio.sleep(poll)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":  # the lifespan: the SDK's session manager starts and stops
            await self.app(scope, receive, send)
            return
        headers = {}
        for key, value in scope["headers"]:  # the first of each, as the SDK reads them
            headers.setdefault(key.decode("latin-1").lower(), value.decode("latin-1"))
        refusal = self.refusal(headers)
        if refusal is not None:
            status, why = refusal
            peer = scope.get("client") or ("?", 0)
            sys.stderr.write(f"agent-memory: mcp: refused {scope.get('method', '?')} from "
                             f"{peer[0]}: {why} ({status})\n")
            await respond(send, status, why)
            return
        if scope.get("method") == "GET":  # an event stream: open until the client or the stop
            await self.app(scope, receive, send)
            return
        self.in_flight += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_flight -= 1

    def refusal(self, headers: dict[str, str]) -> tuple[int, str] | None:
        """(status, why) for a request to refuse, or None."""
        host = headers.get("host")
        if host is None or host_name(host) not in self.names:
            shown = "no Host header" if host is None else f"Host {host_name(host)!r}"
            return 403, (f"{shown} is not a name of this server (start it with "
                         f"--allowed-host NAME to allow one)")
        origin = headers.get("origin")
        if origin is not None and origin_name(origin) not in self.names:
            return 403, (f"Origin {origin.strip()[:200]!r} is not this server's (start it with "
                         f"--allowed-host NAME to allow a name)")
        if self._token is not None:
            given = bearer(headers.get("authorization"))
            if given is None:
                return 401, "no `Authorization: Bearer` token"
            if not hmac.compare_digest(given, self._token):
                return 401, "a wrong bearer token"
        return None


async def respond(send, status: int, why: str) -> None:
    """The refusal as the SDK shapes its own: a JSON-RPC error without an id."""
    body = json.dumps({"jsonrpc": "2.0", "id": None,
                       "error": {"code": -32001 if status == 401 else -32000,
                                 "message": why}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="agent-memory"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
