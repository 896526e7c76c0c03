"""`delete`, `mark` and `session delete`: forgetting, offline-first.

Each is an event in the session's outbox, forwarded in order with what was written before it
(cli.forwarding, as a session event), and takes effect here at once: a soft delete or a mark
hides the message from this store's reads; a hard delete or a session delete purges (see
sync.forgetting): when the command returns, no file of the store holds the text any more, and a
message purged before it was forwarded is never sent.

`--store logger`: the logger or nothing, no event; a hard delete the logger confirmed is also
purged from the files. `--store file`: the event waits for `sync`.
"""

from __future__ import annotations

from typing import Any

from agent_memory.cli import inputs
from agent_memory.cli.context import Context
from agent_memory.cli.errors import NotFoundError, RefusedError, UsageError, from_refusal
from agent_memory.outbox import contract, views
from agent_memory.outbox.store import IMPORTED, PENDING, StoredFile

FORGET_WAIT_DEFAULT = 1.0


# --- where a message lives ---------------------------------------------------------------------
def _session_of(ctx: Context, message_id: str, given: str | None) -> str:
    """The message's session: the file store's (its file, or the event that deleted it
    here), else the logger's (when it answers), else `--session-id`. NotFoundError when none
    knows it."""
    found = ctx.store().find_message(message_id)
    session_id = found.file.session_id if found is not None else \
        _forgotten_in(ctx.store(), message_id, given)
    if session_id is not None:
        if given is not None and given != session_id:
            raise UsageError(f"message {message_id} is of session {session_id}, not {given}")
        return session_id
    if ctx.side() == "logger":
        from agent_memory.cli.auto_reads import ask_logger
        try:
            data = ask_logger(ctx, "message_get", message_id=message_id)
        except NotFoundError:
            data = {}
        if isinstance(data, dict) and data.get("session_id"):
            return data["session_id"]
        if data is not None and given is None:
            raise NotFoundError(f"no message {message_id} in the file store or the logger",
                                code=contract.MESSAGE_UNKNOWN)
    if given is not None:
        return given
    raise NotFoundError(f"no message {message_id} in the file store, and the logger cannot be "
                        "asked: give --session-id so the delete waits in the outbox",
                        code=contract.MESSAGE_UNKNOWN)


def _forgotten_in(store, message_id: str, given: str | None) -> str | None:
    """The session whose forgetting events name `message_id` (a message this store deleted,
    so that repeating the delete finds it), or None. Reads the sessions' events: only a
    forgetting command whose message has no file pays for it."""
    for session_id in [given] if given is not None else store.session_ids():
        for event in store.event_dicts(session_id):
            if event.get("message_id") == message_id or \
                    message_id in (event.get("message_ids") or ()):
                return session_id
    return None


def _standing(store, session_id: str, matches) -> StoredFile | None:
    """The latest forgetting event of the session that `matches` (a test on its record), in
    the outbox or confirmed: what a repeated command answers for instead of writing again."""
    events, _bad = store.events(session_id)
    for file, event in reversed(events):
        if matches(event):
            return file
    return None


def _repeat(ctx: Context, file: StoredFile | None, answer: dict[str, Any],
            wait: float) -> tuple[dict[str, Any], str]:
    """A forgetting command repeated: the effect stands already, so nothing is written. An
    event still in the outbox is forwarded (now, or once the logger is back) and answered
    for as the first command was; a confirmed one is answered from the store."""
    if file is not None and file.area == PENDING:
        return _forward(ctx, file, {**answer, "pending": True, "file": file.relpath}, wait)
    shown = {**answer, "pending": False}
    if file is not None:
        shown["file"] = file.relpath
    return shown, "file"


def _referrers(ctx: Context, session_id: str, message_id: str) -> list[str]:
    """Messages of the store (not purged) that relate to or correct `message_id`."""
    store = ctx.store()
    messages, _bad = store.messages(session_id, (PENDING, IMPORTED))
    forgotten = views.forgotten(store.events(session_id)[0])
    out = []
    for m in messages:
        r = m.record
        if r.message_id in forgotten.purged:
            continue
        if r.corrects_message_id == message_id or any(x.to_message_id == message_id
                                                      for x in r.relations):
            out.append(r.message_id)
    return out


def _forward(ctx: Context, file: StoredFile, answer: dict[str, Any],
             wait: float) -> tuple[dict[str, Any], str]:
    if ctx.side() == "logger" and ctx.store_mode != "file":
        from agent_memory.cli.forwarding import forward
        return forward(ctx, file, answer, wait=wait)
    return answer, "file"


def _direct(ctx: Context, kind: str, **fields: Any) -> tuple[Any, str]:
    """`--store logger`: the logger command of the forgetting event `kind` (sync.events, as
    the engine sends the event itself), made now, with no event written."""
    from agent_memory.cli.forwarding import direct
    from agent_memory.sync.events import call
    command, params = call(kind, fields)
    return direct(ctx, command, **params)


def _wait(value: float) -> float:
    if value < 0:
        raise UsageError("--wait must be at least 0")
    return value


# --- delete ------------------------------------------------------------------------------------
def delete(ctx: Context, args) -> tuple[dict[str, Any], str]:
    message_id = inputs.message_id(args.message_id, "MESSAGE_ID")
    given = inputs.session_id(args.session_id) if args.session_id is not None else None
    wait = _wait(args.wait)
    ctx.side()  # configuration problems first
    if ctx.store_mode == "logger":
        return _direct_delete(ctx, message_id, args.mode)
    session_id = _session_of(ctx, message_id, given)
    store = ctx.store()
    forgotten = views.forgotten(store.events(session_id)[0])
    if message_id in forgotten.purged:
        event = _standing(store, session_id, lambda e: e.event == "delete" and
                          e.mode == "hard" and e.message_id == message_id)
        return _repeat(ctx, event, {"message_id": message_id, "mode": "hard", "deleted": True,
                                    "purged": True}, wait)
    if args.mode == "soft":
        if message_id in forgotten.hidden:
            event = _standing(store, session_id, lambda e: (
                e.event == "delete" and e.message_id == message_id) or (
                e.event == "mark" and e.marked and message_id in (e.message_ids or ())))
            return _repeat(ctx, event, {"message_id": message_id, "mode": "soft",
                                        "deleted": True}, wait)
        file, _record = store.append_event(session_id, "delete", message_id=message_id,
                                           mode="soft")
        return _forward(ctx, file, {"message_id": message_id, "mode": "soft", "deleted": True,
                                    "pending": True, "file": file.relpath}, wait)
    referrers = _referrers(ctx, session_id, message_id)
    if referrers:
        raise RefusedError(f"message {message_id} is referenced by {len(referrers)} other "
                           f"message(s) ({', '.join(referrers[:3])}): a hard delete removes "
                           "only an unreferenced message; delete those first, or delete "
                           "softly", code=contract.MESSAGE_REFERENCED, referenced_by=referrers)
    from agent_memory.sync import forgetting
    file, _record = forgetting.purge_message(store, session_id, message_id)
    return _forward(ctx, file, {"message_id": message_id, "mode": "hard", "deleted": True,
                                "purged": True, "pending": True, "file": file.relpath}, wait)


def _direct_delete(ctx: Context, message_id: str, mode: str) -> tuple[dict[str, Any], str]:
    try:
        answer, store = _direct(ctx, "delete", message_id=message_id, mode=mode)
    except NotFoundError:
        local = _any_store(ctx)
        session_id = _forgotten_in(local, message_id, None) if local is not None else None
        if session_id is None or \
                message_id not in views.forgotten(local.events(session_id)[0]).purged:
            raise
        # deleted (hard) here before, and the logger no longer knows it: done, as asked
        return {"message_id": message_id, "mode": mode, "deleted": True}, "file"
    if mode == "hard":
        local = _any_store(ctx)
        found = local.find_message(message_id) if local is not None else None
        if found is not None:
            from agent_memory.sync import forgetting
            forgetting.purge_message(local, found.file.session_id, message_id, event=False)
    return answer, store


def _any_store(ctx: Context):
    from agent_memory.cli.errors import StoreUnavailableError
    try:
        return ctx.store()
    except StoreUnavailableError:
        return None


# --- mark --------------------------------------------------------------------------------------
def mark(ctx: Context, args) -> tuple[dict[str, Any], str]:
    ids = [inputs.message_id(m, "MESSAGE_ID") for m in args.message_ids]
    if len(set(ids)) != len(ids):
        raise UsageError("a MESSAGE_ID is given twice", code=contract.REQUEST_PARAMETER_VALUE)
    given = inputs.session_id(args.session_id) if args.session_id is not None else None
    wait = _wait(args.wait)
    marked = not args.unmark
    ctx.side()
    if ctx.store_mode == "logger":
        answer, store = _direct(ctx, "mark", message_ids=ids, marked=marked)
        if answer is not True:
            raise RefusedError("the logger changed no marker: one of the messages is unknown "
                               "to it or could not be changed (all or nothing)",
                               code=contract.MARK_NOT_APPLIED)
        return {"message_ids": ids, "marked": marked}, store
    sessions = {m: _session_of(ctx, m, given) for m in ids}
    if len(set(sessions.values())) > 1:
        raise UsageError("mark takes messages of one session (all or nothing in order with "
                         "that session's outbox): run it once per session")
    session_id = next(iter(sessions.values()))
    store = ctx.store()
    forgotten = views.forgotten(store.events(session_id)[0])
    gone = [m for m in ids if m in forgotten.purged]
    if gone:
        raise NotFoundError(f"message {gone[0]} was deleted (hard): nothing was marked",
                            code=contract.MESSAGE_UNKNOWN)
    if all((m in forgotten.hidden) == marked for m in ids):  # repeated: the mark stands
        event = _standing(store, session_id, lambda e: e.event == "mark" and
                          bool(e.marked) == marked and set(e.message_ids or ()) == set(ids))
        if event is not None:
            return _repeat(ctx, event, {"message_ids": ids, "marked": marked}, wait)
    file, _record = store.append_event(session_id, "mark", message_ids=ids, marked=marked)
    return _forward(ctx, file, {"message_ids": ids, "marked": marked, "pending": True,
                                "file": file.relpath}, wait)


# --- session delete ----------------------------------------------------------------------------
def delete_session(ctx: Context, args) -> tuple[dict[str, Any], str]:
    session_id = inputs.session_id(args.session_id)
    if args.confirm != session_id:
        raise UsageError("session delete: --confirm must repeat --session-id exactly (it is "
                         "irreversible); nothing was deleted")
    wait = _wait(args.wait)
    side = ctx.side()
    if ctx.store_mode == "logger":
        local = _any_store(ctx)
        try:
            answer, store = _direct(ctx, "delete_session", session_id=session_id)
        except RefusedError as exc:
            if exc.code != contract.SESSION_UNKNOWN or local is None or \
                    not views.deleted_session(local.events(session_id)[0]):
                raise
            # deleted here before, and the logger no longer knows it: done, as asked
            return {"session_id": session_id, "deleted": True}, "file"
        if local is not None and local.files(session_id, None) and \
                not views.deleted_session(local.events(session_id)[0]):  # not purged yet
            from agent_memory.sync import forgetting
            forgetting.purge_session(local, session_id, event=False)
        return answer, store
    store = ctx.store()
    if views.deleted_session(store.events(session_id)[0]):  # repeated: the delete stands
        event = _standing(store, session_id, lambda e: e.event == "delete_session")
        return _repeat(ctx, event, {"session_id": session_id, "deleted": True, "purged": True},
                       wait)
    if not store.files(session_id, None):
        if side == "logger" and ctx.store_mode == "auto":  # known to the logger only?
            return _direct(ctx, "delete_session", session_id=session_id)
        raise from_refusal(contract.SESSION_UNKNOWN, f"no session {session_id} in the file "
                                                     "store")
    from agent_memory.sync import forgetting
    file, _record = forgetting.purge_session(store, session_id)
    return _forward(ctx, file, {"session_id": session_id, "deleted": True, "purged": True,
                                "pending": True, "file": file.relpath}, wait)


def run(ctx: Context, args) -> tuple[dict[str, Any], str]:
    return delete(ctx, args) if args.command == "delete" else mark(ctx, args)
