"""Messages written one after another within one millisecond keep the order they were
acknowledged in: in their names, in the file store's reads, in what the sync forwards and so in
the logger's sequence numbers (outbox.names.moment_after); so do the events written after
them, forgetting included."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from agent_memory.cli.main import run
from agent_memory.outbox import store as store_mod
from amtest import message_args, open_args

FROZEN = datetime(2026, 12, 1, 12, 0, 0, 123456, tzinfo=timezone.utc)


def _in_process(project, *argv: str) -> dict:
    """One command by the CLI's own code in this process (where the clock is frozen)."""
    import json
    lines: list[str] = []
    prefix = ["--config", project.config] if project.config else []
    run([*prefix, "--project-root", project.root, *argv], lines.append)
    return json.loads(lines[0])


@pytest.fixture
def frozen_clock(monkeypatch, synced_project):
    for key, value in synced_project.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("AGENT_MEMORY_CONFIG", raising=False)
    monkeypatch.setattr(store_mod, "utc_now", lambda: FROZEN)


def test_writes_in_one_millisecond_keep_their_order(synced_project, frozen_clock,
                                                     unique_session_id):
    project, sid = synced_project, unique_session_id
    assert _in_process(project, "--store", "file", *open_args(sid))["success"]
    acknowledged = []
    for i in range(40):
        answer = _in_process(project, "--store", "file", *message_args(sid, f"m{i}"))
        acknowledged.append(answer["data"]["message_id"])
    # one event and 40 messages in one millisecond: their names follow one another
    names = project.final_files(sid)
    assert [n.split("-", 3)[3][:36] for n in names[1:]] == acknowledged
    stamps = [n[:23] for n in names]
    assert stamps == sorted(set(stamps)), "each file its own millisecond, in order"
    # occurred_at agrees with the name (what preview and period filters order by)
    read = _in_process(project, "--store", "file", "read", "--session-id", sid,
                       "--block-size", "100")["data"]["messages"]
    assert [m["message_id"] for m in read] == acknowledged
    occurred = [m["occurred_at"] for m in read]
    assert occurred == sorted(occurred) and len(set(occurred)) == len(occurred)
    assert occurred[0] == "2026-12-01T12:00:00.124000Z"  # 1 ms after the open event
    # the sync forwards in name order: the logger numbers them in acknowledgment order
    assert project.cli("sync").rc == 0
    logged = project.cli("--store", "logger", "read", "--session-id", sid,
                         "--block-size", "100").data["messages"]
    assert [m["message_id"] for m in logged] == acknowledged
    assert [m["sequence_number"] for m in logged] == list(range(40))
    assert [m["occurred_at"] for m in logged] == occurred


def test_a_caller_given_time_is_kept(synced_project, frozen_clock, unique_session_id):
    """Only a message without --occurred-at is moved after its session's latest file."""
    project, sid = synced_project, unique_session_id
    ahead = "2026-12-01T13:00:00.000000Z"
    first = _in_process(project, "--store", "file",
                        *message_args(sid, "replayed", occurred_at=ahead))["data"]
    later = _in_process(project, "--store", "file", *message_args(sid, "now"))["data"]
    assert first["occurred_at"] == ahead
    assert later["occurred_at"] == "2026-12-01T13:00:00.001000Z"  # follows what was written


def test_a_forgetting_event_sorts_after_the_writes_before_it(synced_project, frozen_clock,
                                                            monkeypatch, unique_session_id):
    """A hard delete (and a session delete) written in the millisecond of the messages before
    it is named after every file its session holds, by the one rule of events, so the sync
    sends it after them; an event named by its clock alone would sort before them."""
    from agent_memory.sync import forgetting
    monkeypatch.setattr(forgetting, "utc_now", lambda: FROZEN)  # the event's occurred_at too
    project, sid = synced_project, unique_session_id
    assert _in_process(project, "--store", "file", *open_args(sid))["success"]
    ids = [_in_process(project, "--store", "file", *message_args(sid, f"m{i}"))["data"]
           ["message_id"] for i in range(3)]
    deleted = _in_process(project, "--store", "file", "delete", ids[0], "--mode", "hard")
    assert deleted["success"], deleted
    names = project.final_files(sid)
    event = deleted["data"]["file"].rsplit("/", 1)[1]
    assert event.endswith(".ses") and names[-1] == event, names
    assert names == sorted(names) and len({n[:23] for n in names}) == len(names)
    assert project.cli("sync").rc == 0
    logged = project.cli("--store", "logger", "read", "--session-id", sid).data["messages"]
    assert [m["message_id"] for m in logged] == ids[1:]
    gone = _in_process(project, "--store", "file", "session", "delete", "--session-id", sid,
                       "--confirm", sid)
    assert gone["success"], gone
    assert gone["data"]["file"].rsplit("/", 1)[1] > event
