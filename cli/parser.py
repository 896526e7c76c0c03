"""The command line (the CLI contract): names and options agents and scripts depend on."""

from __future__ import annotations

import argparse
import os

TYPE_CHECKING = False  # typing costs the write path 3 ms: annotations only
if TYPE_CHECKING:
    from typing import NoReturn

from agent_memory.cli.errors import UsageError

# The write path pays for every millisecond of start-up, and argparse spends some on what a
# command line that parses never shows: a translation lookup for each of its own messages
# (gettext stats the locale directories every time; no catalogue ships for it) and a help
# formatter per option that imports shutil for the terminal width. Messages stay argparse's
# English; the width comes from os directly (COLUMNS first, as shutil would).
argparse._ = lambda message: message
argparse.ngettext = lambda singular, plural, n: singular if n == 1 else plural


def _formatter(prog: str) -> argparse.HelpFormatter:
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(1).columns
        except OSError:
            columns = 80
    return argparse.HelpFormatter(prog, width=max(columns - 2, 20))


from agent_memory.sync.identity import VERSION  # noqa: E402 - one version string, read by the agent too

import re  # noqa: E402 - already loaded by outbox.contract on every path

_INTEGER = re.compile(r"-?[0-9]+", re.ASCII)
_NUMBER = re.compile(r"-?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?", re.ASCII)


def integer(text: str) -> int:
    """An integer option's value, checked whole: int() would also take surrounding whitespace
    (a trailing newline), `_` and other scripts' digits."""
    if not _INTEGER.fullmatch(text):
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}")
    return int(text)


def seconds(text: str) -> float:
    """A number of seconds, checked whole: float() would also take whitespace, "inf" and
    "nan". (Its range is each command's to check, with its own words.)"""
    if not _NUMBER.fullmatch(text):
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}")
    return float(text)
STORE_MODES = ("auto", "logger", "file")


class Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as exceptions, so they print as the JSON contract."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("formatter_class", _formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def _globals(parser: argparse.ArgumentParser, suppress: bool) -> None:
    """The global options, accepted before or after the command name."""
    default = (lambda value: argparse.SUPPRESS) if suppress else (lambda value: value)
    parser.add_argument("--config", metavar="PATH", default=default(None),
                        help="configuration document (else $AGENT_MEMORY_CONFIG, else "
                             "~/.config/vvz-agent-memory/config.json; none = file store only)")
    parser.add_argument("--store", choices=STORE_MODES, default=default("auto"),
                        help="auto: the logger when reachable, else the file store (default); "
                             "logger: the logger or nothing; file: the file store only")
    parser.add_argument("--project-root", metavar="DIR", default=default(None),
                        help="project directory holding .agent-memory/ (default: the git top "
                             "level of the working directory, else the working directory)")
    parser.add_argument("--no-agent", action="store_true", default=default(False),
                        help="neither use nor start the project's agent: the command talks to "
                             "the fleet itself (also $AGENT_MEMORY_AGENT=off, or the "
                             "configuration's agent.mode \"off\")")


def command(sub: argparse._SubParsersAction, name: str, help_text: str) -> Parser:
    """A (sub)command parser that also accepts the global options after its name."""
    p = sub.add_parser(name, help=help_text, description=help_text)
    _globals(p, suppress=True)
    return p


COMMANDS = {
    "session": "open, close or reopen a dialogue session",
    "write": "record one message (text from --text or stdin)",
    "read": "a window of a session's messages by sequence number",
    "get": "one message by its id",
    "sessions": "list sessions",
    "search": "messages closest in meaning to a query (message_search)",
    "working-set": "a session's recent messages and those closest to an anchor",
    "relations": "every relation of a session: kind and its two messages (relations_read)",
    "path": "the line from a message back to its root (path_read)",
    "leaves": "a session's leaves and branching points, with their counts (leaves_read)",
    "graph": "the messages and relations under a message, depth-bounded (graph_read)",
    "info": "the logger's table of contents, or one section of it (info)",
    "delete": "delete a message: soft hides it, hard erases its text from the disk and the "
              "logger (message_delete)",
    "mark": "set or clear the soft-deletion marker of messages, all or nothing "
            "(messages_mark_for_deletion)",
    "embed": "fill every missing message vector (.emb) with the configured model",
    "sync": "forward every pending event and message to the logger (alias: import)",
    "import": "alias of sync",
    "status": "what waits in the outbox, what is quarantined or lacks a vector, and whether the "
              "watcher runs (--probe: whether the logger and the embedder answer)",
    "config": "write or check a configuration document",
    "store": "manage the project's file store",
    "gc": "remove the messages and vectors the logger confirmed long ago from "
          ".agent-memory/.imported/",
    "verify": "check every name, record and vector of the store, and duplicates across its "
              "areas (exit 1 when something is damaged)",
    "agent": "the project's resident agent (a `sync --watch` serving the CLI): start, stop, "
             "status",
    "mcp": "serve these commands as MCP tools over stdio until the client closes stdin "
           "(stdout carries the protocol; logs and the closing answer go to stderr)",
}


_VALUED_GLOBALS = ("--config", "--store", "--project-root")


def command_in(argv: list[str]) -> str | None:
    """The command name in `argv` (the first word that is not a global option or its value)."""
    skip = False
    for token in argv:
        if skip:
            skip = False
            continue
        if token in _VALUED_GLOBALS:
            skip = True
            continue
        if not token.startswith("-"):
            return token
    return None


def build(only: str | None = None) -> Parser:
    """The parser. With `only`, just that command gets its options; the others are listed by
    name, which keeps start-up short on the write path (an agent pays it on every message)."""
    parser = Parser(
        prog="agent-memory",
        description="Record and read AI agents' dialogue messages. Every write lands first in "
                    "the project's append-only outbox (.agent-memory/) and is forwarded to the "
                    "fleet's AI Logger. Every command prints one JSON object on stdout.",
        epilog="Exit codes: 0 success; 1 logger refused or failed; 2 usage; 3 file store "
               "unavailable; 4 logger unreachable with no fallback; 5 not found; 6 configuration "
               "invalid, or credentials rejected where there is no fallback; 7 embedding "
               "unavailable where a vector is required; 8 no room (disk full or the outbox cap "
               "reached; nothing written); 9 store held by another process that keeps it.")
    _globals(parser, suppress=False)
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)

    for name, help_text in COMMANDS.items():
        if only is not None and name != only:
            commands.add_parser(name, help=help_text)
        else:
            _ADD[name](command(commands, name, help_text))
    return parser


def _session(session: Parser) -> None:
    session_sub = session.add_subparsers(dest="action", metavar="ACTION", parser_class=Parser)
    s_open = command(session_sub, "open", "open a session")
    s_open.add_argument("--session-id", required=True, metavar="ID")
    s_open.add_argument("--project-id", required=True, metavar="P")
    s_open.add_argument("--dialogue-kind", required=True, metavar="KIND,KIND",
                        help="sender and receiver kinds, each human|model|tool|system")
    s_open.add_argument("--participant", required=True, action="extend", nargs="+",
                        metavar="NAME", dest="participants", help="one or more, repeatable")
    s_open.add_argument("--title", metavar="T")
    s_open.add_argument("--metadata", metavar="JSON", help="a JSON object kept verbatim")
    for action in ("close", "reopen"):
        p = command(session_sub, action, f"{action} a session")
        p.add_argument("--session-id", required=True, metavar="ID")
    s_delete = command(session_sub, "delete", "delete a session with all its messages, "
                                              "relations and vectors, here and in the logger: "
                                              "irreversible (delete_session)")
    s_delete.add_argument("--session-id", required=True, metavar="ID")
    s_delete.add_argument("--confirm", required=True, metavar="ID",
                          help="the session id once more, so a slip cannot delete a session")
    s_delete.add_argument("--wait", type=seconds, default=1.0, metavar="SECONDS",
                          help="how long to wait for the logger's confirmation (default 1)")


def _write(write: Parser) -> None:
    write.add_argument("--session-id", required=True, metavar="ID")
    write.add_argument("--sender-kind", required=True, metavar="K")
    write.add_argument("--sender-identity", required=True, metavar="I")
    write.add_argument("--receiver-kind", required=True, metavar="K")
    write.add_argument("--receiver-identity", required=True, metavar="I")
    write.add_argument("--text", metavar="T", help="the message text (else read from stdin)")
    write.add_argument("--priority", type=integer, metavar="N", help="0 = the ordinary flow")
    write.add_argument("--message-id", metavar="UUID", help="for replays; default: a new UUID4")
    write.add_argument("--occurred-at", metavar="RFC3339", help="when it happened; default: now")
    write.add_argument("--relation", action="append", default=[], metavar="KIND:MESSAGE_ID",
                       help="reply|influence|tool-result toward an earlier message; repeatable")
    write.add_argument("--corrects", metavar="MESSAGE_ID", help="the message this one corrects")
    write.add_argument("--attributes", metavar="JSON", help="a JSON object kept verbatim")
    write.add_argument("--wait", type=seconds, default=1.0, metavar="SECONDS",
                       help="how long to wait for the logger's confirmation (through the "
                            "project's agent, or for the sync lock inline; default 1; 0: hand "
                            "it over without waiting)")
    write.add_argument("--embed-budget", type=seconds, metavar="SECONDS",
                       help="how long the embedder may take to give the vector (default "
                            "$AGENT_MEMORY_EMBED_BUDGET, else 2, or 0 with --store file; "
                            "0: leave it to `embed` or the watcher)")


def _read(read: Parser) -> None:
    read.add_argument("--session-id", metavar="ID",
                      help="the session (required, except with --preview where it filters)")
    read.add_argument("--start", type=integer, default=0, metavar="N", help="first sequence number")
    read.add_argument("--block-size", type=integer, metavar="N")
    read.add_argument("--continuation", metavar="C", help="resume where the last window ended")
    read.add_argument("--mode", choices=("resolved", "full"), default="resolved")
    read.add_argument("--show-deleted", action="store_true",
                      help="also the soft-deleted messages")
    preview = read.add_argument_group(
        "preview", "--preview: a paged listing of text prefixes across sessions, by time "
                   "(messages_read's preview form); each filter is optional")
    preview.add_argument("--preview", action="store_true")
    preview.add_argument("--caller", metavar="IDENTITY", help="sender identity")
    preview.add_argument("--recipient", metavar="IDENTITY", help="receiver identity")
    preview.add_argument("--period-start", metavar="RFC3339", help="occurred at or after")
    preview.add_argument("--period-end", metavar="RFC3339", help="occurred at or before")
    preview.add_argument("--page-offset", type=integer, metavar="N", help="zero-based page index")
    preview.add_argument("--page-size", type=integer, metavar="N")
    preview.add_argument("--preview-size", type=integer, metavar="N",
                         help="characters of text per entry (default 200)")


def _budgeted(parser: Parser) -> None:
    """--max-chars: the answer's budget (cli.budget); --answer-form is the MCP server's, which
    measures its tool result's text instead of the printed line."""
    parser.add_argument("--max-chars", type=integer, metavar="N",
                        help="the whole answer is at most N characters (default 25000, or the "
                             "configuration's output.max_chars; 0: no limit); a longer one "
                             "holds fewer items (more: true, a continuation) and then cuts "
                             "long texts to head and tail (<key>_cut says what is shown)")
    parser.add_argument("--answer-form", choices=("line", "mcp"), default="line",
                        help=argparse.SUPPRESS)


def _paged(parser: Parser) -> None:
    parser.add_argument("--block-size", type=integer, metavar="N")
    parser.add_argument("--continuation", metavar="C", help="resume where the last block ended")


def _relations(relations: Parser) -> None:
    relations.add_argument("--session-id", required=True, metavar="ID")
    _paged(relations)


def _path(path: Parser) -> None:
    path.add_argument("--session-id", required=True, metavar="ID")
    path.add_argument("--node-id", required=True, metavar="MESSAGE_ID")
    path.add_argument("--mode", choices=("resolved", "full"), default="resolved")
    _paged(path)


def _leaves(leaves: Parser) -> None:
    leaves.add_argument("--session-id", required=True, metavar="ID")
    _paged(leaves)


def _graph(graph: Parser) -> None:
    graph.add_argument("--session-id", required=True, metavar="ID")
    graph.add_argument("--anchor", required=True, metavar="MESSAGE_ID")
    graph.add_argument("--depth", type=integer, metavar="N",
                       help="levels below the anchor (0: the anchor alone; default 3)")
    _paged(graph)


def _info(info: Parser) -> None:
    info.add_argument("--section", metavar="NAME", help="one section (default: the contents)")


def _forgetting(parser: Parser) -> None:
    parser.add_argument("--session-id", metavar="ID",
                        help="the message's session, when neither the file store nor a "
                             "reachable logger knows it")
    parser.add_argument("--wait", type=seconds, default=1.0, metavar="SECONDS",
                        help="how long to wait for the logger's confirmation (default 1)")


def _delete(delete: Parser) -> None:
    delete.add_argument("message_id", metavar="MESSAGE_ID")
    delete.add_argument("--mode", required=True, choices=("soft", "hard"),
                        help="soft: hidden from reads (get still shows it); hard: its text is "
                             "erased from every file of the store now and from the logger")
    _forgetting(delete)


def _mark(mark: Parser) -> None:
    mark.add_argument("message_ids", nargs="+", metavar="MESSAGE_ID")
    mark.add_argument("--unmark", action="store_true", help="clear the marker instead")
    _forgetting(mark)


def _get(get: Parser) -> None:
    get.add_argument("message_id", metavar="MESSAGE_ID")
    get.add_argument("--text-offset", type=integer, metavar="O",
                     help="only the text from character O (from 0; default 0)")
    get.add_argument("--text-length", type=integer, metavar="L",
                     help="only L characters of the text (default: to its end)")


def _sessions(sessions: Parser) -> None:
    sessions.add_argument("--project-id", metavar="P")
    sessions.add_argument("--lifecycle", choices=("open", "closed"))
    sessions.add_argument("--participant", metavar="NAME")
    sessions.add_argument("--dialogue-kind", metavar="KIND-to-KIND")
    sessions.add_argument("--block-size", type=integer, metavar="N")
    sessions.add_argument("--continuation", metavar="C")


def _search(search: Parser) -> None:
    search.add_argument("--query", required=True, metavar="TEXT")
    search.add_argument("--scope", required=True, choices=("session", "project", "all_projects"))
    search.add_argument("--target", metavar="ID", help="the session or project of the scope")
    search.add_argument("--page-size", type=integer, metavar="N")
    search.add_argument("--page-offset", type=integer, metavar="N", help="zero-based")
    search.add_argument("--mode", choices=("resolved", "full"), default="resolved")
    search.add_argument("--sender-kind", metavar="K", help="filter: human|model|tool|system")
    search.add_argument("--priority", type=integer, metavar="N", help="filter: exact priority")
    search.add_argument("--occurred-from", metavar="RFC3339", help="filter: inclusive")
    search.add_argument("--occurred-to", metavar="RFC3339", help="filter: inclusive")
    search.add_argument("--filter-session-id", metavar="ID", help="filter: one session")
    search.add_argument("--filter-project-id", metavar="P", help="filter: one project")
    search.add_argument("--ranking", choices=("auto", "vector", "bm25"), default="auto",
                        help="auto: by vector, else BM25 over local texts when the query "
                             "cannot be embedded; vector: a vector or exit 7; bm25: local BM25")


def _working_set(ws: Parser) -> None:
    ws.add_argument("--session-id", required=True, metavar="ID")
    ws.add_argument("--anchor-text", metavar="T")
    ws.add_argument("--anchor-message-id", metavar="M")
    ws.add_argument("--recency-count", type=integer, metavar="N")
    ws.add_argument("--similarity-count", type=integer, metavar="N")
    ws.add_argument("--mode", choices=("resolved", "full"), default="resolved")
    ws.add_argument("--ranking", choices=("auto", "vector", "bm25"), default="auto",
                    help="auto: closest by vector, else BM25 of the anchor's text over the "
                         "local texts when no vector can be had; vector: a vector or exit 7; "
                         "bm25: local BM25")


def _embed(embed: Parser) -> None:
    embed.add_argument("--batch", type=integer, default=64, metavar="N",
                       help="texts per embedder call (default 64)")


def _sync(sync: Parser) -> None:
    sync.add_argument("--batch-items", type=integer, default=1000, metavar="N",
                      help="messages per messages_import call (default 1000)")
    sync.add_argument("--batch-bytes", type=integer, default=4 << 20, metavar="N",
                      help="encoded bytes per messages_import call (default 4 MiB)")
    sync.add_argument("--quarantine-after", type=integer, default=3, metavar="N",
                      help="refusals across runs before an item moves to .quarantine/ "
                           "(default 3)")
    sync.add_argument("--sessions-in-flight", type=integer, default=4, metavar="N",
                      help="sessions forwarded at once; each stays in order (default 4)")
    sync.add_argument("--watch", action="store_true",
                      help="keep running: forward new files as they appear (watchdog events, "
                           "debounced), rescan periodically, back off while the logger is "
                           "unreachable, embed messages lacking a vector; SIGTERM/SIGINT stop "
                           "it after the batch in flight")
    sync.add_argument("--rescan-interval", type=seconds, default=30.0, metavar="SECONDS",
                      help="--watch: full rescan period, the safety net for missed events "
                           "(default 30)")
    sync.add_argument("--debounce", type=seconds, default=0.02, metavar="SECONDS",
                      help="--watch: quiet time after the last event before a round "
                           "(default 0.02)")
    sync.add_argument("--max-delay", type=seconds, default=0.25, metavar="SECONDS",
                      help="--watch: longest delay of a round after the first event "
                           "(default 0.25)")
    sync.add_argument("--backoff-initial", type=seconds, default=1.0, metavar="SECONDS",
                      help="--watch: first delay after a failed round (default 1; x1.5 per "
                           "failure, jittered)")
    sync.add_argument("--backoff-max", type=seconds, default=30.0, metavar="SECONDS",
                      help="--watch: cap of the delay between failed rounds (default 30)")
    sync.add_argument("--probe-interval", type=seconds, default=1.0, metavar="SECONDS",
                      help="--watch: while backing off, one health request this often tells "
                           "when the logger is back (default 1)")
    sync.add_argument("--retry-refused-after", type=seconds, default=60.0, metavar="SECONDS",
                      help="--watch: send a refused message again only after this long, so "
                           "rounds do not repeat (and count) the same refusal (default 60)")
    sync.add_argument("--no-backfill", action="store_true",
                      help="--watch: do not embed messages that lack a vector")
    sync.add_argument("--idle-exit", type=seconds, metavar="SECONDS",
                      help="--watch: exit after this long without a CLI request and with "
                           "nothing pending (default: never; an autostarted agent uses the "
                           "configuration's agent.idle_exit, 900)")
    sync.add_argument("--autostarted", action="store_true",
                      help="--watch: set by the CLI when it starts the agent by itself")


def _agent(agent: Parser) -> None:
    agent_sub = agent.add_subparsers(dest="action", metavar="ACTION", parser_class=Parser)
    start = command(agent_sub, "start", "start the agent in the background (as a command "
                                        "that finds none would) and wait until it answers")
    start.add_argument("--timeout", type=seconds, default=30.0, metavar="SECONDS",
                       help="how long to wait for it to answer (default 30)")
    stop = command(agent_sub, "stop", "ask the agent to stop and wait until it has exited")
    stop.add_argument("--timeout", type=seconds, default=30.0, metavar="SECONDS",
                      help="how long to wait for it to exit (default 30)")
    command(agent_sub, "status", "whether an agent answers: pid, socket, idle deadline")


def _verify(verify: Parser) -> None:
    verify.add_argument("--repair", action="store_true",
                        help="first re-file what entries named against the store's rules hold "
                             "(a message whose id once ended in a newline, say) and set those "
                             "entries aside to .agent-memory/.quarantine/.stray/; nothing is "
                             "deleted")


def _mcp(mcp: Parser) -> None:
    mcp.add_argument("--tools", metavar="LIST",
                     help="serve only these tools: names and groups, comma-separated (core: "
                          "session_open, session_close, session_reopen, write, read, get, "
                          "sessions, search, working_set, status; "
                          "navigate: preview, relations, path, leaves, graph, info; forget: "
                          "delete, mark, session_delete; all, the default)")


def _gc(gc: Parser) -> None:
    gc.add_argument("--older-than", required=True, metavar="DURATION",
                    help="moved into .imported/ more than this long ago: 90s, 15m, 12h, 30d, 2w")
    gc.add_argument("--dry-run", action="store_true", help="count, remove nothing")


def _status(status: Parser) -> None:
    status.add_argument("--probe", action="store_true",
                        help="also ask whether the logger and the embedder answer")


def _config(config: Parser) -> None:
    config_sub = config.add_subparsers(dest="action", metavar="ACTION", parser_class=Parser)
    gen = command(config_sub, "generate", "write a configuration document (0600)")
    gen.add_argument("--output", required=True, metavar="PATH")
    gen.add_argument("--logger-host", required=True, metavar="H")
    gen.add_argument("--embed-host", required=True, metavar="H")
    gen.add_argument("--logger-port", type=integer, metavar="N",
                     help="default 8080 for http, 8443 for https/mtls")
    gen.add_argument("--embed-port", type=integer, metavar="N",
                     help="default 8080 for http, 8443 for https/mtls")
    gen.add_argument("--protocol", choices=("http", "https", "mtls"),
                     help="default: mtls when certificates are given, else http")
    gen.add_argument("--logger-cert", metavar="F")
    gen.add_argument("--logger-key", metavar="F")
    gen.add_argument("--logger-ca", metavar="F")
    gen.add_argument("--check-hostname", action="store_true",
                     help="check that the server's certificate is for the host connected to "
                          "(ssl.check_hostname true; default: any certificate of the CA)")
    gen.add_argument("--token", metavar="T")
    gen.add_argument("--embed-model", metavar="M", help="default BAAI/bge-m3")
    gen.add_argument("--embed-dimension", type=integer, metavar="N", help="default 1024")
    gen.add_argument("--force", action="store_true", help="replace an existing file")
    command(config_sub, "validate", "check the configuration and its certificate files (exit "
                                    "6 when unusable) and print it, secrets redacted")


def _store(store: Parser) -> None:
    store_sub = store.add_subparsers(dest="action", metavar="ACTION", parser_class=Parser)
    command(store_sub, "init", "create .agent-memory/ and, inside git, its ignore rule")


_ADD = {"session": _session, "write": _write, "read": _read, "get": _get,
        "sessions": _sessions, "search": _search, "working-set": _working_set,
        "relations": _relations, "path": _path, "leaves": _leaves, "graph": _graph,
        "info": _info, "delete": _delete, "mark": _mark,
        "embed": _embed, "sync": _sync, "import": _sync, "status": _status,
        "config": _config, "store": _store, "agent": _agent, "verify": _verify, "gc": _gc,
        "mcp": _mcp}
for _name in ("read", "get", "sessions", "search", "working-set", "relations", "path", "leaves",
              "graph", "info"):
    _ADD[_name] = (lambda add: lambda parser: (add(parser), _budgeted(parser)))(_ADD[_name])
