"""Messages still pending in the outbox, scored beside the logger's answer: an auto-mode
`search` or `working-set` answers from the logger and merges in what the logger does not hold
yet, ranked by the same rules (sync.vectors.search). Everything here reads the local index;
the command decides what to ask the logger and how to page the merged answer."""

from __future__ import annotations

from typing import Any

import numpy as np

from agent_memory.outbox.store import Store
from agent_memory.sync.vectors import search
from agent_memory.sync.vectors.index import Index
from agent_memory.sync.vectors.listing import pending_message_stems


def positions(store: Store, index: Index, session_ids=None) -> np.ndarray:
    """Index positions of the messages still pending (optionally of some sessions)."""
    if session_ids is not None:
        session_ids = [s for s in session_ids if s in index.session_pos]
    stems = pending_message_stems(store, session_ids)
    if not stems:
        return np.zeros(0, np.int64)
    mask = index.live & np.isin(index.rows["stem"],
                                np.asarray(sorted(s.encode() for s in stems), dtype="S60"))
    return np.nonzero(mask)[0]


def message_ids(index: Index, found: np.ndarray) -> set[str]:
    return {index.rows["message_id"][p].decode() for p in found}


def in_scope(index: Index, found: np.ndarray, scope: str, target: str | None,
             filters: dict[str, Any]) -> np.ndarray | None:
    """A mask of the pending messages within a search's scope and filters; None when none
    is (or the scope is not known locally)."""
    try:
        mask, _scope_mask, _ = search.search_mask(index, scope, target, filters)
    except search.LocalRefusal:
        return None  # the scope is not known locally: nothing pending in it
    selected = np.zeros(len(index.rows), bool)
    selected[found] = True
    selected &= mask
    return selected if selected.any() else None


def search_matches(store: Store, index: Index, selected: np.ndarray, query,
                   known: set[str]) -> list[dict[str, Any]]:
    """Search matches (the logger's match shape) of the selected pending messages the logger
    does not already answer with."""
    pos, scores = index.scores(query, selected)
    ids, best = search.rank(index, pos, scores, None)
    scored = [(s, i) for i, s in zip(ids, best) if i not in known]
    if not scored:
        return []
    shown = search.shown_entries(store, index, [i for _s, i in scored], None)
    return [{"message": shown[i], "session_id": shown[i]["session_id"],
             "project_id": index.project_of(shown[i]["session_id"]), "score": s}
            for s, i in scored if i in shown]


def newest(store: Store, index: Index, found: np.ndarray,
           known: set[str]) -> tuple[list[str], dict[str, dict[str, Any]]]:
    """The pending messages the logger does not hold, newest first (they arrived after all it
    holds), and their entries."""
    rows = index.rows
    order = found[np.lexsort((rows["stem"][found], rows["sequence"][found]))[::-1]]
    fresh = [rows["message_id"][p].decode() for p in order
             if rows["message_id"][p].decode() not in known]
    return fresh, (search.shown_entries(store, index, fresh, None) if fresh else {})


def stored_vector(index: Index, message_id: str | None):
    """The vector the index holds for a message, or None."""
    if message_id is None:
        return None
    found = index.find(message_id)
    return index.vector_of(found) if found is not None else None


def closest(index: Index, fresh: list[str], shown: dict[str, dict[str, Any]], anchor,
            exclude: str | None) -> list[dict[str, Any]]:
    """Working-set `closest` entries of the fresh pending messages, by closeness to the
    anchor's vector."""
    selected = np.zeros(len(index.rows), bool)
    selected[[index.find(i) for i in fresh]] = True
    pos, scores = index.scores(anchor, selected)
    ids, best = search.rank(index, pos, scores, None, exclude=exclude)
    return [{"message": shown[i], "criterion": "similarity", "score": s}
            for i, s in zip(ids, best) if i in shown]
