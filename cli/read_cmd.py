"""`read`, `get`, `sessions` from the file store, in the logger's data shape."""

from __future__ import annotations

from typing import Any

from cli import inputs
from cli.context import Context
from cli.errors import NotFoundError, UsageError
from outbox import contract, views


def _block_size(value: int | None) -> int:
    inputs.positive(value, "--block-size")
    if value is not None and value > contract.MAX_BLOCK_SIZE:
        raise UsageError(f"--block-size is capped at {contract.MAX_BLOCK_SIZE}",
                         code=contract.CEILING_EXCEEDED)
    return value or contract.DEFAULT_BLOCK_SIZE


def _continuation(token: str | None) -> int | None:
    if token is None:
        return None
    try:
        return contract.decode_continuation(token)
    except ValueError:
        raise UsageError(f"--continuation {token!r} is not one this tool handed out",
                         code=contract.CONTINUATION_INVALID) from None


def _with_warnings(data: dict[str, Any], unreadable) -> dict[str, Any]:
    if unreadable:
        data["warnings"] = [u.warning() for u in unreadable]
    return data


def read(ctx: Context, args) -> dict[str, Any]:
    session_id = inputs.session_id(args.session_id)
    start = inputs.non_negative(args.start, "--start")
    block_size = _block_size(args.block_size)
    resume = _continuation(args.continuation)
    messages, unreadable = ctx.store().messages(session_id)
    window = views.journal_window(messages, start=resume if resume is not None else start,
                                  block_size=block_size, mode=args.mode)
    return _with_warnings({"session_id": session_id, **window}, unreadable)


def get(ctx: Context, args) -> dict[str, Any]:
    message_id = inputs.message_id(args.message_id, "MESSAGE_ID")
    store = ctx.store()
    found = store.find_message(message_id)
    if found is None:
        raise NotFoundError(f"no message {message_id} in the file store",
                            code=contract.MESSAGE_UNKNOWN)
    entry = views.message_entry(found)
    vector = [f for f in store.files(found.file.session_id, ".emb", (found.file.area,))
              if f.item_id == message_id]
    entry["vectorization_state"] = "vectorized" if vector else "pending"
    return entry


def sessions(ctx: Context, args) -> dict[str, Any]:
    block_size = _block_size(args.block_size)
    offset = _continuation(args.continuation) or 0
    if args.dialogue_kind is not None:
        first, sep, second = args.dialogue_kind.partition("-to-")
        if not sep:
            raise UsageError("--dialogue-kind must be KIND-to-KIND, e.g. human-to-model")
        inputs.kind(first, "--dialogue-kind")
        inputs.kind(second, "--dialogue-kind")
    store = ctx.store()
    entries, unreadable = [], []
    for session_id in store.session_ids():
        events, bad = store.events(session_id)
        unreadable.extend(bad)
        entries.append(views.session_entry(session_id, events))
    matched = views.filter_sessions(entries, project_id=args.project_id,
                                    lifecycle_state=args.lifecycle, participant=args.participant,
                                    dialogue_kind=args.dialogue_kind)
    window = views.page(matched, offset=offset, block_size=block_size)
    return _with_warnings({"sessions": window["block"], "more": window["more"],
                           "continuation": window["continuation"]}, unreadable)


def run(ctx: Context, args) -> tuple[dict[str, Any], str]:
    ctx.side()
    handler = {"read": read, "get": get, "sessions": sessions}[args.command]
    return handler(ctx, args), "file"
