"""`session open|close|reopen`: a session event appended to the outbox."""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs the write path 3 ms: annotations only
if TYPE_CHECKING:
    from typing import Any

from agent_memory.cli import inputs
from agent_memory.cli.errors import RefusedError
from agent_memory.cli.context import Context
from agent_memory.outbox import contract, views
from agent_memory.outbox.store import StoredFile


SESSION_WAIT = 1.0  # seconds a session event waits for the logger's confirmation


def run(ctx: Context, args) -> tuple[dict[str, Any], str]:
    if args.action == "delete":
        from agent_memory.cli import forget_cmd
        return forget_cmd.delete_session(ctx, args)
    session_id = inputs.session_id(args.session_id)
    attributes: dict[str, Any] = {}
    if args.action == "open":
        if not args.project_id.strip():
            raise inputs.UsageError("--project-id must not be empty")
        participants = [inputs.identity(p, "--participant") for p in args.participants]
        attributes = {"project_id": args.project_id,
                      "dialogue_kind": inputs.dialogue_kind(args.dialogue_kind),
                      "participants": participants, "title": args.title,
                      "metadata": inputs.json_object(args.metadata, "--metadata")
                      if args.metadata is not None else None}
    side = ctx.side()  # configuration problems and --store logger without a logger first
    if ctx.store_mode == "logger":
        from agent_memory.cli.forwarding import direct
        from agent_memory.sync.events import call
        command, params = call(args.action, {"session_id": session_id, **attributes})
        return direct(ctx, command, **params)
    answer, file = record_event(ctx, session_id, args.action, attributes)
    if side == "logger" and file is not None:
        from agent_memory.cli.forwarding import forward
        return forward(ctx, file, answer, wait=SESSION_WAIT)
    return answer, "file"


def record_event(ctx: Context, session_id: str, action: str,
                 attributes: dict[str, Any]) -> tuple[dict[str, Any], StoredFile | None]:
    """Append the event unless the store already shows its effect (an idempotent repeat);
    returns the answer and the new file (None for a repeat)."""
    store = ctx.store()
    events, _bad = store.events(session_id)
    state = views.lifecycle(events)
    target = "closed" if action == "close" else "open"
    if action == "open":
        opened = [e for _f, e in events if e.event == "open"]
        if opened:
            first = opened[0]
            same = (first.project_id, first.dialogue_kind, first.participants, first.title,
                    first.metadata) == (attributes["project_id"], attributes["dialogue_kind"],
                                        attributes["participants"], attributes["title"],
                                        attributes["metadata"])
            if not same:
                raise RefusedError(f"session {session_id} was already opened with other "
                                   "attributes", code=contract.SESSION_CONFLICT)
            if state == "closed":
                raise RefusedError(f"session {session_id} is closed: use `session reopen`",
                                   code=contract.SESSION_CLOSED)
            return {"session_id": session_id, "lifecycle": "open", "pending": False}, None
    elif state == target:
        return {"session_id": session_id, "lifecycle": target, "pending": False}, None
    file, _event = store.append_event(session_id, action, **attributes)
    return {"session_id": session_id, "lifecycle": target, "pending": True,
            "file": file.relpath}, file
