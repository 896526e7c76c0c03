"""The reference logger's commands on mcp-proxy-adapter, and the hook that registers them.

Commands: health, info, open/close/reopen/delete_session, sessions_list, append_message,
messages_import (queued), messages_read (journal and preview), message_get, the structural
reads relations_read, path_read, leaves_read, graph_read (navigation.py), working_set,
message_search (retrieval.py), message_delete and messages_mark_for_deletion (forgetting.py).

Each command is a thin shell: the framework's own parameter validation is bypassed (it would
answer a JSON-RPC error without a stable code) and the handlers in this package check
everything, answering a Refusal in the shape the client recognises. `messages_import` is
`use_queue=True`: its whole-call refusals are raised at submit time from `validate_params`
(in-band, route C); the queue worker (a forked process that re-runs `register`) stores the items
and answers one outcome per item, in input order.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable

from mcp_proxy_adapter.commands.base import Command
from mcp_proxy_adapter.commands.result import CommandResult, SuccessResult

from ops.fleet import layout
from ops.fleet.faults import FaultReader
from ops.fleet.logger import (forgetting, messages, navigation, reads, retrieval, sessions, store,
                              validate)
from ops.fleet.logger.refusal import Refusal
from agent_memory.outbox import contract as c

# Set by ops.fleet.logger.main in the server process (the worker never needs it).
VECTORS = None
_faults: FaultReader | None = None


def current_faults():
    global _faults
    if _faults is None:
        _faults = FaultReader(layout.faults_path(layout.data_dir_from_env()), "logger")
    return _faults.current()


def _open_schema(properties: dict[str, Any], required: tuple = ()) -> dict[str, Any]:
    """Documentation schema (help); validation is ours, so anything passes the framework."""
    return {"type": "object", "properties": properties, "required": list(required),
            "additionalProperties": True}


class Outcome(CommandResult):
    """A boolean answer as `{"success": value, "data": value}`: SuccessResult drops a false
    `data` and always says success, and the client reads a false outcome from this envelope
    (not a refusal: no `framework_code`)."""

    def __init__(self, value: bool) -> None:
        super().__init__(success=value)
        self.value = value

    def to_dict(self) -> dict[str, Any]:
        return {"success": self.value, "data": self.value}


class _LoggerCommand(Command):
    """A direct command: `handle(params)` answers data or raises Refusal (route A)."""

    result_class = SuccessResult
    properties: dict[str, Any] = {}
    required_params: tuple = ()

    @classmethod
    def get_schema(cls) -> dict[str, Any]:
        return _open_schema(cls.properties, cls.required_params)

    def validate_params(self, params: Any) -> dict[str, Any]:
        return dict(params or {})

    async def handle(self, params: dict[str, Any]) -> Any:
        raise NotImplementedError

    async def execute(self, **params: Any) -> Any:
        params.pop("context", None)
        try:
            data = await self.handle(params)
            return Outcome(data) if self.result_class is Outcome else SuccessResult(data=data)
        except Refusal as refusal:
            return refusal.as_result()


def _sync(fn: Callable[..., Any]) -> Callable[[dict], Awaitable[Any]]:
    async def run(params: dict[str, Any]) -> Any:
        return fn(store.connect(), params)
    return run


def _command(name: str, handler: Callable[[dict], Awaitable[Any]], descr: str,
             properties: dict[str, Any], required: tuple = (),
             result_class: type = SuccessResult) -> type:
    async def handle(self, params: dict[str, Any]) -> Any:
        return await handler(params)

    return type(f"{name.title().replace('_', '')}Command", (_LoggerCommand,), {
        "name": name, "descr": descr, "properties": properties, "required_params": required,
        "handle": handle, "result_class": result_class})


_S = {"type": "string"}
_I = {"type": "integer"}
_MESSAGE_PROPS = {name: _S for name in validate.MESSAGE_REQUIRED} | {
    "priority": _I, "message_id": _S, "relations": {"type": "array"},
    "corrects_message_id": _S, "attributes": {"type": "object"}, "occurred_at": _S,
    "force_overwrite": {"type": "boolean"}}


async def _health(params: dict[str, Any]) -> dict[str, Any]:
    validate.unknown(params, ())
    conn = store.connect()
    counts = conn.execute("SELECT (SELECT COUNT(*) FROM sessions), (SELECT COUNT(*) FROM "
                          "messages), (SELECT COUNT(*) FROM messages WHERE vector IS NULL AND "
                          "vector_model IS NULL)"
                          ).fetchone()
    embedder = "unknown"
    if VECTORS is not None:
        embedder = "unavailable" if VECTORS.blocked else "ok"
    return {"status": "ok", "service": "reference-logger",
            "dependencies": {"storage": "ok", "embedder": embedder},
            "sessions": counts[0], "messages": counts[1], "pending_vectors": counts[2]}


async def _info(params: dict[str, Any]) -> dict[str, Any]:
    validate.unknown(params, ("section",))
    section = validate.typed(params, "section", str)
    try:
        return c.info(section, "reference-logger")
    except ValueError as exc:
        raise Refusal(c.INFO_SECTION_UNKNOWN, str(exc), violation="value",
                      expected=list(c.INFO_SECTIONS), got=section) from None


async def _append(params: dict[str, Any]) -> dict[str, Any]:
    msg = validate.message(params, imported=False)
    conn = store.connect()
    with store.write(conn):
        return messages.store_message(conn, msg, current_faults())


async def _working_set(params: dict[str, Any]) -> dict[str, Any]:
    return await retrieval.working_set(store.connect(), VECTORS, params)


async def _search(params: dict[str, Any]) -> dict[str, Any]:
    return await retrieval.message_search(store.connect(), VECTORS, params)


DIRECT = [
    _command("health", _health, "liveness of the reference logger and its dependencies", {}),
    _command("open_session", _sync(sessions.open_session), "open a dialogue session",
             {"session_id": _S, "project_id": _S, "dialogue_kind": {"type": "array"},
              "participants": {"type": "array"}, "title": _S, "metadata": {"type": "object"}},
             ("session_id", "project_id", "dialogue_kind", "participants")),
    _command("close_session", _sync(lambda conn, p: sessions.set_lifecycle(conn, p, "closed")),
             "close a session", {"session_id": _S}, ("session_id",)),
    _command("reopen_session", _sync(lambda conn, p: sessions.set_lifecycle(conn, p, "open")),
             "reopen a closed session", {"session_id": _S}, ("session_id",)),
    _command("delete_session", _sync(sessions.delete_session),
             "delete a session with its messages, relations and vectors", {"session_id": _S},
             ("session_id",)),
    _command("sessions_list", _sync(sessions.sessions_list), "list sessions by filter axes",
             {"project_id": _S, "lifecycle": _S, "dialogue_kind": _S, "participant": _S,
              "created_at_range": {"type": "object"}, "block_size": _I, "continuation": _S}),
    _command("append_message", _append, "append one message", _MESSAGE_PROPS,
             validate.MESSAGE_REQUIRED),
    _command("messages_read", _sync(reads.messages_read), "read a journal window",
             {name: _S for name in reads.READ_PARAMS}, ("session_id",)),
    _command("message_get", _sync(reads.message_get), "read one message", {"message_id": _S},
             ("message_id",)),
    _command("relations_read", _sync(navigation.relations_read), "read a session's relations",
             {"session_id": _S, "block_size": _I, "continuation": _S}, ("session_id",)),
    _command("path_read", _sync(navigation.path_read), "read a node's line back to its root",
             {"session_id": _S, "node_id": _S, "block_size": _I, "continuation": _S,
              "mode": _S}, ("session_id", "node_id")),
    _command("leaves_read", _sync(navigation.leaves_read),
             "read a session's leaves and branching points",
             {"session_id": _S, "block_size": _I, "continuation": _S}, ("session_id",)),
    _command("graph_read", _sync(navigation.graph_read),
             "read what continues from an anchor, level by level",
             {"session_id": _S, "anchor_node_id": _S, "drilldown_depth": _I, "block_size": _I,
              "continuation": _S}, ("session_id", "anchor_node_id")),
    _command("message_delete", _sync(forgetting.message_delete),
             "delete one message, softly (hidden) or hard (removed)",
             {"message_id": _S, "mode": _S}, ("message_id", "mode")),
    _command("messages_mark_for_deletion", _sync(forgetting.mark_for_deletion),
             "set or clear the soft-deletion flag of messages, all or nothing",
             {"message_ids": {"type": "array", "items": _S},
              "marked_for_deletion": {"type": "boolean"}},
             ("message_ids", "marked_for_deletion"), result_class=Outcome),
    _command("info", _info, "the service's description: its sections, or one section",
             {"section": _S}),
    _command("working_set", _working_set, "recent and closest messages of a session",
             {name: _S for name in retrieval.WORKING_SET_PARAMS}, ("session_id",)),
    _command("message_search", _search, "search messages by closeness of meaning",
             {name: _S for name in retrieval.SEARCH_PARAMS}, ("query_text", "scope")),
]


def _whole_call(params: Any) -> list[dict[str, Any]]:
    """The submit-time checks of an import; Refusal when the whole call is refused."""
    params = dict(params or {})
    validate.unknown(params, ("messages",))
    validate.required(params, ("messages",))
    items = validate.typed(params, "messages", list)
    if not items:
        raise Refusal(c.IMPORT_EMPTY, "messages is empty", violation="value",
                      expected="non-empty array")
    if len(items) > c.MAX_IMPORT_ITEMS:
        raise Refusal(c.IMPORT_TOO_LARGE, f"{len(items)} items is above the maximum "
                      f"{c.MAX_IMPORT_ITEMS}", violation="value",
                      expected=f"<= {c.MAX_IMPORT_ITEMS}", got=len(items))
    seen: set[str] = set()
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise Refusal(c.REQUEST_PARAMETER_TYPE, f"messages[{i}] is not an object",
                          violation="type", expected="object", got=type(item).__name__)
        message_id = item.get("message_id")
        if isinstance(message_id, str):
            if message_id in seen:
                raise Refusal(c.IMPORT_DUPLICATE_ID, f"message_id {message_id} is repeated",
                              violation="value", got=message_id)
            seen.add(message_id)
    return items


def import_items(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Store each item independently, in one transaction; one outcome per item, in order.

    What does not depend on the stored state (each item's checks, its canonical content and
    JSON columns) is done before the write transaction, so the write lock, which the server
    and the other import jobs wait for, is held for the SQL only."""
    faults = current_faults()
    prepared: list[tuple[dict[str, Any] | None, Any]] = []
    for item in items:
        try:
            msg = validate.message(item, imported=True)
            prepared.append((msg, messages.encoded(msg)))
        except Refusal as refusal:
            prepared.append((None, refusal.as_item(item.get("message_id"))))
    conn = store.connect()
    outcomes: list[dict[str, Any]] = []
    with store.write(conn):
        for msg, ready in prepared:
            if msg is None:
                outcomes.append(ready)  # refused by its checks
                continue
            conn.execute("SAVEPOINT item")
            try:
                stored = messages.store_message(conn, msg, faults, ready)
                outcomes.append({"message_id": stored["message_id"], "success": True,
                                 "text_head": stored["text_head"],
                                 "text_tail": stored["text_tail"]})
            except Refusal as refusal:
                conn.execute("ROLLBACK TO item")
                outcomes.append(refusal.as_item(msg["message_id"]))
            conn.execute("RELEASE item")
    return outcomes


class MessagesImportCommand(Command):
    """Always queued: submit answers a job id; the job's result is the per-item array."""

    name = "messages_import"
    descr = "import a batch of messages with their original ids and times (queued)"
    result_class = SuccessResult
    use_queue = True

    @classmethod
    def get_schema(cls) -> dict[str, Any]:
        return {"type": "object", "properties": {"messages": {"type": "array",
                                                              "items": {"type": "object"}}},
                "required": ["messages"], "additionalProperties": True, "x-use-queue": True}

    def validate_params(self, params: Any) -> dict[str, Any]:
        try:
            _whole_call(params)
        except Refusal as refusal:
            raise refusal.as_validation_error() from None
        return dict(params)

    async def execute(self, messages: list[dict[str, Any]] | None = None, **_: Any) -> Any:
        return SuccessResult(data=import_items(messages or []))  # type: ignore[arg-type]


def register(registry: Any) -> None:
    """Custom-commands hook: runs in the server and again in the queue worker."""
    for cls in DIRECT + [MessagesImportCommand]:
        registry.register(cls, "custom")
