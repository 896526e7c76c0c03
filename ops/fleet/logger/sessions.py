"""Session commands: open, close, reopen, delete, list.

Decisions (outbox.contract): opening an existing id with identical attributes is an idempotent
repeat, with different ones SESSION_CONFLICT; closing a closed / reopening an open session is an
idempotent success; an unknown session is SESSION_UNKNOWN; delete removes the session with its
messages, relations and vectors in one transaction, leaving no byte of them in the database's
files (store.forget_frames), and reports the counts.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from ops.fleet.logger import store, validate
from ops.fleet.logger.refusal import Refusal
from agent_memory.outbox import contract as c

OPEN_PARAMS = ("session_id", "project_id", "dialogue_kind", "participants", "title", "metadata")


def _known(conn: sqlite3.Connection, session_id: str) -> tuple:
    row = store.session_row(conn, session_id)
    if row is None:
        raise Refusal(c.SESSION_UNKNOWN, f"no such session: {session_id}", violation="value",
                      got=session_id)
    return row


def open_session(conn: sqlite3.Connection, params: dict[str, Any]) -> dict[str, Any]:
    validate.unknown(params, OPEN_PARAMS)
    validate.required(params, ("session_id", "project_id", "dialogue_kind", "participants"))
    session_id = validate.session_id(params)
    project_id = validate.text(params, "project_id")
    kinds = validate.typed(params, "dialogue_kind", list)
    if len(kinds) != 2 or any(k not in c.PARTICIPANT_KINDS for k in kinds):
        raise Refusal(c.REQUEST_PARAMETER_VALUE,
                      "dialogue_kind must be [sender_kind, receiver_kind] of the four kinds",
                      violation="value", expected=list(c.PARTICIPANT_KINDS), got=kinds)
    participants = validate.typed(params, "participants", list)
    if not participants or any(not isinstance(p, str) or not p.strip() for p in participants):
        raise Refusal(c.REQUEST_PARAMETER_VALUE,
                      "participants must be a non-empty list of non-empty strings",
                      violation="value", got=participants)
    title = validate.typed(params, "title", str)
    metadata = validate.typed(params, "metadata", dict)
    wanted = (project_id, json.dumps(kinds), json.dumps(participants), title,
              None if metadata is None else json.dumps(metadata, sort_keys=True))
    with store.write(conn):
        row = conn.execute("SELECT project_id, dialogue_kind, participants, title, metadata, "
                           "lifecycle FROM sessions WHERE session_id=?", (session_id,)).fetchone()
        if row is not None:
            if tuple(row[:5]) != wanted:
                raise Refusal(c.SESSION_CONFLICT,
                              f"session {session_id} already exists with different attributes",
                              violation="value", got=session_id)
            return {"session_id": session_id, "lifecycle": row[5]}
        conn.execute("INSERT INTO sessions(session_id, project_id, dialogue_kind, participants, "
                     "title, metadata, lifecycle, created_at) VALUES(?,?,?,?,?,?,'open',?)",
                     (session_id,) + wanted + (store.now_utc(),))
    return {"session_id": session_id, "lifecycle": "open"}


def set_lifecycle(conn: sqlite3.Connection, params: dict[str, Any], lifecycle: str) -> dict:
    validate.unknown(params, ("session_id",))
    session_id = validate.session_id(params)
    with store.write(conn):
        _known(conn, session_id)
        conn.execute("UPDATE sessions SET lifecycle=? WHERE session_id=?", (lifecycle, session_id))
    return {"session_id": session_id, "lifecycle": lifecycle}


def delete_session(conn: sqlite3.Connection, params: dict[str, Any]) -> dict[str, Any]:
    validate.unknown(params, ("session_id",))
    session_id = validate.session_id(params)
    with store.write(conn):
        _known(conn, session_id)
        vectors = conn.execute("SELECT COUNT(*) FROM messages WHERE session_id=? AND vector IS "
                               "NOT NULL", (session_id,)).fetchone()[0]
        messages = conn.execute("DELETE FROM messages WHERE session_id=?", (session_id,)).rowcount
        relations = conn.execute("DELETE FROM relations WHERE session_id=?",
                                 (session_id,)).rowcount
        conn.execute("DELETE FROM sessions WHERE session_id=?", (session_id,))
    store.forget_frames(conn)
    return {"session_id": session_id, "deleted": True, "messages_removed": messages,
            "relations_removed": relations, "vectors_removed": vectors}


def _session_continuation(created_at: str, session_id: str) -> str:
    return f"ses:{created_at}|{session_id}"


def _decode_session_continuation(token: Any) -> tuple[str, str]:
    if not isinstance(token, str) or not token.startswith("ses:") or "|" not in token:
        raise Refusal(c.CONTINUATION_INVALID, "continuation is not one this listing returned",
                      violation="value", got=token)
    created_at, _, session_id = token[4:].partition("|")
    try:
        c.parse_occurred_at(created_at)
    except ValueError:
        session_id = ""
    if not c.is_valid_session_id(session_id):
        raise Refusal(c.CONTINUATION_INVALID, "continuation is not one this listing returned",
                      violation="value", got=token)
    return created_at, session_id


def sessions_list(conn: sqlite3.Connection, params: dict[str, Any]) -> dict[str, Any]:
    validate.unknown(params, ("project_id", "lifecycle", "dialogue_kind", "participant",
                              "created_at_range", "block_size", "continuation"))
    where, args = [], []
    project_id = validate.typed(params, "project_id", str)
    if project_id is not None:
        where.append("project_id=?")
        args.append(project_id)
    lifecycle = validate.choice(params, "lifecycle", c.LIFECYCLES)
    if lifecycle is not None:
        where.append("lifecycle=?")
        args.append(lifecycle)
    kind = validate.typed(params, "dialogue_kind", str)
    if kind is not None:
        parts = kind.split("-to-")
        if len(parts) != 2 or any(p not in c.PARTICIPANT_KINDS for p in parts):
            raise Refusal(c.REQUEST_PARAMETER_VALUE, "dialogue_kind must be '<kind>-to-<kind>'",
                          violation="value", got=kind)
        where.append("dialogue_kind=?")
        args.append(json.dumps(parts))
    participant = validate.typed(params, "participant", str)
    if participant is not None:
        where.append("EXISTS (SELECT 1 FROM json_each(sessions.participants) WHERE value=?)")
        args.append(participant)
    bounds = validate.typed(params, "created_at_range", dict)
    if bounds is not None:
        validate.unknown(bounds, ("from", "to"))
        for key, op in (("from", ">="), ("to", "<=")):
            if key in bounds:
                try:
                    moment = c.normalise_occurred_at(bounds[key])
                except ValueError:
                    raise Refusal(c.REQUEST_PARAMETER_VALUE,
                                  f"created_at_range.{key} must be an RFC 3339 time",
                                  violation="value", got=bounds[key]) from None
                where.append(f"created_at {op} ?")
                args.append(moment)
    block = validate.count(params, "block_size", c.DEFAULT_BLOCK_SIZE, c.MAX_BLOCK_SIZE, 1)
    if "continuation" in params:
        after = _decode_session_continuation(params["continuation"])
        where.append("(created_at, session_id) > (?, ?)")
        args.extend(after)
    sql = (f"SELECT {store.SESSION_COLUMNS} FROM sessions "
           + (f"WHERE {' AND '.join(where)} " if where else "")
           + "ORDER BY created_at, session_id LIMIT ?")
    rows = conn.execute(sql, args + [block + 1]).fetchall()
    more = len(rows) > block
    rows = rows[:block]
    return {"sessions": [store.session_entry(r) for r in rows], "more": more,
            "continuation": _session_continuation(rows[-1][5], rows[-1][0]) if more else None}
