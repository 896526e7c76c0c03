"""Typed results: the fields of the commands' JSON answers as attributes. Each keeps the whole
answer in `data` (a dict), so a field a newer release or an option adds is there too."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any


def _build(cls, values: dict[str, Any], **extra: Any):
    """An instance of `cls` from an answer's dict: its known fields, the rest left in `data`."""
    known = _KNOWN.get(cls)
    if known is None:
        known = _KNOWN[cls] = tuple(f.name for f in fields(cls) if f.name not in ("data",
                                                                                  "store"))
    return cls(**{name: values.get(name) for name in known}, data=values, **extra)


_KNOWN: dict[type, tuple[str, ...]] = {}  # each result type's fields an answer fills


@dataclass(frozen=True)
class Answer:
    """Any command's answer: which side answered (`store`: logger, file or both) and its
    `data` as the command printed it."""

    store: str
    data: Any

    def __getitem__(self, key: str) -> Any:
        return self.data[key]


@dataclass(frozen=True)
class WriteResult:
    """`write`: the logger's append facts; whether the logger has it (`forwarded`, with a
    `reason` when not) and, answered by the file store, where it waits (`outbox`, and `file`
    in `data`)."""

    message_id: str
    sequence_number: int | None
    occurred_at: str | None
    text_head: str | None
    text_tail: str | None
    audience: dict[str, str] | None
    outbox: str | None
    forwarded: bool
    reason: str | None
    store: str = "file"
    data: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_answer(cls, store: str, data: dict[str, Any]) -> "WriteResult":
        """`forwarded` is true when the logger answered (its answer does not say it)."""
        result = _build(cls, data, store=store)
        if result.forwarded is None:
            object.__setattr__(result, "forwarded", store == "logger")
        return result


@dataclass(frozen=True)
class Message:
    """One message entry (read, get, the navigation reads): the logger's entry fields."""

    message_id: str
    session_id: str | None
    sequence_number: int | None
    text: str | None
    sender_kind: str | None
    sender_identity: str | None
    receiver_kind: str | None
    receiver_identity: str | None
    priority: int | None
    relations: list[dict[str, str]] | None
    corrects_message_id: str | None
    attributes: dict[str, Any] | None
    occurred_at: str | None
    received_at: str | None
    soft_deleted: bool | None
    resolved_from: str | None = None
    outbox: str | None = None
    level: int | None = None  # a graph node's level below its anchor
    store: str = "file"
    data: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_entry(cls, store: str, entry: dict[str, Any]) -> "Message":
        return _build(cls, entry, store=store)


@dataclass(frozen=True)
class MessagePage:
    """`read`: a window of a session's messages in arrival order; `continuation` resumes it
    while `more` is true."""

    messages: list[Message]
    more: bool
    continuation: str | None
    store: str = "file"
    data: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_answer(cls, store: str, data: dict[str, Any], key: str = "messages"
                    ) -> "MessagePage":
        """`key` names the answer's list: messages (read), path (path), nodes (graph)."""
        return cls([Message.from_entry(store, e) for e in data.get(key) or []],
                   bool(data.get("more")), data.get("continuation"), store, data)


@dataclass(frozen=True)
class Match:
    """One message found (search, working set): the message, its `score` (similarity, or
    BM25 where no vector is at hand), its session and project, or its `criterion` (working
    set: recency or similarity)."""

    message: Message
    score: float | None
    session_id: str | None
    project_id: str | None
    criterion: str | None
    data: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_entry(cls, store: str, entry: dict[str, Any]) -> "Match":
        return cls(Message.from_entry(store, entry.get("message") or {}), entry.get("score"),
                   entry.get("session_id"), entry.get("project_id"), entry.get("criterion"),
                   entry)


@dataclass(frozen=True)
class SearchPage:
    """`search`: `matches` best first; `next_offset` is the next page while `more`."""

    matches: list[Match]
    total: int | None
    more: bool
    next_offset: int | None
    store: str = "file"
    data: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_answer(cls, store: str, data: dict[str, Any]) -> "SearchPage":
        return cls([Match.from_entry(store, m) for m in data.get("matches") or []],
                   data.get("total"), bool(data.get("more")), data.get("next_offset"), store,
                   data)


@dataclass(frozen=True)
class WorkingSet:
    """`working-set`: the session's `recent` messages (newest first) and those `closest` to
    the anchor."""

    recent: list[Match]
    closest: list[Match]
    store: str = "file"
    data: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_answer(cls, store: str, data: dict[str, Any]) -> "WorkingSet":
        return cls([Match.from_entry(store, m) for m in data.get("recent") or []],
                   [Match.from_entry(store, m) for m in data.get("closest") or []], store, data)


@dataclass(frozen=True)
class SessionEntry:
    """One session as `sessions` lists it."""

    session_id: str
    project_id: str | None
    lifecycle: str | None
    dialogue_kind: str | None
    participants: list[str] | None
    created_at: str | None
    title: str | None
    metadata: dict[str, Any] | None
    data: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class SessionPage:
    """`sessions`: a page of sessions; `continuation` resumes it while `more` is true."""

    sessions: list[SessionEntry]
    more: bool
    continuation: str | None
    store: str = "file"
    data: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_answer(cls, store: str, data: dict[str, Any]) -> "SessionPage":
        return cls([_build(SessionEntry, s) for s in data.get("sessions") or []],
                   bool(data.get("more")), data.get("continuation"), store, data)


# --- the other commands: each its answer's fields ---------------------------------------------
def _typed(cls):
    """A result dataclass whose fields are its answer's top-level fields (None when absent),
    plus `store` and the whole answer in `data`; `from_answer` builds it."""
    cls = dataclass(frozen=True)(cls)

    def from_answer(kind, store: str, data: dict[str, Any]):
        values = data if isinstance(data, dict) else {}
        return _build(kind, values, store=store)
    cls.from_answer = classmethod(from_answer)
    return cls


@_typed
class SessionState:
    """`session open|close|reopen`: the session and its lifecycle; whether the logger has the
    event (`forwarded`, a `reason` when not), `pending` while it waits in the outbox."""

    session_id: str | None
    lifecycle: str | None
    pending: bool | None
    forwarded: bool | None
    reason: str | None
    store: str = "file"
    data: dict[str, Any] = field(default_factory=dict, repr=False)


@_typed
class Forgotten:
    """`delete` and `session delete`: what was deleted (`message_id` and `mode`, or
    `session_id`), `purged` (its text is gone from every file here), `pending` while the
    event waits for the logger."""

    message_id: str | None
    session_id: str | None
    mode: str | None
    deleted: bool | None
    purged: bool | None
    pending: bool | None
    forwarded: bool | None
    reason: str | None
    store: str = "file"
    data: dict[str, Any] = field(default_factory=dict, repr=False)


@_typed
class Marked:
    """`mark`: the messages and the state they are in now (`marked`)."""

    message_ids: list[str] | None
    marked: bool | None
    pending: bool | None
    forwarded: bool | None
    reason: str | None
    store: str = "file"
    data: dict[str, Any] = field(default_factory=dict, repr=False)


@_typed
class RelationPage:
    """`relations`: each relation (`from_message_id`, `to_message_id`, `kind`); `continuation`
    resumes while `more`."""

    session_id: str | None
    relations: list[dict[str, str]] | None
    more: bool | None
    continuation: str | None
    store: str = "file"
    data: dict[str, Any] = field(default_factory=dict, repr=False)


@_typed
class LeafPage:
    """`leaves`: the leaves and branching points (`nodes`: message_id, role, continuations)."""

    session_id: str | None
    nodes: list[dict[str, Any]] | None
    more: bool | None
    continuation: str | None
    store: str = "file"
    data: dict[str, Any] = field(default_factory=dict, repr=False)


@_typed
class PreviewPage:
    """`read --preview`: `entries` (each with its text's start, `preview`), page and totals."""

    entries: list[dict[str, Any]] | None
    total_messages: int | None
    total_pages: int | None
    page_offset: int | None
    page_size: int | None
    store: str = "file"
    data: dict[str, Any] = field(default_factory=dict, repr=False)


@_typed
class Info:
    """`info`: the table of contents (`sections`), or one `section` and its `content`."""

    sections: list[str] | None
    section: str | None
    content: Any
    store: str = "file"
    data: dict[str, Any] = field(default_factory=dict, repr=False)


@_typed
class Status:
    """`status`: what waits and what is set aside (`totals`, per session in `sessions`), the
    watcher and the agent, credentials and, with probe, whether the fleet answers."""

    totals: dict[str, Any] | None
    sessions: list[dict[str, Any]] | None
    watcher: dict[str, Any] | None
    agent: dict[str, Any] | None
    strays: list[dict[str, str]] | None
    store: str = "file"
    data: dict[str, Any] = field(default_factory=dict, repr=False)


@_typed
class SyncReport:
    """`sync`: per session what was imported, refused, waits or was quarantined (`sessions`),
    the `totals`, and `warnings`; `skipped` when another process forwards the store."""

    sessions: list[dict[str, Any]] | None
    totals: dict[str, int] | None
    warnings: list[str] | None
    skipped: bool | None
    store: str = "file"
    data: dict[str, Any] = field(default_factory=dict, repr=False)
