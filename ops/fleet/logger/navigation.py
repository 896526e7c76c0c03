"""Structural reads: relations_read, path_read, leaves_read, graph_read.

Each handler checks its parameters, loads the session's whole structure (every message,
soft-deleted ones included, each with its flag) and hands it to outbox.navigation, the
implementation agent-memory's offline reads call too: both sides answer alike by construction.
A NavigationError becomes a Refusal with the same code.
"""

from __future__ import annotations

import sqlite3
from typing import Any, Callable

from ops.fleet.logger import reads, store, validate
from ops.fleet.logger.refusal import Refusal
from agent_memory.outbox import contract as c
from agent_memory.outbox import navigation as nav


def session_entries(conn: sqlite3.Connection, session_id: str) -> list[dict[str, Any]]:
    """Every MESSAGE_ENTRY of a known session, soft-deleted ones included, in arrival order."""
    reads.known_session(conn, session_id)
    rows = conn.execute(f"SELECT {store.MESSAGE_COLUMNS} FROM messages WHERE session_id=? "
                        "ORDER BY sequence_number", (session_id,)).fetchall()
    return [store.message_entry(r) for r in rows]


def _common(params: dict[str, Any], allowed: tuple[str, ...],
            required: tuple[str, ...] = ()) -> tuple[str, int, str | None]:
    validate.unknown(params, allowed)
    validate.required(params, ("session_id",) + required)
    session_id = validate.session_id(params)
    block = validate.count(params, "block_size", c.DEFAULT_BLOCK_SIZE, c.MAX_BLOCK_SIZE, 1)
    return session_id, block, validate.typed(params, "continuation", str)


def _answer(read: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    try:
        return read()
    except nav.NavigationError as exc:
        raise Refusal(exc.code, str(exc), violation="value") from None


def relations_read(conn: sqlite3.Connection, params: dict[str, Any]) -> dict[str, Any]:
    session_id, block, token = _common(params, ("session_id", "block_size", "continuation"))
    entries = session_entries(conn, session_id)
    return _answer(lambda: nav.relations_page(session_id, entries, block, token))


def path_read(conn: sqlite3.Connection, params: dict[str, Any]) -> dict[str, Any]:
    session_id, block, token = _common(
        params, ("session_id", "node_id", "block_size", "continuation", "mode"), ("node_id",))
    node_id = validate.uuid4(params, "node_id")
    mode = validate.choice(params, "mode", c.READ_MODES) or c.DEFAULT_MODE
    entries = session_entries(conn, session_id)
    return _answer(lambda: nav.path_page(session_id, entries, node_id, mode, block, token))


def leaves_read(conn: sqlite3.Connection, params: dict[str, Any]) -> dict[str, Any]:
    session_id, block, token = _common(params, ("session_id", "block_size", "continuation"))
    entries = session_entries(conn, session_id)
    return _answer(lambda: nav.leaves_page(session_id, entries, block, token))


def graph_read(conn: sqlite3.Connection, params: dict[str, Any]) -> dict[str, Any]:
    """No `mode`: the graph is structural (nodes as recorded), so one is an unknown parameter."""
    session_id, block, token = _common(
        params, ("session_id", "anchor_node_id", "drilldown_depth", "block_size",
                 "continuation"), ("anchor_node_id",))
    anchor = validate.uuid4(params, "anchor_node_id")
    depth = validate.typed(params, "drilldown_depth", int)  # range: outbox.navigation
    entries = session_entries(conn, session_id)
    return _answer(lambda: nav.graph_page(session_id, entries, anchor, depth, block, token))
