"""How a read asks the logger, and which file store it may merge from: `--store auto` falls
back on the outbox when the logger cannot be asked, `--store logger` fails instead (the one
place this is decided for read, get, sessions and the navigation reads)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def ask_logger(ctx, command: str, **params: Any):
    """The logger's answer data, or None when it is unreachable (or refuses this
    configuration's credentials) in auto mode; a refusal raises its CLI error."""
    from agent_memory.cli import fleet_errors
    from agent_memory.sync.links.failures import Failed, Refused, Unreachable
    try:
        return ctx.route.call(ctx.config, command, **params)
    except Unreachable as exc:
        if ctx.store_mode == "logger":
            fleet_errors.raise_for(exc)
        fleet_errors.fell_back(ctx, exc)
        return None
    except (Refused, Failed) as exc:
        fleet_errors.raise_for(exc)


def mergeable_store(ctx):
    """The file store when auto mode may merge from it, else None."""
    from agent_memory.cli.errors import StoreUnavailableError
    if ctx.store_mode != "auto":
        return None
    try:
        return ctx.store()
    except StoreUnavailableError:
        return None
