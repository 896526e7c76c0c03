"""Navigation and forgetting through the project's agent: the agent serves the structural reads
with the same bytes as inline, and forwards a delete in order, as it does a write."""

from __future__ import annotations

import os

from agentutil import agent_pids, wait_serving
from amtest import message_args, open_args


def test_the_agent_serves_navigation_and_forwards_forgetting(agent_projects, fleet,
                                                               unique_session_id):
    sid = unique_session_id
    served = agent_projects(str(fleet.config_path), "served")
    inline = agent_projects(str(fleet.config_path), "inline", AGENT_MEMORY_AGENT="off")
    assert served.cli(*open_args(sid)).rc == 0
    wait_serving(served)
    root = served.cli(*message_args(sid, "a root")).data["message_id"]
    reply = served.cli(*message_args(sid, "a reply", relation=f"reply:{root}")).data["message_id"]
    secret = served.cli(*message_args(sid, "a secret swordfish-4410")).data["message_id"]
    assert agent_pids(served)
    for argv in (["relations", "--session-id", sid], ["leaves", "--session-id", sid],
                 ["path", "--session-id", sid, "--node-id", reply],
                 ["graph", "--session-id", sid, "--anchor", root],
                 ["read", "--preview", "--session-id", sid], ["info"]):
        a, b = served.cli(*argv), inline.cli(*argv)
        assert a.rc == 0 and a.out["store"] == "logger", (argv, a.stdout)
        assert (b.rc, b.stdout) == (a.rc, a.stdout), argv
    deleted = served.cli("delete", secret, "--mode", "hard")
    assert deleted.rc == 0 and deleted.out["store"] == "logger", deleted.stdout
    assert deleted.data["deleted"] is True
    assert inline.cli("--store", "logger", "get", secret).code == "MESSAGE_UNKNOWN"
    soft = served.cli("delete", reply, "--mode", "soft")
    assert soft.rc == 0 and soft.out["store"] == "logger", soft.stdout
    texts = [m["text"] for m in served.cli("read", "--session-id", sid).data["messages"]]
    assert texts == ["a root"]
    for folder, _dirs, files in os.walk(served.store):
        for name in files:
            if not os.path.isfile(os.path.join(folder, name)):
                continue  # the agent's socket
            with open(os.path.join(folder, name), "rb") as handle:
                assert b"swordfish-4410" not in handle.read(), name
