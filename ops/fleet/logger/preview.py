"""messages_read with mode="preview": a filtered, paged listing of message prefixes.

The rules (outbox.contract) are applied by outbox.navigation's preview functions, which
agent-memory's offline preview calls too, so filter, order, shape and paging agree by
construction; SQL here only narrows the candidate rows.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from ops.fleet.logger import store, validate
from ops.fleet.logger.refusal import Refusal
from agent_memory.outbox import contract as c
from agent_memory.outbox import navigation as nav

FILTERS = ("session_id", "caller_id", "recipient_id", "period_start", "period_end")


def preview(conn: sqlite3.Connection, params: dict[str, Any]) -> dict[str, Any]:
    filters: dict[str, Any] = {name: validate.typed(params, name, str) for name in FILTERS}
    filters["show_deleted"] = bool(validate.typed(params, "show_deleted", bool))
    page_size = validate.count(params, "page_size", c.DEFAULT_PAGE_SIZE, c.MAX_PAGE_SIZE, 1)
    page_offset = validate.count(params, "page_offset", 0, None)
    size = validate.count(params, "preview_size", c.PREVIEW_SIZE, None)
    try:
        matches = nav.preview_filter(filters)
    except nav.NavigationError as exc:
        raise Refusal(exc.code, str(exc), violation="value") from None

    where, args = [], []
    for name, column in (("session_id", "session_id"), ("caller_id", "sender_identity"),
                         ("recipient_id", "receiver_identity")):
        if filters[name]:
            where.append(f"{column}=?")
            args.append(filters[name])
    if not filters["show_deleted"]:
        where.append("soft_deleted=0")
    rows = conn.execute(f"SELECT {store.MESSAGE_COLUMNS} FROM messages"
                        + (f" WHERE {' AND '.join(where)}" if where else ""), args)
    entries = (store.message_entry(r) for r in rows)
    return nav.preview_page([nav.preview_entry(e, size) for e in entries if matches(e)],
                            page_offset, page_size)
