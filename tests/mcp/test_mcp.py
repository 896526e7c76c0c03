"""`agent-memory mcp`: the MCP server, driven by the official SDK's client over stdio against the
reference fleet. Every tool answers what the CLI command it mirrors prints; writes are durable
with the logger down and delivered once it is back; invalid inputs are clear tool errors that
write nothing; a server killed mid-call leaves a sound store; the client's roots name the
project."""

from __future__ import annotations

import json
import os
import signal
import time
import uuid
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp import types

from amtest import CLI, Result, make_project, message_args, open_args, wait_for, watcher_pids
from fleetutil import read_all

from agent_memory.cli.errors import MEANINGS

TOOLS = {"session_open", "session_close", "session_reopen", "write", "read", "get", "sessions",
         "search", "working_set", "status", "preview", "relations", "path", "leaves", "graph",
         "info", "delete", "mark", "session_delete"}
WRITING = ("session_open", "session_close", "session_reopen", "write", "delete", "mark",
           "session_delete")


# --- driving the server ----------------------------------------------------------------------

@asynccontextmanager
async def mcp_session(project, *options: str, cwd: str | None = None, roots: list[str] = (),
                      after: tuple[str, ...] = ()):
    """An initialized client session with `agent-memory [--config C] OPTIONS mcp` run in the
    project (or `cwd`); the client offers `roots` when given. The server's stderr is kept
    beside the project (mcp-server.err), for a failing test to show."""
    prefix = ["--config", project.config] if project.config else []
    params = StdioServerParameters(command=CLI, args=[*prefix, *options, "mcp", *after],
                                   env=project.env, cwd=cwd or project.root)
    listed = None
    if roots:
        async def listed(_context):
            return types.ListRootsResult(roots=[types.Root(uri=f"file://{r}") for r in roots])
    with open(os.path.join(os.path.dirname(project.root), "mcp-server.err"), "a") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=120,
                                     list_roots_callback=listed) as session:
                await session.initialize()
                yield session


async def call(session: ClientSession, name: str, **arguments: Any) -> tuple[bool, Any]:
    """(True, {"store", "data"}) or (False, the error object of its JSON text)."""
    result = await session.call_tool(name, arguments)
    if result.is_error:
        return False, json.loads(result.content[0].text)
    return True, result.structured_content


def as_tool(result: Result) -> tuple[bool, Any]:
    """A CLI command's answer in the shape its tool answers."""
    if result.out["success"]:
        return True, {"store": result.out["store"], "data": result.out["data"]}
    error = {"code": result.out["error"]["code"], "message": result.out["error"]["message"],
             "exit_code": result.rc, "meaning": MEANINGS[result.rc]}
    if "details" in result.out["error"]:
        error["details"] = result.out["error"]["details"]
    return False, error


async def until(predicate, what: str, timeout: float = 45.0) -> None:
    """wait_for, off the event loop (the predicate may run its own)."""
    await anyio.to_thread.run_sync(lambda: wait_for(predicate, what, timeout, pause=0.1))


def server_pids(base: str) -> list[int]:
    """Live `agent-memory ... mcp` processes run in, or naming, a directory under `base`."""
    base = os.path.realpath(base)
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                argv = [os.fsdecode(a) for a in handle.read().split(b"\0") if a]
            with open(f"/proc/{entry}/stat", "rb") as handle:
                if handle.read().rsplit(b")", 1)[-1].split()[0] == b"Z":
                    continue
            cwd = os.readlink(f"/proc/{entry}/cwd")
        except OSError:
            continue
        if "mcp" in argv and any(p == base or p.startswith(base + "/")
                                 for p in [cwd, *argv] if p.startswith("/")):
            found.append(int(entry))
    return found


@pytest.fixture
def scratch(tmp_path):
    """tmp_path, checked at the end: no MCP server and no agent of this test left running."""
    yield tmp_path
    left_agents = watcher_pids(str(tmp_path))
    for pid in left_agents + server_pids(str(tmp_path)):
        os.kill(pid, signal.SIGKILL)
    assert not server_pids(str(tmp_path)), "an MCP server outlived its client"
    assert not left_agents, f"agents left running: {left_agents}"


def stop_agent(project) -> None:
    result = project.cli("agent", "stop", "--timeout", "20")
    assert result.rc == 0, result.stdout
    wait_for(lambda: not watcher_pids(project.root), "the agent to exit", timeout=20)


def auto_project(tmp_path, name: str, config: str):
    """A project whose commands (and MCP server) use the agent and start it when none runs."""
    base = tmp_path / name
    base.mkdir()
    project = make_project(base, config=config)
    project.env["AGENT_MEMORY_AGENT"] = "auto"
    return project


def write_arguments(session_id: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"session_id": session_id, "sender_kind": "human", "sender_identity": "alice",
            "receiver_kind": "model", "receiver_identity": "claude", "text": text, **extra}


def outbox_files(project) -> list[str]:
    """Every entry of every session directory of the store, in every area."""
    found = []
    for area in ("", ".imported", ".quarantine"):
        top = os.path.join(project.store, area)
        if not os.path.isdir(top):
            continue
        for session in os.listdir(top):
            path = os.path.join(top, session)
            if not session.startswith(".") and os.path.isdir(path):
                found += [os.path.join(area, session, name) for name in os.listdir(path)]
    return sorted(found)


# --- the tool table, without a server ----------------------------------------------------------

def _sample(annotation):
    """A valid value of a tool parameter's type."""
    import typing
    kind = typing.get_args(annotation)[0] if typing.get_origin(annotation) is \
        typing.Annotated else annotation
    if typing.get_origin(kind) is typing.Annotated:
        kind = typing.get_args(kind)[0]
    if typing.get_origin(kind) is typing.Literal:
        return typing.get_args(kind)[0]
    if typing.get_origin(kind) is list:
        item = _sample(typing.get_args(kind)[0])
        return [item, item]
    if typing.get_origin(kind) is dict or kind is typing.Any:  # a free-form object
        return {"a": [1, "b"]}
    return {str: "-x", int: 1, float: 0.5, bool: True}[kind]


def _typed_and_parsed(tool, arguments):
    """The Namespace a tool's call makes (no argv), and the one argparse makes of the command
    line the agent would be sent for it."""
    from agent_memory.cli import typed
    from agent_memory.mcpserve import tools as mcp_tools
    from agent_memory.cli.parser import build, command_in
    made = typed.namespace(tool.command, mcp_tools.values(tool, arguments),
                           {"store": "file", "project_root": "/p"})
    argv = typed.argv_of(made)
    return made, build(command_in(argv)).parse_args(argv)


def test_each_tool_makes_the_namespace_its_command_line_parses_to():
    """Every parameter of every tool is an option of its command; a call with every parameter
    given, and one with the required ones only, make the same parsed options as the command
    line does (a drift between the typed call and the parser is caught here, not by an
    agent)."""
    from agent_memory.mcpserve import tools as mcp_tools
    assert {t.name for t in mcp_tools.TOOLS} == TOOLS
    for tool in mcp_tools.TOOLS:
        parameters = mcp_tools.parameters(tool)
        full = {p.name: _sample(p.annotation) for p in parameters}
        least = {p.name: full[p.name] for p in parameters if p.default is p.empty}
        for arguments in (full, least):
            made, parsed = _typed_and_parsed(tool, arguments)
            assert vars(made) == vars(parsed), (tool.name, arguments)
        assert made.answer_form == "mcp" if tool.command.top.budgeted else True


def test_a_typed_value_the_command_line_refuses_is_refused_in_its_words():
    """Values the input schema lets through but the command's checks refuse (an integer or a
    number of seconds as text, with a newline or "inf"; a choice outside the list), and the
    required options left out: the same usage error as the command line's, naming them."""
    from agent_memory.cli import typed
    from agent_memory.mcpserve import tools as mcp_tools
    from agent_memory.cli.errors import UsageError
    from agent_memory.cli.parser import build
    from agent_memory.cli.registry import INTEGER, SECONDS
    checked = 0
    for tool in mcp_tools.TOOLS:
        parameters = mcp_tools.parameters(tool)
        least = {p.name: _sample(p.annotation) for p in parameters if p.default is p.empty}
        for p in parameters:
            option = tool.command.option(p.name)
            bad = "1\n" if option.kind == INTEGER else "inf" if option.kind == SECONDS else \
                "bogus" if option.choices else None
            if bad is None:
                continue
            with pytest.raises(UsageError) as typed_error:
                typed.namespace(tool.command, {**mcp_tools.values(tool, least), p.name: bad}, {})
            argv = typed.argv_of(typed.namespace(tool.command, mcp_tools.values(tool, least),
                                                 {}))
            argv.insert(argv.index("--") if "--" in argv else len(argv), f"{option.flag}={bad}")
            with pytest.raises(UsageError) as parsed_error:
                build(tool.command.top.name).parse_args(argv)
            assert str(typed_error.value) == str(parsed_error.value), (tool.name, p.name)
            assert typed_error.value.exit_code == 2
            checked += 1
        needed = [o for o in tool.command.all_options if o.required]
        if needed:  # nothing given: the required options named as argparse names them
            with pytest.raises(UsageError) as typed_error:
                typed.namespace(tool.command, {}, {})
            with pytest.raises(UsageError) as parsed_error:
                build(tool.command.top.name).parse_args(tool.command.words)
            assert str(typed_error.value) == str(parsed_error.value), tool.name
            checked += 1
    assert checked >= 30


# --- against the reference fleet ----------------------------------------------------------------

def test_every_tool_answers_what_its_command_prints(scratch, fleet, unique_session_id):
    """Each tool, then the command it mirrors: the same answer. Writes go to a twin project
    with the same message ids and times (the logger's identical repeat answers as the first
    time); reads ask the same project both ways."""
    sid = unique_session_id
    served = auto_project(scratch, "served", str(fleet.config_path))
    twin = auto_project(scratch, "twin", str(fleet.config_path))
    ids = [str(uuid.uuid4()) for _ in range(3)]
    unknown = str(uuid.uuid4())
    texts = ["agents remember the outbox", "--text looks like an option, and is a text",
             "a reply about memory \"quoted\" and\nmultiline"]

    # both agents up first: each write is then served, and answers alike both ways (a first
    # call leaves its file to the agent it starts: tests/agent/test_agent_start.py)
    for project in (served, twin):
        assert project.cli("agent", "start").rc == 0

    async def scenario() -> None:
        async with mcp_session(served) as session:
            listed = (await session.list_tools()).tools
            assert {t.name for t in listed} == TOOLS
            for tool in listed:
                assert tool.description and tool.input_schema["type"] == "object"
                assert tool.output_schema["required"] == ["store", "data"]
                assert tool.annotations.read_only_hint is (tool.name not in WRITING)
                assert tool.annotations.destructive_hint is (tool.name in ("delete",
                                                                           "session_delete"))
            write_schema = next(t for t in listed if t.name == "write").input_schema
            assert set(write_schema["required"]) == {"session_id", "sender_kind",
                                                     "sender_identity", "receiver_kind",
                                                     "receiver_identity", "text"}

            steps = [
                ("session_open", dict(session_id=sid, project_id="proj",
                                      dialogue_kind=["human", "model"],
                                      participant=["alice", "claude"], title="T",
                                      metadata={"origin": "test"}), open_args(sid)),
            ]
            for i, (message_id, text) in enumerate(zip(ids, texts)):
                extra = {"message_id": message_id, "occurred_at": f"2026-11-0{i + 1}T10:00:00Z"}
                argv_extra = dict(extra)
                if i == 2:
                    extra.update(relation=[f"reply:{ids[0]}"], attributes={"k": [1, "v"]},
                                 priority=2)
                    argv_extra.update(relation=f"reply:{ids[0]}", attributes='{"k": [1, "v"]}',
                                      priority="2")
                steps.append(("write", write_arguments(sid, text, **extra),
                              message_args(sid, text, **argv_extra)))
            steps += [("session_close", {"session_id": sid},
                       ["session", "close", "--session-id", sid]),
                      ("session_reopen", {"session_id": sid},
                       ["session", "reopen", "--session-id", sid])]
            for name, arguments, argv in steps:
                through_mcp = await call(session, name, **arguments)
                assert through_mcp[0] and through_mcp[1]["store"] == "logger", (name, through_mcp)
                assert through_mcp == as_tool(twin.cli(*argv)), name
            assert watcher_pids(served.root), "the project's agent served them"
            await until(lambda: len([n for n in served.final_files(sid, ".imported")
                                     if n.endswith(".msg")]) == 3, "the agent moved the files")

            reads = [
                ("read", {"session_id": sid}, ["read", "--session-id", sid]),
                ("read", {"session_id": sid, "mode": "full", "block_size": 2},
                 ["read", "--session-id", sid, "--mode", "full", "--block-size", "2"]),
                ("get", {"message_id": ids[2]}, ["get", ids[2]]),
                ("get", {"message_id": unknown}, ["get", unknown]),  # not found: exit 5
                ("sessions", {"project_id": "proj"}, ["sessions", "--project-id", "proj"]),
                ("search", {"query": "agents remember", "scope": "session", "target": sid},
                 ["search", "--query", "agents remember", "--scope", "session", "--target",
                  sid]),
                ("working_set", {"session_id": sid, "anchor_text": "memory"},
                 ["working-set", "--session-id", sid, "--anchor-text", "memory"]),
                ("working_set", {"session_id": sid, "anchor_message_id": ids[0],
                                 "recency_count": 2},
                 ["working-set", "--session-id", sid, "--anchor-message-id", ids[0],
                  "--recency-count", "2"]),
            ]
            for name, arguments, argv in reads:
                through_mcp = await call(session, name, **arguments)
                assert through_mcp == as_tool(served.cli(*argv)), name
                assert through_mcp[0] or argv == ["get", unknown], through_mcp
            missing = await call(session, "get", message_id=unknown)
            assert missing == (False, {**missing[1], "code": "MESSAGE_UNKNOWN", "exit_code": 5,
                                       "meaning": "not found"})

            # status: the same but for what moves between two calls
            tool_status = await call(session, "status", probe=True)
            cli_status = as_tool(served.cli("status", "--probe"))
            assert tool_status[0] and cli_status[0]
            for key in ("sessions", "totals", "quarantined"):
                assert tool_status[1]["data"].get(key) == cli_status[1]["data"].get(key), key
            assert tool_status[1]["data"]["probe"]["logger"]["answers"] is True
            assert tool_status[1]["data"]["agent"]["running"] is True

    try:
        anyio.run(scenario)
    finally:
        stop_agent(served)
        stop_agent(twin)
    assert [m["text"] for m in read_all(fleet, sid)] == texts


def test_navigation_and_forgetting_tools_answer_what_their_commands_print(
        scratch, fleet, unique_session_id):
    """The structural reads against the same project both ways; each delete and mark through
    MCP against the same on a twin project (same ids): the same answers, the same effect."""
    sid = unique_session_id
    served = auto_project(scratch, "served", str(fleet.config_path))
    twin = auto_project(scratch, "twin", str(fleet.config_path))
    twin_sid = sid + "-twin"
    ids, twin_ids = {}, {}
    for project, session_id, named in ((served, sid, ids), (twin, twin_sid, twin_ids)):
        assert project.cli(*open_args(session_id)).rc == 0
        for key, text, extra in (("q", "a question", {}), ("a", "an answer", {"relation": "q"}),
                                 ("b", "another answer", {"relation": "q"}),
                                 ("secret", "a secret to forget", {})):
            fixed = {"relation": f"reply:{named[extra['relation']]}"} if extra else {}
            written = project.cli(*message_args(session_id, text, **fixed))
            assert written.rc == 0, written.stdout
            named[key] = written.data["message_id"]

    def as_served(answer):
        """The twin's answer with its ids as the served project's."""
        text = json.dumps(answer).replace(twin_sid, sid)
        for key, twin_id in twin_ids.items():
            text = text.replace(twin_id, ids[key])
        return tuple(json.loads(text))

    async def scenario() -> None:
        async with mcp_session(served) as session:
            reads = [
                ("relations", {"session_id": sid}, ["relations", "--session-id", sid]),
                ("path", {"session_id": sid, "node_id": ids["a"], "mode": "full"},
                 ["path", "--session-id", sid, "--node-id", ids["a"], "--mode", "full"]),
                ("leaves", {"session_id": sid, "block_size": 1},
                 ["leaves", "--session-id", sid, "--block-size", "1"]),
                ("graph", {"session_id": sid, "anchor": ids["q"], "depth": 1},
                 ["graph", "--session-id", sid, "--anchor", ids["q"], "--depth", "1"]),
                ("preview", {"session_id": sid, "page_size": 2, "preview_size": 4},
                 ["read", "--preview", "--session-id", sid, "--page-size", "2",
                  "--preview-size", "4"]),
                ("info", {"section": "limits"}, ["info", "--section", "limits"]),
                ("info", {"section": "nonsense"}, ["info", "--section", "nonsense"]),
            ]
            for name, arguments, argv in reads:
                through_mcp = await call(session, name, **arguments)
                assert through_mcp == as_tool(served.cli(*argv)), name
                assert through_mcp[0] is (arguments.get("section") != "nonsense"), through_mcp
            forgetting = [
                ("mark", {"message_ids": [ids["a"], ids["b"]]}, ["mark", ids["a"], ids["b"]]),
                ("mark", {"message_ids": [ids["b"]], "unmark": True},
                 ["mark", ids["b"], "--unmark"]),
                ("delete", {"message_id": ids["q"], "mode": "hard"},
                 ["delete", ids["q"], "--mode", "hard"]),  # referenced: refused
                ("delete", {"message_id": ids["secret"], "mode": "hard"},
                 ["delete", ids["secret"], "--mode", "hard"]),
            ]
            for name, arguments, argv in forgetting:
                through_mcp = await call(session, name, **arguments)
                twin_argv = json.loads(json.dumps(argv))
                for key, served_id in ids.items():
                    twin_argv = [twin_ids[key] if a == served_id else a for a in twin_argv]
                by_cli = as_served(as_tool(twin.cli(*twin_argv)))
                if through_mcp[0]:
                    for answer in (through_mcp[1], by_cli[1]):
                        answer["data"].pop("file", None)  # names differ: times and ids
                assert through_mcp == by_cli, name
            read = await call(session, "read", session_id=sid)
            assert [m["text"] for m in read[1]["data"]["messages"]] == ["a question",
                                                                        "another answer"]
            slip = await call(session, "session_delete", session_id=sid, confirm="other")
            assert slip[0] is False and slip[1]["exit_code"] == 2
            gone = await call(session, "session_delete", session_id=sid, confirm=sid)
            assert gone[0] and gone[1]["store"] == "logger", gone

    try:
        anyio.run(scenario)
    finally:
        stop_agent(served)
        stop_agent(twin)
    assert [m["text"] for m in read_all(fleet, twin_sid)] == ["a question", "another answer"]
    listed = served.cli("--no-agent", "--store", "logger", "sessions", "--project-id", "proj")
    assert sid not in [e["session_id"] for e in listed.data["sessions"]]


@pytest.mark.slow
def test_the_logger_down_then_up(scratch, fleet_factory, unique_session_id):
    """Down: a write answers `"store": "file"`, durable and not forwarded, reads answer from the
    outbox; up: the agent delivers it, and the next write is confirmed by the logger."""
    sid = unique_session_id
    private = fleet_factory()
    project = auto_project(scratch, "project", str(private.config_path))

    async def scenario() -> None:
        async with mcp_session(project) as session:
            opened = await call(session, "session_open", session_id=sid, project_id="proj",
                                dialogue_kind=["human", "model"], participant=["alice"])
            # the first call starts the agent and leaves the file to it, answered at once
            assert opened[0] and opened[1]["store"] == "file", opened
            assert "starting" in opened[1]["data"]["reason"], opened
            await until(lambda: not [n for n in project.final_files(sid) if n.endswith(".ses")],
                        "the agent it started forwarded the open")
            private.control.go_down("logger")
            down = await call(session, "write", **write_arguments(sid, "written while down"))
            assert down[0], down
            assert down[1]["store"] == "file" and down[1]["data"]["forwarded"] is False
            assert down[1]["data"]["reason"]
            read = await call(session, "read", session_id=sid)
            assert read[0] and read[1]["store"] == "file"
            assert [m["text"] for m in read[1]["data"]["messages"]] == ["written while down"]
            private.control.come_up("logger")
            await until(lambda: [m["text"] for m in read_all(private, sid)] ==
                        ["written while down"], "the agent delivered the waiting message")
            up = await call(session, "write", **write_arguments(sid, "written once up"))
            assert up[0] and up[1]["store"] == "logger", up

    try:
        anyio.run(scenario)
    finally:
        stop_agent(project)
    assert [m["text"] for m in read_all(private, sid)] == ["written while down",
                                                           "written once up"]


# --- without a logger --------------------------------------------------------------------------

def test_invalid_inputs_are_clear_tool_errors_and_write_nothing(scratch):
    project = make_project(scratch)
    sid = "s-invalid"
    assert project.cli("--store", "file", *open_args(sid)).rc == 0
    assert project.cli("--store", "file", *message_args(sid, "the one message")).rc == 0
    before = outbox_files(project)
    good = write_arguments(sid, "fine")
    cases = [
        # the input schema (nothing is run)
        ("write", {**good, "sender_kind": "robot"}, "USAGE", "sender_kind"),
        ("write", {k: v for k, v in good.items() if k != "text"}, "USAGE", "text"),
        ("write", {**good, "priority": "high"}, "USAGE", "priority"),
        ("session_open", {"session_id": "s2", "project_id": "p", "dialogue_kind": ["human"],
                          "participant": ["a"]}, "USAGE", "dialogue_kind"),
        # the command's own checks, as the CLI answers them
        ("write", {**good, "session_id": "../escape"}, "INVALID_SESSION_ID", None),
        ("write", {**good, "text": ""}, "INVALID_TEXT", None),
        ("write", {**good, "text": "x" * (1024 * 1024 + 1)}, "TEXT_TOO_LARGE", None),
        ("write", {**good, "message_id": "not-a-uuid"}, "INVALID_MESSAGE_ID", None),
        ("write", {**good, "relation": ["correction:" + str(uuid.uuid4())]},
         "INVALID_RELATION", None),
        ("write", {**good, "priority": -1}, "INVALID_NUMBER", None),
        ("get", {"message_id": "--help"}, "INVALID_MESSAGE_ID", None),
        ("read", {"session_id": sid, "block_size": 0}, "INVALID_NUMBER", None),
    ]

    async def scenario() -> None:
        async with mcp_session(project, "--store", "file") as session:
            for name, arguments, code, field in cases:
                ok, error = await call(session, name, **arguments)
                assert not ok and error["code"] == code, (name, code, error)
                assert error["exit_code"] == 2 and error["meaning"] == MEANINGS[2]
                if field is not None:
                    assert field in error["message"], error
            # a session no one knows is refused as the logger refuses it, never empty
            for name, arguments in (("read", {}), ("relations", {}),
                                    ("working_set", {"anchor_text": "one"})):
                ok, error = await call(session, name, session_id="s-nobody", **arguments)
                assert not ok and (error["code"], error["exit_code"]) == ("SESSION_UNKNOWN", 1)
            ok, closest = await call(session, "working_set", session_id=sid, anchor_text="one",
                                     ranking="bm25")  # by words: the tool takes the ranking
            assert ok and closest["data"]["ranking"] == "bm25", closest
            # a refusal by the store's rules: exit 1, nothing written either
            assert (await call(session, "session_close", session_id=sid))[0]
            ok, error = await call(session, "write", **good)
            assert not ok and error["code"] == "SESSION_CLOSED" and error["exit_code"] == 1
            # a text of exactly the limit, starting with a dash, is a text
            big = "-" + "y" * (1024 * 1024 - 1)
            assert (await call(session, "session_reopen", session_id=sid))[0]
            ok, written = await call(session, "write", **write_arguments(sid, big))
            assert ok, written
            return written["data"]["message_id"]

    message_id = anyio.run(scenario)
    after = [f for f in outbox_files(project) if f not in before]
    assert len([f for f in after if f.endswith(".msg")]) == 1
    assert len([f for f in after if f.endswith(".ses")]) == 2  # the close and the reopen
    assert project.cli("--store", "file", "get", message_id).data["text"].startswith("-yyy")


def test_the_server_answers_initialize_without_the_commands_or_the_fleet_clients(scratch):
    """What the server imports before its first call: the SDK and the tool table, not the
    commands' code, the fleet clients or the store's decoder."""
    project = make_project(scratch)
    project.env["PYTHONPROFILEIMPORTTIME"] = "1"

    async def scenario() -> None:
        async with mcp_session(project, "--store", "file") as session:
            assert {t.name for t in (await session.list_tools()).tools} == TOOLS

    anyio.run(scenario)
    with open(scratch / "mcp-server.err") as handle:
        imported = {line.rsplit("|", 1)[-1].strip() for line in handle
                    if line.startswith("import time:")}
    assert {"mcp.server.mcpserver", "agent_memory.mcpserve.tools"} <= imported
    assert not imported & {"ailogger_client", "embed_client", "msgspec", "numpy",
                           "agent_memory.cli.write_cmd", "agent_memory.cli.read_cmd"}


def test_a_project_path_that_is_not_utf8_still_answers(scratch):
    """The CLI prints such a path with escapes (its ASCII fallback); MCP messages must be UTF-8:
    each byte that is not becomes U+FFFD, and the answer is otherwise the command's."""
    base = scratch / os.fsdecode(b"not-utf8-\xff")
    base.mkdir()
    project = make_project(base)

    async def scenario() -> dict:
        async with mcp_session(project, "--store", "file") as session:
            ok, answer = await call(session, "status")
            assert ok, answer
            return answer

    answer = anyio.run(scenario)
    assert answer["data"]["store"] == project.store.replace("\udcff", "\ufffd")
    assert answer["data"]["totals"] == project.cli("--store", "file", "status").data["totals"]


def test_the_clients_root_is_the_project_and_calls_run_one_at_a_time(scratch):
    """Without --project-root, the server works in the client's first root (its git top
    level), not in its own working directory; calls sent together are run one after another."""
    project = make_project(scratch)
    elsewhere = scratch / "elsewhere"
    elsewhere.mkdir()
    sub = os.path.join(project.root, "src")
    os.mkdir(sub)

    async def scenario() -> None:
        async with mcp_session(project, "--store", "file", cwd=str(elsewhere),
                               roots=[sub]) as session:
            assert (await call(session, "session_open", session_id="s-root", project_id="p",
                               dialogue_kind=["human", "model"], participant=["a"]))[0]
            # calls that arrive together run one at a time, as commands one after another
            answers = []

            async def write(i: int) -> None:
                answers.append(await call(session, "write",
                                          **write_arguments("s-root", f"at once {i}")))

            async with anyio.create_task_group() as group:
                for i in range(8):
                    group.start_soon(write, i)
            assert sorted(a[1]["data"]["sequence_number"] for a in answers) == list(range(8))
        async with mcp_session(project, "--store", "file", cwd=str(elsewhere)) as session:
            ok, error = await call(session, "status")  # no roots: the working directory's
            assert not ok and error["code"] == "STORE_UNAVAILABLE" and error["exit_code"] == 3

    anyio.run(scenario)
    assert project.final_files("s-root")


@pytest.mark.slow
def test_a_server_killed_mid_call_leaves_a_sound_store(scratch, fleet):
    """SIGKILL while a write is in flight, at several moments (and once right after its
    answer): whatever the outbox holds is whole (`verify` clean, every text complete), what the
    client saw acknowledged is there, and one `sync` delivers the rest."""
    project = make_project(scratch, config=str(fleet.config_path))
    sid = "s-killed"
    assert project.cli(*open_args(sid)).rc == 0
    delays = [0.0, 0.02, 0.06, 0.15, None]  # None: as soon as the answer came
    texts = [f"kill {i} " + "z" * 600_000 for i in range(len(delays))]
    acknowledged = []

    async def once(text: str, delay: float | None) -> None:
        async with mcp_session(project, "--no-agent", "--project-root", project.root) as session:
            pids = server_pids(project.root)
            assert len(pids) == 1
            answered = anyio.Event()

            async def write() -> None:
                try:
                    ok, answer = await call(session, "write", **write_arguments(sid, text))
                except Exception:  # noqa: BLE001 - the connection died under it
                    return
                if ok:
                    acknowledged.append(answer["data"]["message_id"])
                answered.set()

            async with anyio.create_task_group() as group:
                group.start_soon(write)
                if delay is None:
                    await answered.wait()
                else:
                    await anyio.sleep(delay)
                os.kill(pids[0], signal.SIGKILL)

    for text, delay in zip(texts, delays):
        try:
            anyio.run(once, text, delay)
        except Exception:  # noqa: BLE001 - the session ends with its server
            pass
        wait_for(lambda: not server_pids(project.root), "the killed server to be gone")
    verified = project.cli("verify")
    assert verified.rc == 0 and not verified.data.get("damage"), verified.stdout
    stored = project.cli("--store", "file", "read", "--session-id", sid, "--block-size", "100",
                         "--max-chars", "0")
    assert {m["text"] for m in stored.data["messages"]} <= set(texts)
    assert acknowledged and set(acknowledged) <= {m["message_id"]
                                                  for m in stored.data["messages"]}
    assert project.cli("sync").rc == 0
    if [f for f in outbox_files(project) if ".tmp-" in f]:  # a killed writer's temporary
        time.sleep(1.1)  # is swept once it is a second old
        assert project.cli("sync").rc == 0
    assert not [f for f in outbox_files(project) if ".tmp-" in f]
    assert sorted(m["text"] for m in read_all(fleet, sid)) == \
        sorted(m["text"] for m in stored.data["messages"])


ID = "0b0f6ed6-2d0e-4c5e-8f5e-6f2a3c6b9e10"
WHEN = "2026-10-01T13:57:45.123Z"


def test_every_checked_field_is_checked_whole(scratch):
    """An id, a time or a relation followed by a newline, a carriage return, a NUL (which an
    MCP string can carry, unlike an argv) or another control character is a usage error naming
    its field, and nothing is written (tests/store/test_checked_whole.py for the CLI)."""
    project = make_project(scratch)
    calls = []
    for suffix in ["\n", "\r", "\x00", "\x1b", "\u2028"]:
        calls += [
            ("write", dict(session_id="S1" + suffix, sender_kind="human", sender_identity="a",
                           receiver_kind="model", receiver_identity="b", text="t"), "--session-id"),
            ("write", dict(session_id="S1", sender_kind="human", sender_identity="a",
                           receiver_kind="model", receiver_identity="b", text="t",
                           message_id=ID + suffix), "--message-id"),
            ("write", dict(session_id="S1", sender_kind="human", sender_identity="a",
                           receiver_kind="model", receiver_identity="b", text="t",
                           occurred_at=WHEN + suffix), "--occurred-at"),
            ("write", dict(session_id="S1", sender_kind="human", sender_identity="a",
                           receiver_kind="model", receiver_identity="b", text="t",
                           corrects=ID + suffix), "--corrects"),
            ("write", dict(session_id="S1", sender_kind="human", sender_identity="a",
                           receiver_kind="model", receiver_identity="b", text="t",
                           relation=[f"reply:{ID}{suffix}"]), "--relation"),
            ("session_open", dict(session_id="S1" + suffix, project_id="P",
                                  dialogue_kind=["human", "model"], participant=["a"]),
             "--session-id"),
            ("get", dict(message_id=ID + suffix), "MESSAGE_ID"),
            ("path", dict(session_id="S1", node_id=ID + suffix), "--node-id"),
            ("delete", dict(message_id=ID + suffix, mode="soft", session_id="S1"), "MESSAGE_ID"),
            ("preview", dict(period_start=WHEN + suffix), "--period-start"),
            ("search", dict(query="q", scope="all_projects", occurred_from=WHEN + suffix),
             "--occurred-from"),
            ("working_set", dict(session_id="S1", anchor_message_id=ID + suffix),
             "--anchor-message-id"),
        ]
    before = sorted(os.walk(project.store))

    async def go():
        async with mcp_session(project, "--store", "file") as session:
            return [await call(session, name, **args) for name, args, _field in calls]
    answers = anyio.run(go)
    for (name, args, field), (ok, body) in zip(calls, answers):
        assert not ok, (name, args, body)
        assert body["exit_code"] == 2 and body["details"]["field"] == field, (name, args, body)
    assert sorted(os.walk(project.store)) == before


# --- the client going away; a client of the newest protocol ------------------------------------

def raw_server(project, *options: str):
    """`agent-memory mcp` on plain pipes, this test being its client."""
    import subprocess
    return subprocess.Popen([CLI, *options, "mcp"], cwd=project.root, env=project.env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def exchange(server, *messages: dict[str, Any]) -> dict[str, Any]:
    """Send `messages`; the answer to the last one (a request)."""
    for message in messages:
        server.stdin.write((json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())
    server.stdin.flush()
    return json.loads(server.stdout.readline())


INITIALIZE = {"id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "test", "version": "1"}}}


def test_the_server_exits_when_its_client_goes_away(scratch):
    """Writes sent, and the client gone before their answers (its pipes closed): the server
    exits, cleanly (no traceback, a success closing line), without running the calls it had
    not started; each write it had started is whole in the outbox, and `verify` finds nothing
    amiss. (How fast it exits is a benchmark's business; the wait here only catches a hang.)"""
    project = make_project(scratch)
    server = raw_server(project, "--store", "file")
    try:
        exchange(server, INITIALIZE)
        warm = exchange(server, {"method": "notifications/initialized"},
                        {"id": 2, "method": "tools/call",
                         "params": {"name": "write", "arguments": write_arguments("s", "0")}})
        assert not warm["result"].get("isError"), warm
        for i in range(1, 4):
            server.stdin.write((json.dumps({"jsonrpc": "2.0", "id": 2 + i, "method": "tools/call",
                                            "params": {"name": "write", "arguments":
                                                       write_arguments("s", str(i))}})
                                + "\n").encode())
        server.stdin.flush()
        server.stdin.close()
        server.stdout.close()
        server.wait(30)
        err = server.stderr.read().decode()
    finally:
        if server.poll() is None:
            server.kill()
    assert "Traceback" not in err and "INTERNAL_ERROR" not in err, err
    closing = json.loads(err.strip().splitlines()[-1])
    assert server.returncode == 0 and closing["success"] is True, err
    stored = project.cli("--store", "file", "read", "--session-id", "s").data["messages"]
    assert sorted(m["text"] for m in stored) == [str(i) for i in range(closing["data"]["calls"])]
    assert project.cli("verify").rc == 0


def test_a_client_of_the_newest_protocol_sees_the_capabilities_of_initialize(scratch):
    """`server/discover` (protocol 2026-07-28, as fastmcp 4's client opens) advertises what
    `initialize` does: no list changes or subscriptions this server would never send."""
    project = make_project(scratch)
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}}
    answers = []
    for opening in (INITIALIZE, {"id": 1, "method": "server/discover",
                                 "params": {"_meta": meta}}):
        server = raw_server(project, "--store", "file")
        try:
            answers.append(exchange(server, opening)["result"]["capabilities"])
        finally:
            server.stdin.close()
            assert server.wait(10) == 0
            server.stdout.close()
            server.stderr.close()
    assert answers[0] == answers[1], answers
    assert answers[0]["tools"] == {"listChanged": False}
