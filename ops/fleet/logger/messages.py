"""Storing one message under the logger's rules (shared by append_message and messages_import).

The rules agent-memory relies on: an identical repeat of a message_id answers as the first and
adds no row (even once the session is closed: nothing changes); any different content is
MESSAGE_CONFLICT unless force_overwrite (which keeps the identifier and sequence number, never
moves a message to another session, and drops its vector so it is analysed afresh); a message
into an unknown session is SESSION_UNKNOWN, into a closed one SESSION_CLOSED; relations and the
correction target must name earlier messages of the same session (RELATION_INADMISSIBLE) that
are not soft-deleted (MESSAGE_DELETED).
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from typing import Any

from ops.fleet.faults import INJECTED_REFUSAL, Faults
from ops.fleet.logger import store
from ops.fleet.logger.refusal import Refusal
from agent_memory.outbox import contract as c

_CONTENT_FIELDS = ("session_id", "text", "sender_kind", "sender_identity", "receiver_kind",
                   "receiver_identity", "priority", "relations", "corrects_message_id",
                   "attributes", "occurred_at")


def content_key(msg: dict[str, Any]) -> str:
    """Canonical content: two submissions are the same message iff their keys are equal."""
    return json.dumps({k: msg[k] for k in _CONTENT_FIELDS}, sort_keys=True,
                      separators=(",", ":"), ensure_ascii=False)


class Encoded:
    """What storing a validated message writes that its own fields decide alone: the canonical
    content and the JSON columns (an import computes them before taking the write lock)."""

    __slots__ = ("key", "relations", "attributes")

    def __init__(self, key: str, relations: str, attributes: str) -> None:
        self.key = key
        self.relations = relations
        self.attributes = attributes


def encoded(msg: dict[str, Any]) -> Encoded:
    return Encoded(content_key(msg), json.dumps(msg["relations"]), json.dumps(msg["attributes"]))


def facts(message_id: str, sequence_number: int, receiver_kind: str, receiver_identity: str,
          text: str) -> dict[str, Any]:
    """The five facts of an accepted message (append answer)."""
    return {"message_id": message_id, "sequence_number": sequence_number,
            "audience": {"receiver_kind": receiver_kind, "receiver_identity": receiver_identity},
            **c.excerpts(text)}


def _check_target(conn: sqlite3.Connection, session_id: str, own_sequence: int | None,
                  target: str, what: str) -> None:
    row = conn.execute("SELECT session_id, sequence_number, soft_deleted FROM messages "
                       "WHERE message_id=?", (target,)).fetchone()
    if row is None or row[0] != session_id:
        raise Refusal(c.RELATION_INADMISSIBLE,
                      f"{what} {target} is not a message of session {session_id}",
                      violation="value", got=target)
    if row[2]:
        raise Refusal(c.MESSAGE_DELETED, f"{what} {target} is a deleted message",
                      violation="value", got=target)
    if own_sequence is not None and row[1] >= own_sequence:
        raise Refusal(c.RELATION_INADMISSIBLE,
                      f"{what} {target} is not earlier than the message itself",
                      violation="value", got=target)


def store_message(conn: sqlite3.Connection, msg: dict[str, Any], faults: Faults,
                  ready: Encoded | None = None) -> dict[str, Any]:
    """Store one validated message (inside the caller's write transaction); its five facts.
    `ready`: its `encoded(msg)`, when the caller made it beforehand."""
    if faults.refuses(msg["text"]):
        raise Refusal(INJECTED_REFUSAL, "refused by the fault switch refuse_pattern "
                      f"{faults.refuse_pattern!r}", violation="value")
    ready = ready or encoded(msg)
    key = ready.key
    message_id = msg["message_id"]
    existing = None
    if message_id is not None:
        existing = conn.execute(
            "SELECT session_id, sequence_number, content_key, receiver_kind, receiver_identity, "
            "text FROM messages WHERE message_id=?", (message_id,)).fetchone()
    if existing is not None and not msg["force_overwrite"]:
        if existing[2] == key:
            return facts(message_id, existing[1], existing[3], existing[4], existing[5])
        raise Refusal(c.MESSAGE_CONFLICT,
                      f"message {message_id} is already stored with different content "
                      "(send force_overwrite to replace it)", violation="value", got=message_id)

    session = store.session_row(conn, msg["session_id"])
    if session is None:
        raise Refusal(c.SESSION_UNKNOWN, f"no such session: {msg['session_id']}",
                      violation="value", got=msg["session_id"])
    if session[2] != "open":
        raise Refusal(c.SESSION_CLOSED, f"session {msg['session_id']} is closed",
                      violation="value", got=msg["session_id"])
    if existing is not None and existing[0] != msg["session_id"]:
        raise Refusal(c.MESSAGE_CONFLICT,
                      f"message {message_id} belongs to session {existing[0]}; force_overwrite "
                      "never moves a message between sessions", violation="value", got=message_id)

    own_sequence = existing[1] if existing is not None else None
    for relation in msg["relations"]:
        _check_target(conn, msg["session_id"], own_sequence, relation["to_message_id"],
                      f"relation target ({relation['kind']})")
    if msg["corrects_message_id"] is not None:
        _check_target(conn, msg["session_id"], own_sequence, msg["corrects_message_id"],
                      "correction target")

    received_at = store.now_utc()
    occurred_at = msg["occurred_at"] or received_at
    row = (msg["text"], msg["sender_kind"], msg["sender_identity"], msg["receiver_kind"],
           msg["receiver_identity"], msg["priority"], ready.relations,
           msg["corrects_message_id"], ready.attributes, occurred_at, key)
    if existing is not None:
        sequence = existing[1]
        conn.execute(
            "UPDATE messages SET text=?, sender_kind=?, sender_identity=?, receiver_kind=?, "
            "receiver_identity=?, priority=?, relations=?, corrects_message_id=?, attributes=?, "
            "occurred_at=?, content_key=?, received_at=?, vector=NULL, vector_model=NULL "
            "WHERE message_id=?", row + (received_at, message_id))
        conn.execute("DELETE FROM relations WHERE from_message_id=?", (message_id,))
    else:
        message_id = message_id or str(uuid.uuid4())
        sequence = session[3]
        conn.execute("UPDATE sessions SET next_sequence=? WHERE session_id=?",
                     (sequence + 1, msg["session_id"]))
        conn.execute(
            "INSERT INTO messages(message_id, session_id, sequence_number, text, sender_kind, "
            "sender_identity, receiver_kind, receiver_identity, priority, relations, "
            "corrects_message_id, attributes, occurred_at, content_key, received_at) "
            "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (message_id, msg["session_id"], sequence) + row + (received_at,))
    links = [(r["to_message_id"], r["kind"]) for r in msg["relations"]]
    if msg["corrects_message_id"] is not None:
        links.append((msg["corrects_message_id"], "correction"))
    if links:
        conn.executemany(
            "INSERT INTO relations(session_id, from_message_id, to_message_id, kind) "
            "VALUES(?,?,?,?)", [(msg["session_id"], message_id, to, kind) for to, kind in links])
    return facts(message_id, sequence, msg["receiver_kind"], msg["receiver_identity"], msg["text"])
