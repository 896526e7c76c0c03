"""One classification of fleet failures, used by every caller.

Four kinds, each on its exception class (FleetFailure.kind): **unreachable** (connection refused, timeouts, DNS, a dropped connection: wait and
retry), **credentials** (a client certificate refused, a server not trusted, a host name
mismatch, a token refused: a configuration problem that retrying will not fix; sync.links.credentials
tells the alert-less refusal of a client certificate apart from an outage), **refused** (the
service refused this call, with its code) and **failed** (it answered, but not usefully).

With mcp-proxy-adapter 8.11.3 the client does NOT raise ServiceUnreachableError: a refused
connection, a timeout or a DNS failure reaches us as a bare AiLoggerClientError whose
`__cause__` is the adapter's ClientError with a `category`. So the kind is decided by walking
the cause chain. No fleet import here: classes are recognised by their attributes, so this
module costs nothing to import.
"""

from __future__ import annotations

import asyncio

# The adapter's transport categories: the service could not be reached or did not answer.
TRANSPORT_CATEGORIES = frozenset({
    "dns_resolution", "connection_refused", "connect_timeout", "read_timeout", "transport",
    "retry_exhausted", "orderly_disconnect", "mid_request_disconnect", "stream_disconnect",
    "tls_handshake",  # a TLS alert in the chain makes it a credentials problem (below)
})
# The connection closed with no answer: an outage, or a server that refuses the client's
# certificate without saying so (sync.links.credentials.diagnose tells which).
DISCONNECT_CATEGORIES = frozenset({
    "orderly_disconnect", "mid_request_disconnect", "stream_disconnect", "tls_handshake"})
# The adapter's categories that are credential problems, and what each is about.
CREDENTIAL_CATEGORIES = {"tls_trust": "server_trust", "tls_identity": "hostname",
                         "authentication": "token", "authorization": "token"}

# What a credential refusal is about, for answers and status.
CLIENT_CERTIFICATE = "client_certificate"
SERVER_TRUST = "server_trust"
HOSTNAME = "hostname"
TOKEN = "token"
FIXES = {
    CLIENT_CERTIFICATE: "give a client certificate and key of the CA the server trusts, valid "
                        "today (ssl.cert / ssl.key), then run `agent-memory config validate`",
    SERVER_TRUST: "give the CA that signed the server's certificate (ssl.ca)",
    HOSTNAME: "connect by a name the server's certificate carries (server.host), or set "
              "ssl.check_hostname to false if you accept any certificate of that CA",
    TOKEN: "give the token the service accepts (auth.token, auth.token_header)",
}

UNREACHABLE = "unreachable"
CREDENTIALS = "credentials"
REFUSED = "refused"
FAILED = "failed"


class FleetFailure(Exception):
    """A fleet failure of our vocabulary. Its `kind` (UNREACHABLE, CREDENTIALS, REFUSED,
    FAILED) lives on it, so every reader (the watcher's health and backfill, status, the
    commands, MCP) names the same failure alike; `as_dict` / `from_dict` carry it over the
    agent's socket."""

    kind = "failed"

    def account(self) -> dict[str, object]:
        """What a report says of it: `kind` and `message` (and what to fix, where known)."""
        return {"kind": self.kind, "message": str(self) or type(self).__name__}

    def as_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "message": str(self)}


class Unreachable(FleetFailure):
    """The logger (or embedder) could not be reached: a transport failure, twice in a row.
    `category` is the adapter's transport category, when one was given."""

    kind = "unreachable"
    category: str | None = None


class Credentials(Unreachable):
    """The service does not accept this configuration's credentials; `credential` says which
    (client_certificate, server_trust, hostname, token). Never retried; commands that fall
    back on the outbox for an outage do so for this too (nothing is lost), but say what to
    fix, and commands without a fallback exit 6 (configuration), not 4. A subclass of
    Unreachable for that fallback alone: its kind is CREDENTIALS."""

    kind = "credentials"

    def __init__(self, credential: str, reason: str) -> None:
        super().__init__(reason)
        self.credential = credential
        self.reason = reason

    def account(self) -> dict[str, object]:
        return {"kind": self.kind, "message": self.reason, "credentials": self.credential,
                "fix": FIXES.get(self.credential)}

    def as_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "credentials": self.credential, "message": self.reason}


def pending_reason(exc: BaseException, service: str = "logger") -> str:
    """Why a file stays pending after this failure, in words (unreachable or credentials)."""
    if isinstance(exc, Credentials):
        return (f"the {service} does not accept this configuration's credentials "
                f"({exc.credential}): {exc.reason}; the file is kept and delivered once that "
                "is fixed")
    return f"{service} unreachable: {exc}"


class Refused(FleetFailure):
    """The service refused the whole call; `code` is its stable code."""

    kind = "refused"

    def __init__(self, code: str | None, statement: str) -> None:
        super().__init__(f"{code}: {statement}" if code else statement)
        self.code = code or "REFUSED"
        self.statement = statement

    def account(self) -> dict[str, object]:
        return {"kind": self.kind, "message": self.statement, "code": self.code}

    def as_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "code": self.code, "statement": self.statement}


class Failed(FleetFailure):
    """The service answered, but not with a usable result (HTTP error, broken job...)."""

    kind = "failed"


def as_failure(exc: BaseException) -> FleetFailure:
    """`exc` in our vocabulary: itself when it is one, else Failed with its account (a fleet
    exception not translated yet goes through `translate`)."""
    if isinstance(exc, FleetFailure):
        return exc
    return Failed(describe(exc))


def account(exc: BaseException) -> dict[str, object]:
    """What the watcher's health, its backfill and status report of a failure: one shape."""
    return as_failure(exc).account()


def from_dict(failure: dict[str, object]) -> FleetFailure:
    """Back from `FleetFailure.as_dict`: the exception the call would have raised here."""
    kind = failure.get("kind")
    message = str(failure.get("message") or kind or "failed")
    if kind == "refused":
        return Refused(failure.get("code"), str(failure.get("statement") or "refused"))
    if kind == "credentials":
        return Credentials(str(failure.get("credentials") or "client_certificate"), message)
    if kind == "unreachable":
        return Unreachable(message)
    return Failed(message)


def _chain(exc: BaseException):
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        if exc.__cause__ is not None:
            exc = exc.__cause__
        else:
            exc = None if exc.__suppress_context__ else exc.__context__


def classify(exc: BaseException) -> str:
    """UNREACHABLE, CREDENTIALS, REFUSED or FAILED for any exception a fleet call raised."""
    for link in _chain(exc):
        if type(link).__name__ == "ServiceRefusalError":
            return REFUSED
        category = getattr(link, "category", None)
        if category in CREDENTIAL_CATEGORIES:
            return CREDENTIALS
        if category == "tls_handshake" and any(tls_alert(x) for x in _chain(exc)):
            return CREDENTIALS
        if category in TRANSPORT_CATEGORIES:
            return UNREACHABLE
        if isinstance(link, (ConnectionError, TimeoutError, asyncio.TimeoutError)):
            return UNREACHABLE
        if type(link).__name__ == "ServiceUnreachableError":
            return UNREACHABLE
    return FAILED


def tls_alert(link: BaseException) -> bool:
    """A TLS error carrying the peer's alert about certificates (it said why it refused),
    not a bare EOF."""
    import ssl
    if not isinstance(link, ssl.SSLError) or isinstance(link, ssl.SSLEOFError):
        return False
    reason = str(getattr(link, "reason", "") or link).upper()
    return "ALERT" in reason or "CERTIFICATE" in reason


def _category(exc: BaseException) -> str | None:
    return next((c for c in (getattr(x, "category", None) for x in _chain(exc)) if c), None)


def _credentials(exc: BaseException) -> Credentials:
    category = _category(exc)
    kind = CREDENTIAL_CATEGORIES.get(category or "", "client_certificate")
    if category == "authentication":
        reason = "the service refused the token (HTTP 401)"
    elif category == "authorization":
        reason = "the token is not allowed this command (HTTP 403)"
    elif kind == "server_trust":
        reason = "the server's certificate is not trusted by the configured CA"
    elif kind == "hostname":
        reason = "the server's certificate is not for the configured host"
    else:
        reason = "the server refused this client's certificate in the TLS handshake"
    return Credentials(kind, f"{reason} ({describe(exc)[:300]}); {FIXES[kind]}")


def translate(exc: BaseException) -> Exception:
    """The exception of our vocabulary for a fleet exception."""
    kind = classify(exc)
    if kind == CREDENTIALS:
        return _credentials(exc)
    if kind == UNREACHABLE:
        unreachable = Unreachable(describe(exc))
        unreachable.category = _category(exc)
        return unreachable
    if kind == REFUSED:
        refusal = next(x for x in _chain(exc) if type(x).__name__ == "ServiceRefusalError")
        return Refused(getattr(refusal, "code", None),
                       getattr(refusal, "statement", None) or str(refusal))
    return Failed(describe(exc))


def describe(exc: BaseException) -> str:
    """A readable one-line account of a failure (the client's own messages are often empty)."""
    parts = []
    for link in _chain(exc):
        text = str(link).strip()
        category = getattr(link, "category", None)
        label = type(link).__name__ + (f"[{category}]" if category else "")
        parts.append(f"{label}: {text}" if text else label)
    return " <- ".join(parts)
