"""The network side of a reference fleet: a free loopback port, and whether a service answers
(over TLS when the fleet's security says so)."""

from __future__ import annotations

import http.client
from typing import Any

from ops.fleet import security


def free_port() -> int:
    """A loopback port nothing listens on now (bound, then released): for a service to start
    on, or for a test's "nothing listens there"."""
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def answers(port: int, timeout: float = 2.0, secured: dict[str, Any] | None = None) -> bool:
    """GET /health on 127.0.0.1:port answers 200 (both services have the framework's route);
    over TLS, with the client certificate for mtls, when the fleet's security says so."""
    context = security.client_context(secured or {})
    if context is not None:
        conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=timeout, context=context)
    else:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", "/health")
        return conn.getresponse().status == 200
    except (OSError, http.client.HTTPException):
        return False
    finally:
        conn.close()
