"""`read`, `get`, `sessions` from the file store, in the logger's data shape."""

from __future__ import annotations

from typing import Any

from agent_memory.cli import inputs
from agent_memory.cli.auto_reads import (ask_logger, deleted_pending, merged_entries,
                                        mergeable_store, outbox_knows, refuse_if_deleted_here,
                                        refuse_unknown)
from agent_memory.cli.context import Context
from agent_memory.cli.errors import NotFoundError, UsageError
from agent_memory.outbox import contract, views


def _continuation(token: str | None) -> int | None:
    if token is None:
        return None
    try:
        return contract.decode_continuation(token)
    except ValueError:
        raise UsageError(f"--continuation {token!r} is not one this tool handed out",
                         code=contract.CONTINUATION_INVALID, field="--continuation") from None


def _with_warnings(data: dict[str, Any], unreadable) -> dict[str, Any]:
    if unreadable:
        data["warnings"] = [u.warning() for u in unreadable]
    return data


def read(ctx: Context, args) -> dict[str, Any]:
    session_id = inputs.session_id(args.session_id)
    start = inputs.non_negative(args.start, "--start")
    block_size = inputs.block_size(args.block_size)
    resume = _continuation(args.continuation)
    store = ctx.store()
    if not outbox_knows(store, session_id):
        raise refuse_unknown(session_id)
    from agent_memory.outbox.window import journal_window
    window, unreadable = journal_window(store, session_id,
                                        start=resume if resume is not None else start,
                                        block_size=block_size, mode=args.mode,
                                        show_deleted=args.show_deleted)
    return _with_warnings({"session_id": session_id, **window}, unreadable)


def get(ctx: Context, args) -> dict[str, Any]:
    message_id = inputs.message_id(args.message_id, "MESSAGE_ID")
    store = ctx.store()
    found = store.find_message(message_id)
    if found is None:
        raise NotFoundError(f"no message {message_id} in the file store",
                            code=contract.MESSAGE_UNKNOWN)
    forgotten = views.forgotten(store.events(found.file.session_id)[0])
    if message_id in forgotten.purged:
        raise NotFoundError(f"message {message_id} was deleted (hard)",
                            code=contract.MESSAGE_UNKNOWN)
    entry = forgotten.apply([views.message_entry(found)])[0]
    from agent_memory.outbox.names import VECTOR_EXT, sibling
    vector = found.file._replace(name=sibling(found.file.name, VECTOR_EXT))
    try:
        store.stat(vector)
        vectorized = True
    except FileNotFoundError:
        vectorized = False
    entry["vectorization_state"] = "vectorized" if vectorized else "pending"
    return entry


def sessions(ctx: Context, args) -> dict[str, Any]:
    block_size = inputs.block_size(args.block_size)
    offset = _continuation(args.continuation) or 0
    store = ctx.store()
    entries, unreadable = [], []
    for session_id in store.session_ids():
        events, bad = store.events(session_id)
        unreadable.extend(bad)
        if views.deleted_session(events):
            continue
        entries.append(views.session_entry(session_id, events))
    matched = views.filter_sessions(entries, project_id=args.project_id,
                                    lifecycle_state=args.lifecycle, participant=args.participant,
                                    dialogue_kind=args.dialogue_kind)
    window = views.page(matched, offset=offset, block_size=block_size)
    return _with_warnings({"sessions": window["block"], "more": window["more"],
                           "continuation": window["continuation"]}, unreadable)


_PREVIEW_ONLY = ("caller", "recipient", "period_start", "period_end", "page_offset", "page_size",
                 "preview_size")


# --- the logger side (auto: with the outbox's pending messages merged) -------------------------
OUTBOX_CONTINUATION = "outbox:"


def _pending_entries(store, session_id: str) -> list[dict[str, Any]]:
    from agent_memory.outbox.store import PENDING
    messages, _bad = store.messages(session_id, (PENDING,))
    ordered = sorted(messages, key=lambda m: (m.record.sequence_number, m.file.name))
    return [views.message_entry(m) for m in ordered]


def logger_read(ctx: Context, args):
    from agent_memory.cli.errors import RefusedError
    session_id = inputs.session_id(args.session_id)
    start = inputs.non_negative(args.start, "--start")
    block_size = inputs.block_size(args.block_size)
    store = mergeable_store(ctx)
    refuse_if_deleted_here(ctx, session_id)
    token = args.continuation
    if store is not None and token is not None and token.startswith(OUTBOX_CONTINUATION):
        try:
            shown = contract.token_number(token[len(OUTBOX_CONTINUATION):])
        except ValueError:
            raise UsageError(f"--continuation {token!r} is not one this tool handed out",
                             code=contract.CONTINUATION_INVALID, field="--continuation") from None
        data = {"session_id": session_id, "messages": [], "more": False, "continuation": None}
        return _append_pending(store, session_id, data, block_size, args.mode, 0, shown,
                               args.show_deleted)
    if store is not None and args.mode == "resolved" and \
            _reshapes_the_loggers_chains(store, session_id):
        answer = _whole_merge(ctx, store, session_id, token, start, block_size, args.show_deleted)
        if answer is not None:
            return answer
    params: dict[str, Any] = {"session_id": session_id, "block_size": block_size,
                              "mode": args.mode}
    if args.show_deleted:
        params["show_deleted"] = True
    if token is not None:
        params["continuation"] = token
    else:
        params["start_sequence_number"] = start
    try:
        data = ask_logger(ctx, "messages_read", **params)
    except RefusedError as exc:
        if store is not None and exc.code == contract.SESSION_UNKNOWN and \
                outbox_knows(store, session_id):
            return read(ctx, args), "file"  # opened while the logger was away: the files'
        raise
    if data is None:
        return None
    if store is not None:
        data = _as_forgotten_here(store, session_id, data, args.show_deleted)
    if store is None or data.get("more"):
        return data, "logger"
    return _append_pending(store, session_id, data, block_size, args.mode,
                           start if token is None else 0, 0, args.show_deleted)


def _reshapes_the_loggers_chains(store, session_id: str) -> bool:
    """Can the outbox change how the logger's resolved journal reads? A pending message that
    corrects one the logger has (that message shows the correction's wording, wherever it
    stands), or a pending delete or mark (a chain whose deleted member the logger still shows
    reads otherwise: its root may be the deleted one). Then the journal is computed over the
    logger's entries and the pending ones, not the logger's plus the pending tail."""
    from agent_memory.outbox import names
    from agent_memory.outbox.store import PENDING
    for file in store.files(session_id, names.EVENT_EXT, (PENDING,)):
        try:
            if store.load(file, "event").event in ("delete", "mark"):
                return True
        except (OSError, ValueError):
            continue  # moved meanwhile, or unreadable: verify reports it
    pending = [m.record for m in store.messages(session_id, (PENDING,))[0]]
    ids = {r.message_id for r in pending}
    return any(r.corrects_message_id and r.corrects_message_id not in ids for r in pending)


def _whole_merge(ctx: Context, store, session_id: str, token: str | None, start: int,
                 block_size: int, show_deleted: bool):
    """The resolved journal computed over the logger's entries and the pending ones, paged with
    this tool's own continuations; None when the logger cannot be asked."""
    if token is not None:
        start = _continuation(token)
    merged = merged_entries(ctx, store, session_id)
    if merged is None:
        return None
    entries, side = merged
    window = views.window_of_entries(entries, start=start, block_size=block_size,
                                     mode="resolved", show_deleted=show_deleted)
    return {"session_id": session_id, **window}, side


def _as_forgotten_here(store, session_id: str, data: dict[str, Any],
                       show_deleted: bool) -> dict[str, Any]:
    """The logger's window as the outbox's pending deletes and marks leave it: they take
    effect here at once, before the logger hears of them."""
    from agent_memory.outbox.store import PENDING
    if not any(f.name.endswith(".ses") for f in store.files(session_id, None, (PENDING,))):
        return data
    forgotten = views.forgotten(store.events(session_id)[0])
    if not forgotten:
        return data
    shown = forgotten.apply(data["messages"])
    if not show_deleted:
        shown = [e for e in shown if not e["soft_deleted"]]
    return {**data, "messages": shown}


def _append_pending(store, session_id: str, data: dict[str, Any], block_size: int, mode: str,
                    start: int, skip: int, show_deleted: bool = False):
    known = {e["message_id"] for e in data["messages"]}
    pending = [e for e in _pending_entries(store, session_id)
               if e["message_id"] not in known and e["sequence_number"] >= start]
    forgotten = views.forgotten(store.events(session_id)[0]) if pending else None
    if forgotten:
        pending = [e for e in forgotten.apply(pending) if show_deleted or not e["soft_deleted"]]
    if mode == "resolved":
        merged = contract.resolve_corrections(data["messages"] + pending)
        pending = [e for e in merged if e.get("outbox") == "pending"]
        data = {**data, "messages": [e for e in merged if e.get("outbox") != "pending"]}
    pending = pending[skip:]
    if not pending:
        return data, "logger" if skip == 0 else "both"
    room = max(0, block_size - len(data["messages"]))
    shown = pending[:room]
    more = len(pending) > len(shown)
    return {**data, "messages": data["messages"] + shown, "more": more,
            "continuation": f"{OUTBOX_CONTINUATION}{skip + len(shown)}" if more else None}, \
        "both"


def logger_get(ctx: Context, args):
    message_id = inputs.message_id(args.message_id, "MESSAGE_ID")
    try:
        data = ask_logger(ctx, "message_get", message_id=message_id)
    except NotFoundError as exc:
        store = mergeable_store(ctx)
        if store is not None and exc.code == contract.MESSAGE_UNKNOWN:
            found = store.find_message(message_id)
            if found is not None and found.file.area == "pending":
                return get(ctx, args), "both"
        raise
    if data is None:
        return None
    store = mergeable_store(ctx)
    if store is not None and isinstance(data, dict) and data.get("session_id"):
        try:
            events = store.events(data["session_id"])[0]
        except ValueError:  # not a session id this store could hold
            events = []
        forgotten = views.forgotten(events)
        if message_id in forgotten.purged or deleted_pending(events):
            raise NotFoundError(f"message {message_id} was deleted here (hard, or with its "
                                "session); the logger hears of it on the next sync",
                                code=contract.MESSAGE_UNKNOWN)
        data = forgotten.apply([data])[0]
    return data, "logger"


def logger_sessions(ctx: Context, args):
    block_size = inputs.block_size(args.block_size)
    store = mergeable_store(ctx)
    token = args.continuation
    if store is not None and token is not None and token.startswith(OUTBOX_CONTINUATION):
        try:  # past the logger's last block: the sessions opened here, from the N-th on
            shown = contract.token_number(token[len(OUTBOX_CONTINUATION):])
        except ValueError:
            raise UsageError(f"--continuation {token!r} is not one this tool handed out",
                             code=contract.CONTINUATION_INVALID, field="--continuation") from None
        return _with_pending_sessions(store, args, {"sessions": []}, block_size, shown)
    params = {"project_id": args.project_id, "lifecycle": args.lifecycle,
              "participant": args.participant, "dialogue_kind": args.dialogue_kind,
              "block_size": block_size, "continuation": token}
    data = ask_logger(ctx, "sessions_list", **{k: v for k, v in params.items() if v is not None})
    if data is None:
        return None
    if store is not None:  # a session deleted here is gone at once, before the logger hears
        pending = set(store.pending_session_ids())
        data = {**data, "sessions": [
            e for e in data["sessions"] if e.get("session_id") not in pending
            or not views.deleted_session(store.events(e["session_id"])[0])]}
    if store is None or data.get("more"):
        return data, "logger"
    return _with_pending_sessions(store, args, data, block_size, 0)


def _with_pending_sessions(store, args, data: dict[str, Any], block_size: int, skip: int):
    """The logger's last block with the sessions opened here while it was away, from the
    `skip`-th on, as many as the block has room for; the rest by an `outbox:N` continuation."""
    from agent_memory.outbox.store import PENDING
    known = {e["session_id"] for e in data["sessions"]}
    extra = []
    for session_id in store.pending_session_ids():
        if session_id in known:
            continue
        events, _bad = store.events(session_id)
        if not any(f.area == PENDING and e.event == "open" for f, e in events):
            continue  # not opened here while the logger was away
        extra.append(views.session_entry(session_id, events))
    extra = views.filter_sessions(extra, project_id=args.project_id,
                                  lifecycle_state=args.lifecycle, participant=args.participant,
                                  dialogue_kind=args.dialogue_kind)
    extra = extra[skip:]
    if not extra and skip == 0:
        return data, "logger"
    if not extra:
        return {**data, "more": False, "continuation": None}, "both"
    shown = extra[:max(0, block_size - len(data["sessions"]))]
    more = len(extra) > len(shown)
    return {**data, "sessions": data["sessions"] + shown, "more": more,
            "continuation": f"{OUTBOX_CONTINUATION}{skip + len(shown)}" if more else None}, "both"


def _text_range(args) -> tuple[int, int | None] | None:
    """get's --text-offset and --text-length, checked before anything is read."""
    offset = inputs.non_negative(getattr(args, "text_offset", None), "--text-offset")
    length = inputs.positive(getattr(args, "text_length", None), "--text-length")
    if offset is None and length is None:
        return None
    return offset or 0, length


def _ranged(entry: dict[str, Any], span: tuple[int, int | None]) -> dict[str, Any]:
    """The entry with only that range of its text (characters, not bytes), and where it
    stands in the whole: `text_range` {"offset", "length", "total_length"}."""
    text = entry.get("text")
    if not isinstance(text, str):
        return entry
    offset, length = span
    if offset > len(text) or (offset == len(text) and text):
        raise UsageError(f"--text-offset {offset} is past the text's end (it has {len(text)} "
                         "characters)", code="INVALID_NUMBER", field="--text-offset")
    piece = text[offset:] if length is None else text[offset:offset + length]
    return {**entry, "text": piece,
            "text_range": {"offset": offset, "length": len(piece), "total_length": len(text)}}


def run(ctx: Context, args) -> tuple[dict[str, Any], str]:
    if args.command == "read" and args.preview:  # the listing across sessions
        from agent_memory.cli import navigate_cmd
        return navigate_cmd.preview(ctx, args)
    span = _text_range(args) if args.command == "get" else None
    if span is not None:
        data, store = _run(ctx, args)
        return _ranged(data, span), store
    return _run(ctx, args)


def _run(ctx: Context, args) -> tuple[dict[str, Any], str]:
    if args.command == "read" and args.session_id is None:
        raise UsageError("read: --session-id is required (except with --preview)",
                         code=contract.REQUEST_PARAMETER_MISSING)
    if args.command == "read" and any(
            getattr(args, name) is not None for name in _PREVIEW_ONLY):
        raise UsageError("read: --caller, --recipient, --period-*, --page-* and "
                         "--preview-size belong to --preview")
    if args.command == "sessions" and args.dialogue_kind is not None:  # in the answers' form
        args.dialogue_kind = contract.dialogue_kind_label(inputs.dialogue_kind(args.dialogue_kind))
    side = ctx.side()
    if side == "logger":
        handler = {"read": logger_read, "get": logger_get, "sessions": logger_sessions}
        answer = handler[args.command](ctx, args)
        if answer is not None:
            return answer
    handler = {"read": read, "get": get, "sessions": sessions}[args.command]
    from agent_memory.cli.fleet_errors import warn
    return warn(ctx, handler(ctx, args)), "file"
