"""messages_read with mode="preview": a filtered, paged listing of message prefixes.

Decisions (the client documents only the answer's keys): caller_id / recipient_id match the
sender / receiver identity; period_start / period_end bound occurred_at inclusively (RFC 3339);
page_offset is a zero-based PAGE index; entries are ordered by occurred_at then message_id and
carry the first `preview_size` characters (default 200) of the text as `preview`.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from ops.fleet.logger import validate
from ops.fleet.logger.refusal import Refusal
from agent_memory.outbox import contract as c

PREVIEW_SIZE = 200


def preview(conn: sqlite3.Connection, params: dict[str, Any]) -> dict[str, Any]:
    where, args = ["soft_deleted=0"], []
    for name, column in (("session_id", "session_id"), ("caller_id", "sender_identity"),
                         ("recipient_id", "receiver_identity")):
        value = validate.typed(params, name, str)
        if value:
            where.append(f"{column}=?")
            args.append(value)
    for name, op in (("period_start", ">="), ("period_end", "<=")):
        value = validate.typed(params, name, str)
        if value:
            try:
                where.append(f"occurred_at {op} ?")
                args.append(c.normalise_occurred_at(value))
            except ValueError:
                raise Refusal(c.REQUEST_PARAMETER_VALUE, f"{name} must be an RFC 3339 time",
                              violation="value", got=value) from None
    page_size = validate.count(params, "page_size", c.DEFAULT_PAGE_SIZE, c.MAX_PAGE_SIZE, 1)
    page_offset = validate.count(params, "page_offset", 0, None)
    size = validate.count(params, "preview_size", PREVIEW_SIZE, None)
    clause = " AND ".join(where)
    total = conn.execute(f"SELECT COUNT(*) FROM messages WHERE {clause}", args).fetchone()[0]
    rows = conn.execute(
        "SELECT message_id, session_id, sequence_number, sender_kind, sender_identity, "
        f"receiver_kind, receiver_identity, occurred_at, text FROM messages WHERE {clause} "
        "ORDER BY occurred_at, message_id LIMIT ? OFFSET ?",
        args + [page_size, page_offset * page_size]).fetchall()
    keys = ("message_id", "session_id", "sequence_number", "sender_kind", "sender_identity",
            "receiver_kind", "receiver_identity", "occurred_at")
    entries = [{**dict(zip(keys, r[:8])), "preview": r[8][:size]} for r in rows]
    return {"entries": entries, "total_messages": total,
            "total_pages": (total + page_size - 1) // page_size,
            "page_offset": page_offset, "page_size": page_size}
