"""The structural reads and the preview over message entries: one implementation, run by the
reference logger over its rows and by agent-memory over its files, so the two answer alike by
construction. The rules are decided in outbox.contract (our decision where the logger's
contract is silent); pure functions, no I/O.

Every function takes MESSAGE_ENTRY dicts (outbox.contract); the session-scoped ones take one
session's entries, in any order (they sort by arrival).
"""

from __future__ import annotations

from typing import Any, Iterable

from agent_memory.outbox import contract as c


class NavigationError(ValueError):
    """A refused read, with its stable code (each side answers it in its own way)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def _arrival(entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """By sequence number; ties (concurrent writers to the file store may share one) as the
    journal read orders them, by file name: occurred_at to the millisecond, then id."""
    return sorted(entries, key=lambda e: (e["sequence_number"], e["occurred_at"][:23],
                                          e["message_id"]))


def continues_from(entry: dict[str, Any]) -> list[str]:
    """The messages `entry` continues from: its declared relations in order, its correction
    target last. The first is its parent on its line."""
    targets = [r["to_message_id"] for r in entry.get("relations") or []]
    if entry.get("corrects_message_id"):
        targets.append(entry["corrects_message_id"])
    return targets


def relations(entries: Iterable[dict[str, Any]]) -> list[dict[str, str]]:
    """Every relation, correction included, in arrival order of the declaring message."""
    out = []
    for entry in _arrival(entries):
        for r in entry.get("relations") or []:
            out.append({"from_message_id": entry["message_id"],
                        "to_message_id": r["to_message_id"], "kind": r["kind"]})
        if entry.get("corrects_message_id"):
            out.append({"from_message_id": entry["message_id"],
                        "to_message_id": entry["corrects_message_id"], "kind": "correction"})
    return out


# --- continuations -----------------------------------------------------------------------------
def _offset(token: str | None, prefix: str) -> int:
    if token is None:
        return 0
    if not isinstance(token, str) or not token.startswith(prefix):
        raise NavigationError(c.CONTINUATION_INVALID,
                              f"continuation {token!r} is not one this read returned")
    try:
        return c.token_number(token[len(prefix):])
    except ValueError:
        raise NavigationError(c.CONTINUATION_INVALID,
                              f"continuation {token!r} is not one this read returned") from None


def _page(items: list[Any], offset: int, block_size: int, prefix: str) -> tuple[list[Any], bool,
                                                                               str | None]:
    block = items[offset:offset + block_size]
    more = offset + len(block) < len(items)
    return block, more, f"{prefix}{offset + len(block)}" if more else None


# --- relations_read ----------------------------------------------------------------------------
def relations_page(session_id: str, entries: list[dict[str, Any]], block_size: int,
                   continuation: str | None = None) -> dict[str, Any]:
    block, more, token = _page(relations(entries), _offset(continuation, "rel:"), block_size,
                               "rel:")
    return {"session_id": session_id, "relations": block, "more": more, "continuation": token}


# --- path_read ---------------------------------------------------------------------------------
def line(entries: list[dict[str, Any]], node_id: str, mode: str) -> list[dict[str, Any]]:
    """The node, then its parent, ... up to its line's root (see outbox.contract)."""
    by_id = {e["message_id"]: e for e in entries}
    if node_id not in by_id:
        raise NavigationError(c.MESSAGE_UNKNOWN, f"message {node_id} is not a message of "
                                                 "this session")
    if mode == "full":
        out, seen, current = [], set(), node_id
        while current in by_id and current not in seen:
            seen.add(current)
            out.append(by_id[current])
            parents = continues_from(by_id[current])
            current = parents[0] if parents else None
        return out

    # Chains over the visible messages only, as resolve_corrections sees them (a hidden member
    # is as if absent): a node stands for its chain's visible root.
    visible = {e["message_id"]: e for e in entries if not e.get("soft_deleted")}

    def chain_root(message_id: str) -> str:
        seen = set()
        while message_id in visible and visible[message_id].get("corrects_message_id") \
                in visible and message_id not in seen:
            seen.add(message_id)
            message_id = visible[message_id]["corrects_message_id"]
        return message_id

    shown = {e["message_id"]: e for e in c.resolve_corrections(_arrival(visible.values()))}
    out, seen = [], set()
    current: str | None = chain_root(node_id)
    while current is not None and current in by_id and current not in seen:
        seen.add(current)
        out.append(shown.get(current, by_id[current]))
        declared = [r["to_message_id"] for r in by_id[current].get("relations") or []]
        current = chain_root(declared[0]) if declared else None
    return out


def path_page(session_id: str, entries: list[dict[str, Any]], node_id: str, mode: str,
              block_size: int, continuation: str | None = None) -> dict[str, Any]:
    prefix = f"path:{node_id}:{mode}:"
    if continuation is not None and isinstance(continuation, str) \
            and continuation.startswith("path:") and not continuation.startswith(prefix):
        raise NavigationError(c.CONTINUATION_MISMATCH, "the continuation was returned for "
                                                       "another node or mode: refused rather "
                                                       "than reinterpreted")
    offset = _offset(continuation, prefix)
    block, more, token = _page(line(entries, node_id, mode), offset, block_size, prefix)
    return {"session_id": session_id, "node_id": node_id, "path": block, "more": more,
            "continuation": token}


# --- leaves_read -------------------------------------------------------------------------------
def _children(entries: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Per message, the distinct messages that continue from it, in arrival order."""
    known = {e["message_id"] for e in entries}
    children: dict[str, list[str]] = {e["message_id"]: [] for e in entries}
    for entry in _arrival(entries):
        for target in dict.fromkeys(continues_from(entry)):
            if target in known and target != entry["message_id"]:
                children[target].append(entry["message_id"])
    return children


def leaves(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    children = _children(entries)
    out = []
    for entry in _arrival(entries):
        count = len(children[entry["message_id"]])
        if count == 0:
            out.append({"message_id": entry["message_id"], "role": "leaf", "continuations": 0})
        elif count > 1:
            out.append({"message_id": entry["message_id"], "role": "branching",
                        "continuations": count})
    return out


def leaves_page(session_id: str, entries: list[dict[str, Any]], block_size: int,
                continuation: str | None = None) -> dict[str, Any]:
    block, more, token = _page(leaves(entries), _offset(continuation, "leaves:"), block_size,
                               "leaves:")
    return {"session_id": session_id, "nodes": block, "more": more, "continuation": token}


# --- graph_read --------------------------------------------------------------------------------
def graph(entries: list[dict[str, Any]], anchor: str, depth: int) -> list[dict[str, Any]]:
    """The anchor and what continues from it, level by level, each node once at its first
    level, in (level, arrival) order; entries carry `level`."""
    by_id = {e["message_id"]: e for e in entries}
    if anchor not in by_id:
        raise NavigationError(c.MESSAGE_UNKNOWN, f"message {anchor} is not a message of "
                                                 "this session")
    children = _children(entries)
    order = {e["message_id"]: i for i, e in enumerate(_arrival(entries))}
    out, seen, level, frontier = [], {anchor}, 0, [anchor]
    while frontier:
        out.extend({**by_id[m], "level": level} for m in frontier)
        if level == depth:
            break
        found = {child for m in frontier for child in children[m] if child not in seen}
        seen |= found
        frontier = sorted(found, key=order.__getitem__)
        level += 1
    return out


def graph_page(session_id: str, entries: list[dict[str, Any]], anchor: str, depth: int | None,
               block_size: int, continuation: str | None = None) -> dict[str, Any]:
    depth = c.DEFAULT_GRAPH_DEPTH if depth is None else depth
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 0:
        raise NavigationError(c.REQUEST_PARAMETER_VALUE, "drilldown_depth must be an integer "
                                                         ">= 0")
    if depth > c.MAX_GRAPH_DEPTH:
        raise NavigationError(c.CEILING_EXCEEDED,
                              f"drilldown_depth is capped at {c.MAX_GRAPH_DEPTH}")
    prefix = f"graph:{anchor}:{depth}:"
    if continuation is not None and isinstance(continuation, str) \
            and continuation.startswith("graph:") and not continuation.startswith(prefix):
        raise NavigationError(c.CONTINUATION_MISMATCH, "the continuation was returned for "
                                                       "another anchor or depth: refused rather "
                                                       "than reinterpreted")
    nodes = graph(entries, anchor, depth)
    block, more, token = _page(nodes, _offset(continuation, prefix), block_size, prefix)
    inside = {n["message_id"] for n in nodes}
    here = {n["message_id"] for n in block}
    links = [r for r in relations(entries)
             if r["from_message_id"] in here and r["to_message_id"] in inside]
    return {"session_id": session_id, "anchor_node_id": anchor, "depth": depth, "nodes": block,
            "relations": links, "more": more, "continuation": token}


# --- messages_read, preview form ---------------------------------------------------------------
PREVIEW_KEYS = ("message_id", "session_id", "sequence_number", "sender_kind", "sender_identity",
                "receiver_kind", "receiver_identity", "occurred_at", "soft_deleted")


def preview_entry(entry: dict[str, Any], size: int) -> dict[str, Any]:
    return {**{k: entry.get(k) for k in PREVIEW_KEYS}, "preview": entry["text"][:size]}


def preview_filter(filters: dict[str, Any]):
    """A predicate over MESSAGE_ENTRY for the preview's filters (session_id, caller_id,
    recipient_id, period_start, period_end, show_deleted); empty ones constrain nothing."""
    bounds = {}
    for name in ("period_start", "period_end"):
        value = filters.get(name)
        if value:
            try:
                bounds[name] = c.normalise_occurred_at(value)
            except ValueError:
                raise NavigationError(c.REQUEST_PARAMETER_VALUE, f"{name} must be an RFC 3339 "
                                      "time with an explicit offset") from None
    wanted = {key: filters.get(name) for name, key in (
        ("session_id", "session_id"), ("caller_id", "sender_identity"),
        ("recipient_id", "receiver_identity")) if filters.get(name)}
    show_deleted = bool(filters.get("show_deleted"))

    def matches(entry: dict[str, Any]) -> bool:
        if entry.get("soft_deleted") and not show_deleted:
            return False
        if any(entry.get(key) != value for key, value in wanted.items()):
            return False
        if "period_start" in bounds and entry["occurred_at"] < bounds["period_start"]:
            return False
        return "period_end" not in bounds or entry["occurred_at"] <= bounds["period_end"]
    return matches


def preview_page(entries: Iterable[dict[str, Any]], page_offset: int, page_size: int
                 ) -> dict[str, Any]:
    """One page of preview entries (already filtered), ordered by occurred_at then
    message_id; duplicates by message_id count once."""
    unique = {e["message_id"]: e for e in entries}
    ordered = sorted(unique.values(), key=lambda e: (e["occurred_at"], e["message_id"]))
    total = len(ordered)
    start = page_offset * page_size
    return {"entries": ordered[start:start + page_size], "total_messages": total,
            "total_pages": (total + page_size - 1) // page_size, "page_offset": page_offset,
            "page_size": page_size}
