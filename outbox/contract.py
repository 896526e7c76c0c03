"""Our decisions where the AI Logger's documented contract is silent.

`ailogger-client` 0.1.30 documents the logger's commands but leaves field names, stable codes,
defaults and several rules open. Both the reference logger in
`ops/fleet/` and agent-memory's offline reads answer the same way, so every such point is decided
here, once. THIS IS OUR DECISION, NOT THE SERVICE'S DOCUMENTED CONTRACT: against the real logger,
agent-memory passes through whatever the service answers.

Pure Python, no heavy imports: the CLI's write path imports this module.
"""

from __future__ import annotations

import os
import re
from datetime import datetime, timezone

TYPE_CHECKING = False  # typing costs the write path 3 ms: annotations only
if TYPE_CHECKING:
    from typing import Any, Iterable

# --- participant kinds and relations (documented) -------------------------------------------------
PARTICIPANT_KINDS = ("human", "model", "tool", "system")
# Kinds a caller may declare in `relations`; `correction` exists only through corrects_message_id.
DECLARABLE_RELATION_KINDS = ("reply", "influence", "tool-result")
RELATION_KINDS = DECLARABLE_RELATION_KINDS + ("correction",)
READ_MODES = ("resolved", "full")
SEARCH_SCOPES = ("session", "project", "all_projects")
LIFECYCLES = ("open", "closed")
# How search and working-set rank: by vector else BM25 over local texts, a vector or fail, BM25.
RANKINGS = ("auto", "vector", "bm25")

# --- stable refusal codes ------------------------------------------------------------------------
# Documented by the client:
REQUEST_PARAMETER_UNKNOWN = "REQUEST_PARAMETER_UNKNOWN"
REQUEST_PARAMETER_MISSING = "REQUEST_PARAMETER_MISSING"
REQUEST_PARAMETER_TYPE = "REQUEST_PARAMETER_TYPE"
REQUEST_PARAMETER_VALUE = "REQUEST_PARAMETER_VALUE"
MESSAGE_UNKNOWN = "MESSAGE_UNKNOWN"
# Ours:
SESSION_UNKNOWN = "SESSION_UNKNOWN"
SESSION_CLOSED = "SESSION_CLOSED"
SESSION_CONFLICT = "SESSION_CONFLICT"  # open_session of an existing id with different attributes
MESSAGE_CONFLICT = "MESSAGE_CONFLICT"
RELATION_INADMISSIBLE = "RELATION_INADMISSIBLE"
OCCURRED_AT_INVALID = "OCCURRED_AT_INVALID"
IMPORT_EMPTY = "IMPORT_EMPTY"
IMPORT_TOO_LARGE = "IMPORT_TOO_LARGE"
IMPORT_DUPLICATE_ID = "IMPORT_DUPLICATE_ID"
ANCHOR_INADMISSIBLE = "ANCHOR_INADMISSIBLE"
CEILING_EXCEEDED = "CEILING_EXCEEDED"
EMBEDDING_UNAVAILABLE = "EMBEDDING_UNAVAILABLE"
SCOPE_SESSION_UNKNOWN = "SCOPE_SESSION_UNKNOWN"
SCOPE_PROJECT_UNKNOWN = "SCOPE_PROJECT_UNKNOWN"
FILTER_AXIS_REFUSED = "FILTER_AXIS_REFUSED"
CONTINUATION_INVALID = "CONTINUATION_INVALID"
CONTINUATION_MISMATCH = "CONTINUATION_MISMATCH"  # resumed with another node, mode, anchor, depth
MESSAGE_REFERENCED = "MESSAGE_REFERENCED"  # hard delete of a message others relate to
MESSAGE_DELETED = "MESSAGE_DELETED"  # a relation or correction toward a deleted message
MARK_NOT_APPLIED = "MARK_NOT_APPLIED"  # messages_mark_for_deletion answered false
INFO_SECTION_UNKNOWN = "INFO_SECTION_UNKNOWN"
# Embedder (the code embed-client documents for model/dimension refusals):
UNKNOWN_MODEL = "UNKNOWN_MODEL"
UNSUPPORTED_DIMENSION = "UNSUPPORTED_DIMENSION"

# --- shipped defaults and ceilings ---------------------------------------------------------------
DEFAULT_PRIORITY = 0
DEFAULT_MODE = "resolved"
DEFAULT_BLOCK_SIZE = 50
MAX_BLOCK_SIZE = 1000
DEFAULT_RECENCY_COUNT = 10
MAX_RECENCY_COUNT = 200
DEFAULT_SIMILARITY_COUNT = 10
MAX_SIMILARITY_COUNT = 200
DEFAULT_PAGE_SIZE = 20
MAX_PAGE_SIZE = 500
MAX_IMPORT_ITEMS = 10_000
DEFAULT_GRAPH_DEPTH = 3
MAX_GRAPH_DEPTH = 1000
PREVIEW_SIZE = 200  # documented: the preview's text prefix defaults to 200 characters
DELETE_MODES = ("soft", "hard")
# Text excerpt length: five whitespace-separated words at each end (documented).
EXCERPT_WORDS = 5

# --- answer shapes (field names are ours) --------------------------------------------------------
# open_session / close_session / reopen_session -> {"session_id", "lifecycle"}
# append_message -> {"message_id", "sequence_number", "audience", "text_head", "text_tail"}
#   audience = {"receiver_kind", "receiver_identity"} of the message.
# messages_read (journal) -> {"session_id", "messages": [MESSAGE_ENTRY...], "more": bool,
#                             "continuation": str | None}
# MESSAGE_ENTRY = {"message_id", "session_id", "sequence_number", "text", "sender_kind",
#                  "sender_identity", "receiver_kind", "receiver_identity", "priority", "relations",
#                  "corrects_message_id", "attributes", "occurred_at", "received_at", "soft_deleted"}
#   resolved mode: see resolve_corrections() below (shared by the reference logger and offline
#   reads): a chain's root keeps its place showing the final version's content, the correcting
#   messages themselves are not listed separately.
# message_get -> MESSAGE_ENTRY + {"vectorization_state": "pending" | "vectorized"}
# sessions_list -> {"sessions": [SESSION_ENTRY...], "more", "continuation"}
# SESSION_ENTRY = {"session_id", "project_id", "lifecycle", "dialogue_kind": "a-to-b",
#                  "participants", "created_at"}
# relations_read -> {"session_id", "relations": [{"from_message_id", "to_message_id", "kind"}],
#                    "more", "continuation"}; from = the later message, to = the earlier one.
# working_set -> {"session_id", "anchor_text", "recent": [{"message": MESSAGE_ENTRY,
#                 "criterion": "recency"}], "closest": [{"message": MESSAGE_ENTRY,
#                 "criterion": "similarity", "score": float}]}
#   recent: the last messages by sequence_number (arrival), newest first.
#   closest: cosine similarity, descending, tie by message_id ascending; the anchor message itself
#   is excluded; messages without a vector are absent.
# message_search -> {"matches": [{"message": MESSAGE_ENTRY, "session_id", "project_id",
#                    "score"}], "more": bool, "next_offset": int | None, "total": int}
#   filter keys: "sender_kind", "priority" (int, exact), "occurred_from", "occurred_to"
#   (RFC 3339, inclusive), "session_id", "project_id".
SEARCH_FILTER_AXES = ("project_id", "session_id", "sender_kind", "priority",
                      "occurred_from", "occurred_to")
# Closeness (added with the reference logger): the score is the cosine similarity of the
# L2-normalised vectors; a message is a search match or a working-set closest candidate only when
# its score is strictly above MIN_MATCH_SCORE (so a message sharing nothing with the query is no
# match). Messages without a vector never match.
MIN_MATCH_SCORE = 0.0
# Embedding (both sides embed a message alike, so a vector made here and the logger's agree): a
# text is embedded by its first EMBED_TEXT_CHARS characters (embedding_text). The models an
# embedding service serves read a few hundred to a few thousand tokens of a text and drop the
# rest. The service's answer echoes each text and its tokens, twice (about four times the
# text's JSON size), and embed-client receives it as ONE WebSocket message, which its aiohttp
# side refuses over 4 MiB: such an answer never arrives, the call fails like an outage, and a
# backfill retrying it would stall on that text for ever. So a call is also cut into batches
# whose estimated answer stays under EMBED_ANSWER_BUDGET (embed_batches); one text of at most
# EMBED_TEXT_CHARS always fits alone.
EMBED_TEXT_CHARS = 32_768
EMBED_ANSWER_BUDGET = 3 << 20
# Import job status: {"status": "completed", "result": {"success": true, "data": [OUTCOME...]}}
# OUTCOME = {"message_id", "success", "text_head", "text_tail"} or, on failure,
#           {"message_id", "success": false, "code", "statement"} (never a "data" dict).

# Ordering: the journal window and working-set recency are in arrival order (sequence_number,
# from zero); the period filters use occurred_at. Sync imports each session in occurred_at
# order, so for everything agent-memory writes arrival and occurred_at agree. "Earlier" for a relation = already stored in the same
# session. Opening an existing session with identical attributes is an idempotent repeat; with
# different ones it is SESSION_CONFLICT. Closing a closed session / reopening an open one is an
# idempotent success. Appending to a closed session is SESSION_CLOSED.

# Navigation (outbox.navigation implements these once; both sides call it):
# - "Continues from": message B continues from A when B declares a relation (any of reply,
#   influence, tool-result) toward A, or corrects A. The first of these, in declared order with
#   the correction last, is B's parent on its LINE; a message with none is a root.
# - path_read -> {"session_id", "node_id", "path": [MESSAGE_ENTRY...], "more", "continuation"}:
#   the node, then its parent, ... up to the root. Resolved mode: a correcting node stands for
#   its chain (the walk starts at the chain's root) and every node shows its chain's final
#   version (resolve_corrections); the walk follows the chain root's own relations; full mode
#   walks the messages as recorded. A node not of the session is MESSAGE_UNKNOWN; the
#   continuation names node and mode (resumed with others: CONTINUATION_MISMATCH).
# - leaves_read -> {"session_id", "nodes": [{"message_id", "role": "leaf" | "branching",
#   "continuations": N}], "more", "continuation"}: a leaf is a message nothing continues from
#   (a lone message is a leaf), a branching point one that more than one distinct message
#   continues from; in arrival order. Structural: never resolved.
# - graph_read -> {"session_id", "anchor_node_id", "depth", "nodes": [MESSAGE_ENTRY + "level"],
#   "relations": [RELATION...], "more", "continuation"}: the anchor (level 0) and the messages
#   that continue from a node of the graph, level by level up to `depth` (default
#   DEFAULT_GRAPH_DEPTH, at most MAX_GRAPH_DEPTH), each once at its first level, in (level,
#   arrival) order; a page carries the relations from its nodes to nodes of the graph. Its
#   continuation names anchor and depth: resumed with others it is CONTINUATION_MISMATCH.
#   Structural: nodes as recorded.
# - relations_read: every relation of the session's messages in arrival order of the message
#   that declares it, in declared order, its correction last.
# Soft deletion (delete --mode soft and the mark are ONE flag, `soft_deleted`; unmark clears
# it): journal reads, the preview, search and the working set hide such messages (journal and
# preview show them with show_deleted); message_get shows them with soft_deleted true; the
# structural reads (relations, path, leaves, graph) show the whole structure, each entry with its
# flag. Resolving a correction chain ignores its soft-deleted members, as if absent.
# - message_delete -> {"message_id", "mode", "deleted": true}; hard delete of a message another
#   message relates to or corrects is MESSAGE_REFERENCED; an unknown message MESSAGE_UNKNOWN;
#   deleting a soft-deleted message softly again is an idempotent success. Hard delete removes
#   the message, its own relations and its vector.
# - messages_mark_for_deletion -> the boolean outcome as the answer's data (true: every id is in
#   the requested state; false: nothing changed: an empty list, a malformed, duplicate or
#   unknown id), never a refusal for what the list holds; a missing or mistyped parameter is
#   REQUEST_PARAMETER_* as for every command. Deleting a hard-deleted message is
#   MESSAGE_UNKNOWN.
# - delete_session -> {"session_id", "deleted": true, "messages_removed", "relations_removed",
#   "vectors_removed"}; an unknown session is SESSION_UNKNOWN.
# - A relation or correction toward a soft-deleted message is MESSAGE_DELETED.
# - messages_read preview (mode "preview"): caller_id / recipient_id match sender_identity /
#   receiver_identity; period_start / period_end bound occurred_at inclusively (RFC 3339 with an
#   offset); empty filters are ignored; page_offset is a zero-based PAGE index; entries (every
#   version as recorded) are ordered by occurred_at then message_id: {"message_id",
#   "session_id", "sequence_number", "sender_kind", "sender_identity", "receiver_kind",
#   "receiver_identity", "occurred_at", "soft_deleted", "preview"} with the first
#   `preview_size` characters of the text.
# - info -> without a section {"sections": [names]}; with one {"section", "content"}; an unknown
#   section is INFO_SECTION_UNKNOWN. The sections are INFO_SECTIONS below.
INFO_SECTIONS = ("service", "limits", "codes", "relations")

SESSION_ID_MAX = 128
# Every pattern is matched with fullmatch: `$` also matches before a final newline, so an id
# ending in "\n" would pass `re.match` and name a file no scan ever reads. ASCII: `\d` would
# match other scripts' digits. Compiled when first matched (re's cache keeps them): a write
# uses one or two, and each compile costs its start-up about 0.1 ms.
_SESSION_ID = r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}"
# RFC 3339 with a mandatory offset; fractional seconds optional.
_RFC3339 = r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})"


def is_valid_session_id(value: str) -> bool:
    """One path component of safe characters, no leading dot, at most 128 characters."""
    return (isinstance(value, str) and re.fullmatch(_SESSION_ID, value, re.ASCII) is not None
            and ".." not in value)


def session_ids_among(entries: "Iterable[str]") -> set[str]:
    """Those of `entries` (a directory's listing) that are valid session ids
    (is_valid_session_id): the one check of a listing."""
    return {e for e in entries if is_valid_session_id(e)}


_UUID4 = r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"


def is_uuid4(value: Any) -> bool:
    """A well-formed version 4 UUID (RFC 4122 variant) in canonical lower-case text form."""
    return isinstance(value, str) and bool(re.fullmatch(_UUID4, value, re.ASCII))


def new_uuid4() -> str:
    """A random version 4 UUID; without the uuid module, whose import costs the write path."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def parse_occurred_at(value: str) -> datetime:
    """Parse an RFC 3339 time that carries an explicit offset; raise ValueError otherwise."""
    if not isinstance(value, str) or not re.fullmatch(_RFC3339, value, re.ASCII):
        raise ValueError(f"not an RFC 3339 time with an explicit offset: {value!r}")
    text = value.replace("z", "Z").replace("t", "T")
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    text = text.replace(" ", "T", 1)
    main, _, rest = text.partition(".")
    if rest:  # trim fractional seconds beyond microseconds, which fromisoformat refuses
        digits = re.match(r"[0-9]+", rest).group(0)
        text = main + "." + (digits[:6].ljust(6, "0")) + rest[len(digits):]
    return datetime.fromisoformat(text)


def format_utc(moment: datetime) -> str:
    """The canonical stored form: UTC, microseconds, `Z`."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def normalise_occurred_at(value: str) -> str:
    """Stored form of a caller's occurred_at (normalised to UTC, documented)."""
    return format_utc(parse_occurred_at(value))


def excerpts(text: str) -> dict[str, str]:
    """text_head / text_tail: first and last five str.split() words, joined by one space."""
    words = text.split()
    return {
        "text_head": " ".join(words[:EXCERPT_WORDS]),
        "text_tail": " ".join(words[-EXCERPT_WORDS:]) if words else "",
    }


def encode_continuation(next_sequence_number: int) -> str:
    """Opaque resumption point of a journal window (callers send it back unread)."""
    return f"seq:{next_sequence_number}"


_COUNT = r"[0-9]{1,18}"


def token_number(text: str) -> int:
    """The number a continuation carries after its prefix: ASCII digits only, checked whole
    (`int()` would also take surrounding whitespace, a sign, `_` and other scripts' digits,
    so two spellings would resume at one place); ValueError otherwise."""
    if not isinstance(text, str) or not re.fullmatch(_COUNT, text, re.ASCII):
        raise ValueError(f"not a count: {text!r}")
    return int(text)


def decode_continuation(token: str) -> int:
    """The next sequence number a continuation names; ValueError when it is not ours."""
    if not isinstance(token, str) or not token.startswith("seq:"):
        raise ValueError(f"not a continuation: {token!r}")
    return token_number(token[4:])


def dialogue_kind_label(kinds: list[str] | tuple[str, str]) -> str:
    """sessions_list form of a pairing: '<first>-to-<second>'."""
    return f"{kinds[0]}-to-{kinds[1]}"


class CorrectionChains:
    """Correction chains (our decision, as `resolve_corrections` below): a message with
    `corrects_message_id` continues the chain of the message it corrects; the chain's root is
    the member that corrects nothing (known); its final version is the correcting member with
    the greatest order key (arrival: the sequence number, then what breaks ties). Built from
    `(message_id, corrects_message_id, order key)` of the correcting messages only; the
    reference logger (from its rows) and the offline search (from the vector index) both use
    it, so they resolve a chain alike."""

    def __init__(self, corrections) -> None:
        corrections = list(corrections)
        self._corrects = {message_id: target for message_id, target, _key in corrections}
        self._final: dict[str, tuple[Any, str]] = {}
        for message_id, _target, key in corrections:
            root = self.root(message_id)
            if root not in self._final or key > self._final[root][0]:
                self._final[root] = (key, message_id)

    def is_correction(self, message_id: str) -> bool:
        return message_id in self._corrects

    def has_corrections(self) -> bool:
        return bool(self._corrects)

    def root(self, message_id: str) -> str:
        seen = set()
        while message_id in self._corrects and message_id not in seen:
            seen.add(message_id)
            message_id = self._corrects[message_id]
        return message_id

    def final_id(self, root: str) -> str | None:
        """The final version's id when `root` has been corrected, else None."""
        found = self._final.get(root)
        return found[1] if found else None


def resolve_corrections(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Resolved mode over a session's MESSAGE_ENTRY list in arrival order.

    A correction chain (messages linked by corrects_message_id back to a root) is shown once, at
    the root's place, with the content of the version that arrived last (highest sequence_number,
    then latest in the list); "resolved_from" then names that version's message_id. Messages that
    correct another message present in `entries` are not listed on their own. A correction whose
    target is absent is listed as it stands. Input entries are not modified.
    """
    by_id = {e["message_id"]: e for e in entries}

    def root_of(entry: dict[str, Any]) -> str:
        seen = set()
        current = entry
        while current.get("corrects_message_id") in by_id and current["message_id"] not in seen:
            seen.add(current["message_id"])
            current = by_id[current["corrects_message_id"]]
        return current["message_id"]

    final: dict[str, dict[str, Any]] = {}
    for entry in entries:  # arrival order: a later entry of a chain replaces an earlier one
        final[root_of(entry)] = entry
    out = []
    for entry in entries:
        if entry.get("corrects_message_id") in by_id:
            continue
        last = final.get(entry["message_id"], entry)
        if last is entry:
            out.append(entry)
            continue
        shown = dict(entry)
        for key in ("text", "attributes", "sender_kind", "sender_identity", "receiver_kind",
                    "receiver_identity", "priority"):
            if key in last:
                shown[key] = last[key]
        shown["resolved_from"] = last["message_id"]
        out.append(shown)
    return out


def is_close(score: float) -> bool:
    """A closeness score that counts: strictly above MIN_MATCH_SCORE (see above)."""
    return score > MIN_MATCH_SCORE


def rank_closeness(hits: list[tuple[float, str]], root_of=None,
                   exclude: str | None = None) -> list[tuple[float, str]]:
    """The closeness order both sides use (working_set's closest group, message_search).

    `hits` are (score, message_id) of messages with a vector, already above MIN_MATCH_SCORE.
    Resolved mode (`root_of` maps a message id to its correction chain's root): one hit per
    chain, carried by the root id, with the chain's highest score; `exclude` (the anchor
    message) then removes the anchor's whole chain. Sorted by score descending, ties by id
    ascending. The reference logger's retrieval.py implements the same rule over SQLite rows;
    agent-memory's local search applies it to its vector index.
    """
    if root_of is not None:
        best: dict[str, float] = {}
        for score, message_id in hits:
            root = root_of(message_id)
            if root not in best or score > best[root]:
                best[root] = score
        hits = [(score, root) for root, score in best.items()]
        if exclude is not None:
            exclude = root_of(exclude)
    ranked = [h for h in hits if h[1] != exclude]
    ranked.sort(key=lambda h: (-h[0], h[1]))
    return ranked


def info(section: str | None, service: str) -> dict[str, Any]:
    """The `info` answer (shape decided above): the table of contents, or one section.
    ValueError for a section that does not exist (INFO_SECTION_UNKNOWN)."""
    if section is None:
        return {"sections": list(INFO_SECTIONS)}
    if section not in INFO_SECTIONS:
        raise ValueError(f"no info section {section!r} (sections: {', '.join(INFO_SECTIONS)})")
    if section == "service":
        content: Any = {"name": service}
    elif section == "limits":
        content = {"default_block_size": DEFAULT_BLOCK_SIZE, "max_block_size": MAX_BLOCK_SIZE,
                   "default_page_size": DEFAULT_PAGE_SIZE, "max_page_size": MAX_PAGE_SIZE,
                   "default_recency_count": DEFAULT_RECENCY_COUNT,
                   "max_recency_count": MAX_RECENCY_COUNT,
                   "default_similarity_count": DEFAULT_SIMILARITY_COUNT,
                   "max_similarity_count": MAX_SIMILARITY_COUNT,
                   "default_graph_depth": DEFAULT_GRAPH_DEPTH, "max_graph_depth": MAX_GRAPH_DEPTH,
                   "preview_size": PREVIEW_SIZE, "max_import_items": MAX_IMPORT_ITEMS,
                   "default_mode": DEFAULT_MODE, "default_priority": DEFAULT_PRIORITY}
    elif section == "codes":
        content = sorted(value for name, value in globals().items()
                         if name.isupper() and isinstance(value, str) and value == name
                         and name not in ("DEFAULT_MODE",))
    else:
        content = {"kinds": list(RELATION_KINDS), "declarable": list(DECLARABLE_RELATION_KINDS)}
    return {"section": section, "content": content}


def embedding_text(text: str) -> str:
    """What of `text` is embedded: its first EMBED_TEXT_CHARS characters."""
    return text[:EMBED_TEXT_CHARS]


def embed_answer_size(text: str, dimension: int) -> int:
    """A generous estimate, in bytes, of one text's part of an embed answer: its JSON five
    times (the text, its tokens twice, with room) and a vector of JSON floats."""
    import json
    return 5 * len(json.dumps(text)) + 24 * dimension + 512


def embed_batches(texts: list[str], dimension: int,
                  most: int | None = None) -> list[tuple[int, int]]:
    """[start, end) ranges cutting `texts` (each already an embedding_text) into calls whose
    estimated answer stays under EMBED_ANSWER_BUDGET: at least one text per call, at most
    `most` when given."""
    ranges: list[tuple[int, int]] = []
    start, size = 0, 0
    for i, text in enumerate(texts):
        cost = embed_answer_size(text, dimension)
        full = most is not None and i - start >= most
        if i > start and (full or size + cost > EMBED_ANSWER_BUDGET):
            ranges.append((start, i))
            start, size = i, 0
        size += cost
    if start < len(texts):
        ranges.append((start, len(texts)))
    return ranges
