"""How a read asks the logger, and what it merges from: `--store auto` falls back on the outbox
when the logger cannot be asked, `--store logger` fails instead; and the whole of a session, the
logger's entries with the outbox's pending ones, where a read must be computed over both; and
which sessions exist, alike in every mode (the one place this is decided for read, get,
sessions, the navigation reads, search and the working set)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

from agent_memory.outbox import contract, views
from agent_memory.outbox.store import PENDING


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


# --- which sessions exist -----------------------------------------------------------------------
def outbox_knows(store, session_id: str) -> bool:
    """Does the outbox know the session: a file of it in any area (pending, imported,
    quarantined), and not deleted here since it was last opened? A read of a session neither
    side knows is SESSION_UNKNOWN, as the logger answers, never an empty success."""
    return store.knows(session_id) and not store.shut(session_id)


def refuse_unknown(session_id: str, code: str = contract.SESSION_UNKNOWN):
    from agent_memory.cli.errors import from_refusal
    return from_refusal(code, f"no such session: {session_id}")


def deleted_pending(events) -> bool:
    """Was the session deleted here, its delete still waiting in the outbox? The logger still
    holds it then, and answers for it until it hears of the delete: the answer is stale."""
    return views.deleted_session(events) and any(
        f.area == PENDING and e.event == "delete_session" for f, e in events)


def refuse_if_deleted_here(ctx, session_id: str, code: str = contract.SESSION_UNKNOWN) -> None:
    """Auto mode: a session deleted here is unknown at once, as the logger answers once it
    hears of the delete."""
    store = mergeable_store(ctx)
    if store is not None and deleted_pending(store.events(session_id)[0]):
        raise refuse_unknown(session_id, code)


def logger_entries(ctx, session_id: str) -> list[dict[str, Any]] | None:
    """Every entry of the session the logger holds, soft-deleted ones included (None when the
    logger cannot be asked; [] when it does not know the session)."""
    from agent_memory.cli.errors import RefusedError
    entries: list[dict[str, Any]] = []
    params: dict[str, Any] = {"session_id": session_id, "start_sequence_number": 0,
                              "block_size": contract.MAX_BLOCK_SIZE, "mode": "full",
                              "show_deleted": True}
    while True:
        try:
            data = ask_logger(ctx, "messages_read", **params)
        except RefusedError as exc:
            if exc.code == contract.SESSION_UNKNOWN:
                return []
            raise
        if data is None:
            return None
        entries.extend(data.get("messages") or [])
        if not data.get("more") or not data.get("continuation"):
            return entries
        params = {"session_id": session_id, "continuation": data["continuation"],
                  "block_size": contract.MAX_BLOCK_SIZE, "mode": "full", "show_deleted": True}


def merged_entries(ctx, store, session_id: str) -> tuple[list[dict[str, Any]], str] | None:
    """The logger's entries of the session with the outbox's pending ones, as the local
    forgetting events leave them; None when the logger cannot be asked."""
    remote = logger_entries(ctx, session_id)
    if remote is None:
        return None
    events, _bad = store.events(session_id)
    pending = [views.message_entry(m) for m in store.messages(session_id, (PENDING,))[0]]
    known = {e["message_id"] for e in remote}
    merged = remote + [e for e in pending if e["message_id"] not in known]
    if not remote and not merged:
        return [], "file"
    return views.forgotten(events).apply(merged), "both" if remote else "file"
