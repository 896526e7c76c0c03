"""Every answer fits a size budget (cli.budget): a session of 50 messages of 100,000 characters
(a reply chain, multi-byte and emoji, quotes and line breaks), forwarded to the reference fleet,
then 3 more waiting in the outbox (one of 1 MiB). Through the CLI in file, logger and merged
mode, and through MCP: every answer within its budget, every item reached exactly once through
continuations, every text reassembled exactly through `get` text ranges."""

from __future__ import annotations

import json
import os
import signal
from contextlib import asynccontextmanager

import anyio
import pytest

from amtest import CLI, make_project, message_args, open_args, watcher_pids

pytestmark = pytest.mark.slow

COUNT, SIZE = 50, 100_000
DEFAULT_CLI, DEFAULT_MCP = 25_000, 40_000
PATTERN = "é😀\"x\n\\ab日本"


def long_text(i: int, size: int = SIZE) -> str:
    head = f"message {i:03d} "
    return head + (PATTERN * (size // len(PATTERN) + 1))[:size - len(head)]


def mib_text() -> str:
    """Exactly 1 MiB of UTF-8, multi-byte and emoji throughout."""
    unit = "a😀é日\n"  # 1 + 4 + 2 + 3 + 1 bytes
    text = unit * (1024 * 1024 // len(unit.encode()))
    return text + "z" * (1024 * 1024 - len(text.encode()))


@pytest.fixture(scope="module")
def long_session(tmp_path_factory, fleet):
    project = make_project(tmp_path_factory.mktemp("budget"), config=str(fleet.config_path))
    sid = "long-session"
    assert project.cli(*open_args(sid)).rc == 0
    texts, previous = {}, None
    for i in range(COUNT):
        extra = {"relation": f"reply:{previous}"} if previous else {}
        text = long_text(i)
        written = project.cli("--store", "file", *message_args(sid, None, **extra),
                              stdin=text.encode())
        assert written.rc == 0, written.stdout
        previous = written.data["message_id"]
        texts[previous] = text
    synced = project.cli("sync")
    assert synced.rc == 0 and synced.data["totals"]["imported"] == COUNT, synced.stdout
    pending = {}
    for text in (mib_text(), "short 😀 pending", long_text(99, 30_000)):
        written = project.cli("--store", "file", *message_args(sid, None), stdin=text.encode())
        assert written.rc == 0, written.stdout
        pending[written.data["message_id"]] = text
    return project, sid, texts, pending


def budgeted(project, budget, *args):
    """A command's answer, checked against its budget (None: the CLI's default)."""
    extra = [] if budget is None else ["--max-chars", str(budget)]
    result = project.cli(*args, *extra)
    limit = DEFAULT_CLI if budget is None else budget
    assert result.rc == 0, result.stdout[:2000]
    assert limit == 0 or len(result.stdout) <= limit, (len(result.stdout), args)
    return result


def check_shown(entry, whole: str) -> None:
    """What an entry shows of its text is the stored text: whole, or its head and tail as
    `text_cut` says."""
    cut = entry.get("text_cut")
    if cut is None:
        assert entry["text"] == whole
        return
    assert cut["length"] == len(whole)
    (a, b), (c, d) = cut["shown"]
    assert a == 0 and d == len(whole) and b < c
    assert entry["text"].startswith(whole[:b]) and entry["text"].endswith(whole[c:])
    assert f"{c - b} characters cut" in entry["text"]


def page_through(project, budget, args, key="messages", token=None):
    """Every item of a block read from where `token` (else `args`) starts, following
    continuations."""
    items = []
    for _ in range(200):
        more = [] if token is None else ["--continuation", token]
        data = budgeted(project, budget, *args, *more).data
        assert data[key], data
        items += data[key]
        if not data["more"]:
            return items
        token = data["continuation"]
    raise AssertionError("never ended")


# store, budget, first sequence number: a CLI call costs up to a second (the logger's client
# loads), so the CLI pages parts of the session at small budgets (MCP pages the whole of it at
# its default, below), and the end of it in merged mode, where the continuations pass from the
# logger's to the outbox's.
@pytest.mark.parametrize("store,budget,start", [("file", None, 33), ("logger", 1_100_000, 25),
                                                ("auto", 2_500_000, 0), ("auto", None, 46),
                                                ("auto", 1_000, 49)])
def test_read_pages_every_message_once_within_the_budget(long_session, store, budget, start):
    project, sid, texts, pending = long_session
    expected = list(texts.items()) + ([] if store == "logger" else list(pending.items()))
    expected = dict(expected[start:])
    messages = page_through(project, budget, ["--store", store, "read", "--session-id", sid,
                                              "--start", str(start)])
    assert [m["message_id"] for m in messages] == list(expected)
    for entry in messages:
        check_shown(entry, expected[entry["message_id"]])
    if budget == 1_100_000:  # several whole messages to an answer
        assert not any("text_cut" in m for m in messages)


def test_unlimited_answers_everything_and_the_default_is_the_documented_one(long_session):
    project, sid, texts, pending = long_session
    whole = project.cli("read", "--session-id", sid, "--block-size", "100", "--max-chars", "0")
    assert [m["text"] for m in whole.data["messages"]] == [*texts.values(), *pending.values()]
    assert len(whole.stdout) > 1_000_000 and not whole.data["more"]
    default = budgeted(project, None, "read", "--session-id", sid)
    assert len(default.data["messages"]) == 1 and default.data["more"]
    assert default.out["store"] == "logger"


def read_in_pieces(project, store, message_id, whole, length=250_000, budget=300_000):
    """The text by `get` ranges, each from where the last ended (a range whose escapes make it
    too long for the budget shows its head first: the next range starts after the head)."""
    pieces, offset = [], 0
    while offset < len(whole):
        data = budgeted(project, budget, "--store", store, "get", message_id, "--text-offset",
                        str(offset), "--text-length", str(length)).data
        span = data["text_range"]
        assert span["offset"] == offset and span["total_length"] == len(whole)
        if "text_cut" in data:
            (a, b) = data["text_cut"]["shown"][0]
            assert a == offset
            piece = data["text"][:b - a]
        else:
            piece = data["text"]
        assert piece
        pieces.append(piece)
        offset += len(piece)
    return "".join(pieces)


@pytest.mark.parametrize("store", ["file", "logger", "auto"])
def test_get_ranges_reassemble_every_text_exactly(long_session, store):
    project, sid, texts, pending = long_session
    every = {**texts, **pending}
    samples = {"file": [next(iter(texts)), *pending], "logger": [list(texts)[-1]],
               "auto": [next(iter(pending))]}[store]
    for message_id in samples:
        whole = every[message_id]
        plain = budgeted(project, None, "--store", store, "get", message_id)
        check_shown(plain.data, whole)
        assert read_in_pieces(project, store, message_id, whole).encode() == whole.encode()
    if store == "file":  # small budgets: a range's escapes cut it, the next resumes after it
        message_id = next(iter(pending))
        assert read_in_pieces(project, store, message_id, every[message_id], 120_000,
                              150_000) == every[message_id]


def test_a_range_is_checked_and_answers_that_range(long_session):
    project, sid, texts, pending = long_session
    message_id = next(iter(pending))
    whole = pending[message_id]
    got = budgeted(project, None, "--store", "file", "get", message_id, "--text-offset", "3",
                   "--text-length", "5").data
    assert got["text"] == whole[3:8] and got["text_range"] == {
        "offset": 3, "length": 5, "total_length": len(whole)}
    tail = budgeted(project, None, "--store", "file", "get", message_id, "--text-offset",
                    str(len(whole) - 2)).data
    assert tail["text"] == whole[-2:]
    for args, field in ((["--text-offset", "-1"], "--text-offset"),
                        (["--text-length", "0"], "--text-length"),
                        (["--text-offset", str(len(whole))], "--text-offset"),
                        (["--max-chars", "999"], "--max-chars")):
        refused = project.cli("--store", "file", "get", message_id, *args)
        assert refused.rc == 2 and refused.out["error"]["details"]["field"] == field, \
            refused.stdout


@pytest.mark.parametrize("budget", [None, 2_000, 350_000])
def test_navigation_reads_page_within_the_budget(long_session, budget):
    project, sid, texts, pending = long_session
    ids = list(texts)
    base = ["--store", "file"]
    path = page_through(project, budget, [*base, "path", "--session-id", sid, "--node-id",
                                          ids[4]], key="path")
    assert [e["message_id"] for e in path] == ids[4::-1]
    for entry in path:
        check_shown(entry, texts[entry["message_id"]])
    nodes = page_through(project, budget, [*base, "graph", "--session-id", sid, "--anchor",
                                           ids[45], "--depth", "100"], key="nodes")
    assert [e["message_id"] for e in nodes] == ids[45:]
    relations = page_through(project, budget, [*base, "relations", "--session-id", sid],
                             key="relations")
    assert sorted((r["from_message_id"], r["to_message_id"]) for r in relations) == \
        sorted(zip(ids[1:], ids[:-1]))
    leaves = page_through(project, budget, [*base, "leaves", "--session-id", sid], key="nodes")
    assert ids[-1] in {n["message_id"] for n in leaves}
    for args in (["sessions"], ["info"], ["info", "--section", "limits"]):
        budgeted(project, budget, *base, *args)


@pytest.mark.parametrize("budget,size,offset", [(None, 3_000, 0), (60_000, 3_000, 0),
                                                (150_000, 1_000_000, 5)])
def test_preview_pages_every_entry_once(long_session, budget, size, offset):
    """Pages of 10 from page `offset`: long previews from the 1 MiB text's page on."""
    project, sid, texts, pending = long_session
    expected = dict(list({**texts, **pending}.items())[offset * 10:])
    entries, page, first = [], 10, offset * 10
    for _ in range(200):
        data = budgeted(project, budget, "--store", "file", "read", "--preview",
                        "--session-id", sid, "--preview-size", str(size), "--page-offset",
                        str(offset), "--page-size", str(page)).data
        entries += data["entries"]
        if data.get("more"):
            offset, page = data["next_page_offset"], data["next_page_size"]
            assert offset * page == first + len(entries)
        elif (offset + 1) * page < data["total_messages"]:
            offset += 1
        else:
            break
    assert sorted(e["message_id"] for e in entries) == sorted(expected)
    assert len(entries) == len(expected)
    for entry in entries:
        shown = {"text": entry["preview"]}
        if "preview_cut" in entry:
            shown["text_cut"] = entry["preview_cut"]
        check_shown(shown, expected[entry["message_id"]][:size])


def test_search_pages_within_the_budget_and_nothing_is_dropped(long_session):
    project, sid, texts, pending = long_session
    query = ["--store", "file", "search", "--query", "message 007", "--scope", "session",
             "--target", sid, "--page-size", "4", "--ranking", "bm25"]
    whole = project.cli(*query, "--max-chars", "0").data
    reference = [m["message"]["message_id"] for m in whole["matches"]]
    assert len(reference) == 4
    for budget in (None,):
        found, offset = [], 0
        while len(found) < len(reference):
            data = budgeted(project, budget, *query, "--offset", str(offset)).data
            found += [m["message"]["message_id"] for m in data["matches"]]
            assert data["more"]
            offset = data["next_offset"]
        assert found[:len(reference)] == reference


# --- MCP ----------------------------------------------------------------------------------------
@asynccontextmanager
async def mcp_session(project, *options: str):
    from mcp import ClientSession, StdioServerParameters, stdio_client
    params = StdioServerParameters(command=CLI, args=["--config", project.config, *options,
                                                      "mcp"],
                                   env=project.env, cwd=project.root)
    with open(os.path.join(os.path.dirname(project.root), "mcp-server.err"), "a") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=120) as session:
                await session.initialize()
                yield session


async def call_text(session, name: str, **arguments):
    """(the length of the tool result's text, the answer's data)."""
    result = await session.call_tool(name, arguments)
    assert not result.is_error, result.content[0].text[:2000]
    [content] = result.content
    return len(content.text), json.loads(content.text)["data"]


async def page_tool(session, name: str, key: str, budget=None, **arguments):
    """Every item of a block tool, following continuations; each result within its budget."""
    items, token = [], None
    for _ in range(200):
        extra = {} if token is None else {"continuation": token}
        if budget is not None:
            extra["max_chars"] = budget
        size, data = await call_text(session, name, **arguments, **extra)
        assert size <= (budget or DEFAULT_MCP), (name, size)
        items += data[key]
        if not data["more"]:
            return items
        token = data["continuation"]
    raise AssertionError("never ended")


def test_mcp_tools_answer_within_their_budget_and_page_everything(long_session):
    project, sid, texts, pending = long_session
    expected = {**texts, **pending}
    ids = list(texts)
    mib_id = next(iter(pending))

    async def merged():  # the server's --store auto: the logger's messages and the outbox's
        async with mcp_session(project) as session:
            messages = await page_tool(session, "read", "messages", session_id=sid)
            assert [m["message_id"] for m in messages] == list(expected)
            for entry in messages:
                check_shown(entry, expected[entry["message_id"]])
            size, data = await call_text(session, "read", session_id=sid, max_chars=300_000)
            assert size <= 300_000 and len(data["messages"]) == 2
            for name, arguments in (
                    ("path", {"session_id": sid, "node_id": ids[-1]}),
                    ("graph", {"session_id": sid, "anchor": ids[0]}),
                    ("preview", {"session_id": sid, "preview_size": 1_000_000}),
                    ("search", {"query": "message", "scope": "session", "target": sid}),
                    ("relations", {"session_id": sid}), ("leaves", {"session_id": sid}),
                    ("sessions", {}), ("info", {"section": "codes"}),
                    ("get", {"message_id": mib_id})):
                for budget in (None, 5_000):
                    extra = {} if budget is None else {"max_chars": budget}
                    size, _data = await call_text(session, name, **arguments, **extra)
                    assert size <= (budget or DEFAULT_MCP), (name, size)
            anchor = {"session_id": sid, "anchor_message_id": ids[3]}
            _size, every = await call_text(session, "working_set", **anchor, max_chars=0)
            for budget in (DEFAULT_MCP, 3_000):
                size, fitted = await call_text(session, "working_set", **anchor,
                                               max_chars=budget)
                assert size <= budget and fitted["more"] is True
                for group in ("recent", "closest"):
                    shown = [e["message"]["message_id"] for e in fitted[group]]
                    left = fitted["left_out"].get(group, [])
                    assert shown + left == [e["message"]["message_id"] for e in every[group]]
            pieces, offset = [], 0
            while offset < len(pending[mib_id]):
                _size, data = await call_text(session, "get", message_id=mib_id,
                                              text_offset=offset, text_length=30_000)
                assert "text_cut" not in data and data["text_range"]["offset"] == offset
                pieces.append(data["text"])
                offset += len(data["text"])
            assert "".join(pieces).encode() == pending[mib_id].encode()

    async def logger():
        async with mcp_session(project, "--store", "logger") as session:
            path = await page_tool(session, "path", "path", session_id=sid, node_id=ids[6])
            assert [e["message_id"] for e in path] == ids[6::-1]
            nodes = await page_tool(session, "graph", "nodes", budget=120_000, session_id=sid,
                                    anchor=ids[43], depth=100)
            assert [e["message_id"] for e in nodes] == ids[43:]
            for entry in path + nodes:
                check_shown(entry, texts[entry["message_id"]])

    anyio.run(merged)
    anyio.run(logger)


def test_sessions_page_every_session_once_with_those_opened_here(long_session):
    """Sessions with long metadata, some in the logger and some opened while it was not asked
    (`--store file`: they wait in the outbox): every one once, in every mode, through the
    logger's continuations and then the outbox's."""
    project, _sid, _texts, _pending = long_session
    metadata = json.dumps({"note": "a long note é😀 " * 40})
    opened = {"logger": [], "outbox": []}
    for i in range(9):
        where = "logger" if i % 3 == 0 else "outbox"
        sid = f"meta-{i}"
        store = [] if where == "logger" else ["--store", "file"]
        args = open_args(sid, project_id="budget-sessions")
        args[args.index("--metadata") + 1] = metadata
        assert project.cli(*store, *args).rc == 0
        opened[where].append(sid)
    every = sorted(opened["logger"] + opened["outbox"])
    for store, budget in (("auto", 2_000), ("auto", None), ("file", 3_000)):
        found = page_through(project, budget, ["--store", store, "sessions", "--project-id",
                                               "budget-sessions", "--block-size", "4"],
                             key="sessions")
        assert sorted(e["session_id"] for e in found) == every, (store, budget)
        for entry in found:  # whole where it is shown (the logger's list leaves it out)
            assert entry.get("metadata", json.loads(metadata)) == json.loads(metadata), entry


def test_the_agent_answers_the_same_bytes(long_session):
    """The budget is applied where the agent runs a served command too: the same line as
    inline. (Last: the agent forwards what waits in the outbox.)"""
    project, sid, texts, pending = long_session
    ids = list(texts)
    started = project.cli("agent", "start")
    assert started.rc == 0 and started.data["running"], started.stdout
    try:
        before = project.cli("agent", "status").data["requests"]
        commands = [["read", "--session-id", sid, "--start", "10", "--block-size", "3"],
                    ["read", "--session-id", sid, "--start", "10", "--max-chars", "300000"],
                    ["get", ids[5]], ["get", ids[5], "--text-offset", "7", "--max-chars", "9000"],
                    ["path", "--session-id", sid, "--node-id", ids[3], "--max-chars", "5000"]]
        for args in commands:
            served = budgeted(project, None, *args) if "--max-chars" not in args else \
                project.cli(*args)
            inline = project.cli("--no-agent", *args)
            assert (served.rc, served.stdout) == (inline.rc, inline.stdout), args
        assert project.cli("agent", "status").data["requests"] >= before + len(commands)
        # An MCP tool's read reaches the agent as the command line of its typed call: the
        # same tool result's text as with the agent left out.
        calls = [("read", {"session_id": sid, "start": 10, "block_size": 3}),
                 ("get", {"message_id": ids[5], "text_offset": 7, "max_chars": 9000}),
                 ("path", {"session_id": sid, "node_id": ids[3], "max_chars": 5000}),
                 ("preview", {"session_id": sid, "page_size": 4, "show_deleted": True}),
                 ("search", {"query": "message", "scope": "session", "target": sid,
                             "ranking": "bm25", "page_size": 3})]

        async def texts(*options: str) -> list[str]:
            async with mcp_session(project, *options) as session:
                return [(await session.call_tool(name, arguments)).content[0].text
                        for name, arguments in calls]

        before = project.cli("agent", "status").data["requests"]
        through_agent = anyio.run(texts)
        assert project.cli("agent", "status").data["requests"] >= before + len(calls)
        assert through_agent == anyio.run(texts, "--no-agent")
        assert all('"data"' in text for text in through_agent), through_agent
    finally:
        project.cli("agent", "stop", "--timeout", "20")
        for pid in watcher_pids(project.root):
            os.kill(pid, signal.SIGKILL)


def test_a_working_set_cut_names_every_message_it_left_out():
    """The budget alone (cli.budget, pure), on a working set of many short messages: the left
    out ids take room too, and every message is shown or named, in its place."""
    import argparse
    import uuid
    from agent_memory.cli import budget, output

    def group(criterion):
        return [{"message": {"message_id": str(uuid.uuid4()), "text": f"{criterion} {i} " * 20},
                 "criterion": criterion} for i in range(10)]

    data = {"session_id": "s", "recent": group("recency"), "closest": group("similarity")}
    envelope = output.success_envelope(data, "logger")
    args = argparse.Namespace(command="working-set")
    whole = len(output.render(envelope))
    for limit in (2_000, 3_000, 5_000, whole // 2, whole - 1):
        fitted = budget.fit(envelope, limit, lambda e: len(output.render(e)), args, None)
        assert len(output.render(fitted)) <= limit
        for key in ("recent", "closest"):
            shown = [e["message"]["message_id"] for e in fitted["data"][key]]
            left = fitted["data"]["left_out"].get(key, [])
            assert shown + left == [e["message"]["message_id"] for e in data[key]], limit
