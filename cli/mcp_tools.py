"""The MCP server's tools (cli.mcp_cmd): one per CLI command, each a typed function whose
parameters are the command's options and whose body turns them into that command's argv. The
server runs that argv through the CLI's own code (cli.main.run), so a tool answers exactly what
the command prints: its `data` and `store`, or its error with the exit code's meaning.

A tool for a new command is one more function here, decorated with `@tool`: its docstring is
the description an agent reads, its annotated parameters the input schema. Values go into the
argv as `--option=value`, so a text starting with `-` stays a text, and nothing is quoted:
the argv never meets a shell.
"""

import json
from collections.abc import Callable
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import Field, WrapValidator

from agent_memory.cli.argv import options
from agent_memory.cli.errors import MEANINGS, USAGE
from agent_memory.outbox import contract


class Tool(NamedTuple):
    name: str
    argv: Callable[..., list[str]]  # the typed function: the tool's arguments -> the CLI argv
    title: str
    read_only: bool
    destructive: bool  # may erase what cannot be had back (a hard delete, a session delete)
    idempotent: bool  # calling it again with the same arguments changes nothing more
    group: str  # core, navigate or forget (`agent-memory mcp --tools`)


TOOLS: list[Tool] = []
GROUPS = ("core", "navigate", "forget")


def tool(title: str, group: str, read_only: bool, destructive: bool = False,
         idempotent: bool | None = None):
    """Register a tool. Reads are idempotent; a write is only when `idempotent` says so."""
    def register(function: Callable[..., list[str]]) -> Callable[..., list[str]]:
        TOOLS.append(Tool(function.__name__, function, title, read_only, destructive,
                          read_only if idempotent is None else idempotent, group))
        return function
    return register


def selected(names: str | None) -> list[Tool]:
    """The tools `--tools` names: a comma-separated list of tool names and groups (core,
    navigate, forget, all); all of them without a list. ValueError names what is unknown."""
    if names is None:
        return list(TOOLS)
    wanted: set[str] = set()
    by_name = {t.name for t in TOOLS}
    for word in (w.strip() for w in names.split(",")):
        if word == "all":
            wanted |= by_name
        elif word in GROUPS:
            wanted |= {t.name for t in TOOLS if t.group == word}
        elif word in by_name:
            wanted.add(word)
        else:
            raise ValueError(f"--tools: {word!r} is neither a tool nor a group (groups: "
                             f"{', '.join(GROUPS)}, all; tools: {', '.join(sorted(by_name))})")
    return [t for t in TOOLS if t.name in wanted]


def _absent_or(value: Any, validate) -> Any:
    """null, and for a text the empty string, mean "left out" (a model whose client demands
    every field, as strict schemas do, fills a field it means to leave out with one of them)."""
    return None if value is None or value == "" else validate(value)


def _nullable(schema: dict[str, Any]) -> None:
    """The property's type with null beside it (`"type": ["integer", "null"]`, null among an
    enum's values), so the `default: null` it carries is valid against it and a client may
    send null (JSON Schema 2020-12; strict-schema converters keep it)."""
    schema["type"] = [schema["type"], "null"]
    if "enum" in schema:
        schema["enum"] = [*schema["enum"], None]


def optional(kind: Any, description: str) -> Any:
    """An option the caller may leave out (or send as null): the CLI's default then applies.
    Typed as `kind`, not `kind | None`: the SDK would read a string field that may be None
    as JSON first, turning a title "null" into nothing and "[1]" into a list. The schema
    says `kind` or null (_nullable)."""
    return Annotated[kind, WrapValidator(_absent_or),
                     Field(description=description, json_schema_extra=_nullable)]


def _as_object(value: Any, validate) -> Any:
    if value is None or value == "":
        return None
    if isinstance(value, str):  # the SDK parses JSON text first; what reaches here is not JSON
        raise ValueError("must be a JSON object (or its JSON text)")
    if not isinstance(value, dict):
        raise ValueError("must be a JSON object")
    return value


def _object_or_text(schema: dict[str, Any]) -> None:
    """A free-form object is advertised as its JSON text (a string) or null: strict-schema
    converters refuse an object whose properties are not declared. An object is accepted
    too."""
    schema.clear()
    schema.update({"type": ["string", "null"], "default": None})


def json_object(description: str) -> Any:
    """An optional free-form JSON object, kept verbatim (`metadata`, `attributes`)."""
    return Annotated[Any, WrapValidator(_as_object),
                     Field(description=description + ", as a JSON object or its JSON text",
                           json_schema_extra=_object_or_text)]


def required(kind: Any, description: str) -> Any:
    return Annotated[kind, Field(description=description)]


def answer(envelope: dict[str, Any]) -> dict[str, Any]:
    """A successful command's answer as the tool's result: its `data` and `store`."""
    return {"store": envelope["store"], "data": envelope["data"]}


def error_text(exit_code: int, envelope: dict[str, Any]) -> str:
    """A failed command as the tool error's text: the CLI's code and message (and details),
    the exit code it would have exited with and what that code means."""
    error = envelope["error"]
    body = {"code": error["code"], "message": error["message"], "exit_code": exit_code,
            "meaning": MEANINGS.get(exit_code, "unexpected failure")}
    if "details" in error:
        body["details"] = error["details"]
    return json.dumps(body, ensure_ascii=False)


def invalid_arguments_text(errors: list[dict[str, Any]]) -> str:
    """Arguments that do not match a tool's input schema, in the shape of a command's usage
    error (nothing was run): each field named with what is wrong, not the value given."""
    fields = [".".join(str(part) for part in e["loc"]) or "arguments" for e in errors]
    problems = "; ".join(f"{field}: {e['msg']}" for field, e in zip(fields, errors))
    return error_text(USAGE, {"error": {"code": "USAGE",
                                        "message": f"invalid arguments: {problems}",
                                        "details": {"fields": fields}}})


Kind = Literal["human", "model", "tool", "system"]
Mode = Literal["resolved", "full"]

SESSION_ID = "the session's id (letters, digits, '.', '_', '-')"
MESSAGE_ID = "a message's id, as `write` answered it"
BLOCK_SIZE = f"entries per answer (default {contract.DEFAULT_BLOCK_SIZE}, at most " \
             f"{contract.MAX_BLOCK_SIZE})"
CONTINUATION = "the previous answer's `continuation`, to read on"
MODE = "resolved (default): each correction chain once, final wording; full: every version"
DEFAULT_MAX_CHARS = 40_000  # cli.budget.DEFAULT_MCP (not imported: the tool table stays light)
MAX_CHARS = f"at most this many characters in this result (default {DEFAULT_MAX_CHARS}; 0: " \
            f"no limit); a cut answer says how to read on"


def budgeted(argv: list[str], max_chars: int | None) -> list[str]:
    """A read command's argv with its budget: the caller's, else the server's default,
    measured on the tool result's text."""
    chars = DEFAULT_MAX_CHARS if max_chars is None else max_chars
    return [*argv, f"--max-chars={chars}", "--answer-form=mcp"]


@tool("Open a session", "core", read_only=False, idempotent=True)
def session_open(
        session_id: required(str, SESSION_ID),
        project_id: required(str, "the project this session belongs to"),
        dialogue_kind: required(Annotated[list[Kind], Field(min_length=2, max_length=2)],
                                "the sender's and the receiver's kinds, e.g. [\"human\", "
                                "\"model\"]"),
        participant: required(Annotated[list[str], Field(min_length=1)],
                              "the participants' identities, e.g. [\"alice\", \"claude\"]"),
        title: optional(str, "a title for the session") = None,
        metadata: json_object("kept verbatim") = None,
) -> list[str]:
    """Open a dialogue session; messages are written into an open session. Opening it again
    with the same attributes answers as the first time. Mirrors `agent-memory session open`."""
    return options(["session", "open"], session_id=session_id, project_id=project_id,
                   dialogue_kind=",".join(dialogue_kind), participant=participant,
                   title=title, metadata=metadata)


@tool("Close a session", "core", read_only=False, idempotent=True)
def session_close(session_id: required(str, SESSION_ID)) -> list[str]:
    """Close a session: writing to it is refused until it is reopened. Mirrors `agent-memory
    session close`."""
    return options(["session", "close"], session_id=session_id)


@tool("Reopen a session", "core", read_only=False, idempotent=True)
def session_reopen(session_id: required(str, SESSION_ID)) -> list[str]:
    """Reopen a closed session. Mirrors `agent-memory session reopen`."""
    return options(["session", "reopen"], session_id=session_id)


@tool("Record a message", "core", read_only=False)
def write(
        session_id: required(str, SESSION_ID),
        sender_kind: required(Kind, "who sent it"),
        sender_identity: required(str, "the sender's identity, e.g. \"alice\""),
        receiver_kind: required(Kind, "who it is for"),
        receiver_identity: required(str, "the receiver's identity, e.g. \"claude\""),
        text: required(str, "the text, kept exactly (at most 1 MiB)"),
        priority: optional(int, "0 (default) is the ordinary flow") = None,
        message_id: optional(str, "your own id (a version 4 UUID) to make retries safe: the "
                                  "same id and content again writes nothing") = None,
        occurred_at: optional(str, "when it happened, RFC 3339 with an offset (default: now)") = None,
        relation: optional(list[str], "KIND:MESSAGE_ID links to earlier messages, KIND "
                                      "reply, influence or tool-result") = None,
        corrects: optional(str, "the id of an earlier message this one corrects") = None,
        attributes: json_object("kept verbatim") = None,
        wait: optional(float, "seconds to wait for the logger's confirmation (default 1)") = None,
        embed_budget: optional(float, "seconds the embedder may take for the vector "
                                      "(default 2; 0: later)") = None,
) -> list[str]:
    """Record one message in a session. It lands in the project's outbox first (durable once
    this answers), then goes to the logger: `store` "logger" when the logger confirmed it,
    "file" when it waits in the outbox (logger unreachable: `forwarded` false and the reason;
    it is delivered later, do not write it again). The answer carries its `message_id`.
    Mirrors `agent-memory write`."""
    return options(["write"], session_id=session_id, sender_kind=sender_kind,
                   sender_identity=sender_identity, receiver_kind=receiver_kind,
                   receiver_identity=receiver_identity, text=text, priority=priority,
                   message_id=message_id, occurred_at=occurred_at, relation=relation,
                   corrects=corrects, attributes=attributes, wait=wait,
                   embed_budget=embed_budget)


@tool("Read a session", "core", read_only=True)
def read(
        session_id: required(str, SESSION_ID),
        start: optional(int, "the first sequence number (default 0)") = None,
        block_size: optional(int, BLOCK_SIZE) = None,
        continuation: optional(str, CONTINUATION) = None,
        mode: optional(Mode, MODE) = None,
        show_deleted: optional(bool, "also the soft-deleted messages") = None,
        max_chars: optional(int, MAX_CHARS) = None,
) -> list[str]:
    """A window of a session's messages in arrival order (`sequence_number`), with `more` and
    a `continuation` to read on. Mirrors `agent-memory read`."""
    argv = options(["read"], session_id=session_id, start=start, block_size=block_size,
                   continuation=continuation, mode=mode, show_deleted=show_deleted)
    return budgeted(argv, max_chars)


@tool("Preview messages by time", "navigate", read_only=True)
def preview(
        session_id: optional(str, "only this session's messages") = None,
        caller: optional(str, "only messages from this sender identity") = None,
        recipient: optional(str, "only messages to this receiver identity") = None,
        period_start: optional(str, "only messages that occurred at or after this RFC 3339 "
                                    "time") = None,
        period_end: optional(str, "only messages that occurred at or before this RFC 3339 "
                                  "time") = None,
        page_offset: optional(int, "which page, from 0") = None,
        page_size: optional(int, f"entries per page (default {contract.DEFAULT_PAGE_SIZE}; at "
                                  f"most {contract.MAX_PAGE_SIZE})") = None,
        preview_size: optional(int, f"characters of text per entry (default "
                                    f"{contract.PREVIEW_SIZE})") = None,
        show_deleted: optional(bool, "also the soft-deleted messages") = None,
        max_chars: optional(int, MAX_CHARS) = None,
) -> list[str]:
    """A paged listing of messages across sessions by time, each with the start of its text
    (`entries`, `total_messages`, `total_pages`): to find a period or a person's messages
    before reading them whole. A page cut to fit `max_chars` says `more` with
    `next_page_offset` and `next_page_size`: ask for those to read on. Mirrors `agent-memory
    read --preview`."""
    argv = options(["read", "--preview"], session_id=session_id, caller=caller,
                   recipient=recipient, period_start=period_start, period_end=period_end,
                   page_offset=page_offset, page_size=page_size, preview_size=preview_size,
                   show_deleted=show_deleted)
    return budgeted(argv, max_chars)


@tool("A session's relations", "navigate", read_only=True)
def relations(
        session_id: required(str, SESSION_ID),
        block_size: optional(int, BLOCK_SIZE) = None,
        continuation: optional(str, CONTINUATION) = None,
        max_chars: optional(int, MAX_CHARS) = None,
) -> list[str]:
    """Every relation of a session: `from_message_id`, `to_message_id` and `kind` (reply,
    influence, tool-result, correction). Mirrors `agent-memory relations`."""
    argv = options(["relations"], session_id=session_id, block_size=block_size,
                   continuation=continuation)
    return budgeted(argv, max_chars)


@tool("The line back to the root", "navigate", read_only=True)
def path(
        session_id: required(str, SESSION_ID),
        node_id: required(str, MESSAGE_ID),
        mode: optional(Mode, MODE) = None,
        block_size: optional(int, BLOCK_SIZE) = None,
        continuation: optional(str, CONTINUATION) = None,
        max_chars: optional(int, MAX_CHARS) = None,
) -> list[str]:
    """The line from a message back to its root: the message, what it replied to (or otherwise
    continued from), and so on (`path`). Mirrors `agent-memory path`."""
    argv = options(["path"], session_id=session_id, node_id=node_id, mode=mode,
                   block_size=block_size, continuation=continuation)
    return budgeted(argv, max_chars)


@tool("Leaves and branching points", "navigate", read_only=True)
def leaves(
        session_id: required(str, SESSION_ID),
        block_size: optional(int, BLOCK_SIZE) = None,
        continuation: optional(str, CONTINUATION) = None,
        max_chars: optional(int, MAX_CHARS) = None,
) -> list[str]:
    """Where a dialogue ends and where it branched: leaves (nothing continues from them) and
    branching points with how many messages continue from each (`nodes`). Mirrors
    `agent-memory leaves`."""
    argv = options(["leaves"], session_id=session_id, block_size=block_size,
                   continuation=continuation)
    return budgeted(argv, max_chars)


@tool("The graph under a message", "navigate", read_only=True)
def graph(
        session_id: required(str, SESSION_ID),
        anchor: required(str, MESSAGE_ID),
        depth: optional(int, f"levels below the anchor (0: the anchor alone; default "
                             f"{contract.DEFAULT_GRAPH_DEPTH})") = None,
        block_size: optional(int, BLOCK_SIZE) = None,
        continuation: optional(str, CONTINUATION) = None,
        max_chars: optional(int, MAX_CHARS) = None,
) -> list[str]:
    """The messages that continue from a message, level by level, with the relations between
    them (`nodes` with their `level`, `relations`). Mirrors `agent-memory graph`."""
    argv = options(["graph"], session_id=session_id, anchor=anchor, depth=depth,
                   block_size=block_size, continuation=continuation)
    return budgeted(argv, max_chars)


@tool("The logger's contents", "navigate", read_only=True)
def info(section: optional(str, "one section (default: the table of contents)") = None,
         max_chars: optional(int, MAX_CHARS) = None) -> list[str]:
    """The logger's description of itself: its table of contents, or one section (limits,
    codes, relations, service). Mirrors `agent-memory info`."""
    argv = options(["info"], section=section)
    return budgeted(argv, max_chars)


@tool("Delete a message", "forget", read_only=False, destructive=True, idempotent=True)
def delete(
        message_id: required(str, MESSAGE_ID),
        mode: required(Literal["soft", "hard"], "soft: hidden from reads; hard: its text "
                                               "erased here and in the logger"),
        session_id: optional(str, "the message's session, only when neither the store nor a "
                                  "reachable logger knows the message") = None,
        wait: optional(float, "seconds to wait for the logger's confirmation (default 1)") = None,
) -> list[str]:
    """Delete a message (a hard delete is how a secret written by mistake is forgotten). It
    takes effect here at once and reaches the logger in order, now or once it is back.
    Mirrors `agent-memory delete`."""
    return [*options(["delete"], mode=mode, session_id=session_id, wait=wait), "--", message_id]


@tool("Mark messages deleted", "forget", read_only=False, idempotent=True)
def mark(
        message_ids: required(Annotated[list[str], Field(min_length=1)],
                              "the messages, all of one session"),
        unmark: optional(bool, "clear the marker instead (restore them)") = None,
        session_id: optional(str, "their session, only when neither the store nor a reachable "
                                  "logger knows them") = None,
        wait: optional(float, "seconds to wait for the logger's confirmation (default 1)") = None,
) -> list[str]:
    """Set (or clear) the soft-deletion marker of messages, all or nothing: marked messages are
    hidden from reads. Mirrors `agent-memory mark`."""
    return [*options(["mark"], unmark=unmark, session_id=session_id, wait=wait), "--",
            *message_ids]


@tool("Delete a session", "forget", read_only=False, destructive=True, idempotent=True)
def session_delete(
        session_id: required(str, SESSION_ID),
        confirm: required(str, "the session's id once more: deleting is irreversible"),
        wait: optional(float, "seconds to wait for the logger's confirmation (default 1)") = None,
) -> list[str]:
    """Delete a whole session with all its messages, relations and vectors, here (their texts
    erased from every file) and in the logger. Irreversible. Mirrors `agent-memory session
    delete`."""
    return options(["session", "delete"], session_id=session_id, confirm=confirm, wait=wait)


@tool("Get a message", "core", read_only=True)
def get(
        message_id: required(str, MESSAGE_ID),
        text_offset: optional(int, "only the text from this character on (from 0)") = None,
        text_length: optional(int, "only this many characters of the text") = None,
        max_chars: optional(int, MAX_CHARS) = None,
) -> list[str]:
    """One message by its id (not found: error code MESSAGE_UNKNOWN, exit code 5). With
    text_offset and/or text_length, only that range of its text (`text_range`: the offset,
    the length answered and the text's total length), so a long text is read in pieces.
    Mirrors `agent-memory get`."""
    return [*budgeted(options(["get"], text_offset=text_offset, text_length=text_length),
                      max_chars), "--", message_id]


@tool("List sessions", "core", read_only=True)
def sessions(
        project_id: optional(str, "only this project's sessions") = None,
        lifecycle: optional(Literal["open", "closed"], "only open or only closed sessions") = None,
        participant: optional(str, "only sessions with this participant") = None,
        dialogue_kind: optional(str, "only this dialogue kind, SENDER-to-RECEIVER, e.g. "
                                     "\"human-to-model\"") = None,
        block_size: optional(int, BLOCK_SIZE) = None,
        continuation: optional(str, CONTINUATION) = None,
        max_chars: optional(int, MAX_CHARS) = None,
) -> list[str]:
    """List sessions, with their attributes and lifecycle. Mirrors `agent-memory sessions`."""
    argv = options(["sessions"], project_id=project_id, lifecycle=lifecycle,
                   participant=participant, dialogue_kind=dialogue_kind, block_size=block_size,
                   continuation=continuation)
    return budgeted(argv, max_chars)


@tool("Search by meaning", "core", read_only=True)
def search(
        query: required(str, "what to look for, in words"),
        scope: required(Literal["session", "project", "all_projects"],
                        "where to look; session and project need `target`"),
        target: optional(str, "the session's or the project's id, for those scopes") = None,
        page_size: optional(int, f"matches per page (default {contract.DEFAULT_PAGE_SIZE}; at "
                                      f"most {contract.MAX_PAGE_SIZE})") = None,
        page_offset: optional(int, "zero-based offset of the page (`next_offset` of the last "
                                   "answer)") = None,
        mode: optional(Mode, MODE) = None,
        sender_kind: optional(Kind, "only messages from this kind of sender") = None,
        priority: optional(int, "only messages of this priority") = None,
        occurred_from: optional(str, "only messages that occurred at or after this RFC 3339 "
                                     "time") = None,
        occurred_to: optional(str, "only messages that occurred at or before this RFC 3339 "
                                   "time") = None,
        filter_session_id: optional(str, "only this session's messages") = None,
        filter_project_id: optional(str, "only this project's messages") = None,
        ranking: optional(Literal["auto", "vector", "bm25"],
                          "auto (default): by meaning, else by words; vector: by meaning or "
                          "fail; bm25: by words") = None,
        max_chars: optional(int, MAX_CHARS) = None,
) -> list[str]:
    """Messages closest in meaning to a query, best first (`matches`, each with its `score`;
    `more`, `next_offset`). Mirrors `agent-memory search`."""
    argv = options(["search"], query=query, scope=scope, target=target, page_size=page_size,
                   page_offset=page_offset, mode=mode, sender_kind=sender_kind,
                   priority=priority, occurred_from=occurred_from, occurred_to=occurred_to,
                   filter_session_id=filter_session_id, filter_project_id=filter_project_id,
                   ranking=ranking)
    return budgeted(argv, max_chars)


@tool("What to keep in mind now", "core", read_only=True)
def working_set(
        session_id: required(str, SESSION_ID),
        anchor_text: optional(str, "what the work is about now, in words (this or "
                                   "`anchor_message_id`)") = None,
        anchor_message_id: optional(str, "a message of the session the work is about now (this "
                                         "or `anchor_text`)") = None,
        recency_count: optional(int, f"how many of the latest messages (default "
                                          f"{contract.DEFAULT_RECENCY_COUNT})") = None,
        similarity_count: optional(int, f"how many of the closest messages (default "
                                             f"{contract.DEFAULT_SIMILARITY_COUNT})") = None,
        mode: optional(Mode, MODE) = None,
        ranking: optional(Literal["auto", "vector", "bm25"],
                          "auto (default): closest by meaning, else by words; vector: by "
                          "meaning or fail; bm25: by words") = None,
        max_chars: optional(int, MAX_CHARS) = None,
) -> list[str]:
    """What to keep in mind now: a session's latest messages (`recent`, newest first) and those
    closest to an anchor (`closest`). Messages left out to fit `max_chars` are named in
    `left_out` (their ids, for `get`). Mirrors `agent-memory working-set`."""
    argv = options(["working-set"], session_id=session_id, anchor_text=anchor_text,
                   anchor_message_id=anchor_message_id, recency_count=recency_count,
                   similarity_count=similarity_count, mode=mode, ranking=ranking)
    return budgeted(argv, max_chars)


@tool("The store's status", "core", read_only=True)
def status(probe: optional(bool, "also ask whether the logger and the embedder answer") = None
           ) -> list[str]:
    """The store's state: what waits in the outbox for the logger, what is quarantined or lacks
    a vector, and whether the project's agent runs. Mirrors `agent-memory status`."""
    return options(["status"], probe=probe)
