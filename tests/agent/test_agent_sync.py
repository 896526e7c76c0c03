"""`sync` beside the project's agent of its own configuration (cron's case) has the agent run a
round now and answers that round's report with the exit codes of a sync without an agent: a
cron job hears of an outage, and of a credential the logger refuses, instead of `skipped`."""

from __future__ import annotations

import json
import os
import time

import pytest

from agentutil import agent_pids, wait_serving
from amtest import message_args, open_args
from fleetutil import read_all


def pending_messages(project, sid) -> list[str]:
    return [n for n in project.final_files(sid) if n.endswith(".msg")]


@pytest.mark.slow
def test_sync_beside_the_agent_reports_an_outage_and_then_delivers(
        agent_projects, fleet_factory, unique_session_id):
    sid = unique_session_id
    private = fleet_factory()
    project = agent_projects(str(private.config_path))
    assert project.cli(*open_args(sid)).rc == 0  # inline, then it starts the agent
    agent = wait_serving(project)
    private.control.go_down("logger")
    try:
        kept = project.cli(*message_args(sid, "written while the logger is down"))
        assert kept.rc == 0 and kept.out["store"] == "file", kept.stdout
        for _ in range(2):  # the second one comes while the agent backs off
            started = time.monotonic()
            down = project.cli("sync")
            took = time.monotonic() - started
            assert down.rc == 4 and down.code == "LOGGER_UNREACHABLE", down.stdout
            assert took < 5, f"sync took {took:.1f} s with the logger down"
            assert f"watcher (pid {agent['pid']}) ran this sync" in down.stderr
        assert len(pending_messages(project, sid)) == 1
    finally:
        private.control.come_up("logger")
    up = project.cli("sync")
    assert up.rc == 0, up.stdout
    assert up.data["skipped"] is False and up.data["totals"]["pending"] == 0, up.stdout
    assert set(up.data["totals"]) == {"imported", "events_applied", "failed", "waiting",
                                      "quarantined", "pending"}
    assert not pending_messages(project, sid)
    assert [m["text"] for m in read_all(private, sid)] == ["written while the logger is down"]
    assert agent_pids(project) == [agent["pid"]]  # the agent ran it, and runs on


@pytest.mark.slow
def test_sync_beside_the_agent_reports_a_refused_credential(agent_projects, tls_fleet,
                                                            tmp_path, unique_session_id):
    sid = unique_session_id
    with open(tls_fleet.config_path) as handle:
        doc = json.load(handle)
    files = tls_fleet.security["files"]
    for section in ("ailogger_client", "embedding_client"):
        doc[section]["ssl"].update(cert=files["other_client_cert"],
                                   key=files["other_client_key"])
    config = tmp_path / "other-ca.json"
    fd = os.open(config, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(doc, handle)
    project = agent_projects(str(config))
    assert project.cli("--store", "file", *open_args(sid)).rc == 0
    assert project.cli("agent", "start").rc == 0
    agent = wait_serving(project)
    for _ in range(2):  # the second one comes while the agent waits long (credentials)
        refused = project.cli("sync")
        assert refused.rc == 6 and refused.code == "CREDENTIALS_REJECTED", refused.stdout
        assert refused.out["error"]["details"]["credentials"] == "client_certificate"
        assert f"watcher (pid {agent['pid']}) ran this sync" in refused.stderr
    assert project.final_files(sid)  # the open event stays pending
