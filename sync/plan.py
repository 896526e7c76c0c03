"""The plan of one session's forward, decided apart from doing it: which pending file goes when,
as steps, given only what the files say (names, ids, what a message relates to, sizes, times)
and what the logger answered to the steps before. No file is read and no logger called here,
so the order, the barriers, the waits and how batches are cut are tested on their own
(tests/sync/test_plan.py); sync.engine reads the files and does each step.

The rules (each our decision, see docs/design.md, "Forwarding"):
- The order the store acknowledged the files (`acknowledged_order`): messages by sequence
  number (as the store reads them, so the logger numbers them alike), events by name, each
  event before the first message written behind it; a message back-dated (`--occurred-at`)
  to before a pending `open` (or `reopen`) written before it goes right after that event: it
  may never reach the logger ahead of the event that decides whose session it joins.
- Events are barriers: the batch before an event is sent first, then the event.
- A refused `open` is a barrier for everything written behind it (after it by name, or written
  after it): it waits while the open is pending, and follows it to quarantine once it is.
- An item refused less than the hold-off ago is not sent again yet (`held`).
- A message relating to or correcting a message that was refused, waits or is held, waits.
- Messages go in batches of at most `batch_items` items and `batch_bytes` bytes.
- A file that does not decode is set aside at once (never a crash loop).
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any, Callable, Generator, Iterable


class Entry(namedtuple("Entry", "name kind item_id event targets size written_at occurred_at "
                                "broken record shown",
                       defaults=(None, frozenset(), 0, None, None, None, None, None))):
    """One pending file as the plan sees it. `kind`: "message" or "event"; `event`: an event's
    kind (open, close, reopen, delete, mark, delete_session); `targets`: the ids a message
    relates to or corrects; `size`: its encoded bytes; `written_at` (a message) and
    `occurred_at` (an event): when each was written; `broken`: why it cannot be read (a
    reason dict), None when it decodes; `record`: the decoded record, for the one who acts;
    `shown`: its path, for answers."""

    __slots__ = ()


class Barrier(namedtuple("Barrier", "event_id occurred_at name relpath code statement final")):
    """A session's `open` the logger refused: what was written behind it waits (`final` False,
    the open still pending) or follows it to quarantine (`final` True)."""

    __slots__ = ()

    def covers(self, name: str, written_at: str | None) -> bool:
        """Was a file written behind this event (after it by name, or by its write time)?"""
        return name > self.name or (written_at is not None and written_at >= self.occurred_at)

    def reason(self) -> str:
        where = "set aside" if self.final else "it stays pending"
        return (f"its session's open event was refused by the logger ({self.code}: "
                f"{self.statement}; {where}: {self.relpath}); nothing written behind it may "
                "join a session the logger gave to another")


def barrier(entry: Entry, relpath: str, code: str | None, statement: str | None,
            final: bool) -> Barrier:
    return Barrier(entry.item_id, entry.occurred_at, entry.name, relpath, code or "REFUSED",
                   statement or "refused by the logger", final)


# --- the steps: what to do with which file ---------------------------------------------------
class SetAside(namedtuple("SetAside", "entry reason")):
    """Quarantine a file that cannot be read (`reason`: why)."""
    __slots__ = ()


class Hold(namedtuple("Hold", "entry barrier")):
    """A file written behind a refused open: it waits, or follows the open to quarantine."""
    __slots__ = ()


class HeldBack(namedtuple("HeldBack", "entry refusal")):
    """Refused lately (`refusal`: the last one): not sent again yet."""
    __slots__ = ()


class Wait(namedtuple("Wait", "entry waits_for")):
    """A message relating to or correcting messages not sent (`waits_for`, their ids)."""
    __slots__ = ()


class SendEvent(namedtuple("SendEvent", "entry")):
    """Send one event. The doer answers None when it went through (or was set aside), else
    Refusal for a refused `open`, which becomes a barrier."""
    __slots__ = ()


class SendBatch(namedtuple("SendBatch", "entries")):
    """Send these messages in one call. The doer answers the ids that did not go through
    (refused, or waiting for one that was)."""
    __slots__ = ()


class Refusal(namedtuple("Refusal", "relpath code statement quarantined")):
    """The logger refused an `open`: where the event lies now, and whether it was set aside."""
    __slots__ = ()


def session_steps(entries: Iterable[Entry], *, batch_items: int, batch_bytes: int,
                  prior: Barrier | None = None,
                  held: Callable[[str], dict[str, Any] | None] = lambda item_id: None
                  ) -> Generator[Any, Any, None]:
    """The steps of one session's forward, in order, for `entries` in the order they go
    (`acknowledged_order`). `prior`: an open quarantined before this run; `held(item_id)`: the
    last refusal of an item refused within the hold-off, else None. Send the doer's answer of
    SendEvent and SendBatch back into the generator (`send`); other steps answer None."""
    found = prior
    blocked: set[str] = set()  # refused, waiting or held message ids: their dependants wait
    batch: list[Entry] = []
    size = 0
    for entry in entries:
        if entry.kind == "event":
            if found is not None and found.covers(entry.name, None):
                yield Hold(entry, found)
                continue
            if batch:
                blocked |= set((yield SendBatch(batch)) or ())
                batch, size = [], 0
            if entry.broken is not None:
                yield SetAside(entry, entry.broken)
                continue
            refusal = held(entry.item_id)
            if refusal is not None:
                yield HeldBack(entry, refusal)
                if entry.event == "open":
                    found = barrier(entry, entry.shown or entry.name, refusal.get("code"),
                                    refusal.get("statement"), final=False)
                continue
            refused = yield SendEvent(entry)
            if refused is not None and entry.event == "open":
                found = barrier(entry, refused.relpath, refused.code, refused.statement,
                                final=refused.quarantined)
            continue
        if entry.broken is not None:
            yield SetAside(entry, entry.broken)
            continue
        if found is not None and found.covers(entry.name, entry.written_at):
            blocked.add(entry.item_id)
            yield Hold(entry, found)
            continue
        refusal = held(entry.item_id)
        if refusal is not None:
            blocked.add(entry.item_id)
            yield HeldBack(entry, refusal)
            continue
        waits_for = sorted(entry.targets & blocked)
        if waits_for:
            blocked.add(entry.item_id)
            yield Wait(entry, waits_for)
            continue
        if batch and (len(batch) >= batch_items or size + entry.size > batch_bytes):
            blocked |= set((yield SendBatch(batch)) or ())
            batch, size = [], 0
        batch.append(entry)
        size += entry.size
    if batch:
        yield SendBatch(batch)


SHUTTING = ("close", "delete_session")  # after these, only an open or reopen admits a message
OPENING = ("open", "reopen")


def acknowledged_order(names: list[str], events: dict[str, tuple[str | None, str | None]],
                       acknowledged: dict[str, tuple[int, str]]) -> list[str]:
    """`names` (a session's pending `.msg` and `.ses` files, in name order) in the order they
    go: the order the store acknowledged them.

    - Messages go in the order the session's store reads them: sequence number (its count of
      the session's messages when each was written), then name. A name alone is the order of
      writing only for messages dated now; messages sharing one `--occurred-at` (a replayed
      transcript) are named by that moment and a random uuid, and a back-dated one sorts
      before messages written earlier. So the logger numbers them as the store does.
    - Events keep their name order: each is named after every file its session held when it
      was written (outbox.names.moment_after), so their names are the order of writing.
    - An event goes before the first message written behind it: one named after it, or written
      (`written_at`) at or after the moment it names (its `occurred_at`), the test the refused
      open's barrier uses too. A message written behind a `close` or `delete_session` was
      written after the `open` or `reopen` that followed it (the store refuses any other), so
      it goes behind that one too.
    So nothing reaches the logger before what it depends on: a message after the open (or
    reopen) it was written into, after the messages it relates to or corrects (written before
    it, so numbered before it), and a forgetting event after the message it forgets.

    `events`: each pending event's (kind, occurred_at), (None, None) when it cannot be read;
    `acknowledged`: each readable message's (sequence_number, written_at) (sync.acknowledged);
    a message it lacks cannot be read, and goes first (it is set aside at once)."""
    event_names = [n for n in names if n in events]
    unread = [n for n in names if n not in events and n not in acknowledged]
    messages = sorted((n for n in names if n in acknowledged),
                      key=lambda n: (acknowledged[n][0], n))
    if not event_names:
        return unread + messages
    moments: list[str] = []  # each event's moment, never earlier than the one before it
    for name in event_names:
        occurred = events[name][1]
        moments.append(max(occurred or "", moments[-1] if moments else ""))
    from bisect import bisect_left, bisect_right
    ordered, sent = list(unread), 0
    for name in messages:
        behind = max(bisect_left(event_names, name),
                     bisect_right(moments, acknowledged[name][1]))
        if behind and events[event_names[behind - 1]][0] in SHUTTING:
            behind = next((i + 1 for i in range(behind, len(event_names))
                           if events[event_names[i]][0] in OPENING), behind)
        if behind > sent:
            ordered.extend(event_names[sent:behind])
            sent = behind
        ordered.append(name)
    return ordered + event_names[sent:]
