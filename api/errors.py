"""A command's failure as an exception: the CLI's error object (`code`, `message`, `details`)
with the exit code the command would have exited with and its meaning, one class per exit code
so callers can catch a kind of failure (`except agent_memory.NotFoundError`)."""

from __future__ import annotations

from typing import Any

from agent_memory.cli.errors import MEANINGS


class AgentMemoryError(Exception):
    """A command failed: `code` (stable, e.g. SESSION_CLOSED), `message`, `details` (the
    error's details object, {} when it has none), `exit_code` and its `meaning` (the README's
    table of exit codes)."""

    exit_code = 1

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

    exit_code = 1


class UsageError(AgentMemoryError, ValueError):
    """Exit 2: a bad argument or value; nothing was written."""

    exit_code = 2


class StoreUnavailableError(AgentMemoryError):
    """Exit 3: `.agent-memory/` missing, not a real directory, not git-ignored, or not this
    user's; nothing was written."""

    exit_code = 3


class LoggerUnreachableError(AgentMemoryError):
    """Exit 4: the logger is unreachable and the call has no fallback."""

    exit_code = 4


class NotFoundError(AgentMemoryError, LookupError):
    """Exit 5: no such message, section or thing."""

    exit_code = 5


class ConfigInvalidError(AgentMemoryError):
    """Exit 6: the configuration is invalid, or the fleet rejects its credentials."""

    exit_code = 6


class EmbeddingUnavailableError(AgentMemoryError):
    """Exit 7: a vector was required and the embedder is unavailable."""

    exit_code = 7


class NoRoomError(AgentMemoryError):
    """Exit 8: the disk is full or the outbox cap is reached; nothing was written."""

    exit_code = 8


class StoreHeldError(AgentMemoryError):
    """Exit 9: another process forwards the store with another configuration and keeps it."""

    exit_code = 9


_BY_EXIT_CODE = {cls.exit_code: cls for cls in (
    RefusedError, UsageError, StoreUnavailableError, LoggerUnreachableError, NotFoundError,
    ConfigInvalidError, EmbeddingUnavailableError, NoRoomError, StoreHeldError)}


def from_answer(exit_code: int, error: dict[str, Any]) -> AgentMemoryError:
    """The exception for a command's failure answer (`error` is its error object)."""
    cls = _BY_EXIT_CODE.get(exit_code, AgentMemoryError)
    return cls(str(error.get("code", "FAILED")), str(error.get("message", "")),
               error.get("details") or {}, exit_code)
