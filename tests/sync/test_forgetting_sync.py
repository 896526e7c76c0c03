"""Forgetting reaches the logger in order: a delete or mark made while the logger is down, then
synced, leaves the logger and the store as the same delete made online; a message hard-deleted
before it was forwarded is never sent (not a byte of it reaches the logger's data), and one
deleted after it was leaves none there."""

from __future__ import annotations

import asyncio
import os

import pytest

from amtest import make_project, message_args, open_args
from ops.fleet.handle import Fleet

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def own_fleet(tmp_path_factory):
    """A fleet of this module's own, which its tests take down and up (the shared one must
    stay up); each test finds its logger up."""
    handle = Fleet(tmp_path_factory.mktemp("forgetting-fleet"), owner_pid=os.getpid()).start()
    try:
        yield handle
    finally:
        handle.stop()


@pytest.fixture
def fleet_for_faults(own_fleet):
    own_fleet.control.come_up("logger")
    return own_fleet


def _write(project, session_id, text, *extra):
    result = project.cli(*message_args(session_id, text), *extra)
    assert result.rc == 0, result.stdout
    return result.data["message_id"]


def _logger_view(fleet, session_id):
    """(text, soft_deleted) of every message the logger holds for the session, or None when
    it does not know the session."""
    async def go():
        async with fleet.logger_client() as client:
            try:
                answer = await client.messages_read(session_id=session_id,
                                                    start_sequence_number=0, block_size=1000,
                                                    mode="full", show_deleted=True)
            except Exception as exc:  # the client's refusal: SESSION_UNKNOWN
                if getattr(exc, "code", None) == "SESSION_UNKNOWN":
                    return None
                raise
            return [(m["text"], m["soft_deleted"]) for m in answer["data"]["messages"]]
    return asyncio.run(go())


def _store_view(project, session_id):
    read = project.cli("--store", "file", "read", "--session-id", session_id, "--mode", "full",
                       "--show-deleted").data
    return [(m["text"], m["soft_deleted"]) for m in read["messages"]]


def _holding(folder: str, needle: bytes) -> list[str]:
    found = []
    for where, _dirs, files in os.walk(folder):
        for name in files:
            path = os.path.join(where, name)
            try:
                with open(path, "rb") as handle:
                    if needle in handle.read():
                        found.append(path)
            except OSError:
                continue
    return found


def _forget(project, fleet, session_id, online: bool):
    assert project.cli(*open_args(session_id)).rc == 0
    a = _write(project, session_id, "alpha words")
    b = _write(project, session_id, "beta words", "--relation", f"reply:{a}")
    c = _write(project, session_id, "gamma words")
    d = _write(project, session_id, "delta secret words")
    assert project.cli("sync").rc == 0
    if not online:
        fleet.control.go_down("logger")
    late = _write(project, session_id, f"never-sent {session_id}")
    steps = [("delete", b, "--mode", "soft"), ("mark", c), ("mark", a), ("mark", a, "--unmark"),
             ("delete", d, "--mode", "hard"), ("delete", late, "--mode", "hard")]
    for step in steps:
        result = project.cli(*step)
        assert result.rc == 0, (step, result.stdout)
        assert result.out["store"] == ("logger" if online else "file"), (step, result.stdout)
    if not online:
        fleet.control.come_up("logger")
        synced = project.cli("sync")
        assert synced.rc == 0, synced.stdout
        assert synced.data["totals"]["imported"] == 0, synced.stdout  # the purged one: unsent
    return late


def test_forgetting_offline_then_sync_equals_forgetting_online(tmp_path, fleet_for_faults):
    fleet = fleet_for_faults
    (tmp_path / "on").mkdir()
    (tmp_path / "off").mkdir()
    online = make_project(tmp_path / "on", config=str(fleet.config_path))
    offline = make_project(tmp_path / "off", config=str(fleet.config_path))
    _forget(online, fleet, "s-on", online=True)
    late = _forget(offline, fleet, "s-off", online=False)
    expected = [("alpha words", False), ("beta words", True), ("gamma words", True)]
    assert _logger_view(fleet, "s-on") == expected
    assert _logger_view(fleet, "s-off") == expected
    assert _store_view(online, "s-on") == expected
    assert _store_view(offline, "s-off") == expected
    for project, session_id in ((online, "s-on"), (offline, "s-off")):
        assert project.final_files(session_id) == [], "nothing is left pending"
        assert _holding(project.store, b"delta secret") == []
        assert project.cli("status").rc == 0
    # the message hard-deleted before it was forwarded never reached the logger; the one
    # deleted after it reached it left no byte there either, while a sent message that stays
    # is found in the logger's files (the detector works)
    assert _holding(str(fleet.data_dir), b"alpha words")
    assert _holding(str(fleet.data_dir), b"delta secret words") == []
    assert _holding(str(fleet.data_dir), b"never-sent s-off") == []
    assert offline.cli("get", late).code == "MESSAGE_UNKNOWN"


def test_events_after_a_message_dated_ahead_reach_the_logger_after_it(tmp_path,
                                                                     fleet_for_faults):
    """A message is named by its `occurred_at`, which may lie ahead; a soft delete, a mark and
    a close written after it are forwarded after it, so the logger deletes, marks and closes
    what the store did (not: unknown, then imported undeleted into a closed session)."""
    from datetime import datetime, timedelta, timezone
    fleet = fleet_for_faults
    project = make_project(tmp_path, config=str(fleet.config_path))
    session_id = "dated-ahead"
    assert project.cli(*open_args(session_id)).rc == 0
    assert project.cli("sync").rc == 0
    fleet.control.go_down("logger")
    ahead = (datetime.now(timezone.utc) + timedelta(days=1)).isoformat()
    a = _write(project, session_id, "written for tomorrow", "--occurred-at", ahead)
    b = _write(project, session_id, "written for now")
    for step in (("delete", a, "--mode", "soft"), ("mark", b),
                 ("session", "close", "--session-id", session_id)):
        result = project.cli(*step)
        assert result.rc == 0 and result.out["store"] == "file", (step, result.stdout)
    expected = [("written for now", True), ("written for tomorrow", True)]
    assert sorted(_store_view(project, session_id)) == expected
    fleet.control.come_up("logger")
    synced = project.cli("sync")
    assert synced.rc == 0, synced.stdout
    assert project.final_files(session_id) == [], "nothing is left pending"
    assert sorted(_logger_view(fleet, session_id)) == expected
    listed = project.cli("--store", "logger", "sessions").data["sessions"]
    assert [e["lifecycle"] for e in listed if e["session_id"] == session_id] == ["closed"]


def test_session_delete_offline_then_sync_equals_online(tmp_path, fleet_for_faults):
    fleet = fleet_for_faults
    for name, online in (("on", True), ("off", False)):
        (tmp_path / name).mkdir()
        project = make_project(tmp_path / name, config=str(fleet.config_path))
        session_id = f"gone-{name}"
        assert project.cli(*open_args(session_id)).rc == 0
        _write(project, session_id, f"words of {name}")
        assert project.cli("sync").rc == 0
        if not online:
            fleet.control.go_down("logger")
        _write(project, session_id, f"pending words of {name}")
        result = project.cli("session", "delete", "--session-id", session_id, "--confirm",
                             session_id)
        assert result.rc == 0, result.stdout
        if not online:
            assert result.out["store"] == "file"
            fleet.control.come_up("logger")
            assert project.cli("sync").rc == 0
        assert _logger_view(fleet, session_id) is None
        assert project.final_files(session_id) == []
        assert _holding(project.store, f"words of {name}".encode()) == []
        listed = project.cli("sessions").data["sessions"]
        assert session_id not in [e["session_id"] for e in listed]
    assert _holding(str(fleet.data_dir), b"pending words of off") == []


def test_a_secret_hard_deleted_while_the_logger_is_down_is_never_sent(tmp_path,
                                                                    fleet_for_faults):
    fleet = fleet_for_faults
    project = make_project(tmp_path, config=str(fleet.config_path))
    assert project.cli(*open_args("s1")).rc == 0
    _write(project, "s1", "harmless")
    fleet.control.go_down("logger")
    secret = _write(project, "s1", "the root password is swordfish-7781")
    _write(project, "s1", "after the secret")
    assert project.cli("delete", secret, "--mode", "hard").rc == 0
    fleet.control.come_up("logger")
    synced = project.cli("sync")
    assert synced.rc == 0, synced.stdout
    assert [t for t, _ in _logger_view(fleet, "s1")] == ["harmless", "after the secret"]
    assert _holding(str(fleet.data_dir), b"swordfish-7781") == []
    assert _holding(project.store, b"swordfish-7781") == []
    assert project.final_files("s1") == []


def test_the_loggers_refusal_of_a_hard_delete_is_reported_with_its_code(tmp_path, fleet):
    (tmp_path / "p").mkdir()
    (tmp_path / "q").mkdir()
    p = make_project(tmp_path / "p", config=str(fleet.config_path))
    q = make_project(tmp_path / "q", config=str(fleet.config_path))
    session_id = f"shared-{os.getpid()}-{id(p)}"
    assert p.cli(*open_args(session_id)).rc == 0
    root = _write(p, session_id, "the root")
    _write(q, session_id, "a reply from elsewhere", "--relation", f"reply:{root}")
    assert [t for t, _ in _logger_view(fleet, session_id)] == ["the root",
                                                                "a reply from elsewhere"]
    refused = p.cli("delete", root, "--mode", "hard")
    assert refused.rc == 1 and refused.code == "MESSAGE_REFERENCED", refused.stdout
    assert [t for t, _ in _logger_view(fleet, session_id)][0] == "the root"
    assert _holding(p.store, b"the root") == []  # gone here all the same: asked for


def test_a_pending_delete_hides_at_once_from_the_loggers_answers(tmp_path, fleet):
    """The delete waits in the outbox (`--store file`), the logger still holds the message:
    reads, get, search, the working set and the listing already answer without it."""
    project = make_project(tmp_path, config=str(fleet.config_path))
    session_id = f"hide-{os.getpid()}-{id(project)}"
    assert project.cli(*open_args(session_id)).rc == 0
    keep = _write(project, session_id, "apples and pears")
    gone = _write(project, session_id, "apples and plums")
    assert project.cli("--store", "file", "delete", gone, "--mode", "soft").rc == 0
    read = project.cli("read", "--session-id", session_id)
    assert read.out["store"] in ("logger", "both")
    assert [m["message_id"] for m in read.data["messages"]] == [keep]
    assert project.cli("get", gone).data["soft_deleted"] is True
    found = project.cli("search", "--query", "apples", "--scope", "session", "--target",
                        session_id).data
    assert gone not in [m["message"]["message_id"] for m in found["matches"]]
    ws = project.cli("working-set", "--session-id", session_id, "--anchor-text", "apples").data
    assert gone not in [m["message"]["message_id"] for m in ws["recent"] + ws["closest"]]
    assert _logger_view(fleet, session_id) == [("apples and pears", False),
                                               ("apples and plums", False)]
    assert project.cli("--store", "file", "session", "delete", "--session-id", session_id,
                       "--confirm", session_id).rc == 0
    listed = project.cli("sessions").data["sessions"]
    assert session_id not in [e["session_id"] for e in listed]
    assert project.cli("sync").rc == 0
    assert _logger_view(fleet, session_id) is None
