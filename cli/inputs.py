"""Checks of command-line values: every bad input is a usage error that names the problem,
raised before anything is written."""

from __future__ import annotations

import json
import sys

TYPE_CHECKING = False  # typing costs the write path 3 ms: annotations only
if TYPE_CHECKING:
    from typing import Any

from agent_memory.cli.errors import UsageError
from agent_memory.outbox import contract

# Largest message text accepted, in UTF-8 bytes (documented in docs/reference/answers.md).
MAX_TEXT_BYTES = 1024 * 1024


def session_id(value: str, option: str = "--session-id") -> str:
    if not contract.is_valid_session_id(value):
        raise UsageError(
            f"{option}: invalid session id {value!r}: use 1 to {contract.SESSION_ID_MAX} "
            "characters of letters, digits, '.', '_' and '-', not starting with '.' or '-' and "
            "without '..'", code="INVALID_SESSION_ID", field=option)
    return value


def message_id(value: str, option: str) -> str:
    if not contract.is_uuid4(value):
        raise UsageError(f"{option} must be a version 4 UUID in canonical lower-case form, "
                         f"got {value!r}", code="INVALID_MESSAGE_ID", field=option)
    return value


def kind(value: str, option: str) -> str:
    if value not in contract.PARTICIPANT_KINDS:
        raise UsageError(f"{option} must be one of {', '.join(contract.PARTICIPANT_KINDS)}, "
                         f"got {value!r}", code="INVALID_KIND", field=option)
    return value


def identity(value: str, option: str) -> str:
    if not value.strip():
        raise UsageError(f"{option} must not be empty", code="INVALID_IDENTITY", field=option)
    return value


def occurred_at(value: str, option: str = "--occurred-at") -> str:
    try:
        contract.parse_occurred_at(value)
    except ValueError:
        raise UsageError(f"{option} must be an RFC 3339 time with an explicit offset "
                         f"(e.g. 2026-10-01T13:57:45.123Z), got {value!r}",
                         code="INVALID_TIME", field=option) from None
    return value


def json_object(value: str, option: str) -> dict[str, Any]:
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{option} is not valid JSON: {exc}", code="INVALID_JSON",
                         field=option) from None
    if not isinstance(parsed, dict):
        raise UsageError(f"{option} must be a JSON object", code="INVALID_JSON", field=option)
    return parsed


def relation(value: str) -> dict[str, str]:
    """`KIND:MESSAGE_ID` -> {"to_message_id", "kind"}."""
    kind_part, sep, target = value.partition(":")
    if not sep:
        raise UsageError(f"--relation must be KIND:MESSAGE_ID, got {value!r}",
                         code="INVALID_RELATION", field="--relation")
    if kind_part not in contract.DECLARABLE_RELATION_KINDS:
        hint = " (a correction is stated with --corrects)" if kind_part == "correction" else ""
        raise UsageError(f"relation kind must be one of "
                         f"{', '.join(contract.DECLARABLE_RELATION_KINDS)}, got {kind_part!r}{hint}",
                         code="INVALID_RELATION", field="--relation")
    message_id(target, "--relation")
    return {"to_message_id": target, "kind": kind_part}


def message_fields(args) -> dict[str, Any]:
    """Every field of the message `write` appends (outbox.store.Store.append_message), from its
    parsed options, each checked here; nothing is written if any is wrong."""
    fields: dict[str, Any] = {
        "session_id": session_id(args.session_id),
        "sender_kind": kind(args.sender_kind, "--sender-kind"),
        "sender_identity": identity(args.sender_identity, "--sender-identity"),
        "receiver_kind": kind(args.receiver_kind, "--receiver-kind"),
        "receiver_identity": identity(args.receiver_identity, "--receiver-identity"),
        "priority": non_negative(args.priority, "--priority"),
        "relations": [relation(r) for r in args.relation],
    }
    if args.message_id is not None:
        fields["message_id"] = message_id(args.message_id, "--message-id")
    if args.occurred_at is not None:
        fields["occurred_at"] = occurred_at(args.occurred_at)
    if args.corrects is not None:
        fields["corrects_message_id"] = message_id(args.corrects, "--corrects")
    if args.attributes is not None:
        fields["attributes"] = json_object(args.attributes, "--attributes")
    if args.wait < 0:
        raise UsageError("--wait must be 0 or more seconds")
    fields["text"] = text(args.text)  # last: stdin is read only for a valid command
    return fields


def dialogue_kind(value: str) -> list[str]:
    """The two kinds of a dialogue kind, written SENDER-to-RECEIVER (as answers show it) or
    SENDER,RECEIVER (the form `session open` took first): both are accepted everywhere."""
    first, to, second = value.partition("-to-")
    parts = [p.strip(" ") for p in ([first, second] if to else value.split(","))]
    if len(parts) != 2:
        raise UsageError(f"--dialogue-kind must be two kinds, SENDER-to-RECEIVER (e.g. "
                         f"human-to-model), got {value!r}", code="INVALID_KIND",
                         field="--dialogue-kind")
    return [kind(p, "--dialogue-kind") for p in parts]


def non_negative(value: int | None, option: str) -> int | None:
    if value is not None and value < 0:
        raise UsageError(f"{option} must be 0 or more, got {value}", code="INVALID_NUMBER",
                         field=option)
    return value


def positive(value: int | None, option: str) -> int | None:
    if value is not None and value <= 0:
        raise UsageError(f"{option} must be greater than 0, got {value}", code="INVALID_NUMBER",
                         field=option)
    return value


def count(value: int | None, option: str, default: int, ceiling: int | None,
          minimum: int = 0) -> int:
    """A count option: `default` when absent; below `minimum` or above `ceiling` (None: none)
    refused with the logger's codes."""
    from agent_memory.outbox import contract
    if value is None:
        return default
    if value < minimum:
        raise UsageError(f"{option} must be at least {minimum}",
                         code=contract.REQUEST_PARAMETER_VALUE, field=option)
    if ceiling is not None and value > ceiling:
        raise UsageError(f"{option} is capped at {ceiling}", code=contract.CEILING_EXCEEDED,
                         field=option)
    return value


def block_size(value: int | None) -> int:
    """--block-size: at least 1, at most the ceiling, the shipped default when absent."""
    from agent_memory.outbox import contract
    positive(value, "--block-size")
    if value is not None and value > contract.MAX_BLOCK_SIZE:
        raise UsageError(f"--block-size is capped at {contract.MAX_BLOCK_SIZE}",
                         code=contract.CEILING_EXCEEDED, field="--block-size")
    return value or contract.DEFAULT_BLOCK_SIZE


def text(value: str | None) -> str:
    """The message text from --text, else stdin: non-empty UTF-8 within MAX_TEXT_BYTES."""
    if value is not None:
        raw = value.encode("utf-8", "surrogateescape")
    else:
        if sys.stdin is None or sys.stdin.isatty():
            raise UsageError("no text: pass --text or pipe the text on stdin", code="INVALID_TEXT")
        raw = sys.stdin.buffer.read(MAX_TEXT_BYTES + 1)
    if not raw:
        raise UsageError("the text is empty", code="INVALID_TEXT")
    if len(raw) > MAX_TEXT_BYTES:
        raise UsageError(f"the text is over {MAX_TEXT_BYTES} bytes", code="TEXT_TOO_LARGE")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"the text is not valid UTF-8 (byte {exc.start})",
                         code="INVALID_TEXT") from None
