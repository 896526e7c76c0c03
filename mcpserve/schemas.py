"""What each MCP tool answers, as JSON Schema (2020-12): its output schema, so a client (and a
model) knows the shape of a tool's `data` before it calls it, and a client that validates
structured results (the TypeScript SDK's does) can check them.

Each names the fields its command always answers and their types, and allows more: answers
from the file store, merged answers and a real logger add fields of their own (`outbox`,
`warnings`, `pending`...), which must never make a valid answer fail a client's validation.
"""

from __future__ import annotations

from typing import Any

STRING = {"type": "string"}
INTEGER = {"type": "integer"}
NUMBER = {"type": "number"}
BOOLEAN = {"type": "boolean"}
STRING_OR_NULL = {"type": ["string", "null"]}
INTEGER_OR_NULL = {"type": ["integer", "null"]}


def shape(required: tuple[str, ...] = (), **properties: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object"}
    if properties:
        out["properties"] = properties
    if required:
        out["required"] = list(required)
    return out


def array(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items}


MESSAGE = shape(("message_id",), message_id=STRING, sequence_number=INTEGER, text=STRING)
PAGE = {"more": BOOLEAN, "continuation": STRING_OR_NULL}
RELATION = shape(("from_message_id", "to_message_id", "kind"), from_message_id=STRING,
                 to_message_id=STRING, kind=STRING)
SESSION = shape(("session_id",), session_id=STRING, lifecycle=STRING)
RANKED = shape(("message",), message=MESSAGE, score=NUMBER)

DATA: dict[str, dict[str, Any]] = {
    "session_open": SESSION,
    "session_close": SESSION,
    "session_reopen": SESSION,
    "write": shape(("message_id",), message_id=STRING, sequence_number=INTEGER,
                   forwarded=BOOLEAN),
    "read": shape(("messages",), session_id=STRING, messages=array(MESSAGE), **PAGE),
    "get": MESSAGE,
    "sessions": shape(("sessions",), sessions=array(SESSION), **PAGE),
    "search": shape(("matches",), matches=array(RANKED), more=BOOLEAN,
                    next_offset=INTEGER_OR_NULL, total=INTEGER),
    "working_set": shape(("recent", "closest"), session_id=STRING, recent=array(RANKED),
                         closest=array(RANKED)),
    "status": shape(("totals",), totals=shape(), sessions=array(shape())),
    "preview": shape(("entries",), entries=array(shape(("message_id",), message_id=STRING,
                                                       preview=STRING)),
                     total_messages=INTEGER, total_pages=INTEGER),
    "relations": shape(("relations",), session_id=STRING, relations=array(RELATION), **PAGE),
    "path": shape(("path",), session_id=STRING, path=array(MESSAGE), **PAGE),
    "leaves": shape(("nodes",), session_id=STRING,
                    nodes=array(shape(("message_id",), message_id=STRING, role=STRING,
                                      continuations=INTEGER)), **PAGE),
    "graph": shape(("nodes",), session_id=STRING, nodes=array(MESSAGE),
                   relations=array(RELATION), **PAGE),
    "info": shape(),
    "delete": shape(("message_id",), message_id=STRING, mode=STRING, deleted=BOOLEAN),
    "mark": shape(("message_ids",), message_ids=array(STRING), marked=BOOLEAN),
    "session_delete": shape(("session_id",), session_id=STRING, deleted=BOOLEAN),
}


def output_schema(tool: str) -> dict[str, Any]:
    """A tool's result: the command's `store` and `data`."""
    return shape(("store", "data"),
                 store={"enum": ["logger", "file", "both"]},
                 data=DATA[tool])
