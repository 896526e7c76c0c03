"""AgentMemoryChatMessageHistory, LangChain's chat history kept by agent-memory: under a
RunnableWithMessageHistory over langchain-core's fake chat model, across a restart, the logger
down, threads with their own loops and two processes; every kind of message back exactly as
it was added."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import warnings

import pytest

pytest.importorskip("langchain_core")

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel  # noqa: E402
from langchain_core.messages import (AIMessage, ChatMessage, FunctionMessage,  # noqa: E402
                                     HumanMessage, SystemMessage, ToolMessage, message_to_dict)
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder  # noqa: E402
from langchain_core.runnables import RunnableLambda  # noqa: E402

from agent_memory.integrations.langchain import AgentMemoryChatMessageHistory  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _history(project, sid: str) -> AgentMemoryChatMessageHistory:
    return AgentMemoryChatMessageHistory(sid, project_root=project.root, config=project.config)


def _every_kind() -> list:
    return [
        SystemMessage("be brief"),
        HumanMessage("what is 6 x 7?", id="h-1", additional_kwargs={"lang": "en"}),
        AIMessage("", id="ai-1", tool_calls=[{"name": "multiply", "args": {"a": 6, "b": 7},
                                              "id": "call-1"}],
                  response_metadata={"model_name": "fake", "finish_reason": "tool_calls"},
                  usage_metadata={"input_tokens": 5, "output_tokens": 3, "total_tokens": 8}),
        ToolMessage("42", tool_call_id="call-1", artifact={"raw": [42]}, status="success"),
        FunctionMessage("42", name="multiply"),
        ChatMessage("a note", role="critic"),
        AIMessage([{"type": "text", "text": "It is 42."}], name="solver"),
        HumanMessage("thanks"),  # id None stays None
    ]


def _in_another_process(project, sid: str) -> list:
    code = ("import json, sys; from langchain_core.messages import messages_to_dict; "
            "from agent_memory.integrations.langchain import AgentMemoryChatMessageHistory as H; "
            "h = H(sys.argv[1], project_root=sys.argv[2], config=sys.argv[3] or None); "
            "print(json.dumps(messages_to_dict(h.messages)))")
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", code, sid, project.root,
                           project.config or ""], capture_output=True, text=True,
                          env=project.env, check=True)
    return json.loads(done.stdout)


def _chain(project, answers: list, seen: list):
    from langchain_core.runnables.history import RunnableWithMessageHistory
    prompt = ChatPromptTemplate.from_messages([("system", "be brief"),
                                               MessagesPlaceholder("history"),
                                               ("human", "{question}")])

    def record(value):
        seen.append(value.to_messages())
        return value

    model = FakeMessagesListChatModel(responses=answers)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return RunnableWithMessageHistory(prompt | RunnableLambda(record) | model,
                                          lambda sid: _history(project, sid),
                                          input_messages_key="question",
                                          history_messages_key="history")


def test_a_chain_with_history_round_trips(agent_running, unique_session_id):
    project, sid = agent_running, unique_session_id
    seen: list = []
    chain = _chain(project, [AIMessage("first", id="a1"), AIMessage("second", id="a2")], seen)
    config = {"configurable": {"session_id": sid}}
    assert chain.invoke({"question": "q1"}, config=config).content == "first"
    assert asyncio.run(chain.ainvoke({"question": "q2"}, config=config)).content == "second"
    # the second call's prompt carried the first exchange from the store
    assert [m.content for m in seen[1]] == ["be brief", "q1", "first", "q2"]
    history = _history(project, sid)
    history.add_messages(_every_kind())
    expected = [HumanMessage("q1"), AIMessage("first", id="a1"), HumanMessage("q2"),
                AIMessage("second", id="a2"), *_every_kind()]
    assert history.messages == expected
    assert asyncio.run(history.aget_messages()) == expected
    assert _in_another_process(project, sid) == [message_to_dict(m) for m in expected]
    read = project.cli("read", "--session-id", sid).data["messages"]
    assert [(m["sender_kind"], m["receiver_kind"]) for m in read[4:8]] == [
        ("system", "model"), ("human", "model"), ("model", "tool"), ("tool", "model")]
    assert read[6]["text"] == '[{"name": "multiply", "args": {"a": 6, "b": 7}, ' \
                              '"id": "call-1", "type": "tool_call"}]'
    assert all("message_id" not in json.dumps(m["attributes"]) for m in read)
    logged = project.cli("--store", "logger", "read", "--session-id", sid).data["messages"]
    assert [m["attributes"] for m in logged] == [m["attributes"] for m in read]


def test_a_batch_keeps_its_order(file_project, unique_session_id):
    """20 messages in one add_messages read back in the order given, equal to them (ids of
    None stay None)."""
    history = _history(file_project, unique_session_id)
    assert history.messages == []
    batch = [HumanMessage(f"m{i}") if i % 2 else AIMessage(f"m{i}") for i in range(20)]
    history.add_messages(batch)
    assert history.messages == batch
    assert all(m.id is None for m in history.messages)


def test_every_kind_comes_back_exactly(file_project, unique_session_id):
    history = _history(file_project, unique_session_id)
    history.add_messages(_every_kind())
    again = _history(file_project, unique_session_id).messages
    assert again == _every_kind()
    assert [message_to_dict(m) for m in again] == [message_to_dict(m) for m in _every_kind()]


def test_a_cleared_history_starts_anew(file_project, unique_session_id):
    history = _history(file_project, unique_session_id)
    history.clear()  # never written: done
    history.add_message(HumanMessage("old"))
    history.clear()
    assert history.messages == []
    history.add_message(HumanMessage("anew"))
    assert history.messages == [HumanMessage("anew")]


def test_clear_leaves_no_text_on_disk(file_project, unique_session_id):
    history = _history(file_project, unique_session_id)
    history.add_messages([HumanMessage("a secret-lc-one"), AIMessage("a secret-lc-two")])

    def on_disk(secret: str) -> bool:
        for folder, _, files in os.walk(file_project.store):
            for name in files:
                with open(os.path.join(folder, name), "rb") as handle:
                    if secret.encode() in handle.read():
                        return True
        return False

    assert on_disk("secret-lc-one") and on_disk("secret-lc-two")
    asyncio.run(history.aclear())
    assert not on_disk("secret-lc-one") and not on_disk("secret-lc-two")


def test_threads_with_their_own_event_loops(file_project, unique_session_id):
    history = _history(file_project, unique_session_id)
    failures: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            for i in range(5):
                asyncio.run(history.aadd_messages([HumanMessage(f"t{n} q{i}"),
                                                   AIMessage(f"t{n} a{i}")]))
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not failures, failures
    contents = [m.content for m in history.messages]
    assert len(contents) == 40
    for n in range(4):
        assert [c for c in contents if c.startswith(f"t{n} ")] == \
            [f"t{n} {k}{i}" for i in range(5) for k in "qa"]


def test_two_processes_on_one_history(file_project, unique_session_id):
    code = ("import sys; from langchain_core.messages import HumanMessage; "
            "from agent_memory.integrations.langchain import AgentMemoryChatMessageHistory as H; "
            "h = H(sys.argv[1], project_root=sys.argv[2]); "
            "[h.add_messages([HumanMessage(f'{sys.argv[3]} {i}')]) for i in range(10)]")
    writers = [subprocess.Popen([sys.executable, "-W", "ignore", "-c", code, unique_session_id,
                                 file_project.root, w], env=file_project.env)
               for w in ("a", "b")]
    assert [p.wait(60) for p in writers] == [0, 0]
    contents = [m.content for m in _history(file_project, unique_session_id).messages]
    for w in "ab":
        assert [c for c in contents if c.startswith(w)] == [f"{w} {i}" for i in range(10)]
    assert file_project.cli("verify").rc == 0


@pytest.mark.slow
def test_logger_down_then_up_delivers_once(own_fleet_project, unique_session_id):
    fleet, project = own_fleet_project
    fleet.stop()
    history = _history(project, unique_session_id)
    history.add_messages(_every_kind())
    assert history.messages == _every_kind()  # from the outbox alone
    fleet.start()
    assert project.cli("sync").rc == 0
    assert project.cli("sync").rc == 0
    logged = project.cli("--store", "logger", "read", "--session-id", unique_session_id,
                         "--block-size", "100").data["messages"]
    assert [m["attributes"]["langchain_message"] for m in logged] == \
        [message_to_dict(m) for m in _every_kind()]
