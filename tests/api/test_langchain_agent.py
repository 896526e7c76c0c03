"""AgentMemoryMiddleware, a LangChain 1.x agent's messages kept by agent-memory: `create_agent`
over a scripted chat model (tests/api/scripted_chat.py) and a real tool, by invoke, stream and
ainvoke; a checkpointed thread, a resumed interrupt, a new process continuing the session, the
history's bounds, the logger down, a run killed mid-way and two processes at once."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent  # noqa: E402
from langchain.agents.middleware import HumanInTheLoopMiddleware  # noqa: E402
from langchain_core.messages import (AIMessage, HumanMessage, SystemMessage,  # noqa: E402
                                     ToolMessage, messages_to_dict)
from langchain_core.tools import tool  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.types import Command  # noqa: E402

from agent_memory import Memory, RefusedError  # noqa: E402
from agent_memory.integrations.langchain import AgentMemoryMiddleware  # noqa: E402
from amtest import wait_for  # noqa: E402
from scripted_chat import calls, script  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
KINDS = [("human", "model"), ("model", "tool"), ("tool", "model"), ("model", "human")]


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two whole numbers."""
    return a * b


def _agent(project, sid: str, model, checkpointer=None, middleware=(), **options):
    memory = AgentMemoryMiddleware(sid, project_root=project.root, config=project.config,
                                   **options)
    return create_agent(model, tools=[multiply], middleware=[memory, *middleware],
                        checkpointer=checkpointer)


def _first_turn():
    return script(calls("multiply", {"a": 6, "b": 7}, "call-1"), "It is 42.")


def _stored(project, sid: str) -> list:
    """The session's messages (none before it is opened)."""
    try:
        return list(Memory(project.root, project.config).messages(sid, max_chars=0))
    except RefusedError as refused:
        assert refused.code == "SESSION_UNKNOWN"
        return []


def _said(project, sid: str) -> list[dict]:
    """The session's LangChain messages, as dicts."""
    return [m.attributes["langchain_message"] for m in _stored(project, sid)]


def _question(text: str = "what is 6 x 7?") -> dict:
    return {"messages": [HumanMessage(text)]}


@pytest.mark.parametrize("how", ["invoke", "stream"])
def test_a_run_records_each_message_once_in_order(api_project, unique_session_id, how):
    project, sid = api_project, unique_session_id
    agent = _agent(project, sid, _first_turn())
    given = {"messages": [SystemMessage("Be brief."), HumanMessage("what is 6 x 7?")]}
    if how == "invoke":
        said = agent.invoke(given)["messages"]
    else:  # recorded as it happens: the tool call before the tool runs, and so on
        counts = []
        for value in agent.stream(given, stream_mode="values"):
            said = value["messages"]
            counts.append(len(_stored(project, sid)))
        assert counts == sorted(counts) and {0, 2, 3, 4} <= set(counts)
    assert [m.type for m in said] == ["system", "human", "ai", "tool", "ai"]
    stored = _stored(project, sid)
    assert [(m.sender_kind, m.receiver_kind) for m in stored] == [("system", "model"), *KINDS]
    # each message whole, its LangChain id kept: equal to what the agent said
    assert [m.attributes["langchain_message"] for m in stored] == messages_to_dict(said)
    assert [m.text for m in stored] == [
        "Be brief.", "what is 6 x 7?",
        '[{"name": "multiply", "args": {"a": 6, "b": 7}, "id": "call-1", "type": "tool_call"}]',
        "42", "It is 42."]
    if how == "invoke":  # and at the logger, in order
        logged = project.cli("--store", "logger", "read", "--session-id", sid).data["messages"]
        assert [m["attributes"]["langchain_message"] for m in logged] == messages_to_dict(said)


def test_a_checkpointed_thread_records_only_what_is_new(file_project, unique_session_id):
    project, sid = file_project, unique_session_id
    model = script(calls("multiply", {"a": 6, "b": 7}, "call-1"), "It is 42.", "Welcome.",
                   "Still here.")
    agent = _agent(project, sid, model, checkpointer=InMemorySaver())
    thread = {"configurable": {"thread_id": "one"}}
    agent.invoke(_question(), thread)
    said = agent.invoke(_question("thanks"), thread)["messages"]
    assert len(said) == 6  # the thread had its messages: no history placed again
    assert model.inputs[-1] == said[:5]
    assert _said(project, sid) == messages_to_dict(said)
    again = agent.invoke({"messages": []}, thread)["messages"]  # nothing new: nothing recorded
    assert again[:6] == said and len(_stored(project, sid)) == len(again)


def test_a_resumed_interrupt_records_only_what_is_new(file_project, unique_session_id):
    """The tool call waits for approval; the run resumes in another middleware (another process
    sharing the checkpointer): what the first one recorded is not recorded twice."""
    project, sid = file_project, unique_session_id
    saver, thread = InMemorySaver(), {"configurable": {"thread_id": "approve"}}
    approval = HumanInTheLoopMiddleware(interrupt_on={"multiply": True})
    first = _agent(project, sid, _first_turn(), checkpointer=saver, middleware=[approval])
    paused = first.invoke(_question(), thread)
    assert paused["__interrupt__"] and [m.type for m in paused["messages"]] == ["human", "ai"]
    # listed first, the middleware's after_model runs after the approval's: the call is
    # recorded once decided on
    assert _said(project, sid) == messages_to_dict(paused["messages"][:1])
    resumed = _agent(project, sid, script("It is 42."), checkpointer=saver,
                     middleware=[approval])
    said = resumed.invoke(Command(resume={"decisions": [{"type": "approve"}]}), thread)
    assert [m.type for m in said["messages"]] == ["human", "ai", "tool", "ai"]
    assert _said(project, sid) == messages_to_dict(said["messages"])


def _continue_in_another_process(project, sid: str, question: HumanMessage, **env) -> dict:
    """A new process runs the agent on the session (no checkpointer): the model's first input
    and the run's messages."""
    code = ("import json, sys; from langchain.agents import create_agent; "
            "from langchain_core.messages import HumanMessage, messages_to_dict; "
            "from agent_memory.integrations.langchain import AgentMemoryMiddleware; "
            "from scripted_chat import script; "
            "model = script('It is 48.'); "
            "m = AgentMemoryMiddleware(sys.argv[1], project_root=sys.argv[2], "
            "config=sys.argv[3] or None); "
            "out = create_agent(model, middleware=[m]).invoke("
            "{'messages': [HumanMessage(sys.argv[4], id=sys.argv[5])]}); "
            "print(json.dumps({'input': messages_to_dict(model.inputs[0]), "
            "'said': messages_to_dict(out['messages'])}))")
    done = subprocess.run([sys.executable, "-c", code, sid, project.root, project.config or "",
                           question.content, question.id], capture_output=True, text=True,
                          env={**project.env, "PYTHONPATH": HERE, **env}, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_a_new_process_continues_the_conversation(file_project, unique_session_id):
    project, sid = file_project, unique_session_id
    earlier = _agent(project, sid, _first_turn()).invoke(_question())["messages"]
    question = HumanMessage("and 6 x 8?", id="h-2")
    other = _continue_in_another_process(project, sid, question)
    # the model's first input: the earlier messages, equal, then the new one
    assert other["input"] == messages_to_dict([*earlier, question])
    assert other["said"][:5] == other["input"]
    assert _said(project, sid) == other["said"]  # the earlier ones not recorded again


def test_ainvoke_does_the_same(file_project, unique_session_id):
    project, sid = file_project, unique_session_id
    model = script(calls("multiply", {"a": 6, "b": 7}, "call-1"), "It is 42.", "Welcome.")
    agent = _agent(project, sid, model, checkpointer=InMemorySaver())
    thread = {"configurable": {"thread_id": "async"}}

    async def converse():
        await agent.ainvoke(_question(), thread)
        said = (await agent.ainvoke(_question("thanks"), thread))["messages"]
        later = script("Bye.")
        fresh = _agent(project, sid, later)  # no checkpointer: as a new process
        out = await fresh.ainvoke({"messages": [HumanMessage("bye", id="h-3")]})
        return said, later.inputs[0], out["messages"]

    said, first_input, out = asyncio.run(converse())
    assert [(m.type, m.content) for m in said] == [
        ("human", "what is 6 x 7?"), ("ai", ""), ("tool", "42"), ("ai", "It is 42."),
        ("human", "thanks"), ("ai", "Welcome.")]
    assert first_input == [*said, HumanMessage("bye", id="h-3")]
    assert _said(project, sid) == messages_to_dict(out)
    assert [(m.sender_kind, m.receiver_kind) for m in _stored(project, sid)][:4] == KINDS


def _a_long_session(project, sid: str) -> list:
    """Two exchanges, a message written by the CLI's API (no LangChain id) and a run that died
    in its tool (a call without a result)."""
    from agent_memory.integrations.langchain import AgentMemoryChatMessageHistory
    history = AgentMemoryChatMessageHistory(sid, project_root=project.root)
    history.add_messages([
        HumanMessage("what is 6 x 7?", id="h1"),
        AIMessage("", id="c1", tool_calls=[{"name": "multiply", "args": {"a": 6, "b": 7},
                                            "id": "call-1"}]),
        ToolMessage("42", tool_call_id="call-1", id="t1"),
        AIMessage("It is 42.", id="a1"), HumanMessage("thanks", id="h2"),
        AIMessage("Welcome.", id="a2")])
    Memory(project.root).write(sid, "a note", sender_kind="human", sender_identity="user",
                               receiver_kind="model", receiver_identity="ai")
    history.add_messages([
        HumanMessage("and 7 x 7?", id="h3"),
        AIMessage("", id="c2", tool_calls=[{"name": "multiply", "args": {"a": 7, "b": 7},
                                            "id": "call-2"}])])
    return history.messages


CHARS = len("thanks" "Welcome." "a note" "and 7 x 7?")  # the texts of h2 a2 note h3


@pytest.mark.parametrize("bounds, expected", [
    ({}, ["h1", "c1", "t1", "a1", "h2", "a2", "note", "h3"]),
    # each bound alone: the latest that fit, from a human message on
    ({"history_messages": 3, "history_chars": None}, ["note", "h3"]),  # not from a2
    ({"history_messages": 4, "history_chars": None}, ["h2", "a2", "note", "h3"]),
    ({"history_messages": 6, "history_chars": None}, ["h2", "a2", "note", "h3"]),  # not t1
    ({"history_messages": None, "history_chars": CHARS}, ["h2", "a2", "note", "h3"]),
    ({"history_messages": None, "history_chars": CHARS - 1}, ["note", "h3"]),
    ({"history_messages": 0}, []),
    ({"load_history": False}, []),
])
def test_the_history_placed_and_its_bounds(file_project, unique_session_id, bounds, expected):
    """The session's messages before the input, equal to those recorded, the note written
    otherwise included under its store id; the call without a result left out; bounded by count
    and characters, from a human message on."""
    project, sid = file_project, unique_session_id
    stored = _a_long_session(project, sid)
    note = next(m for m in _stored(project, sid) if m.text == "a note").message_id
    model = script("It is 49.")
    out = _agent(project, sid, model, **bounds).invoke(_question("hello"))["messages"]
    by_id = {m.id: m for m in stored if m.id}
    by_id["note"] = HumanMessage("a note", id=note)
    assert model.inputs[0][:-1] == [by_id[i] for i in expected]
    assert len(_stored(project, sid)) == 9 + 2  # only the question and its answer added
    assert out[-2].content == "hello" and out[-1].content == "It is 49."


@pytest.mark.parametrize("bad", [{"history_messages": -1}, {"history_chars": "100"},
                                 {"history_messages": True}])
def test_bad_bounds_are_refused(file_project, bad):
    with pytest.raises(ValueError, match="whole number"):
        AgentMemoryMiddleware("s", project_root=file_project.root, **bad)


@pytest.mark.slow
def test_logger_down_then_up_delivers_once(fleet_factory, tmp_path, monkeypatch,
                                           unique_session_id):
    from amtest import make_project
    fleet = fleet_factory()
    project = make_project(tmp_path, config=str(fleet.config_path))
    for key, value in project.env.items():
        monkeypatch.setenv(key, value)
    fleet.stop()
    model = script(calls("multiply", {"a": 6, "b": 7}, "call-1"), "It is 42.", "Welcome.")
    agent = _agent(project, unique_session_id, model, checkpointer=InMemorySaver())
    thread = {"configurable": {"thread_id": "down"}}
    agent.invoke(_question(), thread)
    said = agent.invoke(_question("thanks"), thread)["messages"]
    assert _said(project, unique_session_id) == messages_to_dict(said)  # the outbox alone
    fleet.start()
    assert project.cli("sync").rc == 0
    assert project.cli("sync").rc == 0  # nothing left: nothing sent twice
    logged = project.cli("--store", "logger", "read", "--session-id", unique_session_id,
                         "--block-size", "100").data["messages"]
    assert [m["attributes"]["langchain_message"] for m in logged] == messages_to_dict(said)
    assert len({m["message_id"] for m in logged}) == 6


_KILLED_RUN = """
import sys, time
from pathlib import Path
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from agent_memory.integrations.langchain import AgentMemoryMiddleware
from scripted_chat import calls, script

@tool
def slow_lookup(city: str) -> str:
    '''Look a city up (slowly).'''
    Path(sys.argv[3]).touch()
    time.sleep(120)
    return "found"

model = script(calls("slow_lookup", {"city": "Paris"}, "call-9"), "unreachable")
memory = AgentMemoryMiddleware(sys.argv[1], project_root=sys.argv[2])
create_agent(model, tools=[slow_lookup], middleware=[memory]).invoke(
    {"messages": [HumanMessage("look up Paris", id="h-9")]})
"""


@pytest.mark.slow
def test_a_run_killed_mid_way_keeps_what_was_said(file_project, unique_session_id, tmp_path):
    project, sid = file_project, unique_session_id
    started = tmp_path / "in-the-tool"
    run = subprocess.Popen([sys.executable, "-c", _KILLED_RUN, sid, project.root, str(started)],
                           env={**project.env, "PYTHONPATH": HERE}, stderr=subprocess.PIPE)
    try:
        wait_for(started.exists, "the tool started", timeout=120, proc=run)
        os.kill(run.pid, signal.SIGKILL)
        assert run.wait(30) == -signal.SIGKILL
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
        run.stderr.close()
    stored = _stored(project, sid)
    assert [(m.sender_kind, m.receiver_kind) for m in stored] == KINDS[:2]
    said = [m.attributes["langchain_message"]["data"] for m in stored]
    assert said[0]["id"] == "h-9" and said[1]["tool_calls"][0]["id"] == "call-9"
    # the next run continues without the call that never got its result
    model = script("Let us try again.")
    _agent(project, sid, model).invoke(_question("again?"))
    assert [(m.type, m.content) for m in model.inputs[0]] == [("human", "look up Paris"),
                                                              ("human", "again?")]
    assert len(_stored(project, sid)) == 4


def test_two_processes_on_one_session(file_project, unique_session_id):
    """Another process runs the agent on the session while this one does: every message of
    each recorded once, each process's in its order."""
    project, sid = file_project, unique_session_id
    code = ("import sys; from langchain.agents import create_agent; "
            "from langchain_core.messages import HumanMessage; "
            "from agent_memory.integrations.langchain import AgentMemoryMiddleware; "
            "from scripted_chat import script; "
            "m = AgentMemoryMiddleware(sys.argv[1], project_root=sys.argv[2], "
            "load_history=False); "
            "agent = create_agent(script(*[f'b answer {i}' for i in range(6)]), middleware=[m]); "
            "[agent.invoke({'messages': [HumanMessage(f'b question {i}')]}) for i in range(6)]")
    other = subprocess.Popen([sys.executable, "-c", code, sid, project.root],
                             env={**project.env, "PYTHONPATH": HERE})
    try:
        agent = _agent(project, sid, script(*[f"a answer {i}" for i in range(6)]),
                       load_history=False)
        for i in range(6):
            agent.invoke(_question(f"a question {i}"))
            time.sleep(0.05)
        assert other.wait(120) == 0
    finally:
        if other.poll() is None:
            other.kill()
            other.wait()
    texts = [m.text for m in _stored(project, sid)]
    assert len(texts) == 24
    for w in "ab":
        assert [t for t in texts if t.startswith(w)] == [
            f"{w} {k} {i}" for i in range(6) for k in ("question", "answer")]


def test_the_chat_history_alone_imports_no_agent_framework():
    """`AgentMemoryChatMessageHistory` needs langchain-core only: `langchain` and `langgraph`
    are imported when the middleware is asked for."""
    code = ("import sys; import agent_memory.integrations.langchain as lc; "
            "lc.AgentMemoryChatMessageHistory; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'langchain', 'langgraph'})); "
            "lc.AgentMemoryMiddleware; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'langchain', 'langgraph'}))")
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True,
                          text=True, check=True)
    assert done.stdout.split("\n")[:2] == ["[]", "['langchain', 'langgraph']"]
