"""Failures a command reports, each with its stable code and its documented exit code."""

from __future__ import annotations

# Exit codes: keep them stable, scripts depend on them.
OK = 0
LOGGER_REFUSED = 1
USAGE = 2
STORE_UNAVAILABLE = 3
LOGGER_UNREACHABLE = 4
NOT_FOUND = 5
CONFIG_INVALID = 6
EMBEDDING_UNAVAILABLE = 7
NO_ROOM = 8
STORE_HELD = 9

# Each exit code in words (the README's table, short), for answers that carry no exit status:
# the MCP server's tool errors (mcpserve.tools).
MEANINGS = {
    OK: "success",
    LOGGER_REFUSED: "the logger refused the request (or the store did, by the logger's rules), "
                    "or failed where there is no fallback",
    USAGE: "usage: a bad option or value; nothing was written",
    STORE_UNAVAILABLE: "file store unavailable (missing, not a real directory, not git-ignored, "
                       "or not this user's); nothing was written",
    LOGGER_UNREACHABLE: "logger unreachable with no fallback",
    NOT_FOUND: "not found",
    CONFIG_INVALID: "configuration invalid, or credentials the logger or embedder rejects "
                    "where there is no fallback",
    EMBEDDING_UNAVAILABLE: "embedding unavailable where a vector is required",
    NO_ROOM: "no room: the disk is full or the outbox cap is reached; nothing was written",
    STORE_HELD: "the store is forwarded by another process that keeps it; nothing was "
                "forwarded, nothing lost",
}


class CliError(Exception):
    """A failure printed as `{"success": false, "error": {"code", "message"}}`."""

    exit_code = LOGGER_REFUSED
    code = "FAILED"

    def __init__(self, message: str, code: str | None = None, **details: object) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.details = details


class UsageError(CliError):
    exit_code = USAGE
    code = "USAGE"


class StoreUnavailableError(CliError):
    exit_code = STORE_UNAVAILABLE
    code = "STORE_UNAVAILABLE"


class LoggerUnreachableError(CliError):
    exit_code = LOGGER_UNREACHABLE
    code = "LOGGER_UNREACHABLE"


class NotFoundError(CliError):
    exit_code = NOT_FOUND
    code = "NOT_FOUND"


class ConfigInvalidError(CliError):
    exit_code = CONFIG_INVALID
    code = "CONFIG_INVALID"


class CredentialsError(CliError):
    """The logger (or embedder) does not accept this configuration's credentials: a client
    certificate refused, a server not trusted, a host name mismatch, a token refused. A
    configuration problem (exit 6), where the command has no fallback."""

    exit_code = CONFIG_INVALID
    code = "CREDENTIALS_REJECTED"


class NoRoomError(CliError):
    """No room for one more file: the disk (or quota) is full, or the outbox cap is reached.
    Nothing was written: a file is created whole or not at all."""

    exit_code = NO_ROOM
    code = "NO_SPACE"


class StoreHeldError(CliError):
    """Another process forwards this store with another configuration or version and keeps
    it (the project's agent started by hand or by systemd, or a long one-shot sync): this
    command cannot forward it with its own. Nothing was lost: pending files stay pending."""

    exit_code = STORE_HELD
    code = "STORE_HELD"


class RefusedError(CliError):
    """The logger (or the store, mirroring the logger's rule) refused the request."""

    exit_code = LOGGER_REFUSED
    code = "REFUSED"


# Logger refusals that mean "no such thing": exit 5, like a miss in the file store.
_NOT_FOUND_CODES = frozenset({"MESSAGE_UNKNOWN", "INFO_SECTION_UNKNOWN"})


def from_refusal(code: str, statement: str) -> CliError:
    """The CLI error for a logger refusal: not found (exit 5) or refused (exit 1)."""
    if code in _NOT_FOUND_CODES:
        return NotFoundError(statement, code=code)
    return RefusedError(statement, code=code)
