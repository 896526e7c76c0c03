"""A replayed transcript: messages sharing one `--occurred-at` reach the logger in the order
their session's store reads them (the order the store acknowledged them), and the logger's
sequence numbers are the store's, whether `sync` forwards them later or the agent live."""

from __future__ import annotations

import pytest

from agentutil import wait_serving
from amtest import message_args, open_args, wait_for
from fleetutil import read_all

MOMENT = "2026-03-01T12:00:00Z"  # one time stamp for the whole transcript, as a coarse tool gives
COUNT = 12


def store_order(project, sid) -> list[tuple[str, int]]:
    """(message_id, sequence_number) as the session's file store reads them."""
    read = project.cli("--store", "file", "read", "--session-id", sid, "--block-size", "100")
    assert read.rc == 0, read.stdout
    return [(m["message_id"], m["sequence_number"]) for m in read.data["messages"]]


def logger_order(fleet, sid) -> list[tuple[str, int]]:
    return [(m["message_id"], m["sequence_number"]) for m in read_all(fleet, sid)]


def test_written_offline_then_synced(agent_projects, fleet, unique_session_id):
    sid = unique_session_id
    project = agent_projects(str(fleet.config_path), AGENT_MEMORY_AGENT="off")
    assert project.cli("--store", "file", *open_args(sid)).rc == 0
    from agent_memory.outbox.store import Store
    with Store(project.root) as store:  # the write command's own append, without 12 processes
        for i in range(COUNT):
            store.append_message({"session_id": sid, "text": f"turn {i}", "sender_kind": "human",
                                  "sender_identity": "alice", "receiver_kind": "model",
                                  "receiver_identity": "claude", "occurred_at": MOMENT})
    written = store_order(project, sid)
    assert [n for _id, n in written] == list(range(COUNT))
    synced = project.cli("sync")
    assert synced.rc == 0 and synced.data["totals"]["imported"] == COUNT, synced.stdout
    assert logger_order(fleet, sid) == written


@pytest.mark.slow
def test_forwarded_live_by_the_agent(agent_projects, fleet_factory, unique_session_id):
    # a slow logger makes the writes pile up behind the round in flight, so a round forwards
    # several of them at once
    private = fleet_factory(faults={"logger": {"delay": 0.15}})
    sid = unique_session_id
    project = agent_projects(str(private.config_path))
    assert project.cli("agent", "start").rc == 0
    wait_serving(project)
    assert project.cli(*open_args(sid)).rc == 0
    for i in range(COUNT):
        done = project.cli(*message_args(sid, f"turn {i}", occurred_at=MOMENT), "--wait", "0",
                           "--embed-budget", "0")
        assert done.rc == 0, done.stdout
    written = store_order(project, sid)
    assert [n for _id, n in written] == list(range(COUNT))
    wait_for(lambda: len(read_all(private, sid)) == COUNT, "every message in the logger")
    assert logger_order(private, sid) == written
