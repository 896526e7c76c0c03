"""A window of a session's journal (`read`: from a sequence number, a block's worth) that costs
what it answers: the ledger (outbox.ledger) says which messages the window holds, in arrival
order, with the session's deletions, marks and correction chains applied; only those files (and
the final version of each chain shown) are opened.

It answers exactly what outbox.views.journal_window answers over every message of the session
(the rule both implement: soft-deleted and marked messages hidden unless asked for, hard-deleted
ones gone, resolved mode showing each correction chain once, at its root's place, with the
wording of its last version, a block never splitting messages that share a number), and falls
back on it when the ledger cannot be used.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Container

from agent_memory.outbox import contract, names, views
from agent_memory.outbox.ledger import Damaged, LedgerUnavailable
from agent_memory.outbox.store import Store, StoredFile, StoredMessage, Unreadable

# The fields a correction chain's last version lends its root (outbox.contract.resolve_corrections).
_RESOLVED_KEYS = ("text", "attributes", "sender_kind", "sender_identity", "receiver_kind",
                  "receiver_identity", "priority")


class _Plan:
    """What the ledger says the window holds: rows (sequence number, name, area), whether more
    follows, each shown root's last version, the deletions, the unreadable files."""

    def __init__(self) -> None:
        self.block: list[tuple[int, str, str]] = []
        self.more = False
        self.finals: dict[str, tuple[int, str, str]] = {}
        self.forgotten = views.Forgotten()
        self.unreadable: list[tuple[str, str, str]] = []
        self.revision = ""  # the session's (outbox.ledger.Session.revision) as planned


def journal_window(store: Store, session_id: str, *, start: int, block_size: int, mode: str,
                   show_deleted: bool = False) -> tuple[dict[str, Any], list[Unreadable]]:
    """({"messages", "more", "continuation"}, the session's unreadable message files)."""
    found = _from_ledger(store, session_id, mode, lambda ledger: _plan(
        ledger.session(session_id), start, block_size, mode, show_deleted))
    if found is not None:
        return found[1]
    messages, unreadable = store.messages(session_id)
    window = views.journal_window(messages, start=start, block_size=block_size, mode=mode,
                                  forgotten=views.forgotten(store.events(session_id)[0]),
                                  show_deleted=show_deleted)
    return window, unreadable


def since(store: Store, session_id: str, start: int, known: str | None = None,
          held: Container[str] = ()) -> tuple[str, list[dict[str, Any]]] | None:
    """(the session's revision, its messages numbered `start` or later as a full-mode read
    lists them, but those whose ids are `held`), both from one transaction of the ledger, so
    they agree: for a reader keeping a copy of the session (api.runner.since); no message
    when the revision is still `known` (the reader's copy is the answer). None when the
    ledger cannot say (the caller reads the session whole)."""

    def read(ledger) -> _Plan:
        session = ledger.session(session_id)
        if session.revision == known:
            unchanged = _Plan()
            unchanged.revision = known
            return unchanged
        plan = _plan(session, start, 1 << 62, "full", False)
        plan.block = [row for row in plan.block if row[1][names.ITEM_ID] not in held]
        return plan

    found = _from_ledger(store, session_id, "full", read)
    if found is None:
        return None
    plan, (window, _unreadable) = found
    return plan.revision, window["messages"]


def _from_ledger(store: Store, session_id: str, mode: str, read: Callable[[Any], _Plan]
                 ) -> tuple[_Plan, tuple[dict[str, Any], list[Unreadable]]] | None:
    """The plan `read(ledger)` makes, and the answer of `mode` its files give; None when the
    ledger cannot say (one found damaged is removed: rebuilt at its next use). Planned once
    more when a file it had as unreadable reads now."""
    for _attempt in range(2):
        try:
            plan = store.ledger.query(read)
            return plan, _answer(store, session_id, plan, mode)
        except _Mended:
            continue  # a file found readable again: the session was listed anew
        except Damaged:
            store.ledger.remove_files()  # it contradicted a file: rebuilt at its next use
            return None
        except LedgerUnavailable:
            return None
    return None


class _Mended(Exception):
    """An unreadable file reads now (its mode was mended): the ledger lists it again."""


def _plan(session, start: int, block_size: int, mode: str, show_deleted: bool) -> _Plan:
    plan = _Plan()
    plan.revision = session.revision
    plan.forgotten = views.Forgotten(json.loads(body) for body in session.forgetting_bodies())
    purged, hidden = plan.forgotten.purged, plan.forgotten.hidden

    def visible(message_id: str) -> bool:
        return message_id not in purged and (show_deleted or message_id not in hidden)

    present: dict[str, bool] = {}

    def shown_elsewhere(target: str) -> bool:  # a correction of a message the journal shows
        if target not in present:
            present[target] = visible(target) and session.message(target) is not None
        return present[target]

    for seq, name, area, corrects in session.messages_from(start):
        message_id = name[names.ITEM_ID]
        if not visible(message_id):
            continue
        if mode == "resolved" and corrects and shown_elsewhere(corrects):
            continue
        if len(plan.block) < block_size or (plan.block and seq == plan.block[-1][0]):
            plan.block.append((seq, name, area))
            continue
        plan.more = True
        break
    if mode == "resolved":
        for seq, name, area in plan.block:
            final = _last_version(session, (seq, name, area), visible)
            if final[1] != name:
                plan.finals[name[names.ITEM_ID]] = final
    plan.unreadable = session.unreadable(message=True)
    return plan


def _last_version(session, root: tuple[int, str, str], visible) -> tuple[int, str, str]:
    """The chain's version that arrived last: the root and every visible message correcting a
    member of it, as outbox.contract.resolve_corrections groups them."""
    last = root
    frontier, seen = [root[1][names.ITEM_ID]], {root[1][names.ITEM_ID]}
    while frontier:
        current = frontier.pop()
        for seq, name, area, _corrects in session.corrections_of(current):
            message_id = name[names.ITEM_ID]
            if message_id in seen or not visible(message_id):
                continue
            seen.add(message_id)
            frontier.append(message_id)
            if (seq, name) > (last[0], last[1]):
                last = (seq, name, area)
    return last


def _load(store: Store, session_id: str, row: tuple[int, str, str]) -> StoredMessage | None:
    """The message a row names, read where it lies now (a concurrent syncer may have moved it);
    None when it is gone (purged meanwhile). Damaged when the file says otherwise than the
    ledger."""
    seq, name, area = row
    for _attempt in range(3):
        file = StoredFile(session_id, area, name)
        try:
            record = store.load(file, "message")
        except FileNotFoundError:
            area = store.area_of(session_id, name)
            if area is None:
                return None
            continue
        except (OSError, ValueError) as exc:
            raise Damaged(f"{file.relpath} does not read as the ledger says: {exc}") from None
        if record.message_id != name[names.ITEM_ID] or record.session_id != session_id \
                or record.sequence_number != seq:
            raise Damaged(f"{file.relpath} does not hold what the ledger says")
        return StoredMessage(file, record)
    return None


def _answer(store: Store, session_id: str, plan: _Plan,
            mode: str) -> tuple[dict[str, Any], list[Unreadable]]:
    unreadable = []
    for name, area, reason in plan.unreadable:
        file = StoredFile(session_id, area, name)
        try:
            store.load(file, "message")
        except FileNotFoundError:
            continue
        except (OSError, ValueError):
            unreadable.append(Unreadable(file, reason))
            continue
        store.ledger.relist(session_id)
        raise _Mended
    messages = []
    for row in plan.block:
        stored = _load(store, session_id, row)
        if stored is None:
            continue
        entry = plan.forgotten.apply([views.message_entry(stored)])[0]
        final = plan.finals.get(stored.record.message_id)
        if final is not None:
            last = _load(store, session_id, final)
            if last is not None:
                shown = views.message_entry(last)
                entry = dict(entry)
                for key in _RESOLVED_KEYS:
                    entry[key] = shown[key]
                entry["resolved_from"] = last.record.message_id
        messages.append(entry)
    return {"messages": messages, "more": plan.more,
            "continuation": contract.encode_continuation(plan.block[-1][0] + 1)
            if plan.more and plan.block else None}, unreadable
