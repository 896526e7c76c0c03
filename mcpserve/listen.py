"""Where and how `agent-memory mcp --listen` serves (mcpserve.http): the address, the bearer
token, TLS and the host names clients may reach it by, each checked before anything listens.

The defaults are the safe ones: loopback unless an address is given; an address other than
loopback is refused without a token (anyone who can reach the port would read and write the
project's dialogues); the Host and Origin of every request must name this server (a web page
elsewhere cannot reach it through DNS rebinding). A refusal is a usage error (exit 2) that
says why and what to do. The token is never part of any message or log line.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import sys

from agent_memory.cli.errors import UsageError

TOKEN_ENV = "AGENT_MEMORY_MCP_TOKEN"
PATH = "/mcp"  # the endpoint, as the SDK's clients and the MCP documentation expect it
DEFAULT_HOST = "127.0.0.1"
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
WILDCARDS = ("0.0.0.0", "::")
HTTP_ONLY = ("token_file", "allowed_host", "tls_cert", "tls_key", "systemd_unit")
SHORT_TOKEN = 16  # fewer characters than this: a warning


class Plan:
    """What the HTTP server binds and checks."""

    def __init__(self, host: str, port: int, loopback: bool, token: str | None,
                 token_source: str | None, cert: str | None, key: str | None,
                 names: frozenset[str]) -> None:
        self.host = host
        self.port = port
        self.loopback = loopback
        self.token = token
        self.token_source = token_source  # "--token-file" or the variable's name
        self.cert = cert
        self.key = key
        self.names = names  # what Host and Origin may name (lower case, IPv6 without brackets)

    @property
    def scheme(self) -> str:
        return "https" if self.cert else "http"

    def url(self, port: int | None = None) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port if port is None else port}{PATH}"


def http_only_given(args) -> list[str]:
    """The HTTP options given without --listen (their flags)."""
    given = []
    for name in HTTP_ONLY:
        value = getattr(args, name, None)
        if value:
            given.append("--" + name.replace("_", "-"))
    return given


def plan(args, environ=os.environ) -> Plan:
    """The checked plan of `--listen` and its options; UsageError (exit 2) names what is
    wrong."""
    host, port = address(args.listen)
    loopback = is_loopback(host)
    token, source = read_token(args.token_file, environ)
    if not loopback and token is None:
        raise UsageError(
            f"--listen {args.listen}: {host} is not a loopback address, and without a token "
            f"anyone who can reach it could read and write this project's dialogues: set "
            f"${TOKEN_ENV} or give --token-file FILE (and serve https with --tls-cert and "
            f"--tls-key, or behind a TLS proxy), or listen on 127.0.0.1",
            code="TOKEN_REQUIRED", field="--listen")
    cert, key = tls_files(args.tls_cert, args.tls_key)
    names = set(LOOPBACK_NAMES)
    if host in WILDCARDS:
        names.update(_own_names())
    else:
        names.add(host.lower())
    for given in args.allowed_host or ():
        names.add(allowed_name(given))
    return Plan(host, port, loopback, token, source, cert, key, frozenset(names))


def address(text: str) -> tuple[str, int]:
    """[HOST:]PORT (an IPv6 HOST in brackets) as (host, port); HOST defaults to loopback."""
    text = text.strip()
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = "", text
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise UsageError(f"--listen {text}: an IPv6 address goes in brackets: [{host}]:{port}",
                         code="INVALID_ADDRESS", field="--listen")
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise UsageError(f"--listen {text}: PORT must be a number from 0 to 65535 "
                         f"(e.g. 127.0.0.1:8765)", code="INVALID_ADDRESS", field="--listen")
    host = host or DEFAULT_HOST
    try:
        socket.getaddrinfo(host, int(port), type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise UsageError(f"--listen {text}: {host!r} is not an address of this machine "
                         f"({exc})", code="INVALID_ADDRESS", field="--listen") from None
    return host, int(port)


def is_loopback(host: str) -> bool:
    """Does every address `host` names belong to the loopback network?"""
    try:
        found = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        return False
    addresses = {info[4][0].split("%", 1)[0] for info in found}
    return bool(addresses) and all(ipaddress.ip_address(a).is_loopback for a in addresses)


def read_token(path: str | None, environ) -> tuple[str | None, str | None]:
    """The bearer token: --token-file's content, else $AGENT_MEMORY_MCP_TOKEN, else None; with
    where it came from. An empty token, or one a header cannot carry, is refused."""
    if path is not None:
        source = "--token-file"
        try:
            with open(path, "rb") as handle:
                raw = handle.read(1 << 16)
                mode = os.fstat(handle.fileno()).st_mode
        except OSError as exc:
            raise UsageError(f"--token-file {path}: cannot be read ({exc.strerror})",
                             code="INVALID_TOKEN", field="--token-file") from None
        if mode & 0o077:
            sys.stderr.write(f"agent-memory: mcp: --token-file {path} can be read by other "
                             f"users (mode {mode & 0o777:o}); chmod 600 it\n")
        try:
            token = raw.decode("ascii").strip()
        except UnicodeDecodeError:
            token = None
    else:
        source = TOKEN_ENV
        token = environ.get(TOKEN_ENV)
        if token is None:
            return None, None
        token = token.strip()
    if not token or not all("\x21" <= c <= "\x7e" for c in token):
        raise UsageError(f"{source}: the token must be one word of printable ASCII (no spaces), "
                         f"e.g. made with `openssl rand -hex 32`", code="INVALID_TOKEN",
                         field=source if source.startswith("--") else None)
    if len(token) < SHORT_TOKEN:
        sys.stderr.write(f"agent-memory: mcp: the token of {source} has fewer than "
                         f"{SHORT_TOKEN} characters: easy to guess\n")
    return token, source


def tls_files(cert: str | None, key: str | None) -> tuple[str | None, str | None]:
    """--tls-cert and --tls-key, both or neither, each loadable together (checked now, so a
    bad pair is a usage error at start rather than a server that cannot answer)."""
    if cert is None and key is None:
        return None, None
    if cert is None or key is None:
        raise UsageError("--tls-cert and --tls-key go together", code="INVALID_TLS",
                         field="--tls-cert" if cert is None else "--tls-key")
    import ssl
    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as exc:
        raise UsageError(f"--tls-cert {cert} --tls-key {key}: not a certificate and its key "
                         f"({exc})", code="INVALID_TLS", field="--tls-cert") from None
    return os.path.abspath(cert), os.path.abspath(key)


def allowed_name(given: str) -> str:
    """An --allowed-host value as Host and Origin headers carry it: lower case, an IPv6
    address without its brackets, no port, no scheme."""
    name = given.strip().lower()
    if "://" in name or "/" in name or not name:
        raise UsageError(f"--allowed-host {given!r}: a host name or address alone (no scheme, "
                         f"no path), e.g. mcp.example.org", code="INVALID_HOST",
                         field="--allowed-host")
    if name.startswith("[") and "]" in name:
        return name[1:name.index("]")]
    if name.count(":") == 1:  # name:port: the port is not checked
        return name.split(":", 1)[0]
    return name


def _own_names() -> set[str]:
    """For a wildcard address: this machine's own names (its host name, fully qualified
    too), which clients on other machines may use."""
    names = set()
    for name in (socket.gethostname(), socket.getfqdn()):
        if name:
            names.add(name.lower())
    return names
