"""`relations`, `path`, `leaves`, `graph`, `read --preview` and `info`: the logger's structural
reads, offline-first.

`--store auto`: the logger answers when it is reachable; when the outbox still holds something
of what is asked (a pending message, a pending delete or mark), the answer is computed here over
the logger's entries merged with the pending ones (`"store": "both"`), with the same code the
reference logger runs (outbox.navigation), so it has the logger's shape and order. Unreachable,
the file store answers alone (`"store": "file"`). A refusal (an unknown message, a continuation
of another read) is the logger's code on either side.
"""

from __future__ import annotations

from typing import Any

from agent_memory.cli import inputs
from agent_memory.cli.auto_reads import (ask_logger, deleted_pending, merged_entries,
                                        mergeable_store, outbox_knows, refuse_if_deleted_here,
                                        refuse_unknown)
from agent_memory.cli.context import Context
from agent_memory.cli.errors import RefusedError, from_refusal
from agent_memory.outbox import contract, navigation, views
from agent_memory.outbox.store import PENDING


# --- what each read asks, and how it is answered from entries ---------------------------------
class _Read:
    """One structural read: the logger command and its parameters, and the same answer
    computed from a session's entries."""

    def __init__(self, args) -> None:
        self.command = args.command
        self.session_id = inputs.session_id(args.session_id)
        self.block_size = inputs.block_size(args.block_size)
        self.continuation = args.continuation
        params: dict[str, Any] = {"session_id": self.session_id, "block_size": self.block_size}
        if self.command == "path":
            self.node_id = inputs.message_id(args.node_id, "--node-id")
            self.mode = args.mode
            params.update(node_id=self.node_id, mode=self.mode)
        elif self.command == "graph":
            self.anchor = inputs.message_id(args.anchor, "--anchor")
            self.depth = inputs.count(args.depth, "--depth", contract.DEFAULT_GRAPH_DEPTH,
                                contract.MAX_GRAPH_DEPTH)
            params.update(anchor_node_id=self.anchor, drilldown_depth=self.depth)
        if self.continuation is not None:
            params["continuation"] = self.continuation
        self.params = params
        self.logger_command = {"relations": "relations_read", "path": "path_read",
                               "leaves": "leaves_read", "graph": "graph_read"}[self.command]

    def answer(self, entries: list[dict[str, Any]]) -> dict[str, Any]:
        try:
            if self.command == "relations":
                return navigation.relations_page(self.session_id, entries, self.block_size,
                                                 self.continuation)
            if self.command == "path":
                return navigation.path_page(self.session_id, entries, self.node_id, self.mode,
                                            self.block_size, self.continuation)
            if self.command == "leaves":
                return navigation.leaves_page(self.session_id, entries, self.block_size,
                                              self.continuation)
            return navigation.graph_page(self.session_id, entries, self.anchor, self.depth,
                                         self.block_size, self.continuation)
        except navigation.NavigationError as exc:
            raise from_refusal(exc.code, str(exc)) from None


# --- the file store ----------------------------------------------------------------------------
def local_entries(store, session_id: str, areas=None) -> list[dict[str, Any]]:
    """The session's MESSAGE_ENTRY list from the files, as the local forgetting events leave
    it (purged ones gone, soft-deleted ones flagged)."""
    from agent_memory.outbox.store import IMPORTED
    messages, _bad = store.messages(session_id, areas or (PENDING, IMPORTED))
    events, _bad = store.events(session_id)
    return views.forgotten(events).apply(views.message_entry(m) for m in messages)


def _outbox_holds(store, session_id: str | None) -> bool:
    """Does the outbox still hold a message or event of the session (of any, without one)?"""
    sessions = [session_id] if session_id else store.pending_session_ids()
    return any(store.files(s, None, (PENDING,)) for s in sessions)


# --- the logger's side -------------------------------------------------------------------------
def structural(ctx: Context, args) -> tuple[dict[str, Any], str]:
    read = _Read(args)
    side = ctx.side()
    if side == "logger":
        store = mergeable_store(ctx)
        refuse_if_deleted_here(ctx, read.session_id)
        if store is None or not _outbox_holds(store, read.session_id):
            try:
                data = ask_logger(ctx, read.logger_command, **read.params)
            except RefusedError as exc:  # known here only (imported, quarantined): the files
                if store is None or exc.code != contract.SESSION_UNKNOWN or \
                        not outbox_knows(store, read.session_id):
                    raise
                data = None
            if data is not None:
                return data, "logger"
        else:
            merged = merged_entries(ctx, store, read.session_id)
            if merged is not None and merged[0]:
                return read.answer(merged[0]), merged[1]
            if merged is not None and not outbox_knows(store, read.session_id):
                raise refuse_unknown(read.session_id)
    store = ctx.store()
    if not outbox_knows(store, read.session_id):
        raise refuse_unknown(read.session_id)
    from agent_memory.cli.fleet_errors import warn
    return warn(ctx, read.answer(local_entries(store, read.session_id))), "file"


# --- read --preview ----------------------------------------------------------------------------
class _Preview:
    def __init__(self, args) -> None:
        filters: dict[str, Any] = {"session_id": args.session_id, "caller_id": args.caller,
                                   "recipient_id": args.recipient,
                                   "period_start": args.period_start,
                                   "period_end": args.period_end}
        if filters["session_id"]:
            inputs.session_id(filters["session_id"])
        for name in ("period_start", "period_end"):
            if filters[name]:
                inputs.occurred_at(filters[name], "--" + name.replace("_", "-"))
        self.filters = {k: v for k, v in filters.items() if v}
        self.show_deleted = bool(args.show_deleted)
        self.page_offset = inputs.count(args.page_offset, "--page-offset", 0, None)
        self.page_size = inputs.count(args.page_size, "--page-size", contract.DEFAULT_PAGE_SIZE,
                                contract.MAX_PAGE_SIZE, 1)
        self.preview_size = inputs.count(args.preview_size, "--preview-size", contract.PREVIEW_SIZE,
                                   None)
        self.matches = navigation.preview_filter({**self.filters,
                                                  "show_deleted": self.show_deleted})

    def params(self, page_offset: int, page_size: int) -> dict[str, Any]:
        params = {**self.filters, "mode": "preview", "page_offset": page_offset,
                  "page_size": page_size, "preview_size": self.preview_size}
        if self.show_deleted:
            params["show_deleted"] = True
        return params

    def entries(self, store, sessions: list[str], areas) -> list[dict[str, Any]]:
        out = []
        for session_id in sessions:
            for entry in local_entries(store, session_id, areas):
                if self.matches(entry):
                    out.append(navigation.preview_entry(entry, self.preview_size))
        return out

    def page(self, entries: list[dict[str, Any]]) -> dict[str, Any]:
        return navigation.preview_page(entries, self.page_offset, self.page_size)


def preview(ctx: Context, args) -> tuple[dict[str, Any], str]:
    asked = _Preview(args)
    side = ctx.side()
    session = asked.filters.get("session_id")
    if side == "logger":
        store = mergeable_store(ctx)
        if store is None or not _outbox_holds(store, session):
            data = ask_logger(ctx, "messages_read",
                           **asked.params(asked.page_offset, asked.page_size))
            if data is not None:
                return data, "logger"
        else:
            remote = _whole_preview(ctx, asked)
            if remote is not None:
                sessions = [session] if session else store.pending_session_ids()
                local = asked.entries(store, sessions, (PENDING,))
                hidden, gone = _forgotten_everywhere(store, sessions)
                known = {e["message_id"] for e in remote}
                remote = [e for e in remote if e.get("session_id") not in gone]
                merged = [e for e in _overlay(remote, hidden, asked.show_deleted)] + \
                    [e for e in local if e["message_id"] not in known]
                return asked.page(merged), "both"
    store = ctx.store()
    sessions = [session] if session else store.session_ids()
    from agent_memory.cli.fleet_errors import warn
    from agent_memory.outbox.store import IMPORTED
    return warn(ctx, asked.page(asked.entries(store, sessions, (PENDING, IMPORTED)))), "file"


def _whole_preview(ctx: Context, asked: _Preview) -> list[dict[str, Any]] | None:
    """Every entry of the logger's preview for these filters (all its pages)."""
    entries: list[dict[str, Any]] = []
    page = 0
    while True:
        data = ask_logger(ctx, "messages_read", **asked.params(page, contract.MAX_PAGE_SIZE))
        if data is None:
            return None
        entries.extend(data.get("entries") or [])
        page += 1
        if page >= (data.get("total_pages") or 0) or not data.get("entries"):
            return entries


def _forgotten_everywhere(store, sessions: list[str]) -> tuple[views.Forgotten, set[str]]:
    """What the sessions' pending forgetting leaves of the logger's answer: the messages
    deleted or marked here, and the sessions deleted here."""
    folded, gone = views.Forgotten(), set()
    for session_id in sessions:
        events, _bad = store.events(session_id)
        found = views.forgotten(events)
        folded.hidden |= found.hidden
        folded.purged |= found.purged
        if deleted_pending(events):
            gone.add(session_id)
    return folded, gone


def _overlay(entries: list[dict[str, Any]], forgotten: views.Forgotten,
             show_deleted: bool) -> list[dict[str, Any]]:
    shown = forgotten.apply(entries)
    return shown if show_deleted else [e for e in shown if not e.get("soft_deleted")]


# --- info --------------------------------------------------------------------------------------
def info(ctx: Context, args) -> tuple[dict[str, Any], str]:
    section = args.section
    if ctx.side() == "logger":
        params = {"section": section} if section is not None else {}
        data = ask_logger(ctx, "info", **params)
        if data is not None:
            return data, "logger"
    from agent_memory.sync.identity import VERSION
    try:
        data = contract.info(section, f"agent-memory {VERSION} (file store)")
    except ValueError as exc:
        raise from_refusal(contract.INFO_SECTION_UNKNOWN, str(exc)) from None
    from agent_memory.cli.fleet_errors import warn
    return warn(ctx, data), "file"


def run(ctx: Context, args) -> tuple[dict[str, Any], str]:
    if args.command == "info":
        return info(ctx, args)
    return structural(ctx, args)
