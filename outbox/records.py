"""The records the store holds: the msgspec schema that decodes and validates them.

Every record carries `format_version` so a later release can read what an earlier one wrote.
Writing goes through `outbox.encoding` (no msgspec import on the write path). Field names follow
the logger's `append_message` parameter set, so a `.msg` maps onto an import item as it is.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from agent_memory.outbox import encoding

FORMAT_VERSION = encoding.FORMAT_VERSION


class Relation(msgspec.Struct, forbid_unknown_fields=True):
    to_message_id: str
    kind: str


class MessageRecord(msgspec.Struct, forbid_unknown_fields=False):
    """One message, as written by `write`."""

    format_version: int
    session_id: str
    message_id: str
    text: str
    sender_kind: str
    sender_identity: str
    receiver_kind: str
    receiver_identity: str
    occurred_at: str
    sequence_number: int
    written_at: str
    priority: int | None = None
    relations: list[Relation] = []
    corrects_message_id: str | None = None
    attributes: dict[str, Any] | None = None

    def import_item(self) -> dict[str, Any]:
        """The `messages_import` / `append_message` parameter set of this message."""
        return encoding.import_item(as_dict(self))


class SessionEvent(msgspec.Struct, forbid_unknown_fields=False):
    """A session command recorded in the outbox: open (with its attributes), close, reopen;
    and forgetting: delete (a message, soft or hard), mark (messages, set or cleared),
    delete_session. None of them holds a message's text."""

    format_version: int
    event: Literal["open", "close", "reopen", "delete", "mark", "delete_session"]
    event_id: str
    session_id: str
    occurred_at: str
    project_id: str | None = None
    dialogue_kind: list[str] | None = None
    participants: list[str] | None = None
    title: str | None = None
    metadata: dict[str, Any] | None = None
    message_id: str | None = None  # delete
    mode: Literal["soft", "hard"] | None = None  # delete
    message_ids: list[str] | None = None  # mark
    marked: bool | None = None  # mark
    # delete (hard) and delete_session: did anything of it reach the logger before the purge?
    # If not, the logger not knowing it is the expected answer, not a refusal.
    reached_logger: bool | None = None


class VectorRecord(msgspec.Struct, forbid_unknown_fields=False):
    """The embedding of one message, beside its `.msg`."""

    format_version: int
    message_id: str
    model: str
    dimension: int
    embedding: list[float]


_DECODERS = {
    MessageRecord: msgspec.json.Decoder(MessageRecord),
    SessionEvent: msgspec.json.Decoder(SessionEvent),
    VectorRecord: msgspec.json.Decoder(VectorRecord),
}


class RecordError(ValueError):
    """A file that does not hold a record of the expected type and a known format version."""


def as_dict(record: msgspec.Struct) -> dict[str, Any]:
    """A decoded record as the plain dict the writer's encoder builds."""
    return msgspec.to_builtins(record)


def decode(data: bytes, kind: type) -> Any:
    """Decode and check the format version; RecordError names what is wrong."""
    try:
        record = _DECODERS[kind].decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise RecordError(str(exc)) from exc
    if record.format_version != FORMAT_VERSION:
        raise RecordError(f"unsupported format_version {record.format_version}")
    return record


KINDS = {"message": MessageRecord, "event": SessionEvent, "vector": VectorRecord}
