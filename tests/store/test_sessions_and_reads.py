"""Session events and offline reads in the logger's shape: read, get, sessions."""

import os

from amtest import SESSION_READS, message_args, session_read

OPEN = ["session", "open", "--session-id", "s1", "--project-id", "proj",
        "--dialogue-kind", "human,model", "--participant", "alice", "claude"]


def test_session_open_close_reopen_events(project):
    opened = project.cli(*OPEN, "--title", "T", "--metadata", '{"a": 1}')
    assert opened.rc == 0 and opened.data["lifecycle"] == "open"
    assert project.cli(*OPEN, "--title", "T", "--metadata", '{"a": 1}').data["pending"] is False
    assert project.cli("session", "close", "--session-id", "s1").data["lifecycle"] == "closed"
    refused = project.cli(*message_args("s1", "late"))
    assert refused.rc == 1 and refused.code == "SESSION_CLOSED"
    assert project.cli("session", "reopen", "--session-id", "s1").data["lifecycle"] == "open"
    assert project.cli(*message_args("s1", "again")).rc == 0
    names = project.files("s1")
    assert sum(n.endswith(".ses") for n in names) == 3
    assert sum(n.endswith(".msg") for n in names) == 1


def test_a_closed_session_is_refused_before_any_other_rule_of_a_write(project):
    """Closed comes first: before the identical-retry rule and before the deleted-target rule
    (each of which would answer otherwise in an open session)."""
    project.cli(*OPEN)
    mid = "3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f"
    assert project.cli(*message_args("s1", "kept", message_id=mid)).rc == 0
    gone = project.cli(*message_args("s1", "soon deleted")).data["message_id"]
    assert project.cli("delete", gone, "--mode", "soft").rc == 0
    assert project.cli("session", "close", "--session-id", "s1").rc == 0
    before = project.final_files("s1")
    for extra in (["--message-id", mid], ["--relation", f"reply:{gone}"], ["--corrects", gone]):
        refused = project.cli(*message_args("s1", "kept"), *extra)
        assert (refused.rc, refused.code) == (1, "SESSION_CLOSED"), (extra, refused.stdout)
        assert refused.out["error"]["message"] == "session s1 is closed: reopen it first"
    assert project.final_files("s1") == before
    assert project.cli("session", "reopen", "--session-id", "s1").rc == 0
    retried = project.cli(*message_args("s1", "kept", message_id=mid))
    assert retried.rc == 0 and retried.data["message_id"] == mid
    assert project.cli(*message_args("s1", "late"), "--corrects", gone).code == "MESSAGE_DELETED"


def test_a_quarantined_close_event_does_not_close_the_session(project):
    project.cli(*OPEN)
    project.cli("session", "close", "--session-id", "s1")
    close = project.final_files("s1")[-1]
    quarantine = os.path.join(project.store, ".quarantine", "s1")
    os.makedirs(quarantine)
    os.rename(os.path.join(project.store, "s1", close), os.path.join(quarantine, close))
    written = project.cli(*message_args("s1", "still open"))
    assert written.rc == 0, written.stdout
    assert close in project.files("s1", ".quarantine")


def test_session_open_conflicting_attributes_refused(project):
    project.cli(*OPEN)
    result = project.cli(*OPEN[:-1], "bob")
    assert result.rc == 1 and result.code == "SESSION_CONFLICT"


def test_session_open_bad_input(project):
    bad_kind = project.cli(*[a if a != "human,model" else "human" for a in OPEN])
    assert bad_kind.rc == 2
    assert project.cli(*[a if a != "human,model" else "human,alien" for a in OPEN]).rc == 2
    assert project.cli(*OPEN, "--metadata", "nope").rc == 2
    assert project.cli("session", "open", "--session-id", "s1").rc == 2
    assert project.cli("session").rc == 2
    assert not os.path.exists(os.path.join(project.store, "s1"))


def test_sessions_list_with_filters_and_paging(project):
    project.cli(*OPEN)
    project.cli("session", "open", "--session-id", "s2", "--project-id", "other",
                "--dialogue-kind", "model,model", "--participant", "bot")
    project.cli("session", "close", "--session-id", "s2")
    project.cli(*message_args("s3", "written while the logger held the session"))
    listed = project.cli("sessions").data
    assert [s["session_id"] for s in listed["sessions"]] == ["s1", "s2", "s3"]
    first = listed["sessions"][0]
    assert first == {**first, "project_id": "proj", "lifecycle": "open",
                     "dialogue_kind": "human-to-model", "participants": ["alice", "claude"]}
    assert listed["sessions"][2]["project_id"] is None
    assert [s["session_id"] for s in project.cli("sessions", "--project-id", "proj")
            .data["sessions"]] == ["s1"]
    assert [s["session_id"] for s in project.cli("sessions", "--lifecycle", "closed")
            .data["sessions"]] == ["s2"]
    assert [s["session_id"] for s in project.cli("sessions", "--participant", "bot")
            .data["sessions"]] == ["s2"]
    assert [s["session_id"] for s in project.cli("sessions", "--dialogue-kind", "model-to-model")
            .data["sessions"]] == ["s2"]
    page = project.cli("sessions", "--block-size", "2").data
    assert len(page["sessions"]) == 2 and page["more"] is True
    rest = project.cli("sessions", "--block-size", "2", "--continuation", page["continuation"]).data
    assert [s["session_id"] for s in rest["sessions"]] == ["s3"] and rest["more"] is False


def test_read_window_and_continuation(project):
    ids = [project.cli(*message_args("s1", f"message {i}")).data["message_id"] for i in range(5)]
    window = project.cli("read", "--session-id", "s1", "--block-size", "2").data
    assert [m["message_id"] for m in window["messages"]] == ids[:2]
    assert window["more"] is True
    following = project.cli("read", "--session-id", "s1", "--block-size", "2",
                            "--continuation", window["continuation"]).data
    assert [m["message_id"] for m in following["messages"]] == ids[2:4]
    tail = project.cli("read", "--session-id", "s1", "--start", "4").data
    assert [m["message_id"] for m in tail["messages"]] == ids[4:]
    assert tail["more"] is False and tail["continuation"] is None
    entry = tail["messages"][0]
    assert entry["sequence_number"] == 4 and entry["text"] == "message 4"
    assert entry["outbox"] == "pending" and entry["soft_deleted"] is False


def test_read_resolved_and_full_modes(project):
    original = project.cli(*message_args("s1", "the sky is green")).data["message_id"]
    other = project.cli(*message_args("s1", "unrelated")).data["message_id"]
    fix = project.cli(*message_args("s1", "the sky is blue"), "--corrects", original).data["message_id"]
    full = project.cli("read", "--session-id", "s1", "--mode", "full").data["messages"]
    assert [m["message_id"] for m in full] == [original, other, fix]
    resolved = project.cli("read", "--session-id", "s1").data["messages"]
    assert [m["message_id"] for m in resolved] == [original, other]
    assert resolved[0]["text"] == "the sky is blue" and resolved[0]["resolved_from"] == fix


def test_read_bad_input(project):
    assert project.cli("read", "--session-id", "s1", "--continuation", "garbage").rc == 2
    assert project.cli("read", "--session-id", "s1", "--block-size", "0").rc == 2
    assert project.cli("read", "--session-id", "s1", "--start", "-1").rc == 2
    assert project.cli("read", "--session-id", "../etc").rc == 2


def test_a_session_unknown_here_is_refused_by_every_read_as_the_logger_refuses_it(project):
    project.cli(*OPEN)  # known: opened, no message yet
    project.cli(*message_args("gone", "soon deleted"))
    project.cli("session", "delete", "--session-id", "gone", "--confirm", "gone")
    for read in SESSION_READS:
        code = "SCOPE_SESSION_UNKNOWN" if read[0] == "search" else "SESSION_UNKNOWN"
        for session_id in ("nobody", "gone"):
            refused = session_read(project, read, session_id)
            assert (refused.rc, refused.code) == (1, code), (read, session_id, refused.stdout)
    assert project.cli("read", "--session-id", "s1").data["messages"] == []
    assert project.cli("relations", "--session-id", "s1").data["relations"] == []
    assert project.cli("working-set", "--session-id", "s1", "--anchor-text", "x").data[
        "closest"] == []
    assert project.cli("search", "--query", "x", "--scope", "session", "--target", "s1").data[
        "matches"] == []
    # the preview filters across sessions, as the logger's does: an unknown one matches nothing
    assert project.cli("read", "--preview", "--session-id", "nobody").data["entries"] == []


def test_get_found_missing_and_malformed(project):
    mid = project.cli(*message_args("s1", "find me")).data["message_id"]
    found = project.cli("get", mid)
    assert found.rc == 0 and found.data["text"] == "find me"
    assert found.data["vectorization_state"] == "pending"
    missing = project.cli("get", "3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f")
    assert missing.rc == 5 and missing.code == "MESSAGE_UNKNOWN"
    assert project.cli("get", "xyz").rc == 2


def test_unparseable_message_reported_not_fatal(project):
    good = project.cli(*message_args("s1", "fine")).data["message_id"]
    broken = "2026-01-01T00.00.00.000-3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f.msg"
    with open(os.path.join(project.store, "s1", broken), "w") as handle:
        handle.write("{not json")
    with open(os.path.join(project.store, "s1", "notes.txt"), "w") as handle:
        handle.write("ignored: not a final name")
    result = project.cli("read", "--session-id", "s1")
    assert result.rc == 0
    assert [m["message_id"] for m in result.data["messages"]] == [good]
    assert [w["file"] for w in result.data["warnings"]] == [f".agent-memory/s1/{broken}"]
    assert project.cli(*message_args("s1", "still writable")).rc == 0


def test_version_and_no_command(project):
    assert project.cli("--version").data == {"version": "1.7.47"}
    assert project.cli().rc == 2
    assert project.cli("frobnicate").rc == 2
