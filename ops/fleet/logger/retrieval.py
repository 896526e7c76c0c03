"""Closeness reads: working_set and message_search (cosine over the stored vectors).

Decisions (outbox.contract): working_set's RECENT group is the last messages by arrival, newest
first; CLOSEST is by cosine similarity, descending, ties by message_id ascending, the anchor
message excluded, messages without a vector absent, only scores above
outbox.contract.MIN_MATCH_SCORE count as close. Search sorts the same way and pages with
page_offset/page_size. Resolved mode maps every hit to its correction chain (chains.py) and keeps
the chain's highest score. A query or anchor that must be embedded while the embedder is
unavailable is EMBEDDING_UNAVAILABLE. Soft-deleted messages are never candidates, never chain
members and never an anchor (ANCHOR_INADMISSIBLE): as if absent.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import numpy as np

from ops.fleet.logger import chains, reads, store, validate
from ops.fleet.logger.refusal import Refusal
from ops.fleet.logger.vectors import EmbeddingUnavailable, Vectorizer, as_matrix
from agent_memory.outbox import contract as c

WORKING_SET_PARAMS = ("session_id", "anchor_text", "anchor_message_id", "recency_count",
                      "similarity_count", "mode")
SEARCH_PARAMS = ("query_text", "scope", "scope_target", "filters", "mode", "page_size",
                 "page_offset")


async def _embed_one(vectors: Vectorizer, text: str) -> np.ndarray:
    try:
        [vector] = await vectors.embed([text])
        if vector is None:
            raise EmbeddingUnavailable(f"the embedder will not embed the text {text[:80]!r}")
        return vector
    except EmbeddingUnavailable as exc:
        raise Refusal(c.EMBEDDING_UNAVAILABLE, f"the embedding service is unavailable: {exc}",
                      violation="value") from None


def _scored(conn: sqlite3.Connection, where: str, args: tuple, query: np.ndarray,
            dimension: int) -> list[tuple[float, str]]:
    rows = conn.execute(f"SELECT message_id, vector FROM messages WHERE vector IS NOT NULL AND "
                        f"length(vector)=? AND ({where})", (dimension * 4,) + args).fetchall()
    if not rows:
        return []
    scores = as_matrix([r[1] for r in rows], dimension) @ query.astype(np.float32)
    return [(float(s), r[0]) for s, r in zip(scores, rows) if s > c.MIN_MATCH_SCORE]


def _rank(hits: list[tuple[float, str]], structure: chains.Chains | None,
          exclude: str | None = None) -> list[tuple[float, str]]:
    """The shared closeness order (outbox.contract.rank_closeness) over this logger's chains."""
    return c.rank_closeness(hits, structure.root if structure is not None else None, exclude)


def _entries(conn: sqlite3.Connection, ids: list[str],
             structure: chains.Chains | None) -> dict[str, dict[str, Any]]:
    """Entries of `ids` as the mode shows them (resolved: root entry with final content)."""
    finals = {i: structure.final_id(i) for i in ids} if structure is not None else {}
    found = reads.entries_by_id(conn, list(ids) + [f for f in finals.values() if f])
    out = {}
    for i in ids:
        final = finals.get(i)
        out[i] = chains.resolved(found[i], found.get(final)) if final else found[i]
    return out


async def working_set(conn: sqlite3.Connection, vectors: Vectorizer,
                      params: dict[str, Any]) -> dict[str, Any]:
    validate.unknown(params, WORKING_SET_PARAMS)
    session_id = validate.session_id(params)
    anchor_text = validate.typed(params, "anchor_text", str)
    anchor_id = validate.uuid4(params, "anchor_message_id")
    if anchor_text is None and anchor_id is None:
        raise Refusal(c.REQUEST_PARAMETER_MISSING,
                      "exactly one of anchor_text or anchor_message_id is required",
                      violation="missing", expected="anchor_text | anchor_message_id")
    if anchor_text is not None and anchor_id is not None:
        raise Refusal(c.ANCHOR_INADMISSIBLE,
                      "anchor_text and anchor_message_id are mutually exclusive",
                      violation="value", expected="exactly one anchor")
    recency = validate.count(params, "recency_count", c.DEFAULT_RECENCY_COUNT,
                             c.MAX_RECENCY_COUNT)
    similarity = validate.count(params, "similarity_count", c.DEFAULT_SIMILARITY_COUNT,
                                c.MAX_SIMILARITY_COUNT)
    mode = validate.choice(params, "mode", c.READ_MODES) or c.DEFAULT_MODE
    reads.known_session(conn, session_id)

    await vectors.fill(conn, "session_id=?", (session_id,))
    if anchor_id is not None:
        row = conn.execute("SELECT session_id, text, vector, soft_deleted FROM messages "
                           "WHERE message_id=?", (anchor_id,)).fetchone()
        if row is None or row[0] != session_id:
            raise Refusal(c.ANCHOR_INADMISSIBLE,
                          f"anchor {anchor_id} is not a message of session {session_id}",
                          violation="value", got=anchor_id)
        if row[3]:
            raise Refusal(c.ANCHOR_INADMISSIBLE, f"anchor {anchor_id} is a deleted message",
                          violation="value", got=anchor_id)
        anchor_text = row[1]
        if row[2] is not None and len(row[2]) == vectors.dimension * 4:
            query = np.frombuffer(row[2], dtype=np.float32)
        else:
            query = await _embed_one(vectors, anchor_text)
    else:
        query = await _embed_one(vectors, anchor_text)

    structure = chains.Chains(conn, [session_id]) if mode == "resolved" else None
    recent_ids: list[str] = []
    if recency:
        for (message_id,) in conn.execute(
                "SELECT message_id FROM messages WHERE session_id=? AND soft_deleted=0 "
                "ORDER BY sequence_number DESC", (session_id,)):
            shown = structure.root(message_id) if structure is not None else message_id
            if shown not in recent_ids:
                recent_ids.append(shown)
            if len(recent_ids) == recency:
                break
    closest = _rank(_scored(conn, "session_id=? AND soft_deleted=0", (session_id,), query,
                            vectors.dimension), structure, exclude=anchor_id)[:similarity]
    shown = _entries(conn, recent_ids + [i for _, i in closest], structure)
    return {
        "session_id": session_id,
        "anchor_text": anchor_text,
        "recent": [{"message": shown[i], "criterion": "recency"} for i in recent_ids],
        "closest": [{"message": shown[i], "criterion": "similarity", "score": score}
                    for score, i in closest],
    }


def _search_filters(filters: dict[str, Any]) -> tuple[list[str], list[Any]]:
    where, args = [], []
    for axis, value in filters.items():
        if axis not in c.SEARCH_FILTER_AXES:
            raise Refusal(c.FILTER_AXIS_REFUSED, f"filter axis not accepted: {axis}",
                          violation="unknown", expected=list(c.SEARCH_FILTER_AXES), got=axis)
        if axis == "priority":
            if not isinstance(value, int) or isinstance(value, bool):
                raise Refusal(c.REQUEST_PARAMETER_TYPE, "filters.priority must be an integer",
                              violation="type", expected="integer", got=value)
            where.append("m.priority=?")
        elif axis in ("occurred_from", "occurred_to"):
            try:
                value = c.normalise_occurred_at(value)
            except ValueError:
                raise Refusal(c.REQUEST_PARAMETER_VALUE, f"filters.{axis} must be RFC 3339",
                              violation="value", got=value) from None
            where.append("m.occurred_at " + (">=?" if axis == "occurred_from" else "<=?"))
        else:
            if not isinstance(value, str):
                raise Refusal(c.REQUEST_PARAMETER_TYPE, f"filters.{axis} must be a string",
                              violation="type", expected="string", got=value)
            column = {"project_id": "s.project_id", "session_id": "m.session_id",
                      "sender_kind": "m.sender_kind"}[axis]
            where.append(f"{column}=?")
        args.append(value)
    return where, args


async def message_search(conn: sqlite3.Connection, vectors: Vectorizer,
                         params: dict[str, Any]) -> dict[str, Any]:
    validate.unknown(params, SEARCH_PARAMS)
    validate.required(params, ("query_text", "scope"))
    query_text = validate.text(params, "query_text")
    scope = validate.choice(params, "scope", c.SEARCH_SCOPES)
    target = validate.typed(params, "scope_target", str)
    if scope == "all_projects" and target is not None:
        raise Refusal(c.REQUEST_PARAMETER_VALUE, "scope all_projects takes no scope_target",
                      violation="value", got=target)
    if scope != "all_projects" and target is None:
        raise Refusal(c.REQUEST_PARAMETER_MISSING, f"scope {scope} requires scope_target",
                      violation="missing", expected="scope_target")
    filters = validate.typed(params, "filters", dict) or {}
    mode = validate.choice(params, "mode", c.READ_MODES) or c.DEFAULT_MODE
    page_size = validate.count(params, "page_size", c.DEFAULT_PAGE_SIZE, c.MAX_PAGE_SIZE, 1)
    page_offset = validate.count(params, "page_offset", 0, None)
    where, args = _search_filters(filters)

    if scope == "session":
        if store.session_row(conn, target) is None:
            raise Refusal(c.SCOPE_SESSION_UNKNOWN, f"no such session: {target}",
                          violation="value", got=target)
        where.append("m.session_id=?")
        args.append(target)
        sessions = [target]
    elif scope == "project":
        sessions = [r[0] for r in conn.execute("SELECT session_id FROM sessions WHERE "
                                               "project_id=?", (target,))]
        if not sessions:
            raise Refusal(c.SCOPE_PROJECT_UNKNOWN, f"no such project: {target}",
                          violation="value", got=target)
        where.append("s.project_id=?")
        args.append(target)
    else:
        sessions = None
    clause = " AND ".join(["m.soft_deleted=0"] + where)
    scoped = (f"message_id IN (SELECT m.message_id FROM messages m JOIN sessions s ON "
              f"s.session_id=m.session_id WHERE {clause})")
    await vectors.fill(conn, scoped, tuple(args))
    query = await _embed_one(vectors, query_text)
    structure = chains.Chains(conn, sessions) if mode == "resolved" else None
    ranked = _rank(_scored(conn, scoped, tuple(args), query, vectors.dimension), structure)
    window = ranked[page_offset:page_offset + page_size]
    shown = _entries(conn, [i for _, i in window], structure)
    projects = dict(conn.execute("SELECT session_id, project_id FROM sessions WHERE session_id "
                                 f"IN ({','.join('?' * len(shown))})",
                                 [e["session_id"] for e in shown.values()]).fetchall()) \
        if shown else {}
    matches = [{"message": shown[i], "session_id": shown[i]["session_id"],
                "project_id": projects.get(shown[i]["session_id"]), "score": score}
               for score, i in window]
    end = page_offset + len(window)
    more = end < len(ranked)
    return {"matches": matches, "more": more, "next_offset": end if more else None,
            "total": len(ranked)}
