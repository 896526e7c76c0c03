"""A fleet failure, as a command reports it: the one mapping from sync.links.failures' vocabulary to
the CLI's errors and exit codes, for every command that calls the logger.

- credentials (sync.links.failures.Credentials): exit 6, CREDENTIALS_REJECTED, with what to fix;
- unreachable: exit 4, LOGGER_UNREACHABLE;
- refused: exit 1 with the logger's code (5 for MESSAGE_UNKNOWN);
- failed: exit 1, LOGGER_FAILED.

In `--store auto` a read falls back on the outbox instead of failing for an outage or a
credentials problem; the latter is said in the answer's `warnings` (`fell_back` and `warn`),
since the user has something to fix.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn

from agent_memory.cli.errors import CliError, CredentialsError, LoggerUnreachableError, from_refusal


def raise_for(exc: BaseException, service: str = "logger", refusal=from_refusal,
              unreachable_note: str = "") -> NoReturn:
    """Raise the CLI error for a fleet failure (`refusal` builds the one for a refusal;
    `unreachable_note` is said after an outage)."""
    from agent_memory.sync.links.failures import Credentials, Refused, Unreachable
    if isinstance(exc, Credentials):
        raise CredentialsError(f"the {service} does not accept this configuration's "
                               f"credentials ({exc.credential}): {exc.reason}",
                               credentials=exc.credential) from None
    if isinstance(exc, Unreachable):
        raise LoggerUnreachableError(f"{service} unreachable: {exc}{unreachable_note}") from None
    if isinstance(exc, Refused):
        raise refusal(exc.code, exc.statement) from None
    raise CliError(f"the {service} failed: {exc}", code="LOGGER_FAILED") from None


def fell_back(ctx, exc: BaseException) -> None:
    """An auto-mode read answers from the outbox after `exc`; a credentials problem is noted
    for the answer's warnings."""
    from agent_memory.sync.links.failures import Credentials
    if isinstance(exc, Credentials):
        ctx.warnings.append({"kind": "logger_credentials", "credentials": exc.credential,
                             "reason": f"answered from the outbox: the logger does not accept "
                                       f"this configuration's credentials: {exc.reason}"})


def warn(ctx, data: Any) -> Any:
    """`data` with the warnings this command noted (a dict answer only)."""
    if ctx.warnings and isinstance(data, dict):
        data = {**data, "warnings": [*data.get("warnings", []), *ctx.warnings]}
    return data
