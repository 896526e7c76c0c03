"""Failures a command reports, each with its stable code and its documented exit code."""

from __future__ import annotations

# The exit codes and their meanings come from one table (cli.exit_codes); each failure class
# below carries one of them.
from agent_memory.cli.exit_codes import (  # noqa: E402,F401 - re-exported: callers import them here
    CONFIG_INVALID, EMBEDDING_UNAVAILABLE, INTERRUPTED, LOGGER_REFUSED, LOGGER_UNREACHABLE,
    MEANINGS, NO_ROOM, NOT_FOUND, OK, STORE_HELD, STORE_UNAVAILABLE, USAGE)


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


class EmbeddingUnavailableError(CliError):
    """A vector is required (`embed`, `--ranking vector`) and the embedder is not configured,
    does not answer, or refuses the configured model."""

    exit_code = EMBEDDING_UNAVAILABLE
    code = "EMBEDDING_UNAVAILABLE"  # outbox.contract.EMBEDDING_UNAVAILABLE


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
