"""`write`: validate, append the `.msg`, answer in the logger's append shape."""

from __future__ import annotations

from typing import Any

from cli import inputs
from cli.context import Context
from cli.errors import RefusedError
from outbox import contract, encoding
from outbox.store import MessageExists, StoredFile


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


def append_answer(file: StoredFile, record: dict[str, Any]) -> dict[str, Any]:
    """The logger's five append facts, plus where the message waits in the outbox."""
    return {"message_id": record["message_id"], "sequence_number": record["sequence_number"],
            "audience": {"receiver_kind": record["receiver_kind"],
                         "receiver_identity": record["receiver_identity"]},
            **contract.excerpts(record["text"]), "occurred_at": record["occurred_at"],
            "outbox": file.area, "file": file.relpath}


def same_content(record: dict[str, Any], fields: dict[str, Any]) -> bool:
    """Is `fields` an identical retry of the stored message (the logger's retry rule)?"""
    item = encoding.import_item(record)
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
    side = ctx.side()
    if ctx.store_mode == "logger":
        from cli.forwarding import direct
        params = dict(fields)
        if "occurred_at" in params:
            params["occurred_at"] = contract.normalise_occurred_at(params["occurred_at"])
        return direct(ctx, "append_message", **params)
    store = ctx.store()
    if store.last_event(fields["session_id"]) == "close":
        raise RefusedError(f"session {fields['session_id']} is closed: reopen it first",
                           code=contract.SESSION_CLOSED)
    try:
        file, record = store.append_message(fields)
    except MessageExists as exc:
        from outbox.records import as_dict
        file, record = exc.existing.file, as_dict(exc.existing.record)
        if not same_content(record, fields):
            raise RefusedError(f"message {fields['message_id']} already exists with different "
                               "content", code=contract.MESSAGE_CONFLICT) from None
    answer = append_answer(file, record)
    if side == "logger" and file.area == "pending":
        from cli.forwarding import forward
        return forward(ctx, file, answer, args.wait)
    return answer, "file"
