"""The agent's typed requests and answers (sync.agent.requests): the client's stdlib requests
decode into them, a malformed one is refused with what its op needs, the answers keep their
JSON shape; and the service runs on a stand-in port, without a watcher."""

from __future__ import annotations

import json
import os

import pytest

from agent_memory.sync.agent import channel, requests
from agent_memory.sync.agent.port import AgentPort
from agent_memory.sync.agent.service import AgentService

SID = "3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f"
NAME = "2026-12-06T00.26.12.855-d082cd47-7780-4faa-a740-bdbee63b4d1b.msg"


def _identity(store="/p/.agent-memory"):
    return {"protocol": channel.PROTOCOL, "store": store, "config": "/c.json",
            "digest": "d" * 32, "version": "1.0"}


def _frame(message: dict) -> bytes:
    """What channel.send puts on the wire (the stdlib encoder)."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()


@pytest.mark.parametrize("op, fields, kind", [
    ("deliver", {"session_id": SID, "name": NAME, "wait": 1, "embed_budget": 0.0},
     requests.Deliver),
    ("deliver", {"session_id": SID, "name": NAME, "wait": 0.5, "embed_budget": None},
     requests.Deliver),
    ("call", {"command": "append_message", "params": {"dialogue_kind": ["human", "model"]}},
     requests.Call),
    ("run", {"argv": ["read", "--session-id", SID]}, requests.Run),
    ("sync", {"limits": {"batch_items": 50, "batch_bytes": 1 << 20, "quarantine_after": 3,
                         "sessions_in_flight": 4}}, requests.Sync),
    ("claim", {}, requests.Claim),
])
def test_the_clients_requests_decode_into_the_records(op, fields, kind):
    body = _frame(channel.request(_identity(), op, **fields))
    envelope = requests.envelope(body)
    assert envelope.op == op and envelope.protocol == channel.PROTOCOL
    assert envelope.caller() == {k: v for k, v in _identity().items() if k != "protocol"}
    decoded = requests.decode(body, op)
    assert type(decoded) is kind
    for key, value in fields.items():
        assert getattr(decoded, key) == value


@pytest.mark.parametrize("op, fields", [
    ("deliver", {"session_id": "../x", "name": NAME, "wait": 1}),
    ("deliver", {"session_id": SID, "name": "x.tmp", "wait": 1}),
    ("deliver", {"session_id": SID, "name": NAME}),
    ("call", {"command": "purge_everything", "params": {}}),
    ("call", {"command": "append_message", "params": []}),
    ("run", {"argv": ["read", 3]}),
    ("sync", {"limits": {"batch_items": "many"}}),
])
def test_a_malformed_request_is_refused_with_what_its_op_needs(op, fields):
    body = _frame(channel.request(_identity(), op, **fields))
    with pytest.raises(requests.DecodeError) as refused:
        requests.decode(body, op)
    assert str(refused.value) == requests.NEEDS[op]


def test_an_unknown_op_and_a_frame_that_is_no_object():
    with pytest.raises(requests.DecodeError, match="unknown op 'dance'"):
        requests.decode(_frame({"op": "dance"}), "dance")
    with pytest.raises(ValueError, match="not a JSON object"):
        requests.envelope(b"[1, 2]")
    with pytest.raises(ValueError, match="not a JSON frame"):
        requests.envelope(b"{nope")
    assert requests.envelope(_frame({"op": 7, "protocol": "x"})).op == 7  # any types


def test_answers_keep_their_json_shape():
    declined = requests.Declined(handover=True, differs=["digest"], agent={"pid": 1},
                                 error="e")
    assert list(requests.as_builtins(declined).items()) == [
        ("ok", False), ("mismatch", True), ("handover", True), ("differs", ["digest"]),
        ("agent", {"pid": 1}), ("error", "e")]
    assert requests.as_builtins(requests.Called(ok=True, result=None)) == {"ok": True,
                                                                          "result": None}
    assert requests.as_builtins(requests.Called(ok=True, failure={"kind": "refused"})) == {
        "ok": True, "failure": {"kind": "refused"}}
    assert list(requests.as_builtins(requests.Stopping(error="s"))) == ["ok", "stopping",
                                                                       "error"]
    assert requests.as_builtins(requests.Stopped(pid=5)) == {"ok": True, "pid": 5}


class _Store:
    path = "/p/.agent-memory"


def _service(autostarted: bool) -> tuple[AgentService, list[str]]:
    """The service on a stand-in port: no watcher, no loop, no socket."""
    stops: list[str] = []
    mine = {k: v for k, v in _identity().items() if k != "protocol"}
    port = AgentPort(
        store=_Store(), pid=os.getpid(), identity=lambda: mine, config=lambda: None,
        autostarted=autostarted, refused_holdoff=60.0,
        describe=lambda: {"pid": os.getpid(), "store": _Store.path, "status": "idle"},
        stopping=lambda: bool(stops), stop=stops.append, touch=lambda: None,
        follow_config=lambda: False, deliver=None, pool=lambda: None,
        serving_loop=lambda timeout: None, sync_now=None)
    return AgentService(port, run_command=None), stops


def _ask(service: AgentService, message: dict) -> dict:
    body = _frame(message)
    return service.handle(requests.envelope(body), body)


def test_the_service_runs_on_a_port():
    service, stops = _service(autostarted=False)
    assert _ask(service, {"protocol": 1, "op": "ping"})["status"] == "idle"
    assert _ask(service, channel.request(_identity(), "claim"))["ok"] is True
    older = _ask(service, {**_identity(), "protocol": 1, "op": "claim"})
    assert older["mismatch"] is True and older["differs"] == ["protocol"]
    other = _ask(service, channel.request({**_identity(), "version": "2.0"}, "claim"))
    assert other["mismatch"] is True and other["handover"] is False and not stops
    bad = _ask(service, channel.request(_identity(), "deliver", session_id="../x", name="n",
                                        wait=1))
    assert bad == {"ok": False, "error": requests.NEEDS["deliver"]}
    stopping = _ask(service, channel.request(_identity(), "sync", limits={}))
    assert stopping == {"ok": False, "stopping": True, "error": "the agent is stopping"}
    assert _ask(service, {"protocol": 1, "op": "stop"}) == {"ok": True, "pid": os.getpid()}
    assert stops == ["stop requested"]


def test_an_autostarted_agent_hands_over_through_its_port():
    service, stops = _service(autostarted=True)
    answer = _ask(service, channel.request({**_identity(), "digest": "e" * 32}, "run",
                                           argv=["sessions"]))
    assert answer["mismatch"] is True and answer["handover"] is True
    assert len(stops) == 1 and stops[0].startswith("handover to a command with")
