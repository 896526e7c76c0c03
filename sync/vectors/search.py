"""Local closeness reads over the file store: working_set and message_search in the logger's data
shape, and the BM25 fallback when no vector can be had for the query.

The rules are the reference logger's (ops/fleet/logger/retrieval.py) and live in
outbox.contract: cosine of the L2-normalised float32 vectors (float32 matrix times float32
query, as the logger computes it), only scores above MIN_MATCH_SCORE, score descending then
message id ascending, messages without a usable vector absent, the anchor message (its whole
chain in resolved mode) excluded from CLOSEST, resolved mode giving one hit per correction chain
(the chain's best score) shown as the root's entry with the final version's content. RECENT is
the last messages by arrival (sequence number), newest first. The vectors come from the derived
index (sync.vectors.index); `.emb` of another model are never scored, they are reported.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from agent_memory.outbox import contract, views
from agent_memory.outbox.atomic import UnsafeFile
from agent_memory.outbox.store import IMPORTED, PENDING, Store, StoredFile, StoredMessage
from agent_memory.sync.vectors.index import KINDS, Index


class LocalRefusal(Exception):
    """The local mirror of a logger refusal (same stable code)."""

    def __init__(self, code: str, statement: str) -> None:
        super().__init__(statement)
        self.code = code
        self.statement = statement


# --- entries -------------------------------------------------------------------------------
def load_stored(store: Store, session_id: str, msg_name: str) -> StoredMessage | None:
    """A message by its file name, wherever it is now (pending, else imported)."""
    for area in (PENDING, IMPORTED):
        file = StoredFile(session_id, area, msg_name)
        try:
            return StoredMessage(file, store.load(file, "message"))
        except FileNotFoundError:
            continue
        except (UnsafeFile, ValueError):  # reported by the index scan and `verify`
            return None
    return None


class _Scope(contract.CorrectionChains):
    """The rows of some sessions and their correction chains."""

    def __init__(self, index: Index, mask: np.ndarray) -> None:
        self.index = index
        self.mask = mask
        rows = index.rows
        corrected = np.nonzero(mask & (rows["corrects"] != b""))[0]
        links = []
        if len(corrected):
            known = set(rows["message_id"][mask].tolist())
            for p in corrected:
                target = bytes(rows["corrects"][p])
                if target in known:  # a correction of a message outside the scope stands alone
                    links.append((rows["message_id"][p].decode(), target.decode(),
                                  (int(rows["sequence"][p]), bytes(rows["stem"][p]).decode())))
        super().__init__(links)


def hide_forgotten(store: Store, index: Index) -> int:
    """Take the messages the store's events deleted (soft, marked, hard) out of the live rows:
    search and the working set never see them, a chain resolves without them, and one is no
    anchor (outbox.contract). How many were hidden."""
    hidden = 0
    for session_id in index.sessions:
        forgotten = views.forgotten(store.events(session_id)[0])
        for message_id in forgotten.hidden | forgotten.purged:
            hits = np.nonzero(index.rows["message_id"] == message_id.encode())[0]
            index.live[hits] = False
            hidden += len(hits)
    return hidden


def _entry(store: Store, index: Index, message_id: str) -> dict[str, Any] | None:
    position = index.find(message_id)
    if position is None:
        return None
    session_id, msg_name = index.file_name(position)
    stored = load_stored(store, session_id, msg_name)
    return views.message_entry(stored) if stored is not None else None


def shown_entries(store: Store, index: Index, ids: list[str], scope: _Scope | None
           ) -> dict[str, dict[str, Any]]:
    """Entries of `ids` as the mode shows them (resolved: root entry with final content)."""
    out: dict[str, dict[str, Any]] = {}
    for message_id in dict.fromkeys(ids):
        entry = _entry(store, index, message_id)
        if entry is None:
            continue
        final = scope.final_id(message_id) if scope is not None else None
        if final is not None:
            last = _entry(store, index, final)
            if last is not None:
                direct = dict(last, corrects_message_id=entry["message_id"])
                entry = contract.resolve_corrections([entry, direct])[0]
        out[message_id] = entry
    return out


# --- ranking ---------------------------------------------------------------------------------
def rank(index: Index, positions: np.ndarray, scores: np.ndarray, scope: _Scope | None,
         exclude: str | None = None) -> tuple[list[str], list[float]]:
    """outbox.contract.rank_closeness over arrays (same result, numpy speed)."""
    keep = scores > contract.MIN_MATCH_SCORE
    positions, scores = positions[keep], scores[keep]
    ids = index.rows["message_id"][positions]
    if scope is not None and scope.has_corrections():
        roots = ids.copy()
        for i in np.nonzero(index.rows["corrects"][positions] != b"")[0]:
            roots[i] = scope.root(ids[i].decode()).encode()
        order = np.lexsort((-scores, roots))
        sorted_roots = roots[order]
        first = np.ones(len(order), bool)
        first[1:] = sorted_roots[1:] != sorted_roots[:-1]
        chosen = order[first]
        ids, scores = roots[chosen], scores[chosen]
        if exclude is not None:
            exclude = scope.root(exclude)
    if exclude is not None:
        keep = ids != exclude.encode()
        ids, scores = ids[keep], scores[keep]
    order = np.lexsort((ids, -scores))
    return [i.decode() for i in ids[order]], [float(s) for s in scores[order]]


# --- working_set -----------------------------------------------------------------------------
def anchor(store: Store, index: Index, session_id: str, message_id: str
           ) -> tuple[str, np.ndarray | None]:
    """(text, stored vector or None) of an anchor message of the session."""
    position = index.find(message_id)
    if position is None or index.sessions[int(index.rows["session"][position])] != session_id:
        raise LocalRefusal(contract.ANCHOR_INADMISSIBLE,
                           f"anchor {message_id} is not a message of session {session_id}")
    session, msg_name = index.file_name(position)
    stored = load_stored(store, session, msg_name)
    if stored is None:
        raise LocalRefusal(contract.ANCHOR_INADMISSIBLE, f"anchor {message_id} is unreadable")
    return stored.record.text, index.vector_of(position)


def working_set(store: Store, index: Index, *, session_id: str, anchor_text: str,
                query: np.ndarray | None, anchor_message_id: str | None, recency: int,
                similarity: int, mode: str) -> dict[str, Any]:
    """The logger's working_set; without a `query` vector the closest group is ranked by BM25
    of the anchor's text and the answer says `"ranking": "bm25"`, as search does."""
    mask = index.session_mask([session_id])
    scope = _Scope(index, mask) if mode == "resolved" else None
    rows = index.rows
    recent_ids: list[str] = []
    if recency:
        positions = np.nonzero(mask)[0]
        order = np.lexsort((rows["stem"][positions], rows["sequence"][positions]))[::-1]
        for p in positions[order]:
            mid = rows["message_id"][p].decode()
            shown = scope.root(mid) if scope is not None else mid
            if shown not in recent_ids:
                recent_ids.append(shown)
            if len(recent_ids) == recency:
                break
    if query is not None:
        positions, scores = index.scores(query, mask)
    else:
        positions, scores = bm25_positions(store, index, mask, anchor_text)
    ids, best = rank(index, positions, scores, scope, exclude=anchor_message_id)
    ids, best = ids[:similarity], best[:similarity]
    shown = shown_entries(store, index, recent_ids + ids, scope)
    answer = {
        "session_id": session_id,
        "anchor_text": anchor_text,
        "recent": [{"message": shown[i], "criterion": "recency"} for i in recent_ids
                   if i in shown],
        "closest": [{"message": shown[i], "criterion": "similarity", "score": s}
                    for i, s in zip(ids, best) if i in shown],
    }
    if query is None:
        answer["ranking"] = "bm25"
    return answer


# --- message_search --------------------------------------------------------------------------
def search_mask(index: Index, scope: str, target: str | None,
                filters: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, list[str] | None]:
    """(candidate mask after filters, scope mask for the chains, scope sessions or None). A
    session the index lacks (no message yet) is an empty scope: the caller refuses unknown ones."""
    rows = index.rows
    if scope == "session":  # whether the session exists is the store's to say, not the index's
        sessions = [target]
        scope_mask = index.session_mask(sessions)
    elif scope == "project":
        sessions = [s for s in index.sessions if index.project_of(s) == target]
        if not sessions:
            raise LocalRefusal(contract.SCOPE_PROJECT_UNKNOWN, f"no such project: {target}")
        scope_mask = index.session_mask(sessions)
    else:
        sessions = None
        scope_mask = index.live.copy()
    mask = scope_mask.copy()
    for axis, value in filters.items():
        if axis not in contract.SEARCH_FILTER_AXES:
            raise LocalRefusal(contract.FILTER_AXIS_REFUSED, f"filter axis not accepted: {axis}")
        if axis == "priority":
            mask &= rows["priority"] == int(value)
        elif axis == "sender_kind":
            code = KINDS.index(value) if value in KINDS else -2
            mask &= rows["sender"] == code
        elif axis == "occurred_from":
            mask &= rows["occurred_at"] >= contract.normalise_occurred_at(value).encode()
        elif axis == "occurred_to":
            mask &= rows["occurred_at"] <= contract.normalise_occurred_at(value).encode()
        elif axis == "session_id":
            mask &= index.session_mask([value])
        elif axis == "project_id":
            mask &= index.session_mask([s for s in index.sessions
                                        if index.project_of(s) == value])
    return mask, scope_mask, sessions


def _window(store: Store, index: Index, ids: list[str], scores: list[float], scope: _Scope | None,
            page_size: int, page_offset: int) -> dict[str, Any]:
    window_ids = ids[page_offset:page_offset + page_size]
    window_scores = scores[page_offset:page_offset + page_size]
    shown = shown_entries(store, index, window_ids, scope)
    matches = [{"message": shown[i], "session_id": shown[i]["session_id"],
                "project_id": index.project_of(shown[i]["session_id"]), "score": s}
               for i, s in zip(window_ids, window_scores) if i in shown]
    end = page_offset + len(window_ids)
    more = end < len(ids)
    return {"matches": matches, "more": more, "next_offset": end if more else None,
            "total": len(ids)}


def message_search(store: Store, index: Index, *, query: np.ndarray, scope: str,
                   target: str | None, filters: dict[str, Any], mode: str, page_size: int,
                   page_offset: int) -> dict[str, Any]:
    mask, scope_mask, _sessions = search_mask(index, scope, target, filters)
    chains = _Scope(index, scope_mask) if mode == "resolved" else None
    positions, scores = index.scores(query, mask)
    ids, best = rank(index, positions, scores, chains)
    return _window(store, index, ids, best, chains, page_size, page_offset)


# --- BM25 fallback ---------------------------------------------------------------------------
TOKEN_RE = re.compile(r"\w+", re.UNICODE)
BM25_K1 = 1.2
BM25_B = 0.75


def tokens(text: str) -> list[str]:
    return TOKEN_RE.findall(text.lower())


def bm25_scores(query_text: str, documents: list[list[str]]) -> list[float]:
    """Okapi BM25 (k1 1.2, b 0.75, idf log(1 + (N - df + 0.5) / (df + 0.5))) of each document."""
    terms = set(tokens(query_text))
    n = len(documents)
    if not n or not terms:
        return [0.0] * n
    avg = sum(len(d) for d in documents) / n or 1.0
    df = {t: 0 for t in terms}
    counts = []
    for doc in documents:
        tf: dict[str, int] = {}
        for tok in doc:
            if tok in terms:
                tf[tok] = tf.get(tok, 0) + 1
        for t in tf:
            df[t] += 1
        counts.append(tf)
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in terms}
    out = []
    for doc, tf in zip(documents, counts):
        norm = BM25_K1 * (1 - BM25_B + BM25_B * len(doc) / avg)
        out.append(sum(idf[t] * f * (BM25_K1 + 1) / (f + norm) for t, f in tf.items()))
    return out


def bm25_positions(store: Store, index: Index, mask: np.ndarray, query_text: str
                   ) -> tuple[np.ndarray, np.ndarray]:
    """(row positions, BM25 scores) of the masked rows' texts against `query_text`."""
    docs, kept = [], []
    for p in np.nonzero(mask)[0]:
        session_id, msg_name = index.file_name(int(p))
        stored = load_stored(store, session_id, msg_name)
        if stored is None:
            continue
        docs.append(tokens(stored.record.text))
        kept.append(int(p))
    scores = np.asarray(bm25_scores(query_text, docs), dtype=np.float64)
    return np.asarray(kept, np.int64), scores


def bm25_search(store: Store, index: Index, *, query_text: str, scope: str, target: str | None,
                filters: dict[str, Any], mode: str, page_size: int,
                page_offset: int) -> dict[str, Any]:
    """message_search ranked by BM25 over the local texts (no vector needed)."""
    mask, scope_mask, _sessions = search_mask(index, scope, target, filters)
    chains = _Scope(index, scope_mask) if mode == "resolved" else None
    positions, scores = bm25_positions(store, index, mask, query_text)
    ids, best = rank(index, positions, scores, chains)
    answer = _window(store, index, ids, best, chains, page_size, page_offset)
    answer["ranking"] = "bm25"
    return answer
