"""The writer's encoder: record dicts in the msgspec schema's field order, encoded with the
standard json module.

Writing must not import msgspec (about 20 ms of the 30 ms budget an agent pays per message), so
the write path builds plain dicts here and `outbox.records` (msgspec) decodes and validates
everything that is read back. The tests decode every kind of record written here with the
msgspec schema and compare, so the two cannot drift apart silently.
"""

from __future__ import annotations

import json

TYPE_CHECKING = False  # typing costs the write path 3 ms: annotations only
if TYPE_CHECKING:
    from typing import Any

FORMAT_VERSION = 1

MESSAGE_FIELDS = ("format_version", "session_id", "message_id", "text", "sender_kind",
                  "sender_identity", "receiver_kind", "receiver_identity", "occurred_at",
                  "sequence_number", "written_at", "priority", "relations",
                  "corrects_message_id", "attributes")
EVENT_FIELDS = ("format_version", "event", "event_id", "session_id", "occurred_at",
                "project_id", "dialogue_kind", "participants", "title", "metadata",
                "message_id", "mode", "message_ids", "marked", "reached_logger")
# The last five are the forgetting events' own (outbox.records.SessionEvent): null in the others.
VECTOR_FIELDS = ("format_version", "message_id", "model", "dimension", "embedding")


def _ordered(fields: tuple[str, ...], values: dict[str, Any]) -> dict[str, Any]:
    unknown = set(values) - set(fields)
    if unknown:
        raise ValueError(f"unknown record fields: {sorted(unknown)}")
    out = {"format_version": FORMAT_VERSION}
    for name in fields[1:]:
        if name in values:
            out[name] = values[name]
    return out


def message(**values: Any) -> dict[str, Any]:
    record = _ordered(MESSAGE_FIELDS, values)
    record.setdefault("priority", None)
    record.setdefault("relations", [])
    record.setdefault("corrects_message_id", None)
    record.setdefault("attributes", None)
    return _ordered(MESSAGE_FIELDS, record)


def encoded_message(**values: Any) -> tuple[dict[str, Any], bytes]:
    """A new message's record (message) and its bytes (encode): what the writer files."""
    record = message(**values)
    return record, encode(record)


def event(**values: Any) -> dict[str, Any]:
    record = _ordered(EVENT_FIELDS, values)
    for name in EVENT_FIELDS[5:]:
        record.setdefault(name, None)
    return _ordered(EVENT_FIELDS, record)


def vector(**values: Any) -> dict[str, Any]:
    return _ordered(VECTOR_FIELDS, values)


def encode(record: dict[str, Any]) -> bytes:
    """Compact UTF-8 JSON and a newline, like msgspec.json's output."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def event_kind(data: bytes) -> str | None:
    """The lifecycle `event` of an encoded session event (open, close, reopen,
    delete_session), or None if it is not one (cheap peek)."""
    try:
        value = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    kind = value.get("event") if isinstance(value, dict) else None
    return kind if kind in ("open", "close", "reopen", "delete_session") else None


def import_item(record: dict[str, Any]) -> dict[str, Any]:
    """The `messages_import` / `append_message` parameter set of a message record dict."""
    item = {key: record[key] for key in ("session_id", "message_id", "text", "sender_kind",
                                         "sender_identity", "receiver_kind",
                                         "receiver_identity", "occurred_at")}
    item["relations"] = [{"to_message_id": r["to_message_id"], "kind": r["kind"]}
                         for r in record.get("relations") or []]
    for key in ("priority", "corrects_message_id", "attributes"):
        if record.get(key) is not None:
            item[key] = record[key]
    return item
