"""The exit codes, in one table: scripts and cron jobs depend on them, so each number keeps its
meaning. Everything else that states them is read from here: cli.errors (each failure's class
and the short meanings the MCP tools answer), the parser's epilog and each command's help,
`agent-memory help exit-codes`, the Python API's exceptions (api.errors: one per failure row,
named in `api_class`) and the generated reference (docs/reference/cli.md). A code added
anywhere but here fails tests/docs/test_exit_codes.py. Plain classes, no import: the write path
loads this module."""

from __future__ import annotations

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
INTERRUPTED = 130  # a command stopped by SIGINT (Ctrl-C), as a shell reports it


class ExitCode:
    """One exit code: its number, its name (the constant's), `meaning` (short: the MCP tool
    errors and the API exceptions carry it), `detail` (when it happens, for the help and the
    docs), the error codes typical of it, and the Python API's exception class (None where a
    call does not fail: success, or an interrupt, which Python raises as KeyboardInterrupt)."""

    __slots__ = ("code", "name", "meaning", "detail", "error_codes", "api_class")

    def __init__(self, code: int, name: str, meaning: str, detail: str,
                 error_codes: tuple = (), api_class: str | None = None) -> None:
        self.code = code
        self.name = name
        self.meaning = meaning
        self.detail = detail
        self.error_codes = error_codes
        self.api_class = api_class


TABLE = (
    ExitCode(OK, "OK", "success",
             "success; also a write kept in the outbox while the logger is away (`\"store\": "
             "\"file\"`, `\"forwarded\": false`: it is delivered later), and `sync` with no "
             "logger configured (`\"skipped\": true`: nothing to forward)"),
    ExitCode(LOGGER_REFUSED, "LOGGER_REFUSED",
             "the logger refused the request (or the store did, by the logger's rules), or "
             "failed where there is no fallback",
             "the logger refused the message, event or request itself (with its code), or the "
             "store refused it by the same rule; or a command without a fallback whose logger "
             "failed without refusing; or `verify` found damage",
             ("SESSION_CLOSED", "SESSION_UNKNOWN", "SESSION_CONFLICT", "MESSAGE_CONFLICT",
              "MESSAGE_DELETED", "MESSAGE_REFERENCED", "SCOPE_SESSION_UNKNOWN",
              "CONTINUATION_MISMATCH", "IMPORT_ITEMS_FAILED", "LOGGER_FAILED",
              "STORE_DAMAGED"), "RefusedError"),
    ExitCode(USAGE, "USAGE", "usage: a bad option or value; nothing was written",
             "a bad option or value (the error names it in `details.field`); nothing was "
             "written",
             ("USAGE", "INVALID_KIND", "ANSWER_TOO_LARGE", "ITEM_TOO_LARGE"), "UsageError"),
    ExitCode(STORE_UNAVAILABLE, "STORE_UNAVAILABLE",
             "file store unavailable (missing, not a real directory, not git-ignored, or not "
             "this user's); nothing was written",
             "`.agent-memory/` is missing, not a real directory, or not git-ignored inside a git "
             "work tree (the message says how to fix it), or a part of it this user may not "
             "open; nothing was written",
             ("STORE_UNAVAILABLE", "STORE_PERMISSION_DENIED"), "StoreUnavailableError"),
    ExitCode(LOGGER_UNREACHABLE, "LOGGER_UNREACHABLE", "logger unreachable with no fallback",
             "a configured logger does not answer and the command has no fallback (`sync`, "
             "`--store logger`); also a command that needs a logger where none is configured "
             "(`--store logger`, `agent start`, `sync --watch`)",
             ("LOGGER_UNREACHABLE",), "LoggerUnreachableError"),
    ExitCode(NOT_FOUND, "NOT_FOUND", "not found",
             "no such message (neither the logger nor the outbox holds it), or no such "
             "`info` section",
             ("MESSAGE_UNKNOWN", "INFO_SECTION_UNKNOWN", "NOT_FOUND"), "NotFoundError"),
    ExitCode(CONFIG_INVALID, "CONFIG_INVALID",
             "configuration invalid, or credentials the logger or embedder rejects where there "
             "is no fallback",
             "the configuration document is invalid (each problem in "
             "`error.details.problems`), or the logger or embedder rejects its credentials "
             "where there is no fallback (`error.details.credentials` says which)",
             ("CONFIG_INVALID", "CREDENTIALS_REJECTED"), "ConfigInvalidError"),
    ExitCode(EMBEDDING_UNAVAILABLE, "EMBEDDING_UNAVAILABLE",
             "embedding unavailable where a vector is required",
             "no embedder configured, unreachable, or refusing the configured model, where a "
             "vector is required (`embed`, `--ranking vector`)",
             ("EMBEDDING_UNAVAILABLE", "EMBEDDING_REFUSED"), "EmbeddingUnavailableError"),
    ExitCode(NO_ROOM, "NO_ROOM",
             "no room: the disk is full or the outbox cap is reached; nothing was written",
             "the disk (or quota) is full, or the outbox's cap is reached; nothing was written, "
             "and the store works again once there is room",
             ("NO_SPACE", "OUTBOX_FULL"), "NoRoomError"),
    ExitCode(STORE_HELD, "STORE_HELD",
             "the store is forwarded by another process that keeps it; nothing was "
             "forwarded, nothing lost",
             "`sync` found the store forwarded by a watcher of another configuration or version "
             "that keeps it (started by hand or by systemd); the message names it",
             ("STORE_HELD",), "StoreHeldError"),
    ExitCode(INTERRUPTED, "INTERRUPTED", "interrupted",
             "interrupted (SIGINT, Ctrl-C); a write whose file had landed is kept and delivered",
             ("INTERRUPTED",)),
)

MEANINGS = {row.code: row.meaning for row in TABLE}

