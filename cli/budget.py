"""Every answer fits a size budget: a read command's envelope shrunk until what is printed (or a
tool's text) is at most `limit` characters. Our callers are agents whose harnesses refuse or
silently truncate long output, and a truncated JSON object is no answer at all.

How an answer shrinks, in this order (nothing is ever dropped silently):
1. its item list keeps a prefix, with `more: true` and a resumption the command itself accepts
   (a block command is asked again for exactly that many items, so its own `continuation`
   resumes at the first item left out, in every store mode; a page gets `next_offset`);
2. then, with one item left, its longest strings are shown as head and tail, each with a
   sibling `<key>_cut`: {"length": N, "shown": [[0, a], [b, N]]} (character ranges of the
   whole; an object kept verbatim, such as `attributes`, is cut as its compact JSON text).

Pure functions: no fleet, no store. Only the read commands import it (cli.dispatch), so the
write path never pays for it.
"""

from __future__ import annotations

import copy
import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

DEFAULT_CLI = 25_000  # under Claude Code's 30,000-character cut of shell output, with room
DEFAULT_MCP = 40_000  # about 10k tokens: well under the 25,000-token refusal of a tool result
MINIMUM = 1_000  # below this not even one message's ids and dates fit
KEEP_WHOLE = 64  # strings this short are never cut: ids, dates, kinds, continuations
RENDERED = ("attributes", "metadata")  # objects kept verbatim: cut as their JSON text
_CONTINUATION_ROOM = 160  # a continuation's room while the kept prefix is chosen


class TooLarge(Exception):
    """Even one item with every string cut does not fit the limit."""


def marker(gap: int) -> str:
    """What stands between a cut string's head and tail."""
    return f"[…{gap} characters cut…]"


# --- what each command answers, and how it continues -------------------------------------------
# command -> (the item lists in `data`, in order; how a kept prefix resumes)
#   block:   asked again with --block-size = the items kept; its `continuation` resumes
#   offset:  `next_offset` = --page-offset + the items kept (search)
#   page:    `next_page_offset` and `next_page_size` whose product is the first item left out
#            (read --preview: its --page-offset is a page index)
#   listed:  no paging (working-set): the ids of the items left out, in `left_out`
#   none:    a single item (get, info): only strings are cut
LISTS: dict[str, tuple[tuple[str, ...], str]] = {
    "read": (("messages",), "block"),
    "preview": (("entries",), "page"),
    "sessions": (("sessions",), "block"),
    "relations": (("relations",), "block"),
    "path": (("path",), "block"),
    "leaves": (("nodes",), "block"),
    "graph": (("nodes",), "block"),
    "search": (("matches",), "offset"),
    "working-set": (("recent", "closest"), "listed"),
    "get": ((), "none"),
    "info": ((), "none"),
}


def kind_of(args) -> str:
    return "preview" if args.command == "read" and getattr(args, "preview", False) \
        else args.command


def fit(envelope: dict[str, Any], limit: int, measure: Callable[[dict], int], args,
        rerun: Callable[[dict], dict]) -> dict[str, Any]:
    """`envelope` shrunk until measure(envelope) <= limit (0: no limit). `rerun(changes)` runs
    the command again with some options changed (a block command's --block-size)."""
    if not limit or not envelope.get("success") or measure(envelope) <= limit:
        return envelope
    lists, resume = LISTS[kind_of(args)]
    for _ in range(12):  # each round keeps fewer items; a rerun may answer others meanwhile
        items = _items(envelope["data"], lists)
        if len(items) <= 1:
            break
        kept = _longest_prefix(envelope, lists, resume, args, limit, measure)
        envelope = _resumed(envelope, lists, resume, kept, args, rerun)
        if not envelope.get("success") or measure(envelope) <= limit:
            return envelope
        if len(_items(envelope["data"], lists)) > kept:  # more than a block holds: no
            break  # way on inside them (`sessions` adds those opened here after its last)
    return cut_strings(envelope, limit, measure)


def _items(data: Any, lists: tuple[str, ...]) -> list[Any]:
    if not isinstance(data, dict):
        return []
    return [item for key in lists for item in (data.get(key) or [])]


def _truncated(data: dict[str, Any], lists: tuple[str, ...], kept: int) -> dict[str, Any]:
    """`data` with only the first `kept` items of its lists (taken in order)."""
    out = dict(data)
    for key in lists:
        shown = list(data.get(key) or [])[:max(kept, 0)]
        kept -= len(shown)
        out[key] = shown
    if "nodes" in lists and isinstance(data.get("relations"), list):  # graph: its page's
        ids = {n.get("message_id") for n in out["nodes"] if isinstance(n, dict)}
        out["relations"] = [r for r in data["relations"]
                            if not isinstance(r, dict) or r.get("from_message_id") in ids]
    return out


def _longest_prefix(envelope: dict[str, Any], lists: tuple[str, ...], resume: str, args,
                    limit: int, measure) -> int:
    """The most items (at least 1, fewer than all) whose answer fits with its way on (a block
    command's continuation is not known before it is asked again: room is kept for one)."""
    data = envelope["data"]
    items = _items(data, lists)
    sizes = [len(json.dumps(item, ensure_ascii=False, separators=(",", ":"))) for item in items]
    high, total = 0, 0
    for size in sizes[:-1]:  # a compact item is never longer than it renders: an upper bound
        total += size + 1
        if total > limit:
            break
        high += 1
    low, high = 1, max(high, 1)
    room = {"more": True, "continuation": "x" * _CONTINUATION_ROOM}
    while low < high:
        middle = (low + high + 1) // 2
        if resume == "block":
            trial = {**envelope, "data": {**_truncated(data, lists, middle), **room}}
        else:
            trial = _resumed(envelope, lists, resume, middle, args, None)
        if measure(trial) <= limit:
            low = middle
        else:
            high = middle - 1
    return low


def _resumed(envelope: dict[str, Any], lists: tuple[str, ...], resume: str, kept: int, args,
             rerun) -> dict[str, Any]:
    """The answer of the first `kept` items, resuming exactly at the first item left out."""
    data = envelope["data"]
    if resume == "block":
        return rerun({"block_size": kept})
    shown = _truncated(data, lists, kept)
    if resume == "offset":
        shown.update(more=True, next_offset=(args.page_offset or 0) + kept)
    elif resume == "page":
        from agent_memory.outbox.contract import DEFAULT_PAGE_SIZE
        page_size = args.page_size or DEFAULT_PAGE_SIZE
        first = (args.page_offset or 0) * page_size + kept
        size = next(s for s in range(min(page_size, first), 0, -1) if first % s == 0)
        shown.update(more=True, next_page_offset=first // size, next_page_size=size)
    elif resume == "listed":  # left out now, before those left out in an earlier round
        before = data.get("left_out") or {}
        left = {key: [_id(item) for item in (data.get(key) or [])[len(shown[key]):]] +
                list(before.get(key, [])) for key in lists}
        shown.update(more=True, left_out={k: v for k, v in left.items() if v})
    return {**envelope, "data": shown}


def _id(item: Any) -> Any:
    """An item's message id (a working-set item holds its message)."""
    if isinstance(item, dict):
        inner = item.get("message")
        return (inner if isinstance(inner, dict) else item).get("message_id")
    return item


# --- long strings as head and tail --------------------------------------------------------------
class _Slot:
    """One string that may be cut: where it stands, its whole text, and how much is shown."""

    def __init__(self, container: dict, key: str, whole: str, offset: int, total: int) -> None:
        self.container, self.key, self.whole = container, key, whole
        self.offset, self.total = offset, total  # a text range (get) counts from its offset
        self.shown = len(whole)

    def show(self, count: int) -> None:
        whole, count = self.whole, max(0, min(count, len(self.whole)))
        self.shown = count
        head = (count + 1) // 2
        tail = count - head
        end = len(whole)
        self.container[self.key] = whole[:head] + marker(end - count) + whole[end - tail:]
        ranges = [[self.offset, self.offset + head]] if head else []
        if tail:
            ranges.append([self.offset + end - tail, self.offset + end])
        cut = {"length": self.total, "shown": ranges}
        if self.container.get(self.key + "_cut", {}).get("json"):
            cut["json"] = True
        self.container[self.key + "_cut"] = cut


def _slots(node: Any, found: list[_Slot]) -> None:
    if isinstance(node, list):
        for item in node:
            if isinstance(item, (dict, list)):
                _slots(item, found)
        return
    if not isinstance(node, dict):
        return
    for key in list(node):
        value = node[key]
        if key in RENDERED and isinstance(value, (dict, list)) and value:
            text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
            if len(text) > KEEP_WHOLE:
                node[key] = text
                node[key + "_cut"] = {"json": True}
                found.append(_Slot(node, key, text, 0, len(text)))
        elif isinstance(value, str) and len(value) > KEEP_WHOLE:
            span = node.get("text_range") if key == "text" else None
            if isinstance(span, dict):
                found.append(_Slot(node, key, value, span.get("offset", 0),
                                   span.get("total_length", len(value))))
            else:
                found.append(_Slot(node, key, value, 0, len(value)))
        elif isinstance(value, (dict, list)):
            _slots(value, found)


def _chars_for(slot: _Slot, rendered: int) -> int:
    """How many characters of the slot's shown text make `rendered` characters once escaped
    (a quote or a line break renders as two, a control character as six)."""
    head = (slot.shown + 1) // 2
    shown = slot.whole[:head] + slot.whole[len(slot.whole) - (slot.shown - head):]
    width = (len(json.dumps(shown, ensure_ascii=False)) - 2) / max(len(shown), 1)
    return int(rendered / max(width, 1.0)) + 1


def cut_strings(envelope: dict[str, Any], limit: int, measure) -> dict[str, Any]:
    """`envelope` with its longest strings shown as head and tail until it fits; TooLarge when
    even nothing of each is not enough."""
    envelope = copy.deepcopy(envelope)
    slots: list[_Slot] = []
    _slots(envelope.get("data"), slots)
    over = measure(envelope) - limit
    while over > 0:
        open_slots = [s for s in slots if s.shown > 0]
        if not open_slots:
            raise TooLarge(f"the answer needs more than {limit} characters even with its "
                           f"texts cut")
        slot = max(open_slots, key=lambda s: s.shown)
        slot.show(slot.shown - _chars_for(slot, over + 64))
        over = measure(envelope) - limit
    for slot in slots:  # an object never cut is itself again
        if slot.shown == len(slot.whole) and slot.container.get(slot.key + "_cut") == \
                {"json": True}:
            slot.container[slot.key] = json.loads(slot.whole)
            del slot.container[slot.key + "_cut"]
    return envelope
