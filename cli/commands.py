"""Every command, declared once (the CLI contract: names and options agents and scripts depend
on): its name, help, options (choices read from outbox.contract), the module that runs it,
whether the project's agent serves it, and its MCP tools. The parser, dispatch, the served set,
the typed calls and the MCP tools are built from this table (cli.registry). A new command is
its module (`run(ctx, args)`) plus its entry here; the README's command list follows it
(tests/test_commands_listed.py)."""

from __future__ import annotations

from agent_memory.cli.registry import (FLAG, INTEGER, JSON, NAMES, POSITIONAL, POSITIONALS,
                                       SECONDS, TEXTS, Command, Option, Param, Tool)
from agent_memory.outbox import contract

STORE_MODES = ("auto", "logger", "file")
PROTOCOLS = ("http", "https", "mtls")
ANSWER_FORMS = ("line", "mcp")
KINDS = contract.PARTICIPANT_KINDS

# The global options, accepted before or after the command name.
GLOBALS = (
    Option("--config", metavar="PATH",
           help="configuration document (else $AGENT_MEMORY_CONFIG, else "
                "~/.config/vvz-agent-memory/config.json; none = file store only)"),
    Option("--store", choices=STORE_MODES, default="auto",
           help="auto: the logger when reachable, else the file store (default); logger: the "
                "logger or nothing; file: the file store only"),
    Option("--project-root", metavar="DIR",
           help="project directory holding .agent-memory/ (default: the git top level of the "
                "working directory, else the working directory)"),
    Option("--no-agent", FLAG,
           help="neither use nor start the project's agent: the command talks to the fleet "
                "itself (also $AGENT_MEMORY_AGENT=off, or the configuration's agent.mode "
                "\"off\")"),
)

# The budget of the commands that answer texts or lists (cli.budget); --answer-form is the MCP
# server's, which measures its tool result's text instead of the printed line.
BUDGET = (
    Option("--max-chars", INTEGER, metavar="N",
           help="the whole answer is at most N characters (default 25000, or the "
                "configuration's output.max_chars; 0: no limit); a longer one holds fewer items "
                "(more: true, a continuation) and then cuts long texts to head and tail "
                "(<key>_cut says what is shown)"),
    Option("--answer-form", choices=ANSWER_FORMS, default="line", hidden=True),
)

SESSION_ID_HELP = "the session's id (letters, digits, '.', '_', '-')"
MESSAGE_ID_HELP = "a message's id, as `write` answered it"
SESSION_ID = Option("--session-id", required=True, metavar="ID", help=SESSION_ID_HELP)
BLOCK_SIZE = Option("--block-size", INTEGER, metavar="N",
                    help=f"entries per answer (default {contract.DEFAULT_BLOCK_SIZE}, at most "
                         f"{contract.MAX_BLOCK_SIZE})")
CONTINUATION = Option("--continuation", metavar="C",
                      help="the previous answer's `continuation`, to read on")
MODE = Option("--mode", choices=contract.READ_MODES, default=contract.DEFAULT_MODE,
              help="resolved (default): each correction chain once, final wording; full: every "
                   "version")
SHOW_DELETED = Option("--show-deleted", FLAG, help="also the soft-deleted messages")
WAIT = Option("--wait", SECONDS, default=1.0, metavar="SECONDS",
              help="how long to wait for the logger's confirmation (default 1)")
MESSAGE = Option("message_id", POSITIONAL, metavar="MESSAGE_ID", help=MESSAGE_ID_HELP)
FORGETTING = (
    Option("--session-id", metavar="ID",
           help="the message's session, only when neither the file store nor a reachable "
                "logger knows it"),
    WAIT,
)
RANKING = Option("--ranking", choices=contract.RANKINGS, default="auto",
                 help="auto (default): by meaning (a vector), else by words (BM25 over the "
                      "local texts) when no vector can be had; vector: by meaning or exit 7; "
                      "bm25: by words")


def _timeout(what: str) -> Option:
    return Option("--timeout", SECONDS, default=30.0, metavar="SECONDS",
                  help=f"how long to wait for it to {what} (default 30)")


SESSION = Command("session", "open, close or reopen a dialogue session", module="session_cmd",
                  actions=(
    Command("open", "open a session", (
        SESSION_ID,
        Option("--project-id", required=True, metavar="P",
               help="the project this session belongs to"),
        Option("--dialogue-kind", required=True, metavar="KIND,KIND", tool_choices=KINDS,
               tool_pair=",", help=f"the sender's and the receiver's kinds, each "
                                   f"{'|'.join(KINDS)}"),
        Option("--participant", NAMES, required=True, metavar="NAME", dest="participants",
               help="the participants' identities, one or more (repeatable)"),
        Option("--title", metavar="T", help="a title for the session"),
        Option("--metadata", JSON, metavar="JSON", help="kept verbatim"),
    ), tools=(Tool("session_open", "Open a session", "core", """
        Open a dialogue session; messages are written into an open session. Opening it again
        with the same attributes answers as the first time. Mirrors `agent-memory session
        open`.""", (
        "session_id", "project_id",
        Param("dialogue_kind", help="the sender's and the receiver's kinds, e.g. [\"human\", "
                                    "\"model\"]"),
        Param("participant", help="the participants' identities, e.g. [\"alice\", \"claude\"]"),
        "title", "metadata"), read_only=False, idempotent=True),)),
    Command("close", "close a session", (SESSION_ID,), tools=(
        Tool("session_close", "Close a session", "core", """
        Close a session: writing to it is refused until it is reopened. Mirrors `agent-memory
        session close`.""", ("session_id",), read_only=False, idempotent=True),)),
    Command("reopen", "reopen a session", (SESSION_ID,), tools=(
        Tool("session_reopen", "Reopen a session", "core", """
        Reopen a closed session. Mirrors `agent-memory session reopen`.""", ("session_id",),
             read_only=False, idempotent=True),)),
    Command("delete", "delete a session with all its messages, relations and vectors, here "
                      "and in the logger: irreversible (delete_session)", (
        SESSION_ID,
        Option("--confirm", required=True, metavar="ID",
               help="the session id once more, so a slip cannot delete a session: deleting is "
                    "irreversible"),
        WAIT,
    ), tools=(Tool("session_delete", "Delete a session", "forget", """
        Delete a whole session with all its messages, relations and vectors, here (their texts
        erased from every file) and in the logger. Irreversible. Mirrors `agent-memory session
        delete`.""", ("session_id", "confirm", "wait"), read_only=False, destructive=True,
                   idempotent=True),)),
))

WRITE = Command("write", "record one message (text from --text or stdin)", (
    SESSION_ID,
    Option("--sender-kind", required=True, metavar="K", tool_choices=KINDS, help="who sent it"),
    Option("--sender-identity", required=True, metavar="I",
           help="the sender's identity, e.g. \"alice\""),
    Option("--receiver-kind", required=True, metavar="K", tool_choices=KINDS,
           help="who it is for"),
    Option("--receiver-identity", required=True, metavar="I",
           help="the receiver's identity, e.g. \"claude\""),
    Option("--text", metavar="T", help="the message text (else read from stdin)"),
    Option("--priority", INTEGER, metavar="N", help="0 (default) is the ordinary flow"),
    Option("--message-id", metavar="UUID",
           help="your own id (a version 4 UUID; default: a new one) to make retries safe: the "
                "same id and content again writes nothing"),
    Option("--occurred-at", metavar="RFC3339",
           help="when it happened, RFC 3339 with an offset (default: now)"),
    Option("--relation", TEXTS, metavar="KIND:MESSAGE_ID",
           help=f"a link to an earlier message, KIND "
                f"{' or '.join(contract.DECLARABLE_RELATION_KINDS)}; repeatable"),
    Option("--corrects", metavar="MESSAGE_ID",
           help="the id of an earlier message this one corrects"),
    Option("--attributes", JSON, metavar="JSON", help="kept verbatim"),
    Option("--wait", SECONDS, default=1.0, metavar="SECONDS",
           help="how long to wait for the logger's confirmation (through the project's agent, "
                "or for the sync lock inline; default 1; 0: hand it over without waiting; an "
                "agent still starting takes it at once)"),
    Option("--embed-budget", SECONDS, metavar="SECONDS",
           help="how long the embedder may take to give the vector (default "
                "$AGENT_MEMORY_EMBED_BUDGET, else 2, or 0 with --store file; 0: leave it to "
                "`embed` or the watcher)"),
), module="write_cmd", tools=(Tool("write", "Record a message", "core", """
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
READ = Command("read", "a window of a session's messages by sequence number", (
    Option("--session-id", metavar="ID",
           help="the session (required, except with --preview where it filters)"),
    Option("--start", INTEGER, default=0, metavar="N",
           help="the first sequence number (default 0)"),
    BLOCK_SIZE, CONTINUATION, MODE, SHOW_DELETED,
    Option("--preview", FLAG, group=PREVIEW),
    Option("--caller", metavar="IDENTITY", group=PREVIEW,
           help="only messages from this sender identity"),
    Option("--recipient", metavar="IDENTITY", group=PREVIEW,
           help="only messages to this receiver identity"),
    Option("--period-start", metavar="RFC3339", group=PREVIEW,
           help="only messages that occurred at or after this RFC 3339 time"),
    Option("--period-end", metavar="RFC3339", group=PREVIEW,
           help="only messages that occurred at or before this RFC 3339 time"),
    Option("--page-offset", INTEGER, metavar="N", group=PREVIEW, help="which page, from 0"),
    Option("--page-size", INTEGER, metavar="N", group=PREVIEW,
           help=f"entries per page (default {contract.DEFAULT_PAGE_SIZE}; at most "
                f"{contract.MAX_PAGE_SIZE})"),
    Option("--preview-size", INTEGER, metavar="N", group=PREVIEW,
           help=f"characters of text per entry (default {contract.PREVIEW_SIZE})"),
), module="read_cmd", served=True, budget=BUDGET, groups={
    PREVIEW: "--preview: a paged listing of text prefixes across sessions, by time "
             "(messages_read's preview form); each filter is optional"},
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
    Option("--text-offset", INTEGER, metavar="O",
           help="only the text from this character on (from 0; default 0)"),
    Option("--text-length", INTEGER, metavar="L",
           help="only this many characters of the text (default: to its end)"),
), module="read_cmd", served=True, budget=BUDGET, tools=(Tool("get", "Get a message", "core", """
    One message by its id (not found: error code MESSAGE_UNKNOWN, exit code 5). With
    text_offset and/or text_length, only that range of its text (`text_range`: the offset,
    the length answered and the text's total length), so a long text is read in pieces.
    Mirrors `agent-memory get`.""", ("message_id", "text_offset", "text_length"),
    read_only=True),))

SESSIONS = Command("sessions", "list sessions", (
    Option("--project-id", metavar="P", help="only this project's sessions"),
    Option("--lifecycle", choices=contract.LIFECYCLES, help="only open or only closed sessions"),
    Option("--participant", metavar="NAME", help="only sessions with this participant"),
    Option("--dialogue-kind", metavar="KIND-to-KIND",
           help="only this dialogue kind, SENDER-to-RECEIVER, e.g. \"human-to-model\""),
    BLOCK_SIZE, CONTINUATION,
), module="read_cmd", served=True, budget=BUDGET, tools=(Tool(
    "sessions", "List sessions", "core", """
    List sessions, with their attributes and lifecycle. Mirrors `agent-memory sessions`.""",
    ("project_id", "lifecycle", "participant", "dialogue_kind", "block_size", "continuation"),
    read_only=True),))

SEARCH = Command("search", "messages closest in meaning to a query (message_search)", (
    Option("--query", required=True, metavar="TEXT", help="what to look for, in words"),
    Option("--scope", required=True, choices=contract.SEARCH_SCOPES,
           help="where to look; session and project need a target"),
    Option("--target", metavar="ID", help="the session's or the project's id, for those scopes"),
    Option("--page-size", INTEGER, metavar="N",
           help=f"matches per page (default {contract.DEFAULT_PAGE_SIZE}; at most "
                f"{contract.MAX_PAGE_SIZE})"),
    Option("--page-offset", INTEGER, metavar="N",
           help="zero-based offset of the page (`next_offset` of the last answer)"),
    MODE,
    Option("--sender-kind", metavar="K", tool_choices=KINDS,
           help=f"only messages from this kind of sender ({'|'.join(KINDS)})"),
    Option("--priority", INTEGER, metavar="N", help="only messages of this priority"),
    Option("--occurred-from", metavar="RFC3339",
           help="only messages that occurred at or after this RFC 3339 time"),
    Option("--occurred-to", metavar="RFC3339",
           help="only messages that occurred at or before this RFC 3339 time"),
    Option("--filter-session-id", metavar="ID", help="only this session's messages"),
    Option("--filter-project-id", metavar="P", help="only this project's messages"),
    RANKING,
), module="retrieval_cmd", served=True, budget=BUDGET, tools=(Tool(
    "search", "Search by meaning", "core", """
    Messages closest in meaning to a query, best first (`matches`, each with its `score`;
    `more`, `next_offset`). Mirrors `agent-memory search`.""", (
        "query", "scope", "target", "page_size", "page_offset", "mode", "sender_kind",
        "priority", "occurred_from", "occurred_to", "filter_session_id", "filter_project_id",
        "ranking"), read_only=True),))

WORKING_SET = Command("working-set", "a session's recent messages and those closest to an anchor", (
    SESSION_ID,
    Option("--anchor-text", metavar="T",
           help="what the work is about now, in words (this or the anchor message id)"),
    Option("--anchor-message-id", metavar="M",
           help="a message of the session the work is about now (this or the anchor text)"),
    Option("--recency-count", INTEGER, metavar="N",
           help=f"how many of the latest messages (default {contract.DEFAULT_RECENCY_COUNT})"),
    Option("--similarity-count", INTEGER, metavar="N",
           help=f"how many of the closest messages (default "
                f"{contract.DEFAULT_SIMILARITY_COUNT})"),
    MODE, RANKING,
), module="retrieval_cmd", served=True, budget=BUDGET, tools=(Tool(
    "working_set", "What to keep in mind now", "core", """
    What to keep in mind now: a session's latest messages (`recent`, newest first) and those
    closest to an anchor (`closest`). Messages left out to fit `max_chars` are named in
    `left_out` (their ids, for `get`). Mirrors `agent-memory working-set`.""", (
        "session_id", "anchor_text", "anchor_message_id", "recency_count", "similarity_count",
        "mode", "ranking"), read_only=True),))


def _navigation(name: str, help: str, options: tuple, tool: Tool) -> Command:
    """A structural read: run by cli.navigate_cmd, served by the agent, within a budget."""
    return Command(name, help, options, module="navigate_cmd", served=True, budget=BUDGET,
                   tools=(tool,))


def _paged(*options: Option) -> tuple:
    return (*options, BLOCK_SIZE, CONTINUATION)


NAVIGATION = (
    _navigation("relations", "every relation of a session: kind and its two messages "
                             "(relations_read)", _paged(SESSION_ID), Tool(
        "relations", "A session's relations", "navigate", """
        Every relation of a session: `from_message_id`, `to_message_id` and `kind` (reply,
        influence, tool-result, correction). Mirrors `agent-memory relations`.""",
        ("session_id", "block_size", "continuation"), read_only=True)),
    _navigation("path", "the line from a message back to its root (path_read)", _paged(
        SESSION_ID, Option("--node-id", required=True, metavar="MESSAGE_ID",
                           help=MESSAGE_ID_HELP), MODE), Tool(
        "path", "The line back to the root", "navigate", """
        The line from a message back to its root: the message, what it replied to (or
        otherwise continued from), and so on (`path`). Mirrors `agent-memory path`.""",
        ("session_id", "node_id", "mode", "block_size", "continuation"), read_only=True)),
    _navigation("leaves", "a session's leaves and branching points, with their counts "
                          "(leaves_read)", _paged(SESSION_ID), Tool(
        "leaves", "Leaves and branching points", "navigate", """
        Where a dialogue ends and where it branched: leaves (nothing continues from them) and
        branching points with how many messages continue from each (`nodes`). Mirrors
        `agent-memory leaves`.""", ("session_id", "block_size", "continuation"),
        read_only=True)),
    _navigation("graph", "the messages and relations under a message, depth-bounded "
                         "(graph_read)", _paged(
        SESSION_ID, Option("--anchor", required=True, metavar="MESSAGE_ID", help=MESSAGE_ID_HELP),
        Option("--depth", INTEGER, metavar="N",
               help=f"levels below the anchor (0: the anchor alone; default "
                    f"{contract.DEFAULT_GRAPH_DEPTH})")), Tool(
        "graph", "The graph under a message", "navigate", """
        The messages that continue from a message, level by level, with the relations between
        them (`nodes` with their `level`, `relations`). Mirrors `agent-memory graph`.""",
        ("session_id", "anchor", "depth", "block_size", "continuation"), read_only=True)),
    _navigation("info", "the logger's table of contents, or one section of it (info)", (
        Option("--section", metavar="NAME", help="one section (default: the table of contents)"),
    ), Tool("info", "The logger's contents", "navigate", """
        The logger's description of itself: its table of contents, or one section (limits,
        codes, relations, service). Mirrors `agent-memory info`.""", ("section",),
        read_only=True)),
)

DELETE = Command("delete", "delete a message: soft hides it, hard erases its text from the disk "
                           "and the logger (message_delete)", (
    MESSAGE,
    Option("--mode", required=True, choices=contract.DELETE_MODES,
           help="soft: hidden from reads (get still shows it); hard: its text is erased from "
                "every file of the store now and from the logger"),
    *FORGETTING,
), module="forget_cmd", tools=(Tool("delete", "Delete a message", "forget", """
    Delete a message (a hard delete is how a secret written by mistake is forgotten). It
    takes effect here at once and reaches the logger in order, now or once it is back.
    Mirrors `agent-memory delete`.""", ("message_id", "mode", "session_id", "wait"),
    read_only=False, destructive=True, idempotent=True),))

MARK = Command("mark", "set or clear the soft-deletion marker of messages, all or nothing "
                       "(messages_mark_for_deletion)", (
    Option("message_ids", POSITIONALS, metavar="MESSAGE_ID",
           help="the messages, all of one session"),
    Option("--unmark", FLAG, help="clear the marker instead (restore them)"),
    *FORGETTING,
), module="forget_cmd", tools=(Tool("mark", "Mark messages deleted", "forget", """
    Set (or clear) the soft-deletion marker of messages, all or nothing: marked messages are
    hidden from reads. Mirrors `agent-memory mark`.""", ("message_ids", "unmark", "session_id",
                                                         "wait"),
    read_only=False, idempotent=True),))

EMBED = Command("embed", "fill every missing message vector (.emb) with the configured model", (
    Option("--batch", INTEGER, default=64, metavar="N",
           help="texts per embedder call (default 64)"),
), module="embed_cmd")

SYNC_OPTIONS = (
    Option("--batch-items", INTEGER, default=1000, metavar="N",
           help="messages per messages_import call (default 1000)"),
    Option("--batch-bytes", INTEGER, default=4 << 20, metavar="N",
           help="encoded bytes per messages_import call (default 4 MiB)"),
    Option("--quarantine-after", INTEGER, default=3, metavar="N",
           help="refusals across runs before an item moves to .quarantine/ (default 3)"),
    Option("--sessions-in-flight", INTEGER, default=4, metavar="N",
           help="sessions forwarded at once; each stays in order (default 4)"),
    Option("--watch", FLAG,
           help="keep running: forward new files as they appear (watchdog events, debounced), "
                "rescan periodically, back off while the logger is unreachable, embed messages "
                "lacking a vector; SIGTERM/SIGINT stop it after the batch in flight"),
    Option("--rescan-interval", SECONDS, default=30.0, metavar="SECONDS",
           help="--watch: full rescan period, the safety net for missed events (default 30)"),
    Option("--debounce", SECONDS, default=0.02, metavar="SECONDS",
           help="--watch: quiet time after the last event before a round (default 0.02)"),
    Option("--max-delay", SECONDS, default=0.25, metavar="SECONDS",
           help="--watch: longest delay of a round after the first event (default 0.25)"),
    Option("--backoff-initial", SECONDS, default=1.0, metavar="SECONDS",
           help="--watch: first delay after a failed round (default 1; x1.5 per failure, "
                "jittered)"),
    Option("--backoff-max", SECONDS, default=30.0, metavar="SECONDS",
           help="--watch: cap of the delay between failed rounds (default 30)"),
    Option("--probe-interval", SECONDS, default=1.0, metavar="SECONDS",
           help="--watch: while backing off, one health request this often tells when the "
                "logger is back (default 1)"),
    Option("--retry-refused-after", SECONDS, default=60.0, metavar="SECONDS",
           help="--watch: send a refused message again only after this long, so rounds do not "
                "repeat (and count) the same refusal (default 60)"),
    Option("--no-backfill", FLAG, help="--watch: do not embed messages that lack a vector"),
    Option("--idle-exit", SECONDS, metavar="SECONDS",
           help="--watch: exit after this long without a CLI request and with nothing pending "
                "(default: never; an autostarted agent uses the configuration's "
                "agent.idle_exit, 900)"),
    Option("--autostarted", FLAG,
           help="--watch: set by the CLI when it starts the agent by itself"),
)
SYNC = Command("sync", "forward every pending event and message to the logger (alias: import)",
               SYNC_OPTIONS, module="sync_cmd")
IMPORT = Command("import", "alias of sync", SYNC_OPTIONS, module="sync_cmd")

STATUS = Command("status", "what waits in the outbox, what is quarantined or lacks a vector, and "
                           "whether the watcher runs (--probe: whether the logger and the "
                           "embedder answer)", (
    Option("--probe", FLAG, help="also ask whether the logger and the embedder answer"),
), module="status_cmd", served="probe", tools=(Tool("status", "The store's status", "core", """
    The store's state: what waits in the outbox for the logger, what is quarantined or lacks
    a vector, and whether the project's agent runs. Mirrors `agent-memory status`.""",
    ("probe",), read_only=True),))

_PORT = "default 8080 for http, 8443 for https/mtls"
CONFIG = Command("config", "write or check a configuration document", module="config_cmd",
                 actions=(
    Command("generate", "write a configuration document (0600)", (
        Option("--output", required=True, metavar="PATH"),
        Option("--logger-host", required=True, metavar="H"),
        Option("--embed-host", required=True, metavar="H"),
        Option("--logger-port", INTEGER, metavar="N", help=_PORT),
        Option("--embed-port", INTEGER, metavar="N", help=_PORT),
        Option("--protocol", choices=PROTOCOLS,
               help="default: mtls when certificates are given, else http"),
        Option("--logger-cert", metavar="F"),
        Option("--logger-key", metavar="F"),
        Option("--logger-ca", metavar="F"),
        Option("--check-hostname", FLAG,
               help="check that the server's certificate is for the host connected to "
                    "(ssl.check_hostname true; default: any certificate of the CA)"),
        Option("--token", metavar="T"),
        Option("--embed-model", metavar="M", help="default BAAI/bge-m3"),
        Option("--embed-dimension", INTEGER, metavar="N", help="default 1024"),
        Option("--force", FLAG, help="replace an existing file"),
    )),
    Command("validate", "check the configuration and its certificate files (exit 6 when "
                        "unusable) and print it, secrets redacted"),
))

STORE = Command("store", "manage the project's file store", module="store_cmd", actions=(
    Command("init", "create .agent-memory/ and, inside git, its ignore rule"),
))

GC = Command("gc", "remove the messages and vectors the logger confirmed long ago from "
                   ".agent-memory/.imported/", (
    Option("--older-than", required=True, metavar="DURATION",
           help="moved into .imported/ more than this long ago: 90s, 15m, 12h, 30d, 2w"),
    Option("--dry-run", FLAG, help="count, remove nothing"),
), module="gc_cmd")

VERIFY = Command("verify", "check every name, record and vector of the store, and duplicates "
                           "across its areas (exit 1 when something is damaged)", (
    Option("--repair", FLAG,
           help="first re-file what entries named against the store's rules hold (a message "
                "whose id once ended in a newline, say) and set those entries aside to "
                ".agent-memory/.quarantine/.stray/; nothing is deleted"),
), module="verify_cmd")

AGENT = Command("agent", "the project's resident agent (a `sync --watch` serving the CLI): "
                         "start, stop, status", module="agent_cmd", actions=(
    Command("start", "start the agent in the background (as a command that finds none would) "
                     "and wait until it answers", (_timeout("answer"),)),
    Command("stop", "ask the agent to stop and wait until it has exited", (_timeout("exit"),)),
    Command("status", "whether an agent answers: pid, socket, idle deadline"),
))

TOOL_GROUPS = ("core", "navigate", "forget")
_BEFORE_MCP = (SESSION, WRITE, READ, GET, SESSIONS, SEARCH, WORKING_SET, *NAVIGATION, DELETE,
               MARK, EMBED, SYNC, IMPORT, STATUS, CONFIG, STORE, GC, VERIFY, AGENT)


def _tools_by_group() -> str:
    """The --tools help: each group with its tools, as declared above."""
    declared = [tool for command in _BEFORE_MCP
                for c in (command, *command.actions.values()) for tool in c.tools]
    return "; ".join(f"{group}: {', '.join(t.name for t in declared if t.group == group)}"
                     for group in TOOL_GROUPS)


MCP = Command("mcp", "serve these commands as MCP tools over stdio until the client closes stdin "
                     "(stdout carries the protocol; logs and the closing answer go to stderr)", (
    Option("--tools", metavar="LIST",
           help=f"serve only these tools: names and groups, comma-separated "
                f"({_tools_by_group()}; all, the default)"),
), module="mcp_cmd")

COMMANDS = {command.name: command for command in (*_BEFORE_MCP, MCP)}
