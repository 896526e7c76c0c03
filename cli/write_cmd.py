"""`write`: validate, append the `.msg`, answer in the logger's append shape."""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs the write path 3 ms: annotations only
if TYPE_CHECKING:
    from typing import Any

from agent_memory.cli import inputs
from agent_memory.cli.context import Context
from agent_memory.cli.errors import RefusedError
from agent_memory.outbox import contract, encoding
from agent_memory.outbox.store import MessageExists, SessionShut, StoredFile


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


DEFAULT_EMBED_BUDGET = 2.0
EMBED_BUDGET_ENV = "AGENT_MEMORY_EMBED_BUDGET"


def embed_budget(args, store_mode: str) -> float:
    """Seconds the embedder gets on the write path: --embed-budget, else
    $AGENT_MEMORY_EMBED_BUDGET, else 2 in auto mode and 0 with `--store file` (append only: the
    0.9 s embed-client import would multiply the file write's cost; `embed` or the watcher
    fills the vector). 0 leaves the vector to them."""
    import os
    if getattr(args, "embed_budget", None) is not None:
        value = args.embed_budget
    elif os.environ.get(EMBED_BUDGET_ENV):
        try:
            value = float(os.environ[EMBED_BUDGET_ENV])
        except ValueError:
            raise inputs.UsageError(f"${EMBED_BUDGET_ENV} must be a number of seconds, got "
                                    f"{os.environ[EMBED_BUDGET_ENV]!r}") from None
    else:
        value = 0.0 if store_mode == "file" else DEFAULT_EMBED_BUDGET
    return max(0.0, value)


def embed_on_write(ctx: Context, budget: float, file: StoredFile,
                   record: dict[str, Any]) -> bool:
    """The `.emb` beside the new `.msg` when the embedder answers within the budget."""
    if budget <= 0:
        return False
    from agent_memory.sync.vectors.emb import vector_for, write_vector
    vector = vector_for(ctx.route, ctx.config, budget, record, file.relpath)
    if vector is None:
        return False
    try:
        return write_vector(ctx.store(), file.session_id, file.name, vector)
    except OSError as exc:
        import sys
        sys.stderr.write(f"agent-memory: no vector for {file.relpath} yet: {exc}\n")
        return False


def refuse_deleted_targets(store, fields: dict[str, Any]) -> None:
    """A message may not relate to, or correct, a message deleted here (soft, marked or hard):
    MESSAGE_DELETED, nothing written. Asked by the append (its `admit`), once it has found
    the session open: a closed or deleted session is refused as such first."""
    from agent_memory.outbox.views import Forgotten
    forgotten = Forgotten(store.event_dicts(fields["session_id"]))
    if not forgotten:
        return
    targets = [r["to_message_id"] for r in fields.get("relations") or []]
    if fields.get("corrects_message_id"):
        targets.append(fields["corrects_message_id"])
    for target in targets:
        if forgotten.deleted(target):
            raise RefusedError(f"message {target} was deleted: a new message may not relate "
                               "to it or correct it (nothing was written)",
                               code=contract.MESSAGE_DELETED)


def shut_refusal(session_id: str, kind: str) -> RefusedError:
    """The refusal of a message into a session closed (SESSION_CLOSED) or deleted
    (SESSION_UNKNOWN, as the logger answers for a session it no longer has) here."""
    if kind == "close":
        return RefusedError(f"session {session_id} is closed: reopen it first",
                            code=contract.SESSION_CLOSED)
    return RefusedError(f"session {session_id} was deleted: open it again to start it anew",
                        code=contract.SESSION_UNKNOWN)


def check_outbox_cap(ctx: Context, fields: dict[str, Any]) -> None:
    """Refuse (exit 8, nothing written) a message that would pass the configured outbox cap."""
    caps = ctx.config.outbox
    max_messages, max_bytes = caps["max_pending_messages"], caps["max_pending_bytes"]
    if max_messages is None and max_bytes is None:
        return
    messages, size = ctx.store().pending_usage()
    incoming = len(fields["text"].encode("utf-8")) + 512  # the record around the text
    if max_messages is not None and messages + 1 > max_messages:
        reached = f"{messages} pending messages: outbox.max_pending_messages is {max_messages}"
    elif max_bytes is not None and size + incoming > max_bytes:
        reached = f"{size} pending bytes: outbox.max_pending_bytes is {max_bytes}"
    else:
        return
    from agent_memory.cli.errors import NoRoomError
    raise NoRoomError(f"the outbox is full ({reached}); nothing was written: bring the logger "
                      "back (`agent-memory sync` forwards the outbox) or raise the cap",
                      code="OUTBOX_FULL", pending_messages=messages, pending_bytes=size)


def run(ctx: Context, args) -> tuple[dict[str, Any], str]:
    fields = inputs.message_fields(args)
    budget = embed_budget(args, ctx.store_mode)  # a bad value is refused before any write
    side = ctx.side()
    if ctx.store_mode == "logger":
        from agent_memory.cli.forwarding import direct
        params = dict(fields)
        if "occurred_at" in params:
            params["occurred_at"] = contract.normalise_occurred_at(params["occurred_at"])
        return direct(ctx, "append_message", **params)
    store = ctx.store()
    check_outbox_cap(ctx, fields)
    admit = None
    if fields.get("relations") or fields.get("corrects_message_id"):
        def admit() -> None:
            refuse_deleted_targets(store, fields)
    try:
        file, record = store.append_message(fields, admit)
    except SessionShut as exc:
        raise shut_refusal(fields["session_id"], exc.kind) from None
    except MessageExists as exc:
        from agent_memory.outbox.records import as_dict
        file, record = exc.existing.file, as_dict(exc.existing.record)
        if not same_content(record, fields):
            raise RefusedError(f"message {fields['message_id']} already exists with different "
                               "content", code=contract.MESSAGE_CONFLICT) from None
    answer = append_answer(file, record)
    if side == "logger" and file.area == "pending":
        from agent_memory.cli import forwarding
        embed_here = None
        if ctx.config.embedder is not None:
            def embed_here() -> None:
                embed_on_write(ctx, budget, file, record)
        return forwarding.forward(ctx, file, answer, args.wait, budget, embed_here)
    if file.area == "pending" and ctx.config.embedder is not None:
        embed_on_write(ctx, budget, file, record)
    return answer, "file"
