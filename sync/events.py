"""The logger command of each outbox event, in one place: what the engine sends for a session
event (open, close, reopen) or a forgetting event (delete, mark, delete_session), and what a
`--store logger` command calls for the same act without writing the event. Pure standard
library (the write path imports it)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

COMMANDS = {"open": "open_session", "close": "close_session", "reopen": "reopen_session",
            "delete": "message_delete", "mark": "mark_messages_for_deletion",
            "delete_session": "delete_session"}


def call(kind: str, fields: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(logger command, its parameters) for the event `kind` with these fields (an event
    record's, or a command's arguments)."""
    session_id = fields.get("session_id")
    if kind == "open":
        return COMMANDS[kind], {
            "session_id": session_id, "project_id": fields.get("project_id"),
            "dialogue_kind": tuple(fields.get("dialogue_kind") or ()),
            "participants": list(fields.get("participants") or ()),
            "title": fields.get("title"), "metadata": fields.get("metadata")}
    if kind in ("close", "reopen", "delete_session"):
        return COMMANDS[kind], {"session_id": session_id}
    if kind == "delete":
        return COMMANDS[kind], {"message_id": fields.get("message_id"),
                                "mode": fields.get("mode")}
    if kind == "mark":
        return COMMANDS[kind], {"message_ids": list(fields.get("message_ids") or ()),
                                "marked_for_deletion": bool(fields.get("marked"))}
    raise ValueError(f"no logger command for an event {kind!r}")


def call_of(event: Any) -> tuple[str, dict[str, Any]]:
    """`call` for a decoded event record (outbox.records.SessionEvent)."""
    fields = {name: getattr(event, name, None) for name in (
        "session_id", "project_id", "dialogue_kind", "participants", "title", "metadata",
        "message_id", "mode", "message_ids", "marked")}
    return call(event.event, fields)
