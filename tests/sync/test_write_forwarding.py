"""`write` and `session` in each store mode, with the logger up and down."""

import os

from amtest import make_project, message_args, open_args
from fleetutil import logger_sessions, read_all


def test_auto_with_the_logger_up_lands_in_the_logger(synced_project, fleet, unique_session_id):
    p, sid = synced_project, unique_session_id
    opened = p.cli(*open_args(sid))
    assert opened.rc == 0 and opened.out["store"] == "logger"
    assert opened.data == {"session_id": sid, "lifecycle": "open"}
    written = p.cli(*message_args(sid, "one two three four five six"),
                    "--occurred-at", "2026-10-01T13:57:45.5+02:00")
    assert written.rc == 0 and written.out["store"] == "logger"
    data = written.data
    assert data["sequence_number"] == 0 and data["text_head"] == "one two three four five"
    [entry] = read_all(fleet, sid)
    assert entry["message_id"] == data["message_id"]
    assert entry["occurred_at"] == "2026-10-01T11:57:45.500000Z"
    assert p.final_files(sid) == []
    imported = p.final_files(sid, ".imported")
    assert sorted(n.rsplit(".", 1)[1] for n in imported) == ["emb", "msg", "ses"]
    closed = p.cli("session", "close", "--session-id", sid)
    assert closed.out["store"] == "logger" and closed.data["lifecycle"] == "closed"
    [session] = [s for s in logger_sessions(fleet) if s["session_id"] == sid]
    assert session["lifecycle"] == "closed"


def test_auto_with_the_logger_down_keeps_the_message_pending(tmp_path, offline_config):
    p = make_project(tmp_path, config=offline_config)
    result = p.cli(*message_args("s1", "nobody listens"))
    assert result.rc == 0 and result.out["store"] == "file"
    assert result.data["forwarded"] is False and "unreachable" in result.data["reason"]
    assert len(p.final_files("s1")) == 1


def test_store_logger_with_the_logger_down_is_exit_4_and_nothing_pending(tmp_path,
                                                                         offline_config):
    p = make_project(tmp_path, config=offline_config)
    result = p.cli("--store", "logger", *message_args("s1", "nobody listens"))
    assert result.rc == 4 and result.code == "LOGGER_UNREACHABLE"
    assert p.files("s1") == []
    opened = p.cli("--store", "logger", *open_args("s1"))
    assert opened.rc == 4 and p.files("s1") == []


def test_store_logger_with_the_logger_up_writes_no_file(synced_project, fleet, unique_session_id):
    p, sid = synced_project, unique_session_id
    assert p.cli("--store", "logger", *open_args(sid)).out["store"] == "logger"
    result = p.cli("--store", "logger", *message_args(sid, "direct"))
    assert result.rc == 0 and result.out["store"] == "logger"
    assert [m["message_id"] for m in read_all(fleet, sid)] == [result.data["message_id"]]
    assert not os.path.exists(os.path.join(p.store, sid))
    refused = p.cli("--store", "logger", *message_args("no-such-session", "x"))
    assert refused.rc == 1 and refused.code == "SESSION_UNKNOWN"


def test_store_file_never_forwards(synced_project, fleet, unique_session_id):
    p, sid = synced_project, unique_session_id
    p.cli(*open_args(sid))
    result = p.cli("--store", "file", *message_args(sid, "stays here"))
    assert result.rc == 0 and result.out["store"] == "file"
    assert read_all(fleet, sid) == []
    assert len(p.final_files(sid)) == 1


def test_auto_forwards_older_pending_messages_first(synced_project, fleet, unique_session_id):
    p, sid = synced_project, unique_session_id
    p.cli("--store", "file", *open_args(sid))
    older = [p.cli("--store", "file", *message_args(sid, f"older {i}")).data["message_id"]
             for i in range(3)]
    newest = p.cli(*message_args(sid, "newest"))
    assert newest.out["store"] == "logger"
    assert newest.data["sequence_number"] == 3
    assert newest.data["audience"] == {"receiver_kind": "model", "receiver_identity": "claude"}
    assert [m["message_id"] for m in read_all(fleet, sid)] == older + [newest.data["message_id"]]


def test_auto_refusal_is_exit_1_and_the_file_stays_pending(tmp_path, fleet_factory,
                                                           unique_session_id):
    private = fleet_factory()
    private.control.set_faults("logger", refuse_pattern="forbidden")
    p = make_project(tmp_path, config=str(private.config_path))
    sid = unique_session_id
    p.cli(*open_args(sid))
    result = p.cli(*message_args(sid, "a forbidden word"))
    assert result.rc == 1 and result.code == "INJECTED_REFUSAL"
    assert "kept pending" in result.out["error"]["message"]
    assert len([n for n in p.final_files(sid) if n.endswith(".msg")]) == 1


def test_get_of_a_message_unknown_to_logger_and_outbox_is_exit_5(synced_project):
    result = synced_project.cli("get", "3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f")
    assert result.rc == 5 and result.code == "MESSAGE_UNKNOWN"
