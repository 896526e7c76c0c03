"""`agent-memory mcp` driven by the TypeScript SDK's own client (`@modelcontextprotocol/sdk`
from npm, tests/mcp/ts_client/), a client nobody on this project wrote: it lists the tools and
calls every one against the reference fleet, and checks each structured result against the
tool's output schema (it throws when one does not match). `.ci/run` installs its packages;
a developer's first run installs them here (node and npm are on these machines)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid

import pytest

from amtest import CLI, make_project

from agent_memory.mcpserve import tools as mcp_tools

CLIENT_DIR = os.path.join(os.path.dirname(__file__), "ts_client")


@pytest.fixture(scope="module")
def ts_client():
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are not installed")
    if not os.path.isdir(os.path.join(CLIENT_DIR, "node_modules", "@modelcontextprotocol")):
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--silent"],
                       cwd=CLIENT_DIR, check=True, timeout=300)
    return os.path.join(CLIENT_DIR, "client.mjs")


def drive(ts_client, project, calls):
    plan = {"command": CLI, "args": ["--config", project.config, "mcp"], "env": project.env,
            "cwd": project.root, "calls": calls}
    done = subprocess.run(["node", ts_client], input=json.dumps(plan).encode(),
                          capture_output=True, timeout=240)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-3000:]
    return json.loads(done.stdout)


@pytest.mark.slow
def test_the_typescript_sdk_client_calls_every_tool_and_validates_each_result(
        tmp_path, fleet, ts_client):
    project = make_project(tmp_path, config=str(fleet.config_path))
    sid, other = f"ts-{uuid.uuid4().hex[:12]}", f"ts-{uuid.uuid4().hex[:12]}"
    first, second = str(uuid.uuid4()), str(uuid.uuid4())
    who = dict(sender_kind="human", sender_identity="alice", receiver_kind="model",
               receiver_identity="claude")
    opened = dict(project_id="ts-project", dialogue_kind=["human", "model"],
                  participant=["alice", "claude"])
    calls = [
        ["session_open", dict(session_id=sid, title="typed", metadata={"k": 1}, **opened)],
        ["session_open", dict(session_id=other, **opened)],
        ["write", dict(session_id=sid, text="the outbox keeps every message", message_id=first,
                       attributes={"a": [1, "b"]}, **who)],
        ["write", dict(session_id=sid, text="a reply about the outbox", message_id=second,
                       relation=[f"reply:{first}"], **who)],
        ["write", dict(session_id=other, text="a session to delete", **who)],
        ["read", dict(session_id=sid)],
        ["get", dict(message_id=first)],
        ["sessions", dict(project_id="ts-project")],
        ["search", dict(query="outbox", scope="session", target=sid)],
        ["working_set", dict(session_id=sid, anchor_text="outbox")],
        ["status", dict()],
        ["preview", dict(session_id=sid)],
        ["relations", dict(session_id=sid)],
        ["path", dict(session_id=sid, node_id=second)],
        ["leaves", dict(session_id=sid)],
        ["graph", dict(session_id=sid, anchor=first)],
        ["info", dict()],
        ["info", dict(section="limits")],
        ["mark", dict(message_ids=[second])],
        ["mark", dict(message_ids=[second], unmark=True)],
        ["delete", dict(message_id=second, mode="soft")],
        ["session_close", dict(session_id=sid)],
        ["session_reopen", dict(session_id=sid)],
        ["session_delete", dict(session_id=other, confirm=other)],
        ["read", dict(session_id=sid, block_size=0)],  # a tool error: refused, not thrown
        ["no_such_tool", dict()],  # a protocol error: thrown, -32602
    ]
    out = drive(ts_client, project, calls)
    assert {t["name"] for t in out["tools"]} == {t.name for t in mcp_tools.TOOLS}
    assert all(t["hasOutputSchema"] for t in out["tools"])
    results = out["results"]
    assert {r["name"] for r in results[:-2]} == {t.name for t in mcp_tools.TOOLS}
    for result in results[:-2]:  # each validated against its output schema by the client
        assert "thrown" not in result and not result["isError"], result
        assert result["structured"]["store"] in ("logger", "file", "both"), result
    refused = results[-2]
    assert refused["isError"] and json.loads(refused["text"])["exit_code"] == 2, refused
    assert results[-1]["code"] == -32602 and "no_such_tool" in results[-1]["thrown"], results[-1]
