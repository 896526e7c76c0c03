"""Every command, declared once (the CLI contract: names and options agents and scripts depend
on): its name, one-line help, description, examples and the exit codes it can answer; its
options, each with its help, default, accepted values (read from outbox.contract), environment
variable and an example value; the module that runs it, whether the project's watcher serves it,
and its MCP tools. The parser and its --help, dispatch, the served set, the typed calls, the MCP
tools and the reference (docs/reference/cli.md and mcp-tools.md, `make docs`) are built from
this table (cli.registry).

A new command is its module (`run(ctx, args)`) plus its entry here; a new option is its
`Option(...)` with `help` (what it does, without its default), `default` or `default_text`, and
an `example` where the value's form is not plain. tests/docs checks that every option has help,
every command an example that parses, and that the reference matches (`make docs`)."""

from __future__ import annotations

from agent_memory.cli.exit_codes import (CONFIG_INVALID, EMBEDDING_UNAVAILABLE, LOGGER_REFUSED,
                                         LOGGER_UNREACHABLE, NO_ROOM, NOT_FOUND, STORE_HELD,
                                         STORE_UNAVAILABLE)
from agent_memory.cli.registry import (FLAG, INTEGER, JSON, NAMES, POSITIONAL, POSITIONALS,
                                       SECONDS, TEXTS, Command, Example, Option, Param, Tool)
from agent_memory.outbox import contract

STORE_MODES = ("auto", "logger", "file")
PROTOCOLS = ("http", "https", "mtls")
ANSWER_FORMS = ("line", "mcp")
KINDS = contract.PARTICIPANT_KINDS
HELP_TOPICS = ("exit-codes", "environment")

# The exit codes a command can answer besides 0, 2 and 130 (cli.exit_codes), by what it does.
READS = (LOGGER_REFUSED, STORE_UNAVAILABLE, LOGGER_UNREACHABLE, CONFIG_INVALID)
WRITES = (LOGGER_REFUSED, STORE_UNAVAILABLE, LOGGER_UNREACHABLE, CONFIG_INVALID, NO_ROOM)

# The global options, accepted before or after the command name.
GLOBALS = (
    Option("--config", metavar="PATH", env="AGENT_MEMORY_CONFIG",
           default_text="~/.config/vvz-agent-memory/config.json",
           example="~/.config/vvz-agent-memory/config.json",
           help="the configuration document (which logger and embedder, and how); with none "
                "at all the file store is the whole memory"),
    Option("--store", choices=STORE_MODES, default="auto",
           help="auto: the logger when it answers, else the file store; logger: the logger or "
                "nothing (exit 4); file: the file store only, never the network"),
    Option("--project-root", metavar="DIR",
           default_text="the git top level of the working directory, else the working "
                        "directory", example="~/src/shop",
           help="the project whose .agent-memory/ the command uses"),
    Option("--no-agent", FLAG,
           help="neither ask nor start the project's watcher (the background sync process): "
                "the command talks to the fleet itself (AGENT_MEMORY_AGENT=off, or the "
                "configuration's agent.mode \"off\", does the same for every command)"),
)

# The budget of the commands that answer texts or lists (cli.budget); --answer-form is the MCP
# server's, which measures its tool result's text instead of the printed line.
BUDGET = (
    Option("--max-chars", INTEGER, metavar="N", example="100000",
           default_text="25000, or the configuration's output.max_chars (MCP tools: 40000)",
           help="the whole answer is at most N characters (0: no limit, else at least 1000): a "
                "longer one holds fewer items (more: true, and a way to read on), then shows "
                "long texts as head and tail (`<key>_cut` says what is shown)"),
    Option("--answer-form", choices=ANSWER_FORMS, default="line", hidden=True,
           help="what the budget measures: the printed line, or an MCP tool result's text "
                "(set by the MCP server)"),
)

SESSION_ID_HELP = "the session's id (1 to 128 letters, digits, '.', '_', '-')"
MESSAGE_ID_HELP = "a message's id, as `write` answered it"
MESSAGE_ID_EXAMPLE = "6f1c8f0e-4b8e-4d53-9d5e-8a3c1f2e7b10"
SESSION_ID = Option("--session-id", required=True, metavar="ID", help=SESSION_ID_HELP,
                    example="chat-42")
BLOCK_SIZE = Option("--block-size", INTEGER, metavar="N",
                    default_text=str(contract.DEFAULT_BLOCK_SIZE),
                    help=f"entries per answer (at most {contract.MAX_BLOCK_SIZE})")
CONTINUATION = Option("--continuation", metavar="C", example="seq:50",
                      help="the previous answer's `continuation`, to read on")
MODE = Option("--mode", choices=contract.READ_MODES, default=contract.DEFAULT_MODE,
              help="resolved: each correction chain once, with its final wording; full: every "
                   "version as recorded")
SHOW_DELETED = Option("--show-deleted", FLAG, help="also the soft-deleted messages")
WAIT = Option("--wait", SECONDS, default=1.0, metavar="SECONDS",
              help="how long to wait for the logger's confirmation (0: do not wait)")
MESSAGE = Option("message_id", POSITIONAL, metavar="MESSAGE_ID", help=MESSAGE_ID_HELP,
                 example=MESSAGE_ID_EXAMPLE)
FORGETTING = (
    Option("--session-id", metavar="ID", example="chat-42",
           help="the message's session, only when neither the file store nor a reachable "
                "logger knows it"),
    WAIT,
)
RANKING = Option("--ranking", choices=contract.RANKINGS, default="auto",
                 help="auto: by meaning (a vector), else by words (BM25 over the local texts) "
                      "when no vector can be had; vector: by meaning or exit 7; bm25: by words")
DIALOGUE_KIND_FORMS = "SENDER-to-RECEIVER (SENDER,RECEIVER is accepted too)"


def _timeout(what: str) -> Option:
    return Option("--timeout", SECONDS, default=30.0, metavar="SECONDS",
                  help=f"how long to wait for it to {what}")


SESSION = Command("session", "open, close, reopen or delete a dialogue session",
                  module="session_cmd", actions=(
    Command("open", "open a session", (
        SESSION_ID,
        Option("--project-id", required=True, metavar="P", example="shop",
               help="the project this session belongs to"),
        Option("--dialogue-kind", required=True, metavar="KIND-to-KIND", tool_choices=KINDS,
               tool_pair="-to-", example="human-to-model",
               help=f"who talks to whom: the sender's and the receiver's kinds, each "
                    f"{'|'.join(KINDS)}, as {DIALOGUE_KIND_FORMS}"),
        Option("--participant", NAMES, required=True, metavar="NAME", dest="participants",
               example="alice", help="the participants' identities, one or more (repeatable)"),
        Option("--title", metavar="T", help="a title for the session"),
        Option("--metadata", JSON, metavar="JSON", example='{"ticket": "SHOP-7"}',
               help="a JSON object kept verbatim with the session"),
    ), description="""
        A session holds one dialogue; messages are written into an open session. Opening it
        again with the same attributes answers as the first time (nothing is written twice);
        with other attributes it is refused (SESSION_CONFLICT, exit 1).""",
        examples=(Example("agent-memory session open --session-id chat-42 --project-id shop "
                          "--dialogue-kind human-to-model --participant alice --participant "
                          "claude --title 'Refund for order 1042'",
                          "open a session between a person and a model"),),
        exit_codes=WRITES, tools=(Tool("session_open", "Open a session", "core", """
        Open a dialogue session; messages are written into an open session. Opening it again
        with the same attributes answers as the first time. Mirrors `agent-memory session
        open`.""", (
        "session_id", "project_id",
        Param("dialogue_kind", help="the sender's and the receiver's kinds, e.g. [\"human\", "
                                    "\"model\"]"),
        Param("participant", help="the participants' identities, e.g. [\"alice\", \"claude\"]"),
        "title", "metadata"), read_only=False, idempotent=True),)),
    Command("close", "close a session: writes to it are refused until it is reopened",
            (SESSION_ID,), exit_codes=WRITES,
            examples=(Example("agent-memory session close --session-id chat-42",
                              "close a finished session"),),
            tools=(Tool("session_close", "Close a session", "core", """
        Close a session: writing to it is refused until it is reopened. Mirrors `agent-memory
        session close`.""", ("session_id",), read_only=False, idempotent=True),)),
    Command("reopen", "reopen a closed session", (SESSION_ID,), exit_codes=WRITES,
            examples=(Example("agent-memory session reopen --session-id chat-42",
                              "write to a closed session again"),),
            tools=(Tool("session_reopen", "Reopen a session", "core", """
        Reopen a closed session. Mirrors `agent-memory session reopen`.""", ("session_id",),
             read_only=False, idempotent=True),)),
    Command("delete", "delete a session with all its messages, relations and vectors, here "
                      "and in the logger: irreversible (delete_session)", (
        SESSION_ID,
        Option("--confirm", required=True, metavar="ID", example="chat-42",
               help="the session id once more, so a slip cannot delete a session: deleting is "
                    "irreversible"),
        WAIT,
    ), description="""
        Every text of the session leaves every file of the store before the command returns
        (pending, imported and quarantined, with the derived index); the logger gets the
        delete in order, now or once it is back. Repeating it answers success and writes
        nothing new.""",
        examples=(Example("agent-memory session delete --session-id chat-42 --confirm chat-42",
                          "forget a whole session"),),
        exit_codes=WRITES, tools=(Tool("session_delete", "Delete a session", "forget", """
        Delete a whole session with all its messages, relations and vectors, here (their texts
        erased from every file) and in the logger. Irreversible. Mirrors `agent-memory session
        delete`.""", ("session_id", "confirm", "wait"), read_only=False, destructive=True,
                   idempotent=True),)),
))

WRITE = Command("write", "record one message (text from --text or stdin)", (
    SESSION_ID,
    Option("--sender-kind", required=True, metavar="K", tool_choices=KINDS,
           help="what kind of participant sent it"),
    Option("--sender-identity", required=True, metavar="I", example="alice",
           help="the sender's identity"),
    Option("--receiver-kind", required=True, metavar="K", tool_choices=KINDS,
           help="what kind of participant it is for"),
    Option("--receiver-identity", required=True, metavar="I", example="claude",
           help="the receiver's identity"),
    Option("--text", metavar="T", default_text="read from stdin",
           help="the message text, kept exactly (non-empty UTF-8, at most 1 MiB)"),
    Option("--priority", INTEGER, metavar="N", default_text=str(contract.DEFAULT_PRIORITY),
           help="the message's priority; 0 is the ordinary flow"),
    Option("--message-id", metavar="UUID", default_text="a new version 4 UUID",
           example=MESSAGE_ID_EXAMPLE,
           help="your own id for the message (a version 4 UUID), to make retries safe: the "
                "same id and content again writes nothing"),
    Option("--occurred-at", metavar="RFC3339", default_text="now",
           example="2026-12-01T09:30:00+01:00",
           help="when it happened: RFC 3339 with an offset, stored in UTC (for replays)"),
    Option("--relation", TEXTS, metavar="KIND:MESSAGE_ID", example=f"reply:{MESSAGE_ID_EXAMPLE}",
           help=f"a link to an earlier message of the session, KIND "
                f"{' or '.join(contract.DECLARABLE_RELATION_KINDS)}; repeatable"),
    Option("--corrects", metavar="MESSAGE_ID", example=MESSAGE_ID_EXAMPLE,
           help="the id of an earlier message this one corrects"),
    Option("--attributes", JSON, metavar="JSON", example='{"model": "claude-sonnet"}',
           help="a JSON object kept verbatim with the message"),
    Option("--wait", SECONDS, default=1.0, metavar="SECONDS",
           help="how long to wait for the logger's confirmation, through the project's "
                "watcher or for the sync lock inline (0: hand it over without waiting; a watcher "
                "still starting takes it at once)"),
    Option("--embed-budget", SECONDS, metavar="SECONDS", env="AGENT_MEMORY_EMBED_BUDGET",
           default_text="2 (0 with --store file)",
           help="how long the embedder may take to give the message's vector (0: leave it to "
                "`embed` or the watcher)"),
), module="write_cmd", description="""
    The message lands in the project's outbox (.agent-memory/) first, durable once this
    answers, then goes to the logger: "store": "logger" when the logger confirmed it, "file"
    when it waits in the outbox ("forwarded": false and the reason: it is delivered later by
    the watcher, `sync` or cron; do not write it again). Give each message its own
    --message-id when a call may be retried: a retry then writes nothing twice.""",
    examples=(
        Example("agent-memory write --session-id chat-42 --sender-kind human "
                "--sender-identity alice --receiver-kind model --receiver-identity claude "
                "--text 'Where is my refund?'", "record what a person said to a model"),
        Example("agent-memory write --session-id chat-42 --sender-kind model "
                "--sender-identity claude --receiver-kind human --receiver-identity alice "
                f"--relation reply:{MESSAGE_ID_EXAMPLE} --text 'It left on Monday.'",
                "record the model's reply, linked to the question"),
    ), exit_codes=WRITES, tools=(Tool("write", "Record a message", "core", """
    Record one message in a session. It lands in the project's outbox first (durable once
    this answers), then goes to the logger: `store` "logger" when the logger confirmed it,
    "file" when it waits in the outbox (logger unreachable: `forwarded` false and the reason;
    it is delivered later, do not write it again). The answer carries its `message_id`.
    Mirrors `agent-memory write`.""", (
    "session_id", "sender_kind", "sender_identity", "receiver_kind", "receiver_identity",
    Param("text", required=True, help="the text, kept exactly (at most 1 MiB)"), "priority",
    "message_id", "occurred_at",
    Param("relation", help=f"KIND:MESSAGE_ID links to earlier messages, KIND "
                           f"{', '.join(contract.DECLARABLE_RELATION_KINDS)}"),
    "corrects", "attributes",
    Param("wait", help="seconds to wait for the logger's confirmation (default 1)"),
    Param("embed_budget", help="seconds the embedder may take for the vector (default 2; 0: "
                               "later)")), read_only=False),))

PREVIEW = "preview"
READ = Command("read", "a window of a session's messages in arrival order", (
    Option("--session-id", metavar="ID", example="chat-42",
           help="the session (required, except with --preview where it filters)"),
    Option("--start", INTEGER, default=0, metavar="N",
           help="the first sequence number"),
    BLOCK_SIZE, CONTINUATION, MODE, SHOW_DELETED,
    Option("--preview", FLAG, group=PREVIEW,
           help="list the start of each message's text across sessions, by time, instead of a "
                "session's window"),
    Option("--caller", metavar="IDENTITY", group=PREVIEW, example="alice",
           help="only messages from this sender identity"),
    Option("--recipient", metavar="IDENTITY", group=PREVIEW, example="claude",
           help="only messages to this receiver identity"),
    Option("--period-start", metavar="RFC3339", group=PREVIEW, example="2026-12-01T00:00:00Z",
           help="only messages that occurred at or after this time"),
    Option("--period-end", metavar="RFC3339", group=PREVIEW, example="2026-12-31T23:59:59Z",
           help="only messages that occurred at or before this time"),
    Option("--page-offset", INTEGER, metavar="N", group=PREVIEW, default_text="0",
           help="which page, counted in pages from 0 (a cut answer's `next_page_offset`)"),
    Option("--page-size", INTEGER, metavar="N", group=PREVIEW,
           default_text=str(contract.DEFAULT_PAGE_SIZE),
           help=f"entries per page (at most {contract.MAX_PAGE_SIZE}; a cut answer's "
                f"`next_page_size`)"),
    Option("--preview-size", INTEGER, metavar="N", group=PREVIEW,
           default_text=str(contract.PREVIEW_SIZE), help="characters of text per entry"),
), module="read_cmd", served=True, budget=BUDGET, groups={
    PREVIEW: "--preview: a paged listing of text prefixes across sessions, by time "
             "(messages_read's preview form); each filter is optional"},
    description="""
    Messages come in arrival order (`sequence_number`), with `more` and a `continuation` to
    read on; the answer fits --max-chars, a long text shown as head and tail (`get
    --text-offset` reads the rest).""",
    examples=(
        Example("agent-memory read --session-id chat-42", "the first messages of a session"),
        Example("agent-memory read --session-id chat-42 --continuation seq:50",
                "read on from where the last answer stopped"),
        Example("agent-memory read --preview --caller alice --period-start "
                "2026-12-01T00:00:00Z --page-size 20",
                "what alice wrote since December 1st, the start of each text"),
    ), exit_codes=READS,
    tools=(Tool("read", "Read a session", "core", """
    A window of a session's messages in arrival order (`sequence_number`), with `more` and
    a `continuation` to read on. Mirrors `agent-memory read`.""", (
        Param("session_id", required=True, help=SESSION_ID_HELP), "start", "block_size",
        "continuation", "mode", "show_deleted"), read_only=True),
    Tool("preview", "Preview messages by time", "navigate", """
    A paged listing of messages across sessions by time, each with the start of its text
    (`entries`, `total_messages`, `total_pages`): to find a period or a person's messages
    before reading them whole. A page cut to fit `max_chars` says `more` with
    `next_page_offset` and `next_page_size`: ask for those to read on. Mirrors `agent-memory
    read --preview`.""", (
        Param("session_id", help="only this session's messages"), "caller", "recipient",
        "period_start", "period_end", "page_offset", "page_size", "preview_size",
        "show_deleted"), read_only=True, fixed={"preview": True})))

GET = Command("get", "one message by its id", (
    MESSAGE,
    Option("--text-offset", INTEGER, metavar="O", default_text="0",
           help="only the text from this character on (counted from 0)"),
    Option("--text-length", INTEGER, metavar="L", default_text="to the text's end",
           help="only this many characters of the text"),
), module="read_cmd", served=True, budget=BUDGET, description="""
    With --text-offset and/or --text-length, only that range of its text (`text_range`), so a
    text too long for one answer is read in pieces.""",
    examples=(Example(f"agent-memory get {MESSAGE_ID_EXAMPLE}", "one message"),
              Example(f"agent-memory get {MESSAGE_ID_EXAMPLE} --text-offset 20000 "
                      "--text-length 20000", "the next 20,000 characters of a long text")),
    exit_codes=(STORE_UNAVAILABLE, LOGGER_UNREACHABLE, NOT_FOUND, CONFIG_INVALID),
    tools=(Tool("get", "Get a message", "core", """
    One message by its id (not found: error code MESSAGE_UNKNOWN, exit code 5). With
    text_offset and/or text_length, only that range of its text (`text_range`: the offset,
    the length answered and the text's total length), so a long text is read in pieces.
    Mirrors `agent-memory get`.""", ("message_id", "text_offset", "text_length"),
    read_only=True),))

SESSIONS = Command("sessions", "list sessions", (
    Option("--project-id", metavar="P", example="shop", help="only this project's sessions"),
    Option("--lifecycle", choices=contract.LIFECYCLES, help="only open or only closed sessions"),
    Option("--participant", metavar="NAME", example="alice",
           help="only sessions with this participant"),
    Option("--dialogue-kind", metavar="KIND-to-KIND", example="human-to-model",
           help=f"only this dialogue kind, {DIALOGUE_KIND_FORMS}"),
    BLOCK_SIZE, CONTINUATION,
), module="read_cmd", served=True, budget=BUDGET,
    examples=(Example("agent-memory sessions --project-id shop --lifecycle open",
                      "the project's open sessions"),),
    exit_codes=READS, tools=(Tool(
    "sessions", "List sessions", "core", """
    List sessions, with their attributes and lifecycle. Mirrors `agent-memory sessions`.""",
    ("project_id", "lifecycle", "participant", "dialogue_kind", "block_size", "continuation"),
    read_only=True),))

SEARCH = Command("search", "messages closest in meaning to a query (message_search)", (
    Option("--query", required=True, metavar="TEXT", example="refund delay",
           help="what to look for, in words"),
    Option("--scope", required=True, choices=contract.SEARCH_SCOPES,
           help="where to look; session and project need --target"),
    Option("--target", metavar="ID", example="chat-42",
           help="the session's or the project's id, for those scopes"),
    Option("--page-size", INTEGER, metavar="N", default_text=str(contract.DEFAULT_PAGE_SIZE),
           help=f"matches per answer (at most {contract.MAX_PAGE_SIZE})"),
    Option("--offset", INTEGER, metavar="N", dest="page_offset", default_text="0",
           aliases=("--page-offset",),
           help="how many matches to skip, counted in matches (the last answer's "
                "`next_offset`)"),
    MODE,
    Option("--sender-kind", metavar="K", tool_choices=KINDS,
           help="only messages from this kind of sender"),
    Option("--priority", INTEGER, metavar="N", help="only messages of this priority"),
    Option("--occurred-from", metavar="RFC3339", example="2026-12-01T00:00:00Z",
           help="only messages that occurred at or after this time"),
    Option("--occurred-to", metavar="RFC3339", example="2026-12-31T23:59:59Z",
           help="only messages that occurred at or before this time"),
    Option("--filter-session-id", metavar="ID", example="chat-42",
           help="only this session's messages"),
    Option("--filter-project-id", metavar="P", example="shop",
           help="only this project's messages"),
    RANKING,
), module="retrieval_cmd", served=True, budget=BUDGET, description="""
    Best first (`matches`, each with its `score`; `more`, `next_offset`, `total`). Without a
    vector for the query (no embedder, or it is down) the matches are ranked by words (BM25)
    and the answer says "ranking": "bm25".""",
    examples=(Example("agent-memory search --query 'refund delay' --scope project "
                      "--target shop", "what the project's sessions said about refunds"),
              Example("agent-memory search --query 'refund delay' --scope project "
                      "--target shop --offset 20", "the next matches")),
    exit_codes=(*READS, EMBEDDING_UNAVAILABLE), tools=(Tool(
    "search", "Search by meaning", "core", """
    Messages closest in meaning to a query, best first (`matches`, each with its `score`;
    `more`, `next_offset`: the `offset` to read on). Mirrors `agent-memory search`.""", (
        "query", "scope", "target", "page_size", "offset", "mode", "sender_kind",
        "priority", "occurred_from", "occurred_to", "filter_session_id", "filter_project_id",
        "ranking"), read_only=True),))

WORKING_SET = Command("working-set", "a session's recent messages and those closest to an anchor", (
    SESSION_ID,
    Option("--anchor-text", metavar="T", example="the refund for order 1042",
           help="what the work is about now, in words (this or --anchor-message-id)"),
    Option("--anchor-message-id", metavar="M", example=MESSAGE_ID_EXAMPLE,
           help="a message of the session the work is about now (this or --anchor-text)"),
    Option("--recency-count", INTEGER, metavar="N",
           default_text=str(contract.DEFAULT_RECENCY_COUNT),
           help=f"how many of the latest messages (at most {contract.MAX_RECENCY_COUNT})"),
    Option("--similarity-count", INTEGER, metavar="N",
           default_text=str(contract.DEFAULT_SIMILARITY_COUNT),
           help=f"how many of the closest messages (at most {contract.MAX_SIMILARITY_COUNT})"),
    MODE, RANKING,
), module="retrieval_cmd", served=True, budget=BUDGET, description="""
    What to keep in mind now: the latest messages (`recent`, newest first) and those closest
    to the anchor (`closest`). Messages left out to fit --max-chars are named in `left_out`
    (read them with `get`).""",
    examples=(Example("agent-memory working-set --session-id chat-42 --anchor-text "
                      "'the refund for order 1042'",
                      "the latest messages and those about the refund"),),
    exit_codes=(*READS, EMBEDDING_UNAVAILABLE), tools=(Tool(
    "working_set", "What to keep in mind now", "core", """
    What to keep in mind now: a session's latest messages (`recent`, newest first) and those
    closest to an anchor (`closest`). Messages left out to fit `max_chars` are named in
    `left_out` (their ids, for `get`). Mirrors `agent-memory working-set`.""", (
        "session_id", "anchor_text", "anchor_message_id", "recency_count", "similarity_count",
        "mode", "ranking"), read_only=True),))


def _navigation(name: str, help: str, options: tuple, tool: Tool, example: Example,
                exit_codes: tuple = READS) -> Command:
    """A structural read: run by cli.navigate_cmd, served by the watcher, within a budget."""
    return Command(name, help, options, module="navigate_cmd", served=True, budget=BUDGET,
                   tools=(tool,), examples=(example,), exit_codes=exit_codes)


def _paged(*options: Option) -> tuple:
    return (*options, BLOCK_SIZE, CONTINUATION)


NAVIGATION = (
    _navigation("relations", "every relation of a session: kind and its two messages "
                             "(relations_read)", _paged(SESSION_ID), Tool(
        "relations", "A session's relations", "navigate", """
        Every relation of a session: `from_message_id`, `to_message_id` and `kind` (reply,
        influence, tool-result, correction). Mirrors `agent-memory relations`.""",
        ("session_id", "block_size", "continuation"), read_only=True),
        Example("agent-memory relations --session-id chat-42", "every relation of a session")),
    _navigation("path", "the line from a message back to its root (path_read)", _paged(
        SESSION_ID, Option("--node-id", required=True, metavar="MESSAGE_ID",
                           example=MESSAGE_ID_EXAMPLE, help=MESSAGE_ID_HELP), MODE), Tool(
        "path", "The line back to the root", "navigate", """
        The line from a message back to its root: the message, what it replied to (or
        otherwise continued from), and so on (`path`). Mirrors `agent-memory path`.""",
        ("session_id", "node_id", "mode", "block_size", "continuation"), read_only=True),
        Example(f"agent-memory path --session-id chat-42 --node-id {MESSAGE_ID_EXAMPLE}",
                "what a message answered, and what that answered, back to the start")),
    _navigation("leaves", "a session's leaves and branching points, with their counts "
                          "(leaves_read)", _paged(SESSION_ID), Tool(
        "leaves", "Leaves and branching points", "navigate", """
        Where a dialogue ends and where it branched: leaves (nothing continues from them) and
        branching points with how many messages continue from each (`nodes`). Mirrors
        `agent-memory leaves`.""", ("session_id", "block_size", "continuation"),
        read_only=True),
        Example("agent-memory leaves --session-id chat-42",
                "where the dialogue ends and where it branched")),
    _navigation("graph", "the messages and relations under a message, depth-bounded "
                         "(graph_read)", _paged(
        SESSION_ID, Option("--anchor", required=True, metavar="MESSAGE_ID",
                           example=MESSAGE_ID_EXAMPLE, help=MESSAGE_ID_HELP),
        Option("--depth", INTEGER, metavar="N", default_text=str(contract.DEFAULT_GRAPH_DEPTH),
               help=f"levels below the anchor (0: the anchor alone; at most "
                    f"{contract.MAX_GRAPH_DEPTH})")), Tool(
        "graph", "The graph under a message", "navigate", """
        The messages that continue from a message, level by level, with the relations between
        them (`nodes` with their `level`, `relations`). Mirrors `agent-memory graph`.""",
        ("session_id", "anchor", "depth", "block_size", "continuation"), read_only=True),
        Example(f"agent-memory graph --session-id chat-42 --anchor {MESSAGE_ID_EXAMPLE} "
                "--depth 2", "what continued from a message, two levels down")),
    _navigation("info", "the logger's table of contents, or one section of it (info)", (
        Option("--section", metavar="NAME", example="limits", default_text="the table of "
               "contents", help="one section: service, limits, codes or relations"),
    ), Tool("info", "The logger's contents", "navigate", """
        The logger's description of itself: its table of contents, or one section (limits,
        codes, relations, service). Mirrors `agent-memory info`.""", ("section",),
        read_only=True),
        Example("agent-memory info --section limits", "the logger's limits"),
        exit_codes=(STORE_UNAVAILABLE, LOGGER_UNREACHABLE, NOT_FOUND, CONFIG_INVALID)),
)

DELETE = Command("delete", "delete a message: soft hides it, hard erases its text from the disk "
                           "and the logger (message_delete)", (
    MESSAGE,
    Option("--mode", required=True, choices=contract.DELETE_MODES,
           help="soft: hidden from reads (get still shows it); hard: its text is erased from "
                "every file of the store now and from the logger"),
    *FORGETTING,
), module="forget_cmd", description="""
    It takes effect here at once and reaches the logger in order, now or once it is back. A
    hard delete of a message another message replies to or corrects is refused
    (MESSAGE_REFERENCED): delete the later one first.""",
    examples=(Example(f"agent-memory delete {MESSAGE_ID_EXAMPLE} --mode hard",
                      "erase a text written by mistake (a secret, say)"),
              Example(f"agent-memory delete {MESSAGE_ID_EXAMPLE} --mode soft",
                      "hide a message from reads")),
    exit_codes=(*WRITES, NOT_FOUND), tools=(Tool("delete", "Delete a message", "forget", """
    Delete a message (a hard delete is how a secret written by mistake is forgotten). It
    takes effect here at once and reaches the logger in order, now or once it is back.
    Mirrors `agent-memory delete`.""", ("message_id", "mode", "session_id", "wait"),
    read_only=False, destructive=True, idempotent=True),))

MARK = Command("mark", "set or clear the soft-deletion marker of messages, all or nothing "
                       "(messages_mark_for_deletion)", (
    Option("message_ids", POSITIONALS, metavar="MESSAGE_ID", example=MESSAGE_ID_EXAMPLE,
           help="the messages, all of one session"),
    Option("--unmark", FLAG, help="clear the marker instead (restore them)"),
    *FORGETTING,
), module="forget_cmd",
    examples=(Example(f"agent-memory mark {MESSAGE_ID_EXAMPLE} "
                      "0b7d1c2e-5f3a-4e8b-9c6d-1a2b3c4d5e6f", "hide two messages from reads"),
              Example(f"agent-memory mark {MESSAGE_ID_EXAMPLE} --unmark", "restore one")),
    exit_codes=(*WRITES, NOT_FOUND), tools=(Tool("mark", "Mark messages deleted", "forget", """
    Set (or clear) the soft-deletion marker of messages, all or nothing: marked messages are
    hidden from reads. Mirrors `agent-memory mark`.""", ("message_ids", "unmark", "session_id",
                                                         "wait"),
    read_only=False, idempotent=True),))

EMBED = Command("embed", "fill every missing message vector (.emb) with the configured model", (
    Option("--batch", INTEGER, default=64, metavar="N", help="texts per embedder call"),
), module="embed_cmd",
    examples=(Example("agent-memory embed", "give every message without a vector its vector"),),
    exit_codes=(STORE_UNAVAILABLE, CONFIG_INVALID, EMBEDDING_UNAVAILABLE, NO_ROOM))

SYNC_OPTIONS = (
    Option("--batch-items", INTEGER, default=1000, metavar="N",
           help="messages per messages_import call"),
    Option("--batch-bytes", INTEGER, default=4 << 20, default_text="4194304 (4 MiB)",
           metavar="N", help="encoded bytes per messages_import call"),
    Option("--quarantine-after", INTEGER, default=3, metavar="N",
           help="refusals across runs before an item moves to .agent-memory/.quarantine/"),
    Option("--sessions-in-flight", INTEGER, default=4, metavar="N",
           help="sessions forwarded at once; each stays in order"),
    Option("--watch", FLAG,
           help="keep running as the project's watcher: forward new files as they appear, "
                "rescan periodically, back off while the logger is unreachable, embed messages "
                "lacking a vector; SIGTERM/SIGINT stop it after the batch in flight"),
    Option("--rescan-interval", SECONDS, default=30.0, metavar="SECONDS",
           help="--watch: period of the full rescan, the safety net for missed events"),
    Option("--debounce", SECONDS, default=0.02, metavar="SECONDS",
           help="--watch: quiet time after the last file event before a round"),
    Option("--max-delay", SECONDS, default=0.25, metavar="SECONDS",
           help="--watch: longest delay of a round after the first file event"),
    Option("--backoff-initial", SECONDS, default=1.0, metavar="SECONDS",
           help="--watch: first delay after a failed round (x1.5 per failure, jittered)"),
    Option("--backoff-max", SECONDS, default=30.0, metavar="SECONDS",
           help="--watch: cap of the delay between failed rounds"),
    Option("--probe-interval", SECONDS, default=1.0, metavar="SECONDS",
           help="--watch: while backing off, one health request this often tells when the "
                "logger is back"),
    Option("--retry-refused-after", SECONDS, default=60.0, metavar="SECONDS",
           help="--watch: send a refused message again only after this long, so rounds do not "
                "repeat (and count) the same refusal"),
    Option("--no-backfill", FLAG, help="--watch: do not embed messages that lack a vector"),
    Option("--idle-exit", SECONDS, metavar="SECONDS",
           default_text="never; an autostarted watcher: the configuration's agent.idle_exit, "
                        "900",
           help="--watch: exit once no command was served and no file moved for this long, "
                "even with files pending (they wait for the next command, `sync` or cron)"),
    Option("--autostarted", FLAG, hidden=True,
           help="--watch: set by a command that starts the watcher by itself"),
)
SYNC_DESCRIPTION = """
    Per session in time order, keeping each message's id and time; what the logger confirmed
    moves to .agent-memory/.imported/. Beside the project's watcher of the same configuration,
    the watcher runs the round now and this command answers its report. With no logger
    configured there is nothing to forward: the answer says so ("skipped": true) and exits 0,
    so a cron job of a file-store-only project does not fail; a configured logger that does not
    answer is exit 4 (the files stay pending for the next run)."""
SYNC_EXIT_CODES = (LOGGER_REFUSED, STORE_UNAVAILABLE, LOGGER_UNREACHABLE, CONFIG_INVALID,
                   STORE_HELD)
SYNC = Command("sync", "forward every pending event and message to the logger (alias: import)",
               SYNC_OPTIONS, module="sync_cmd", description=SYNC_DESCRIPTION,
               examples=(Example("agent-memory sync", "forward what waits in the outbox now"),
                         Example("agent-memory sync --watch",
                                 "run the watcher in the foreground (systemd runs it so)")),
               exit_codes=SYNC_EXIT_CODES)
IMPORT = Command("import", "alias of sync", SYNC_OPTIONS, module="sync_cmd",
                 description=SYNC_DESCRIPTION,
                 examples=(Example("agent-memory import", "the same as `agent-memory sync`"),),
                 exit_codes=SYNC_EXIT_CODES)

STATUS = Command("status", "what waits in the outbox, what is quarantined or lacks a vector, and "
                           "whether the watcher runs (--probe: whether the logger and the "
                           "embedder answer)", (
    Option("--probe", FLAG, help="also ask whether the logger and the embedder answer"),
), module="status_cmd", served="probe",
    examples=(Example("agent-memory status", "what waits, and whether the watcher runs"),
              Example("agent-memory status --probe", "also whether the fleet answers")),
    exit_codes=(STORE_UNAVAILABLE, CONFIG_INVALID),
    tools=(Tool("status", "The store's status", "core", """
    The store's state: what waits in the outbox for the logger, what is quarantined or lacks
    a vector, and whether the project's watcher (the background sync process) runs. Mirrors
    `agent-memory status`.""", ("probe",), read_only=True),))

_PORT = "8080 for http, 8443 for https and mtls"
CONFIG = Command("config", "write or check a configuration document", module="config_cmd",
                 actions=(
    Command("generate", "write a configuration document (0600)", (
        Option("--output", required=True, metavar="PATH",
               example="~/.config/vvz-agent-memory/config.json",
               help="where to write it; an existing file is replaced only with --force"),
        Option("--logger-host", required=True, metavar="H", example="logger.example.net",
               help="the AI Logger's host name or address"),
        Option("--embed-host", required=True, metavar="H", example="embed.example.net",
               help="the embedding service's host name or address"),
        Option("--logger-port", INTEGER, metavar="N", default_text=_PORT,
               help="the AI Logger's port"),
        Option("--embed-port", INTEGER, metavar="N", default_text=_PORT,
               help="the embedding service's port"),
        Option("--protocol", choices=PROTOCOLS,
               default_text="mtls when certificates are given, else http",
               help="how to reach both services: plain HTTP, HTTPS, or HTTPS with a client "
                    "certificate (mtls)"),
        Option("--logger-cert", metavar="F", example="~/.config/vvz-agent-memory/client.crt",
               help="the client certificate (PEM) presented to both services (mtls)"),
        Option("--logger-key", metavar="F", example="~/.config/vvz-agent-memory/client.key",
               help="the client certificate's private key (PEM)"),
        Option("--logger-ca", metavar="F", example="~/.config/vvz-agent-memory/fleet-ca.crt",
               help="the CA certificate (PEM) that the services' certificates are checked "
                    "against"),
        Option("--check-hostname", FLAG,
               help="check that a server's certificate names the host connected to "
                    "(ssl.check_hostname true; without it any certificate of the CA is taken)"),
        Option("--token", metavar="T",
               help="an API token sent with every call (header X-API-Key); kept in the "
                    "document, never shown in any output"),
        Option("--embed-model", metavar="M", default_text="BAAI/bge-m3",
               help="the embedding model the vectors are made with"),
        Option("--embed-dimension", INTEGER, metavar="N", default_text="1024",
               help="the model's vector dimension"),
        Option("--force", FLAG, help="replace an existing file"),
    ), description="""
        The logger's protocol, certificates and token are used for the embedder too (one
        fleet, one client identity); certificate paths are written absolute.""",
        examples=(Example("agent-memory config generate --output "
                          "~/.config/vvz-agent-memory/config.json --logger-host "
                          "logger.example.net --embed-host embed.example.net",
                          "a fleet over plain HTTP on the default ports"),
                  Example("agent-memory config generate --output "
                          "~/.config/vvz-agent-memory/config.json --logger-host "
                          "logger.example.net --embed-host embed.example.net --logger-cert "
                          "client.crt --logger-key client.key --logger-ca fleet-ca.crt "
                          "--check-hostname --token \"$FLEET_TOKEN\"",
                          "mutual TLS with a token")),
        exit_codes=(CONFIG_INVALID,)),
    Command("validate", "check the configuration and its certificate files (exit 6 when "
                        "unusable) and print it, secrets redacted",
            examples=(Example("agent-memory config validate",
                              "check the configuration in use"),
                      Example("agent-memory --config ./fleet.json config validate",
                              "check another document")),
            exit_codes=(CONFIG_INVALID,)),
))

STORE = Command("store", "manage the project's file store", module="store_cmd", actions=(
    Command("init", "create .agent-memory/ and, inside git, its ignore rule",
            description="""
            Once per project: the store is .agent-memory/ in the project's root (0700), and
            inside a git work tree /.agent-memory/ is appended to the project's .gitignore
            (then git is asked that it is really ignored).""",
            examples=(Example("agent-memory store init", "create the project's store"),),
            exit_codes=(STORE_UNAVAILABLE, NO_ROOM)),
))

GC = Command("gc", "remove the messages and vectors the logger confirmed long ago from "
                   ".agent-memory/.imported/", (
    Option("--older-than", required=True, metavar="DURATION", example="30d",
           help="moved into .imported/ more than this long ago: 90s, 15m, 12h, 30d, 2w"),
    Option("--dry-run", FLAG, help="count, remove nothing"),
), module="gc_cmd", examples=(Example("agent-memory gc --older-than 30d --dry-run",
                                      "what a month's retention would remove"),),
    exit_codes=(STORE_UNAVAILABLE,))

VERIFY = Command("verify", "check every name, record and vector of the store, and duplicates "
                           "across its areas (exit 1 when something is damaged)", (
    Option("--repair", FLAG,
           help="first re-file what entries named against the store's rules hold (a message "
                "whose id once ended in a newline, say) and set those entries aside to "
                ".agent-memory/.quarantine/.stray/; nothing is deleted"),
), module="verify_cmd", examples=(Example("agent-memory verify", "check the whole store"),),
    exit_codes=(LOGGER_REFUSED, STORE_UNAVAILABLE))

AGENT = Command("agent", "the project's watcher, the background process that forwards the "
                         "outbox and serves commands (a `sync --watch`): start, stop, status",
                module="agent_cmd", actions=(
    Command("start", "start the watcher in the background (as a command that finds none "
                     "would) and wait until it answers", (_timeout("answer"),),
            examples=(Example("agent-memory agent start", "start it now"),),
            exit_codes=(LOGGER_REFUSED, STORE_UNAVAILABLE, LOGGER_UNREACHABLE,
                        CONFIG_INVALID)),
    Command("stop", "ask the watcher to stop and wait until it has exited",
            (_timeout("exit"),), examples=(Example("agent-memory agent stop", "stop it"),),
            exit_codes=(LOGGER_REFUSED, STORE_UNAVAILABLE)),
    Command("status", "whether a watcher answers: pid, socket, idle deadline",
            examples=(Example("agent-memory agent status", "is it running?"),),
            exit_codes=(STORE_UNAVAILABLE,)),
))

SERVICE = Command("service", "the systemd user unit or the cron line that keeps this project "
                             "synced in the background", module="service_cmd", actions=(
    Command("systemd", "the systemd user unit of the watcher, for this installation and "
                       "project", (
        Option("--write", FLAG,
               help="write the unit (and this project's drop-in, when --config or "
                    "$AGENT_MEMORY_CONFIG names the configuration) under ~/.config/systemd/user/"),
        Option("--force", FLAG, help="with --write: replace a unit file that differs"),
    ), description="""
        The answer holds the unit's text, its file, this project's instance name and the
        commands that enable and check it. The watcher runs `agent-memory --project-root DIR
        sync --watch` with this installation's own executable.""",
        examples=(Example("agent-memory service systemd", "show the unit and how to enable it"),
                  Example("agent-memory service systemd --write",
                          "write it, then run the `enable` command the answer gives")),
        exit_codes=(STORE_UNAVAILABLE, CONFIG_INVALID, NO_ROOM)),
    Command("cron", "the crontab line of a one-shot `sync` of this project every five minutes",
            description="""
        The answer holds the line (this installation's executable, the project's directory,
        the configuration when it is not the default one) to add with `crontab -e`.""",
            examples=(Example("agent-memory service cron", "show the line"),),
            exit_codes=(STORE_UNAVAILABLE, CONFIG_INVALID)),
))

HELP = Command("help", "a help topic: the exit codes, or the environment variables", (
    Option("topic", POSITIONAL, choices=HELP_TOPICS, metavar="TOPIC",
           help=f"one of {', '.join(HELP_TOPICS)}"),
), module="help_cmd", examples=(
    Example("agent-memory help exit-codes", "every exit code, what it means, its error codes"),
    Example("agent-memory help environment", "the environment variables it reads")))

TOOL_GROUPS = ("core", "navigate", "forget")
_BEFORE_MCP = (SESSION, WRITE, READ, GET, SESSIONS, SEARCH, WORKING_SET, *NAVIGATION, DELETE,
               MARK, EMBED, SYNC, IMPORT, STATUS, CONFIG, STORE, GC, VERIFY, AGENT, SERVICE)


def _tools_by_group() -> str:
    """The --tools help: each group with its tools, as declared above."""
    declared = [tool for command in _BEFORE_MCP
                for c in (command, *command.actions.values()) for tool in c.tools]
    return "; ".join(f"{group}: {', '.join(t.name for t in declared if t.group == group)}"
                     for group in TOOL_GROUPS)


MCP = Command("mcp", "serve these commands as MCP tools: over stdio until the client closes "
                     "stdin (stdout carries the protocol; logs and the closing answer go to "
                     "stderr), or with --listen over streamable HTTP at http://HOST:PORT/mcp "
                     "until SIGTERM or SIGINT (the closing answer on stdout)", (
    Option("--tools", metavar="LIST", default_text="all", example="core,navigate",
           help=f"serve only these tools: names and groups, comma-separated "
                f"({_tools_by_group()}; all)"),
    Option("--listen", metavar="[HOST:]PORT", example="127.0.0.1:8765",
           help="serve over streamable HTTP at http://HOST:PORT/mcp instead of stdio, to many "
                "clients at once ([::1]:8765 for IPv6). A PORT alone serves on 127.0.0.1 "
                "(loopback); a HOST that is not loopback (0.0.0.0, a LAN address) needs a token "
                "and is refused without one; PORT 0 picks a free port, shown on stderr. The project is "
                "--project-root, else the client's first root where an older client offers "
                "roots, else the working directory's"),
    Option("--token-file", metavar="FILE", env="AGENT_MEMORY_MCP_TOKEN",
           example="~/.config/vvz-agent-memory/mcp-token",
           help="--listen: every request must carry `Authorization: Bearer TOKEN`, TOKEN being "
                "this file's content (surrounding whitespace dropped; made with `openssl rand "
                "-hex 32 > FILE`, mode 0600); the environment variable holds the token itself; "
                "a request without it or with another is answered 401"),
    Option("--allowed-host", TEXTS, metavar="NAME", example="host.docker.internal",
           help="--listen: a host name or address clients may reach this server by, as their "
                "Host and Origin headers name it (repeatable; a TLS proxy's name, say). "
                "Loopback names and the --listen address are always allowed; a request naming "
                "another is answered 403 (DNS-rebinding protection)"),
    Option("--tls-cert", metavar="FILE", example="server.pem",
           help="--listen: serve https with this PEM certificate (chain), with --tls-key; "
                "without both, plain http (put a TLS proxy in front for another host to "
                "reach it)"),
    Option("--tls-key", metavar="FILE", example="server.key",
           help="--listen: the PEM private key of --tls-cert"),
    Option("--systemd-unit", FLAG,
           help="--listen: do not serve; answer a systemd user unit that runs this server "
                "with these options (its text in data.unit, where to save it and how to start "
                "it beside)"),
), module="mcpserve.command", description="""
    An MCP client starts it and talks to it over stdin and stdout; it runs until the client
    goes away. With --listen it serves many clients over streamable HTTP instead, until
    SIGTERM or SIGINT: running calls finish, new ones are refused. Each tool runs its
    command's own code and answers what the command prints; a failed call is a tool error
    carrying the exit code its command would have exited with.""",
    examples=(Example("agent-memory mcp --project-root ~/src/shop",
                      "what an MCP client runs (claude mcp add agent-memory -- ...)"),
              Example("agent-memory mcp --tools core",
                      "only the core tools: a shorter tool list in every turn"),
              Example("agent-memory mcp --listen 127.0.0.1:8765 --project-root ~/src/shop",
                      "one server over HTTP for agents in containers or VMs on this host")))

COMMANDS = {command.name: command for command in (*_BEFORE_MCP, MCP, HELP)}

COMMANDS = {command.name: command for command in (*_BEFORE_MCP, MCP, HELP)}

# Every environment variable the commands read (`agent-memory help environment`, the reference);
# an option that falls back to one names it in its `env`.
ENVIRONMENT = (
    ("AGENT_MEMORY_CONFIG", "the configuration document, where --config is not given (else "
                            "~/.config/vvz-agent-memory/config.json; none: the file store "
                            "only)"),
    ("AGENT_MEMORY_AGENT", "whether commands use the project's watcher, over the "
                           "configuration's agent.mode: auto (ask it, and start one when none "
                           "runs; the default), use (ask a running one, never start one), off "
                           "(neither, as --no-agent)"),
    ("AGENT_MEMORY_EMBED_BUDGET", "seconds a `write` lets the embedder take for the message's "
                                  "vector, where --embed-budget is not given (default 2)"),
    ("AGENT_MEMORY_MCP_TOKEN", "`mcp --listen`: the bearer token every request must carry, "
                               "where --token-file is not given"),
    ("XDG_RUNTIME_DIR", "where the watcher's socket goes when the project's path is too long "
                        "for one inside .agent-memory/ (a private directory of the user; else "
                        "/tmp/agent-memory-UID/)"),
    ("XDG_CONFIG_HOME", "where `service systemd --write` puts the user unit (default ~/.config)"),
    ("COLUMNS", "the width of --help"),
)
