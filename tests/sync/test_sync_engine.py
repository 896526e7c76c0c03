"""`agent-memory sync` against the reference logger: delivery, refusals, quarantine, lock."""

import json
import os

from amtest import make_project, message_args, open_args, write_offline
from fleetutil import logger_sessions, read_all


def test_offline_writes_then_sync_deliver_everything_exactly(synced_project, fleet,
                                                              unique_session_id):
    p, sid = synced_project, unique_session_id
    assert p.cli("--store", "file", *open_args(sid)).rc == 0
    first = p.cli("--store", "file", *message_args(sid, "the question"),
                  "--occurred-at", "2026-10-01T13:57:45.123456Z").data["message_id"]
    second = p.cli("--store", "file", *message_args(sid, "the answer"),
                   "--relation", f"reply:{first}", "--priority", "1",
                   "--attributes", '{"k": "v"}').data
    fix = p.cli("--store", "file", *message_args(sid, "the fixed answer"),
                "--corrects", second["message_id"]).data["message_id"]
    written = {m["message_id"]: m for m in p.cli("read", "--session-id", sid, "--mode", "full",
                                                  "--store", "file").data["messages"]}
    result = p.cli("sync")
    assert result.rc == 0 and result.out["store"] == "logger", result.stdout
    assert result.data["totals"] == {"imported": 3, "events_applied": 1, "failed": 0,
                                     "waiting": 0, "quarantined": 0, "pending": 0}
    in_logger = read_all(fleet, sid)
    assert [m["message_id"] for m in in_logger] == [first, second["message_id"], fix]
    for entry in in_logger:
        mine = written[entry["message_id"]]
        for key in ("occurred_at", "text", "relations", "corrects_message_id", "priority",
                    "attributes", "sender_identity", "receiver_kind"):
            assert entry[key] == mine[key], key
    assert in_logger[0]["occurred_at"] == "2026-10-01T13:57:45.123456Z"
    [session] = [s for s in logger_sessions(fleet, project_id="proj") if s["session_id"] == sid]
    assert session["participants"] == ["alice", "claude"]
    assert session["dialogue_kind"] == "human-to-model"
    assert p.final_files(sid) == []
    assert len(p.final_files(sid, ".imported")) == 4
    again = p.cli("sync")
    assert again.rc == 0 and again.data["totals"]["imported"] == 0
    assert len(read_all(fleet, sid)) == 3


def test_sync_reads_the_same_after_import(synced_project, unique_session_id):
    p, sid = synced_project, unique_session_id
    p.cli("--store", "file", *open_args(sid))
    write_offline(p, sid, 3)
    before = p.cli("--store", "file", "read", "--session-id", sid).data["messages"]
    assert p.cli("sync").rc == 0
    after = p.cli("--store", "file", "read", "--session-id", sid).data["messages"]
    assert [m["message_id"] for m in after] == [m["message_id"] for m in before]
    assert {m["outbox"] for m in after} == {"imported"}


def test_nothing_pending_returns_without_the_fleet(synced_project):
    result = synced_project.cli("sync")
    assert result.rc == 0 and result.data["totals"]["imported"] == 0
    assert result.stderr == ""


def test_sync_without_a_logger_configured_is_not_an_outage(tmp_path):
    """A file-store-only project's cron `sync` exits 0: the answer says no logger is configured,
    nothing was forwarded, and what waits; the files stay where they are. (`sync --watch`, a
    service that cannot forward, still fails: exit 4.)"""
    project = make_project(tmp_path)
    write_offline(project, "s1", 2)
    result = project.cli("sync")
    assert result.rc == 0 and result.out["store"] == "file", result.stdout
    assert result.data["skipped"] is True and result.data["logger_configured"] is False
    assert "no logger is configured" in result.data["reason"]
    assert "nothing was forwarded" in result.data["reason"]
    assert result.data["pending"] == {"messages": 2, "events": 0}
    assert len(project.final_files("s1")) == 2
    assert project.cli("import").rc == 0  # the alias
    watch = project.cli("sync", "--watch")
    assert watch.rc == 4 and watch.code == "LOGGER_UNREACHABLE"
    assert "no logger is configured" in watch.out["error"]["message"]


def test_unreachable_logger_is_exit_4_and_nothing_moves(tmp_path, offline_config):
    project = make_project(tmp_path, config=offline_config)
    write_offline(project, "s1", 2)
    result = project.cli("sync")
    assert result.rc == 4 and result.code == "LOGGER_UNREACHABLE"
    assert len(project.final_files("s1")) == 2
    assert project.final_files("s1", ".imported") == []
    assert project.cli("import").rc == 4  # the alias


def test_refused_item_does_not_block_others_and_its_dependants_wait(tmp_path, fleet_factory,
                                                                     unique_session_id):
    private = fleet_factory()
    private.control.set_faults("logger", refuse_pattern="poison")
    p = make_project(tmp_path, config=str(private.config_path))
    sid = unique_session_id
    p.cli("--store", "file", *open_args(sid))
    ok1 = write_offline(p, sid, 1)[0]
    bad = p.cli("--store", "file", *message_args(sid, "poison pill")).data["message_id"]
    reply = p.cli("--store", "file", *message_args(sid, "a reply to it"),
                  "--relation", f"reply:{bad}").data["message_id"]
    fix = p.cli("--store", "file", *message_args(sid, "fixing the reply"),
                "--corrects", reply).data["message_id"]
    ok2 = p.cli("--store", "file", *message_args(sid, "independent")).data["message_id"]
    result = p.cli("sync")
    assert result.rc == 1 and result.code == "IMPORT_ITEMS_FAILED"
    [report] = result.out["error"]["details"]["sessions"]
    assert [f["message_id"] for f in report["failed"]] == [bad]
    assert report["failed"][0]["code"] == "INJECTED_REFUSAL"
    assert [w["message_id"] for w in report["waiting"]] == [reply, fix]
    assert report["imported"] == 2 and report["pending"] == 3
    assert [m["message_id"] for m in read_all(private, sid)] == [ok1, ok2]
    # the switch goes off: the refused message and its dependants go through, in order
    private.control.clear_faults("logger")
    assert p.cli("sync").rc == 0
    assert [m["message_id"] for m in read_all(private, sid)] == [ok1, ok2, bad, reply, fix]
    assert p.final_files(sid) == []


def test_repeated_refusal_quarantines_with_a_reason(tmp_path, fleet_factory, unique_session_id):
    private = fleet_factory()
    private.control.set_faults("logger", refuse_pattern="poison")
    p = make_project(tmp_path, config=str(private.config_path))
    sid = unique_session_id
    p.cli("--store", "file", *open_args(sid))
    bad = p.cli("--store", "file", *message_args(sid, "poison")).data["message_id"]
    first = p.cli("sync", "--quarantine-after", "2")
    assert first.rc == 1
    assert first.out["error"]["details"]["sessions"][0]["failed"][0]["refusals"] == 1
    second = p.cli("sync", "--quarantine-after", "2")
    assert second.rc == 0, second.stdout
    [quarantined] = second.data["sessions"][0]["quarantined"]
    assert quarantined["code"] == "INJECTED_REFUSAL" and quarantined["refusals"] == 2
    names = p.files(sid, ".quarantine")
    msg = [n for n in names if n.endswith(".msg")]
    assert len(msg) == 1 and bad in msg[0]
    with open(os.path.join(p.store, ".quarantine", sid, msg[0] + ".reason.json")) as handle:
        reason = json.load(handle)
    assert reason["reason"] == "refused" and reason["code"] == "INJECTED_REFUSAL"
    assert p.final_files(sid) == []
    assert p.cli("sync").data["totals"]["imported"] == 0


def test_unreadable_pending_message_is_set_aside(synced_project, unique_session_id):
    p, sid = synced_project, unique_session_id
    p.cli("--store", "file", *open_args(sid))
    good = write_offline(p, sid, 1)[0]
    broken = "2026-01-01T00.00.00.000-3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f.msg"
    with open(os.path.join(p.store, sid, broken), "w") as handle:
        handle.write("{truncated")
    result = p.cli("sync")
    assert result.rc == 0
    assert result.data["sessions"][0]["quarantined"][0]["reason"] == "unreadable"
    assert broken in p.files(sid, ".quarantine")
    assert good in "".join(p.final_files(sid, ".imported"))


def test_sync_finding_the_lock_held_reports_and_exits_0(synced_project, unique_session_id):
    from agent_memory.sync.lock import SyncLock
    synced_project.cli("--store", "file", *open_args(unique_session_id))
    write_offline(synced_project, unique_session_id, 1)
    lock = SyncLock(synced_project.store)
    assert lock.acquire()
    try:
        result = synced_project.cli("sync")
        assert result.rc == 0 and result.data["skipped"] is True
        assert result.data["holder_pid"] == os.getpid()
        assert len(synced_project.final_files(unique_session_id)) == 2  # open + message
    finally:
        lock.release()
    assert synced_project.cli("sync").data["totals"]["imported"] == 1


def test_messages_of_a_session_unknown_to_the_logger_are_refused(synced_project,
                                                                  unique_session_id):
    write_offline(synced_project, unique_session_id, 1)
    result = synced_project.cli("sync")
    assert result.rc == 1
    failed = result.out["error"]["details"]["sessions"][0]["failed"]
    assert failed[0]["code"] == "SESSION_UNKNOWN"
