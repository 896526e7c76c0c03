"""`write`: validate, append the `.msg`, answer in the logger's append shape."""

from __future__ import annotations

from typing import Any

from cli import inputs
from cli.context import Context
from cli.errors import RefusedError
from outbox import contract, views
from outbox.store import MessageExists, StoredMessage


def fields_from(args) -> dict[str, Any]:
    """Every append_message field, validated; nothing is written if any is wrong."""
    fields: dict[str, Any] = {
        "session_id": inputs.session_id(args.session_id),
        "sender_kind": inputs.kind(args.sender_kind, "--sender-kind"),
        "sender_identity": inputs.identity(args.sender_identity, "--sender-identity"),
        "receiver_kind": inputs.kind(args.receiver_kind, "--receiver-kind"),
        "receiver_identity": inputs.identity(args.receiver_identity, "--receiver-identity"),
        "priority": inputs.non_negative(args.priority, "--priority"),
        "relations": [inputs.relation(r) for r in args.relation],
    }
    if args.message_id is not None:
        fields["message_id"] = inputs.message_id(args.message_id, "--message-id")
    if args.occurred_at is not None:
        fields["occurred_at"] = inputs.occurred_at(args.occurred_at)
    if args.corrects is not None:
        fields["corrects_message_id"] = inputs.message_id(args.corrects, "--corrects")
    if args.attributes is not None:
        fields["attributes"] = inputs.json_object(args.attributes, "--attributes")
    if args.wait < 0:
        raise inputs.UsageError("--wait must be 0 or more seconds")
    fields["text"] = inputs.text(args.text)  # last: stdin is read only for a valid command
    return fields


def append_answer(stored: StoredMessage) -> dict[str, Any]:
    """The logger's five append facts, plus where the message waits in the outbox."""
    r = stored.record
    return {"message_id": r.message_id, "sequence_number": r.sequence_number,
            "audience": {"receiver_kind": r.receiver_kind,
                         "receiver_identity": r.receiver_identity},
            **contract.excerpts(r.text), "occurred_at": r.occurred_at,
            "outbox": stored.file.area,
            "file": stored.file.relpath}


def same_content(stored: StoredMessage, fields: dict[str, Any]) -> bool:
    """Is `fields` an identical retry of the stored message (the logger's retry rule)?"""
    item = stored.record.import_item()
    wanted = dict(fields)
    if "occurred_at" in wanted:
        wanted["occurred_at"] = contract.normalise_occurred_at(wanted["occurred_at"])
    else:
        wanted["occurred_at"] = item["occurred_at"]  # a retry without a time keeps the first
    for key in ("priority", "corrects_message_id", "attributes"):
        if wanted.get(key) is None:
            wanted.pop(key, None)
    return item == wanted


def run(ctx: Context, args) -> tuple[dict[str, Any], str]:
    fields = fields_from(args)
    ctx.side()
    store = ctx.store()
    events, _bad = store.events(fields["session_id"])
    if views.lifecycle(events) == "closed":
        raise RefusedError(f"session {fields['session_id']} is closed: reopen it first",
                           code=contract.SESSION_CLOSED)
    try:
        stored = store.append_message(fields)
    except MessageExists as exc:
        if not same_content(exc.existing, fields):
            raise RefusedError(f"message {fields['message_id']} already exists with different "
                               "content", code=contract.MESSAGE_CONFLICT) from None
        stored = exc.existing
    return append_answer(stored), "file"
