"""Read commands: messages_read (journal window; the preview form is preview.py), message_get.

The journal window is in arrival order by sequence_number (from 0), `block_size` entries at a
time, resumed with an opaque continuation that names the next sequence number
(outbox.contract.encode_continuation). Soft-deleted messages are hidden unless show_deleted,
and resolved mode resolves chains over the visible messages only (chains.Chains). The
structural reads (relations, path, leaves, graph) are navigation.py.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from ops.fleet.logger import chains, store, validate
from ops.fleet.logger.refusal import Refusal
from agent_memory.outbox import contract as c

READ_PARAMS = ("session_id", "start_sequence_number", "block_size", "continuation", "mode",
               "caller_id", "recipient_id", "period_start", "period_end", "page_offset",
               "page_size", "preview_size", "show_deleted")


def known_session(conn: sqlite3.Connection, session_id: str) -> tuple:
    row = store.session_row(conn, session_id)
    if row is None:
        raise Refusal(c.SESSION_UNKNOWN, f"no such session: {session_id}", violation="value",
                      got=session_id)
    return row


def entries_by_id(conn: sqlite3.Connection, ids: list[str]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for start in range(0, len(ids), 500):
        part = ids[start:start + 500]
        rows = conn.execute(f"SELECT {store.MESSAGE_COLUMNS} FROM messages WHERE message_id IN "
                            f"({','.join('?' * len(part))})", part).fetchall()
        out.update((r[0], store.message_entry(r)) for r in rows)
    return out


def messages_read(conn: sqlite3.Connection, params: dict[str, Any]) -> dict[str, Any]:
    validate.unknown(params, READ_PARAMS)
    mode = validate.choice(params, "mode", c.READ_MODES + ("preview",)) or c.DEFAULT_MODE
    if mode == "preview":
        from ops.fleet.logger.preview import preview
        return preview(conn, params)
    unsupported = [p for p in ("caller_id", "recipient_id", "period_start", "period_end",
                               "page_offset", "page_size", "preview_size") if p in params]
    if unsupported:
        raise Refusal(c.REQUEST_PARAMETER_UNKNOWN,
                      f"{unsupported[0]} belongs to mode 'preview' only", violation="unknown",
                      got=unsupported[0])
    session_id = validate.session_id(params)
    validate.typed(params, "show_deleted", bool)
    block = validate.count(params, "block_size", c.DEFAULT_BLOCK_SIZE, c.MAX_BLOCK_SIZE, 1)
    if "continuation" in params:
        token = validate.typed(params, "continuation", str)
        try:
            start = c.decode_continuation(token)
        except ValueError:
            raise Refusal(c.CONTINUATION_INVALID, "continuation is not one this read returned",
                          violation="value", got=token) from None
    else:
        validate.required(params, ("start_sequence_number",))
        start = validate.count(params, "start_sequence_number", 0, None)
    known_session(conn, session_id)
    show_deleted = bool(params.get("show_deleted"))
    structure = chains.Chains(conn, [session_id], show_deleted) if mode == "resolved" else None

    window: list[dict[str, Any]] = []
    more, cursor, next_start = False, start, start
    while not more:
        rows = conn.execute(f"SELECT {store.MESSAGE_COLUMNS} FROM messages WHERE session_id=? "
                            "AND sequence_number>=? ORDER BY sequence_number LIMIT ?",
                            (session_id, cursor, block + 1)).fetchall()
        for row in rows:
            entry = store.message_entry(row)
            if entry["soft_deleted"] and not show_deleted:
                continue
            if structure is not None and structure.is_correction(entry["message_id"]):
                continue  # shown at its chain's root
            if len(window) == block:
                more, next_start = True, entry["sequence_number"]
                break
            window.append(entry)
        if len(rows) <= block:
            break
        cursor = rows[-1][2] + 1
    if structure is not None:
        finals = {root: structure.final_id(root) for root in (e["message_id"] for e in window)}
        wanted = [f for f in finals.values() if f]
        found = entries_by_id(conn, wanted) if wanted else {}
        window = [chains.resolved(e, found.get(finals[e["message_id"]] or ""))
                  for e in window]
    return {"session_id": session_id, "messages": window, "more": more,
            "continuation": c.encode_continuation(next_start) if more else None}


def message_get(conn: sqlite3.Connection, params: dict[str, Any]) -> dict[str, Any]:
    validate.unknown(params, ("message_id",))
    validate.required(params, ("message_id",))
    message_id = validate.uuid4(params, "message_id")
    row = conn.execute(f"SELECT {store.MESSAGE_COLUMNS} FROM messages WHERE message_id=?",
                       (message_id,)).fetchone()
    if row is None:
        raise Refusal(c.MESSAGE_UNKNOWN, "no such message", violation="value", got=message_id)
    entry = store.message_entry(row)
    entry["vectorization_state"] = "vectorized" if store.vectorized(row) else "pending"
    return entry
