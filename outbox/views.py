"""The store's contents in the logger's data shape (see outbox/contract.py).

Offline reads must look like the logger's answers so an agent's code does not care which side
answered. Pure functions over records; no I/O here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

from agent_memory.outbox import contract
from agent_memory.outbox.store import StoredFile, StoredMessage

if TYPE_CHECKING:
    from agent_memory.outbox import records


def message_entry(stored: StoredMessage) -> dict[str, Any]:
    """MESSAGE_ENTRY of a stored message, plus `outbox`: pending | imported | quarantined."""
    r = stored.record
    return {
        "message_id": r.message_id,
        "session_id": r.session_id,
        "sequence_number": r.sequence_number,
        "text": r.text,
        "sender_kind": r.sender_kind,
        "sender_identity": r.sender_identity,
        "receiver_kind": r.receiver_kind,
        "receiver_identity": r.receiver_identity,
        "priority": contract.DEFAULT_PRIORITY if r.priority is None else r.priority,
        "relations": [{"to_message_id": x.to_message_id, "kind": x.kind} for x in r.relations],
        "corrects_message_id": r.corrects_message_id,
        "attributes": r.attributes or {},
        "occurred_at": r.occurred_at,
        "received_at": r.written_at,
        "soft_deleted": False,
        "outbox": stored.file.area,
    }


def journal_window(messages: Iterable[StoredMessage], *, start: int, block_size: int,
                   mode: str, forgotten: Forgotten | None = None,
                   show_deleted: bool = False) -> dict[str, Any]:
    """A `messages_read` window: entries with sequence_number >= start, in arrival order.

    Concurrent writers may give two messages one sequence number; a block never splits such a
    group, so following continuations never skips a message.
    """
    ordered = sorted(messages, key=lambda m: (m.record.sequence_number, m.file.name))
    entries = (forgotten or Forgotten()).apply(message_entry(m) for m in ordered)
    return window_of_entries(entries, start=start, block_size=block_size, mode=mode,
                             show_deleted=show_deleted)


def window_of_entries(entries: list[dict[str, Any]], *, start: int, block_size: int, mode: str,
                      show_deleted: bool = False) -> dict[str, Any]:
    """journal_window over MESSAGE_ENTRY dicts already in arrival order (a merge of the
    logger's entries with the pending ones, say)."""
    if not show_deleted:
        entries = [e for e in entries if not e["soft_deleted"]]
    if mode == "resolved":
        entries = contract.resolve_corrections(entries)
    selected = [e for e in entries if e["sequence_number"] >= start]
    block = selected[:block_size]
    if block and len(selected) > len(block):
        last = block[-1]["sequence_number"]
        block.extend(e for e in selected[len(block):] if e["sequence_number"] == last)
    more = len(selected) > len(block)
    return {
        "messages": block,
        "more": more,
        "continuation": contract.encode_continuation(block[-1]["sequence_number"] + 1) if more else None,
    }


def session_entry(session_id: str,
                  events: list[tuple[StoredFile, records.SessionEvent]]) -> dict[str, Any]:
    """SESSION_ENTRY from the events the store holds; attributes unknown locally are None.

    A session opened in the logger and written here only while the logger was down has messages
    but no local `open` event: it is still listed, with what is known.
    """
    entry: dict[str, Any] = {"session_id": session_id, "project_id": None, "lifecycle": None,
                             "dialogue_kind": None, "participants": None, "created_at": None,
                             "title": None, "metadata": None}
    for _file, event in events:
        if event.event == "open" and entry["created_at"] is None:
            entry.update(project_id=event.project_id, participants=event.participants,
                         dialogue_kind=contract.dialogue_kind_label(event.dialogue_kind)
                         if event.dialogue_kind else None,
                         created_at=event.occurred_at, title=event.title, metadata=event.metadata)
        if event.event in LIFECYCLE_EVENTS:
            entry["lifecycle"] = LIFECYCLE_EVENTS[event.event]
    return entry


# What each session event makes of the session's lifecycle (forgetting events change nothing;
# a deleted session is unknown until it is opened again).
LIFECYCLE_EVENTS = {"open": "open", "reopen": "open", "close": "closed", "delete_session": None}


def lifecycle(events: list[tuple[StoredFile, records.SessionEvent]]) -> str | None:
    """The session's state by its last lifecycle event; None when the store has none (or the
    session was deleted since)."""
    state = None
    for _file, event in events:
        if event.event in LIFECYCLE_EVENTS:
            state = LIFECYCLE_EVENTS[event.event]
    return state


class Forgotten:
    """What the session's forgetting events say, folded in order: `hidden` = soft-deleted or
    marked (one flag, outbox.contract), `purged` = hard-deleted. `events` are session event
    records (or anything with their attributes), in time order."""

    def __init__(self, events: Iterable[Any] = ()) -> None:
        self.hidden: set[str] = set()
        self.purged: set[str] = set()
        for event in events:
            if isinstance(event, dict):  # the write path's cheap read (Store.event_dicts)
                event = _Attributes(event)
            kind = event.event
            if kind == "delete" and event.mode == "soft":
                self.hidden.add(event.message_id)
            elif kind == "delete":
                self.purged.add(event.message_id)
                self.hidden.discard(event.message_id)
            elif kind == "mark":
                ids = set(event.message_ids or ()) - self.purged
                if event.marked:
                    self.hidden |= ids
                else:
                    self.hidden -= ids

    def __bool__(self) -> bool:
        return bool(self.hidden or self.purged)

    def deleted(self, message_id: str) -> bool:
        return message_id in self.hidden or message_id in self.purged

    def apply(self, entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """Entries without the purged ones, each with its `soft_deleted` flag as known here."""
        out = []
        for entry in entries:
            if entry["message_id"] in self.purged:
                continue
            if entry["message_id"] in self.hidden and not entry.get("soft_deleted"):
                entry = {**entry, "soft_deleted": True}
            out.append(entry)
        return out


class _Attributes:
    def __init__(self, values: dict[str, Any]) -> None:
        self._values = values

    def __getattr__(self, name: str) -> Any:
        return self._values.get(name)


def forgotten(events: list[tuple[StoredFile, records.SessionEvent]]) -> Forgotten:
    return Forgotten(event for _file, event in events)


def deleted_session(events: list[tuple[StoredFile, records.SessionEvent]]) -> bool:
    """Was the session deleted here, and not opened again since?"""
    kinds = [event.event for _file, event in events if event.event in LIFECYCLE_EVENTS]
    return bool(kinds) and kinds[-1] == "delete_session"


def filter_sessions(entries: list[dict[str, Any]], *, project_id: str | None,
                    lifecycle_state: str | None, participant: str | None,
                    dialogue_kind: str | None) -> list[dict[str, Any]]:
    """The `sessions_list` axes, conjunctive; an omitted axis constrains nothing."""
    out = []
    for e in entries:
        if project_id is not None and e["project_id"] != project_id:
            continue
        if lifecycle_state is not None and e["lifecycle"] != lifecycle_state:
            continue
        if participant is not None and participant not in (e["participants"] or []):
            continue
        if dialogue_kind is not None and e["dialogue_kind"] != dialogue_kind:
            continue
        out.append(e)
    return out


def page(entries: list[dict[str, Any]], *, offset: int, block_size: int) -> dict[str, Any]:
    """A block of a list with the continuation of the next block."""
    block = entries[offset:offset + block_size]
    more = offset + len(block) < len(entries)
    return {"more": more,
            "continuation": contract.encode_continuation(offset + len(block)) if more else None,
            "block": block}
