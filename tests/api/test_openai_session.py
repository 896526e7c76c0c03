"""AgentMemorySession, the OpenAI Agents SDK's Session kept by agent-memory: driven by the
SDK's own Runner over a scripted model (tests/api/scripted_model.py), compared with the SDK's
own SQLiteSession fed the same conversation, across a restart, the logger down, threads with
their own loops and two processes; and each rule the SDK's sessions follow."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading

import pytest

pytest.importorskip("agents")

from agents import (Agent, RunConfig, RunContextWrapper, Runner, SQLiteSession,  # noqa: E402
                    function_tool)
from agents.memory import Session  # noqa: E402

from agent_memory.integrations.openai_agents import AgentMemorySession  # noqa: E402
from scripted_model import ScriptedModel, call, say, think  # noqa: E402

RUN = RunConfig(tracing_disabled=True)


@function_tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def _script() -> list:
    return [[think("the user asks for the weather"),
             call("weather", '{"city": "Paris"}', "call_1")],
            [say("It is sunny in Paris.", "msg_a")],
            [say("You are welcome.", "msg_b")]]


async def _conversation(session) -> ScriptedModel:
    """Two turns, the first with a reasoning item and a tool call."""
    model = ScriptedModel(_script())
    agent = Agent(name="assistant", model=model, tools=[weather])
    await Runner.run(agent, "What is the weather in Paris?", session=session, run_config=RUN)
    await Runner.run(agent, "Thanks", session=session, run_config=RUN)
    return model


def _session(project, sid: str) -> AgentMemorySession:
    return AgentMemorySession(sid, project_root=project.root, config=project.config)


def _items_in_another_process(project, sid: str) -> list:
    code = ("import asyncio, json, sys; "
            "from agent_memory.integrations.openai_agents import AgentMemorySession as S; "
            "s = S(sys.argv[1], project_root=sys.argv[2], config=sys.argv[3] or None); "
            "print(json.dumps(asyncio.run(s.get_items())))")
    done = subprocess.run([sys.executable, "-c", code, sid, project.root, project.config or ""],
                          capture_output=True, text=True, env=project.env, check=True)
    return json.loads(done.stdout)


def test_a_runner_conversation_round_trips(agent_running, unique_session_id, tmp_path):
    project, sid = agent_running, unique_session_id
    reference = SQLiteSession("reference", str(tmp_path / "reference.db"))
    reference_model = asyncio.run(_conversation(reference))
    session = _session(project, sid)
    assert isinstance(session, Session)
    model = asyncio.run(_conversation(session))
    expected = asyncio.run(reference.get_items())
    items = asyncio.run(session.get_items())
    assert items == expected and len(items) == 7  # user, reasoning, call, output, reply x2
    # the second turn's model saw the first turn's items, as with the SDK's own session
    assert model.inputs[-1] == reference_model.inputs[-1]
    assert model.inputs[-1][:5] == expected[:5]
    # a process started afresh sees them, and the CLI reads them as messages
    assert _items_in_another_process(project, sid) == expected
    read = project.cli("read", "--session-id", sid).data["messages"]
    assert [(m["sender_kind"], m["receiver_kind"]) for m in read] == [
        ("human", "model"), ("model", "model"), ("model", "tool"), ("tool", "model"),
        ("model", "human"), ("human", "model"), ("model", "human")]
    assert [m["text"] for m in read][::2] == ["What is the weather in Paris?",
                                             'weather({"city": "Paris"})',
                                             "It is sunny in Paris.", "You are welcome."]
    assert all(m["attributes"]["openai_agents_item"] == i for m, i in zip(read, expected))
    # and they reached the logger, in order
    logged = project.cli("--store", "logger", "read", "--session-id", sid).data["messages"]
    assert [m["attributes"]["openai_agents_item"] for m in logged] == expected


def _user(text: str) -> dict:
    return {"role": "user", "content": text}


def test_the_runner_hands_over_its_run_context(file_project, unique_session_id):
    """The Runner passes its run context (`wrapper`) to a session whose four methods all take
    it, as to the SDK's own context-aware sessions; ours take it (and leave it unused), and the
    history is the same."""
    handed: list = []

    class Watched(AgentMemorySession):
        async def get_items(self, limit=None, *, wrapper=None):
            handed.append(wrapper)
            return await super().get_items(limit, wrapper=wrapper)

        async def add_items(self, items, *, wrapper=None):
            handed.append(wrapper)
            await super().add_items(items, wrapper=wrapper)

    session = Watched(unique_session_id, project_root=file_project.root)
    tenant = {"tenant": "acme"}
    model = ScriptedModel([[say("Hello.", "msg_h")]])
    asyncio.run(Runner.run(Agent(name="assistant", model=model), "Hi", session=session,
                           context=tenant, run_config=RUN))
    assert handed and all(w is not None and w.context is tenant for w in handed)
    context = RunContextWrapper(context=tenant)

    async def check() -> None:
        items = await session.get_items(wrapper=context)
        assert [i.get("role") for i in items] == ["user", "assistant"]
        assert await session.pop_item(wrapper=context) == items[-1]
        await session.clear_session(wrapper=context)
        assert await session.get_items(1, wrapper=context) == []
    asyncio.run(check())


def test_a_batch_keeps_its_order(file_project, unique_session_id):
    """20 items in one add_items read back in the order given."""
    session = _session(file_project, unique_session_id)
    batch = [_user(f"item {i}") for i in range(20)]
    asyncio.run(session.add_items(batch))
    assert asyncio.run(session.get_items()) == batch


def test_items_come_back_exactly(file_project, unique_session_id):
    """Nothing added, nothing dropped: a function call without an id, an empty output, a
    reasoning item with an empty summary and a null field, an assistant message with its id
    and status."""
    session = _session(file_project, unique_session_id)
    items = [{"type": "function_call", "name": "f", "arguments": "{}", "call_id": "c7"},
             {"type": "function_call_output", "call_id": "c7", "output": ""},
             {"type": "reasoning", "id": "rs", "summary": [], "status": None},
             {"type": "message", "role": "assistant", "id": "msg", "status": "completed",
              "content": [{"type": "output_text", "text": "", "annotations": []}]},
             {"role": "user", "content": [{"type": "input_text", "text": "ünïcode ✓"}]}]
    asyncio.run(session.add_items(items))
    got = asyncio.run(session.get_items())
    assert json.dumps(got, sort_keys=True) == json.dumps(items, sort_keys=True)


def test_limits(file_project, unique_session_id):
    session = _session(file_project, unique_session_id)
    items = [_user(f"item {i}") for i in range(5)]
    asyncio.run(session.add_items(items))

    async def check() -> None:
        assert await session.get_items(0) == []  # none, not all (a [-0:] slice)
        assert await session.get_items(2) == items[-2:]  # the latest, in order
        assert await session.get_items(50) == items
        assert await session.get_items(None) == items
    asyncio.run(check())


def test_pop_on_an_empty_session_touches_no_other(file_project, unique_session_id):
    session = _session(file_project, unique_session_id)
    other = _session(file_project, unique_session_id + "-other")

    async def check() -> None:
        assert await session.pop_item() is None  # never written
        await other.add_items([_user("elsewhere")])
        assert await session.pop_item() is None
        assert await other.get_items() == [_user("elsewhere")]
        await session.add_items([_user("one"), _user("two")])
        assert await session.pop_item() == _user("two")
        assert await session.pop_item() == _user("one")
        assert await session.pop_item() is None  # emptied by pops
        assert await other.get_items() == [_user("elsewhere")]
    asyncio.run(check())


def test_a_cleared_session_starts_anew(file_project, unique_session_id):
    session = _session(file_project, unique_session_id)
    other = _session(file_project, unique_session_id + "-other")

    async def check() -> None:
        await session.clear_session()  # a session never written: done
        await other.add_items([_user("elsewhere")])
        await session.add_items([_user("old")])
        await session.clear_session()
        assert await session.get_items() == [] and await session.pop_item() is None
        await session.add_items([_user("new")])
        assert await session.get_items() == [_user("new")]
        assert await other.get_items() == [_user("elsewhere")]
        # another object (another process) sees the new session, not the old one
        assert await _session(file_project, unique_session_id).get_items() == [_user("new")]
    asyncio.run(check())


def test_pop_and_clear_leave_no_text_on_disk(file_project, unique_session_id):
    session = _session(file_project, unique_session_id)

    def on_disk(secret: str) -> list[str]:
        found = []
        for folder, _, files in os.walk(file_project.store):
            for name in files:
                with open(os.path.join(folder, name), "rb") as handle:
                    if secret.encode() in handle.read():
                        found.append(name)
        return found

    async def check() -> None:
        await session.add_items([{"role": "user", "content": "kept secret-one"},
                                 {"role": "user", "content": "popped secret-two"}])
        assert on_disk("secret-two")
        assert (await session.pop_item())["content"] == "popped secret-two"
        assert on_disk("secret-two") == [] and on_disk("secret-one")
        await session.clear_session()
        assert on_disk("secret-one") == []
    asyncio.run(check())


def test_threads_with_their_own_event_loops(file_project, unique_session_id):
    """One session object serves Runner.run_sync from several threads at once."""
    session = _session(file_project, unique_session_id)
    failures: list[BaseException] = []

    def converse(n: int) -> None:
        try:
            model = ScriptedModel([[say(f"answer {n}", f"msg_{n}")]])
            Runner.run_sync(Agent(name="assistant", model=model), f"question {n}",
                            session=session, run_config=RUN)
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    threads = [threading.Thread(target=converse, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not failures, failures
    items = asyncio.run(session.get_items())
    assert len(items) == 8
    for n in range(4):
        question = items.index({"role": "user", "content": f"question {n}"})
        answers = [i for i in items if i.get("id") == f"msg_{n}"]
        assert len(answers) == 1 and items.index(answers[0]) > question


def test_two_processes_on_one_session(file_project, unique_session_id):
    code = ("import asyncio, sys; "
            "from agent_memory.integrations.openai_agents import AgentMemorySession as S; "
            "s = S(sys.argv[1], project_root=sys.argv[2]); w = sys.argv[3]; "
            "[asyncio.run(s.add_items([{'role': 'user', 'content': f'{w} {i}'}])) "
            "for i in range(10)]")
    writers = [subprocess.Popen([sys.executable, "-c", code, unique_session_id,
                                 file_project.root, w], env=file_project.env)
               for w in ("a", "b")]
    assert [p.wait(60) for p in writers] == [0, 0]
    contents = [i["content"] for i in asyncio.run(_session(file_project, unique_session_id)
                                                  .get_items())]
    assert sorted(contents) == sorted(f"{w} {i}" for w in "ab" for i in range(10))
    for w in "ab":
        assert [c for c in contents if c.startswith(w)] == [f"{w} {i}" for i in range(10)]
    assert file_project.cli("verify").rc == 0


@pytest.mark.slow
def test_logger_down_then_up_delivers_once(fleet_factory, tmp_path, monkeypatch,
                                           unique_session_id):
    from amtest import make_project
    fleet = fleet_factory()
    project = make_project(tmp_path, config=str(fleet.config_path))
    for key, value in project.env.items():
        monkeypatch.setenv(key, value)
    session = _session(project, unique_session_id)
    fleet.stop()
    model = asyncio.run(_conversation(session))
    items = asyncio.run(session.get_items())
    assert len(items) == 7 and model.inputs[-1][:5] == items[:5]  # from the outbox alone
    fleet.start()
    assert project.cli("sync").rc == 0
    assert project.cli("sync").rc == 0  # nothing left: nothing sent twice
    logged = project.cli("--store", "logger", "read", "--session-id", unique_session_id,
                         "--block-size", "100").data["messages"]
    assert [m["attributes"]["openai_agents_item"] for m in logged] == items
    assert len({m["message_id"] for m in logged}) == 7


def test_large_items(file_project, unique_session_id):
    """An item whose text passes a message's 1 MiB is kept whole (its message shows the first
    MiB); one too large for a record refuses its batch before anything is written."""
    session = _session(file_project, unique_session_id)
    long = _user("ü" * (1 << 20))  # 2 MiB of UTF-8
    asyncio.run(session.add_items([long]))
    assert asyncio.run(session.get_items()) == [long]
    shown = file_project.cli("read", "--session-id", unique_session_id,
                             "--max-chars", "0").data["messages"]
    assert shown[0]["text"] == "ü" * (1 << 19)
    from agent_memory import UsageError
    with pytest.raises(UsageError) as caught:
        asyncio.run(session.add_items([_user("before"), _user("x" * (5 << 20))]))
    assert caught.value.code == "ITEM_TOO_LARGE" and caught.value.details["index"] == 1
    assert asyncio.run(session.get_items()) == [long]
