"""A command's failure as an exception: the CLI's error object (`code`, `message`, `details`)
with the exit code the command would have exited with and its meaning, one class per exit code
so callers can catch a kind of failure (`except agent_memory.NotFoundError`)."""

from __future__ import annotations

from typing import Any

from agent_memory.cli import exit_codes
from agent_memory.cli.exit_codes import MEANINGS


class AgentMemoryError(Exception):
    """A command failed: `code` (stable, e.g. SESSION_CLOSED), `message`, `details` (the
    error's details object, {} when it has none), `exit_code` and its `meaning` (the table of
    exit codes, cli.exit_codes)."""

    exit_code = exit_codes.LOGGER_REFUSED

    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None,
                 exit_code: int | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.details = dict(details or {})
        if exit_code is not None:
            self.exit_code = exit_code

    @property
    def meaning(self) -> str:
        return MEANINGS.get(self.exit_code, "failure")

    def as_dict(self) -> dict[str, Any]:
        """The MCP server's error object: code, message, details (when any), exit code and
        its meaning."""
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details:
            out["details"] = self.details
        out.update(exit_code=self.exit_code, meaning=self.meaning)
        return out


class RefusedError(AgentMemoryError):
    """Exit 1: the logger (or the store, by the logger's rules) refused, or failed where there
    is no fallback."""

    exit_code = exit_codes.LOGGER_REFUSED


class UsageError(AgentMemoryError, ValueError):
    """Exit 2: a bad argument or value; nothing was written."""

    exit_code = exit_codes.USAGE


class StoreUnavailableError(AgentMemoryError):
    """Exit 3: `.agent-memory/` missing, not a real directory, not git-ignored, or not this
    user's; nothing was written."""

    exit_code = exit_codes.STORE_UNAVAILABLE


class LoggerUnreachableError(AgentMemoryError):
    """Exit 4: the logger is unreachable and the call has no fallback."""

    exit_code = exit_codes.LOGGER_UNREACHABLE


class NotFoundError(AgentMemoryError, LookupError):
    """Exit 5: no such message, section or thing."""

    exit_code = exit_codes.NOT_FOUND


class ConfigInvalidError(AgentMemoryError):
    """Exit 6: the configuration is invalid, or the fleet rejects its credentials."""

    exit_code = exit_codes.CONFIG_INVALID


class EmbeddingUnavailableError(AgentMemoryError):
    """Exit 7: a vector was required and the embedder is unavailable."""

    exit_code = exit_codes.EMBEDDING_UNAVAILABLE


class NoRoomError(AgentMemoryError):
    """Exit 8: the disk is full or the outbox cap is reached; nothing was written."""

    exit_code = exit_codes.NO_ROOM


class StoreHeldError(AgentMemoryError):
    """Exit 9: another process forwards the store with another configuration and keeps it."""

    exit_code = exit_codes.STORE_HELD


# One class per failure of the exit-code table, named there (a row without its class here, or
# a class whose code the table lacks, fails at import and in tests/docs/test_exit_codes.py).
_BY_EXIT_CODE = {row.code: globals()[row.api_class] for row in exit_codes.TABLE if row.api_class}


def from_answer(exit_code: int, error: dict[str, Any]) -> AgentMemoryError:
    """The exception for a command's failure answer (`error` is its error object)."""
    cls = _BY_EXIT_CODE.get(exit_code, AgentMemoryError)
    return cls(str(error.get("code", "FAILED")), str(error.get("message", "")),
               error.get("details") or {}, exit_code)
