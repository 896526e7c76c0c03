"""`search` and `working-set`: closeness reads in the logger's data shape.

`--store auto`: the logger answers when it is reachable, and the messages still pending in the
outbox are scored locally with the same model and merged into its ranking (`"store": "both"`
when any were); unreachable, the file store answers (`"store": "file"`). `--store logger` /
`--store file` force one side. Locally, closeness scores the `.emb` vectors through the derived
index (sync.vectors.index) with the reference logger's rules (sync.vectors.search). The query or
anchor text needs a vector from the embedder (or the query cache); when none can be had,
`search` ranks by BM25 over the local texts and `working-set` its closest group by BM25 of the
anchor's text, and each says `"ranking": "bm25"`, unless `--ranking vector` requires a vector
(exit 7). A session neither the logger nor the outbox knows is refused with the logger's code
(SESSION_UNKNOWN; SCOPE_SESSION_UNKNOWN for a search's scope) on either side.
"""

from __future__ import annotations

import sys
from typing import Any

from agent_memory.cli import inputs
from agent_memory.cli.auto_reads import (deleted_pending, outbox_knows, refuse_if_deleted_here,
                                        refuse_unknown)
from agent_memory.cli.context import Context
from agent_memory.cli.errors import (CliError, EmbeddingUnavailableError, RefusedError,
                                     StoreUnavailableError, UsageError, from_refusal)
from agent_memory.outbox import contract


# --- arguments -------------------------------------------------------------------------------
def search_params(args) -> dict[str, Any]:
    if not args.query:
        raise UsageError("--query must be non-empty", code=contract.REQUEST_PARAMETER_VALUE)
    if args.scope == "all_projects" and args.target is not None:
        raise UsageError("--scope all_projects takes no --target",
                         code=contract.REQUEST_PARAMETER_VALUE)
    if args.scope != "all_projects" and args.target is None:
        raise UsageError(f"--scope {args.scope} needs --target",
                         code=contract.REQUEST_PARAMETER_MISSING)
    filters: dict[str, Any] = {}
    if args.sender_kind is not None:
        filters["sender_kind"] = inputs.kind(args.sender_kind, "--sender-kind")
    if args.priority is not None:
        filters["priority"] = args.priority
    for name, value in (("occurred_from", args.occurred_from), ("occurred_to", args.occurred_to)):
        if value is not None:
            inputs.occurred_at(value, "--" + name.replace("_", "-"))
            filters[name] = value
    if args.filter_session_id is not None:
        filters["session_id"] = inputs.session_id(args.filter_session_id, "--filter-session-id")
    if args.scope == "session" and args.target is not None:
        inputs.session_id(args.target, "--target")
    if args.filter_project_id is not None:
        filters["project_id"] = args.filter_project_id
    return {"query_text": args.query, "scope": args.scope, "scope_target": args.target,
            "filters": filters, "mode": args.mode,
            "page_size": inputs.count(args.page_size, "--page-size", contract.DEFAULT_PAGE_SIZE,
                                contract.MAX_PAGE_SIZE, 1),
            "page_offset": inputs.count(args.page_offset, "--offset", 0, None)}


def working_set_params(args) -> dict[str, Any]:
    session_id = inputs.session_id(args.session_id)
    if (args.anchor_text is None) == (args.anchor_message_id is None):
        raise UsageError("give exactly one of --anchor-text or --anchor-message-id",
                         code=contract.ANCHOR_INADMISSIBLE)
    anchor_id = None
    if args.anchor_message_id is not None:
        anchor_id = inputs.message_id(args.anchor_message_id, "--anchor-message-id")
    return {"session_id": session_id, "anchor_text": args.anchor_text,
            "anchor_message_id": anchor_id,
            "recency_count": inputs.count(args.recency_count, "--recency-count",
                                    contract.DEFAULT_RECENCY_COUNT, contract.MAX_RECENCY_COUNT),
            "similarity_count": inputs.count(args.similarity_count, "--similarity-count",
                                       contract.DEFAULT_SIMILARITY_COUNT,
                                       contract.MAX_SIMILARITY_COUNT),
            "mode": args.mode}


# --- local pieces ----------------------------------------------------------------------------
def _progress(message: str) -> None:
    sys.stderr.write(f"agent-memory: {message}\n")


def _model(ctx: Context) -> tuple[str, int]:
    m = ctx.config.embedding_model
    return m["model"], int(m["dimension"])


def open_local(ctx: Context):
    from agent_memory.sync.vectors.index import open_index
    from agent_memory.sync.vectors.search import hide_forgotten
    store = ctx.store()
    model, dimension = _model(ctx)
    index = open_index(store, model, dimension, progress=_progress)
    hide_forgotten(store, index)
    return store, index


def query_vector(ctx: Context, store, text: str):
    """The configured model's vector of `text`: from the query cache, else the embedder.
    Raises sync.links.failures Unreachable / Refused / Failed."""
    import numpy as np
    from agent_memory.sync.links.failures import Unreachable
    from agent_memory.sync.vectors.queries import cache_query, cached_query
    model, dimension = _model(ctx)
    cached = cached_query(store, model, dimension, text)
    if cached is not None:
        return cached
    if ctx.config.embedder is None:
        raise Unreachable("no embedder is configured (embedding_client section)")
    vector = np.asarray(ctx.route.embed(ctx.config, [text])[0], dtype=np.float32)
    cache_query(store, model, dimension, text, vector)
    return vector


def _warn(data: dict[str, Any], index) -> dict[str, Any]:
    warnings = [dict(w, kind="vector_mismatch") for w in index.mismatched]
    warnings += [dict(w, kind="unreadable") for w in index.unreadable]
    if warnings:
        data["warnings"] = warnings
    return data


def _refused(exc) -> CliError:
    return from_refusal(exc.code, exc.statement)


def local_search(ctx: Context, params: dict[str, Any], ranking: str) -> dict[str, Any]:
    from agent_memory.sync.vectors import search as ls
    from agent_memory.sync.links.failures import Failed, Refused, Unreachable
    if params["scope"] == "session" and not outbox_knows(ctx.store(), params["scope_target"]):
        raise refuse_unknown(params["scope_target"], contract.SCOPE_SESSION_UNKNOWN)
    store, index = open_local(ctx)
    common = {k: params[k] for k in ("scope", "filters", "mode", "page_size", "page_offset")}
    common["target"] = params["scope_target"]
    try:
        if ranking != "bm25":
            try:
                query = query_vector(ctx, store, params["query_text"])
            except (Unreachable, Refused, Failed) as exc:
                if ranking == "vector":
                    raise EmbeddingUnavailableError(
                        f"the query needs a vector and the embedder cannot give one: {exc}"
                    ) from None
                _progress(f"no vector for the query ({exc}); ranking by BM25")
            else:
                return _warn(ls.message_search(store, index, query=query, **common), index)
        return _warn(ls.bm25_search(store, index, query_text=params["query_text"], **common),
                     index)
    except ls.LocalRefusal as exc:
        raise _refused(exc) from None


def local_working_set(ctx: Context, params: dict[str, Any], ranking: str) -> dict[str, Any]:
    from agent_memory.sync.vectors import search as ls
    from agent_memory.sync.links.failures import Failed, Refused, Unreachable
    session_id = params["session_id"]
    if not outbox_knows(ctx.store(), session_id):
        raise refuse_unknown(session_id)
    store, index = open_local(ctx)
    try:
        query = None
        anchor_text = params["anchor_text"]
        if params["anchor_message_id"] is not None:
            anchor_text, query = ls.anchor(store, index, session_id, params["anchor_message_id"])
        if ranking == "bm25":
            query = None
        elif query is None:
            try:
                query = query_vector(ctx, store, anchor_text)
            except (Unreachable, Refused, Failed) as exc:
                if ranking == "vector":
                    raise EmbeddingUnavailableError(
                        f"the anchor needs a vector and the embedder cannot give one: {exc}"
                    ) from None
                _progress(f"no vector for the anchor ({exc}); ranking by BM25")
        data = ls.working_set(store, index, session_id=session_id, anchor_text=anchor_text,
                              query=query, anchor_message_id=params["anchor_message_id"],
                              recency=params["recency_count"],
                              similarity=params["similarity_count"], mode=params["mode"])
    except ls.LocalRefusal as exc:
        raise _refused(exc) from None
    return _warn(data, index)


# --- the logger side, with pending messages merged ---------------------------------------------
def _logger_call(ctx: Context, command: str, **params: Any):
    """(answer data, None) or (None, Unreachable) for auto mode; refusals raise."""
    from agent_memory.cli import fleet_errors
    from agent_memory.sync.links.failures import Failed, Refused, Unreachable
    try:
        return ctx.route.call(ctx.config, command, **params), None
    except Unreachable as exc:
        if ctx.store_mode == "logger":
            fleet_errors.raise_for(exc)
        fleet_errors.fell_back(ctx, exc)
        return None, exc
    except (Refused, Failed) as exc:
        fleet_errors.raise_for(exc, refusal=lambda code, statement: RefusedError(
            statement, code=code))


def _merge_pending_search(ctx: Context, params: dict[str, Any], logger_data: dict[str, Any]
                          ) -> tuple[dict[str, Any], bool]:
    from agent_memory.sync.links.failures import Failed, Refused, Unreachable
    from agent_memory.sync.vectors.listing import pending_message_stems
    try:
        if not pending_message_stems(ctx.store()):
            return logger_data, False  # nothing to merge: the index (numpy) stays closed
        store, index = open_local(ctx)
    except StoreUnavailableError:
        return logger_data, False
    from agent_memory.sync.vectors import pending
    found = pending.positions(store, index)
    if not len(found):
        return logger_data, False
    selected = pending.in_scope(index, found, params["scope"], params["scope_target"],
                                params["filters"])
    if selected is None:
        return logger_data, False
    try:
        query = query_vector(ctx, store, params["query_text"])
    except (Unreachable, Refused, Failed) as exc:
        logger_data.setdefault("warnings", []).append(
            {"kind": "pending_not_searched",
             "reason": f"no vector for the query to score pending messages: {exc}"})
        return logger_data, False
    extra = pending.search_matches(store, index, selected, query,
                                   {m["message"]["message_id"] for m in logger_data["matches"]})
    if not extra:
        return logger_data, False
    merged = logger_data["matches"] + extra
    merged.sort(key=lambda m: (-m["score"], m["message"]["message_id"]))
    offset, size = params["page_offset"], params["page_size"]
    total = logger_data["total"] + len(extra)
    window = merged[offset:offset + size]
    end = offset + len(window)
    more = end < total
    return {**logger_data, "matches": window, "more": more,
            "next_offset": end if more else None, "total": total}, True


def logger_search(ctx: Context, params: dict[str, Any]):
    """(data, merged?) or None when the logger is unreachable in auto mode."""
    offset, size = params["page_offset"], params["page_size"]
    want = offset + size
    base = {k: v for k, v in params.items() if k not in ("page_offset", "page_size")}
    if not base["filters"]:
        base.pop("filters")
    merging = ctx.store_mode == "auto"
    if not merging:
        data, unreachable = _logger_call(ctx, "message_search", **params)
        return None if unreachable is not None else (data, "logger")
    # Merging needs the logger's best `offset + size` matches: fetch them from offset 0.
    matches: list[dict[str, Any]] = []
    data = None
    while len(matches) < want:
        chunk = min(contract.MAX_PAGE_SIZE, want - len(matches))
        data, unreachable = _logger_call(ctx, "message_search", page_offset=len(matches),
                                         page_size=chunk, **base)
        if unreachable is not None:
            return None
        matches.extend(data["matches"])
        if not data["more"]:
            break
    data = {**data, "matches": matches}
    merged, any_merged = _merge_pending_search(ctx, params, data)
    if not any_merged:
        window = matches[offset:offset + size]
        end = offset + len(window)
        more = end < data["total"]
        merged = {**data, "matches": window, "more": more, "next_offset": end if more else None}
    return merged, "both" if any_merged else "logger"


def logger_working_set(ctx: Context, params: dict[str, Any]):
    from agent_memory.sync.links.failures import Failed, Refused, Unreachable
    from agent_memory.sync.vectors.listing import pending_message_stems
    call = {k: v for k, v in params.items() if v is not None}
    store = index = None
    if ctx.store_mode == "auto":
        try:  # nothing of the session pending, nothing to merge: the index stays closed
            if pending_message_stems(ctx.store(), [params["session_id"]]):
                store, index = open_local(ctx)
        except StoreUnavailableError:
            store = index = None
    if index is None:
        found = []
    else:
        from agent_memory.sync.vectors import pending
        from agent_memory.sync.vectors import search as ls
        found = pending.positions(store, index, [params["session_id"]])
    if index is not None and params["anchor_message_id"] in pending.message_ids(index, found):
        # the logger does not know that anchor yet: ask with its text
        text, _vec = ls.anchor(store, index, params["session_id"], params["anchor_message_id"])
        call.pop("anchor_message_id")
        call["anchor_text"] = text
    data, unreachable = _logger_call(ctx, "working_set", **call)
    if unreachable is not None:
        return None
    if not len(found):
        return data, "logger"
    # RECENT: pending messages arrived after everything the logger holds.
    known = {e["message"]["message_id"] for e in data["recent"]} | \
        {e["message"]["message_id"] for e in data["closest"]}
    fresh, shown = pending.newest(store, index, found, known)
    if not fresh:
        return data, "logger"
    recent = [{"message": shown[i], "criterion": "recency"} for i in fresh if i in shown]
    recent = (recent + data["recent"])[:params["recency_count"]]
    closest = data["closest"]
    anchor_vector = pending.stored_vector(index, params["anchor_message_id"])
    try:
        if anchor_vector is None:
            anchor_vector = query_vector(ctx, store, data["anchor_text"])
    except (Unreachable, Refused, Failed) as exc:
        data.setdefault("warnings", []).append(
            {"kind": "pending_not_scored",
             "reason": f"no vector for the anchor to score pending messages: {exc}"})
    else:
        extra = pending.closest(index, fresh, shown, anchor_vector, params["anchor_message_id"])
        closest = sorted(closest + extra,
                         key=lambda e: (-e["score"], e["message"]["message_id"])
                         )[:params["similarity_count"]]
    return {**data, "recent": recent, "closest": closest}, "both"


# --- commands --------------------------------------------------------------------------------
def _as_forgotten_here(ctx: Context, data: dict[str, Any]) -> dict[str, Any]:
    """The logger's answer without what the outbox's pending deletes, marks and session
    deletes took away: they take effect here at once, before the logger hears of them."""
    from agent_memory.cli.auto_reads import mergeable_store
    from agent_memory.outbox import views
    from agent_memory.outbox.store import PENDING
    store = mergeable_store(ctx)
    if store is None or not isinstance(data, dict):
        return data
    forgotten, gone = views.Forgotten(), set()
    for session_id in store.pending_session_ids():
        if any(f.name.endswith(".ses") for f in store.files(session_id, None, (PENDING,))):
            events, _bad = store.events(session_id)
            found = views.forgotten(events)
            forgotten.hidden |= found.hidden
            forgotten.purged |= found.purged
            if deleted_pending(events):
                gone.add(session_id)
    if not forgotten and not gone:
        return data
    out = dict(data)
    for group in ("matches", "recent", "closest"):
        if isinstance(data.get(group), list):
            kept = [m for m in data[group] if not forgotten.deleted(
                (m.get("message") or {}).get("message_id", ""))
                and (m.get("message") or {}).get("session_id") not in gone]
            if group == "matches" and isinstance(data.get("total"), int):
                out["total"] = data["total"] - (len(data[group]) - len(kept))
            out[group] = kept
    return out


def _session_asked(args, params: dict[str, Any]) -> tuple[str | None, str]:
    """The session a read names, and the logger's code for it unknown."""
    if args.command == "working-set":
        return params["session_id"], contract.SESSION_UNKNOWN
    if params["scope"] == "session":
        return params["scope_target"], contract.SCOPE_SESSION_UNKNOWN
    return None, contract.SCOPE_SESSION_UNKNOWN


def _ask_logger(ctx: Context, args, params: dict[str, Any]):
    """The logger's answer (merged), or None to answer from the files: unreachable, or a
    session the logger does not know and the outbox does (opened here, not forwarded yet)."""
    from agent_memory.cli.auto_reads import mergeable_store
    session_id, unknown = _session_asked(args, params)
    if session_id is not None:
        refuse_if_deleted_here(ctx, session_id, unknown)
    try:
        if args.command == "search":
            return logger_search(ctx, params)
        return logger_working_set(ctx, params)
    except RefusedError as exc:
        store = mergeable_store(ctx) if exc.code == unknown and session_id else None
        if store is None or not outbox_knows(store, session_id):
            raise
        return None


def run(ctx: Context, args) -> tuple[dict[str, Any], str]:
    if args.command == "search":
        params = search_params(args)
    else:
        params = working_set_params(args)
    ranking = args.ranking
    side = ctx.side()
    if side == "logger" and ranking != "bm25":
        answer = _ask_logger(ctx, args, params)
        if answer is not None:
            return _as_forgotten_here(ctx, answer[0]), answer[1]
        _progress("the logger cannot answer; answering from the file store")
    from agent_memory.cli.fleet_errors import warn
    if args.command == "search":
        return warn(ctx, local_search(ctx, params, ranking)), "file"
    return warn(ctx, local_working_set(ctx, params, ranking)), "file"
