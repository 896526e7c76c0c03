"""Forgetting one message: message_delete (soft or hard) and messages_mark_for_deletion.

Soft deletion and the mark are one flag, `soft_deleted` (outbox.contract): ordinary reads hide
the message, message_get and the structural reads still show it. A hard delete removes the
row (its vector lives in it) and the relations it declares, leaving no byte of the text in
the database's files (store.forget_frames); it never renumbers anything, and is refused while
another message relates to it or corrects it: the structure must stay whole.
The mark is all or nothing and answers a boolean, never a refusal for its batch.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from ops.fleet.logger import store, validate
from ops.fleet.logger.refusal import Refusal
from agent_memory.outbox import contract as c


def message_delete(conn: sqlite3.Connection, params: dict[str, Any]) -> dict[str, Any]:
    validate.unknown(params, ("message_id", "mode"))
    validate.required(params, ("message_id", "mode"))
    message_id = validate.uuid4(params, "message_id")
    mode = validate.choice(params, "mode", c.DELETE_MODES)
    with store.write(conn):
        if conn.execute("SELECT 1 FROM messages WHERE message_id=?",
                        (message_id,)).fetchone() is None:
            raise Refusal(c.MESSAGE_UNKNOWN, "no such message", violation="value",
                          got=message_id)
        if mode == "soft":
            conn.execute("UPDATE messages SET soft_deleted=1 WHERE message_id=?", (message_id,))
        else:
            referrer = conn.execute("SELECT from_message_id, kind FROM relations WHERE "
                                    "to_message_id=? AND from_message_id<>? LIMIT 1",
                                    (message_id, message_id)).fetchone()
            if referrer is not None:
                raise Refusal(c.MESSAGE_REFERENCED,
                              f"message {referrer[0]} relates to it ({referrer[1]}): delete "
                              "that one first, or delete softly", violation="value",
                              got=message_id)
            conn.execute("DELETE FROM relations WHERE from_message_id=?", (message_id,))
            conn.execute("DELETE FROM messages WHERE message_id=?", (message_id,))
    if mode != "soft":
        store.forget_frames(conn)
    return {"message_id": message_id, "mode": mode, "deleted": True}


def mark_for_deletion(conn: sqlite3.Connection, params: dict[str, Any]) -> bool:
    """True when every id now carries the requested flag; False (nothing changed) for an empty
    batch, an item that is not a version 4 UUID, a repeated or an unknown id. The parameters
    themselves are checked like every command's (unknown, missing, wrong type: refusals)."""
    validate.unknown(params, ("message_ids", "marked_for_deletion"))
    validate.required(params, ("message_ids", "marked_for_deletion"))
    ids = validate.typed(params, "message_ids", list)
    marked = validate.typed(params, "marked_for_deletion", bool)
    if not ids or not all(c.is_uuid4(i) for i in ids) or len(set(ids)) != len(ids):
        return False
    with store.write(conn):
        known = 0
        for start in range(0, len(ids), 500):
            part = ids[start:start + 500]
            known += conn.execute(f"SELECT COUNT(*) FROM messages WHERE message_id IN "
                                  f"({','.join('?' * len(part))})", part).fetchone()[0]
        if known != len(ids):
            return False
        conn.executemany("UPDATE messages SET soft_deleted=? WHERE message_id=?",
                         [(int(marked), i) for i in ids])
    return True
