"""One classification of fleet failures, used by every caller.

With mcp-proxy-adapter 8.11.3 the client does NOT raise ServiceUnreachableError: a refused
connection, a timeout or a DNS failure reaches us as a bare AiLoggerClientError whose
`__cause__` is the adapter's ClientError with a `category`. So "unreachable" is decided by
walking the cause chain. No fleet import here: classes are recognised
by their attributes, so this module costs nothing to import.
"""

from __future__ import annotations

import asyncio

# The adapter's transport categories: the service could not be reached or did not answer.
TRANSPORT_CATEGORIES = frozenset({
    "dns_resolution", "connection_refused", "connect_timeout", "read_timeout", "transport",
    "retry_exhausted", "orderly_disconnect", "mid_request_disconnect", "stream_disconnect",
})

UNREACHABLE = "unreachable"
REFUSED = "refused"
FAILED = "failed"


class Unreachable(Exception):
    """The logger (or embedder) could not be reached: a transport failure, twice in a row."""


class Refused(Exception):
    """The service refused the whole call; `code` is its stable code."""

    def __init__(self, code: str | None, statement: str) -> None:
        super().__init__(f"{code}: {statement}" if code else statement)
        self.code = code or "REFUSED"
        self.statement = statement


class Failed(Exception):
    """The service answered, but not with a usable result (HTTP error, broken job...)."""


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
    """UNREACHABLE, REFUSED or FAILED for any exception a fleet call raised."""
    for link in _chain(exc):
        if type(link).__name__ == "ServiceRefusalError":
            return REFUSED
        if getattr(link, "category", None) in TRANSPORT_CATEGORIES:
            return UNREACHABLE
        if isinstance(link, (ConnectionError, TimeoutError, asyncio.TimeoutError)):
            return UNREACHABLE
        if type(link).__name__ == "ServiceUnreachableError":
            return UNREACHABLE
    return FAILED


def translate(exc: BaseException) -> Exception:
    """The exception of our vocabulary for a fleet exception."""
    kind = classify(exc)
    if kind == UNREACHABLE:
        return Unreachable(describe(exc))
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
