"""How a reference fleet is reached: plain `http`, `https`, or `mtls` (the client must show a
certificate of the fleet's CA), with or without a token.

One document, `security.json` in the data directory (0600), written by `up` and read by both
services and by everything that checks on them, so they always agree:
`{"protocol", "token"?, "files": {ca, server_cert, server_key, client_cert, client_key}}`.
The certificates are throw-away ones made for that fleet (ops.fleet.tls).

- the services serve TLS from hypercorn (`certfile`/`keyfile`; for mtls `ca_certs` and
  `verify_mode = CERT_REQUIRED`); the gate in front of them pipes the bytes unchanged;
- a token is the framework's own `auth.use_token`: every JSON-RPC call must carry it in
  `X-API-Key` (a wrong or missing one is answered 401);
- the reference logger's embedder client, `up`'s readiness check and `status` use the same.
"""

from __future__ import annotations

import json
import os
import ssl
from pathlib import Path
from typing import Any

PROTOCOLS = ("http", "https", "mtls")
TOKEN_HEADER = "X-API-Key"


def path(data: Path) -> Path:
    return Path(data) / "security.json"


def make(data: Path, protocol: str = "http", token: str | None = None) -> dict[str, Any]:
    """The security of a new fleet in `data` (certificates made when it speaks TLS)."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}, got {protocol!r}")
    security: dict[str, Any] = {"protocol": protocol, "token": token or None, "files": {}}
    if protocol != "http":
        from ops.fleet import tls
        security["files"] = tls.make_pki(Path(data) / "tls")
    return security


def write(data: Path, security: dict[str, Any]) -> None:
    target = path(data)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, json.dumps(security, indent=2).encode())
    finally:
        os.close(fd)


def read(data: Path) -> dict[str, Any]:
    """The fleet's security; plain http without a token when it has no document (a fleet made
    before this existed)."""
    try:
        return json.loads(path(data).read_text())
    except (OSError, ValueError):
        return {"protocol": "http", "token": None, "files": {}}


def tls(security: dict[str, Any]) -> bool:
    return security.get("protocol", "http") != "http"


def serve_tls(cfg: Any, security: dict[str, Any]) -> None:
    """Make a hypercorn Config serve this fleet's TLS."""
    if not tls(security):
        return
    files = security["files"]
    cfg.certfile = files["server_cert"]
    cfg.keyfile = files["server_key"]
    if security["protocol"] == "mtls":
        cfg.ca_certs = files["ca"]
        cfg.verify_mode = ssl.CERT_REQUIRED


def app_auth(security: dict[str, Any]) -> dict[str, Any]:
    """The framework's app configuration for the token (empty without one)."""
    token = security.get("token")
    if not token:
        return {}
    return {"auth": {"use_token": True, "tokens": {token: ["*"]}}}


def client_context(security: dict[str, Any]) -> ssl.SSLContext | None:
    """A client-side context that trusts the fleet's CA (and shows the client certificate for
    mtls), for readiness checks; None for plain http."""
    if not tls(security):
        return None
    files = security["files"]
    context = ssl.create_default_context(cafile=files["ca"])
    context.check_hostname = False  # readiness only: a test may serve another host's certificate
    if security["protocol"] == "mtls":
        context.load_cert_chain(files["client_cert"], files["client_key"])
    return context


def client_section(security: dict[str, Any], port: int, timeout: float) -> dict[str, Any]:
    """The fleet-client section (`ailogger_client` / `embedding_client`) that reaches a service
    of this fleet, as `config generate` would write it."""
    section: dict[str, Any] = {"protocol": security.get("protocol", "http"),
                               "server": {"host": "127.0.0.1", "port": port},
                               "client": {"timeout": timeout}}
    files = security.get("files") or {}
    if tls(security):
        ssl_section = {"ca": files["ca"], "check_hostname": True}
        if security["protocol"] == "mtls":
            ssl_section.update(cert=files["client_cert"], key=files["client_key"])
        section["ssl"] = ssl_section
    if security.get("token"):
        section["auth"] = {"token": security["token"], "token_header": TOKEN_HEADER}
    return section


def embed_kwargs(security: dict[str, Any], port: int, timeout: float) -> dict[str, Any]:
    """embed-client's constructor keywords for this fleet's embedder."""
    kwargs: dict[str, Any] = {"protocol": security.get("protocol", "http"),
                              "host": "127.0.0.1", "port": port, "timeout": timeout}
    files = security.get("files") or {}
    if tls(security):
        kwargs.update(ca=files["ca"], check_hostname=True)
        if security["protocol"] == "mtls":
            kwargs.update(cert=files["client_cert"], key=files["client_key"])
    if security.get("token"):
        kwargs.update(token=security["token"], token_header=TOKEN_HEADER)
    return kwargs
