"""`write`: the byte format of names and records, permissions, replays, and bad input."""

import json
import os
import re
import stat

import pytest

from amtest import message_args

NAME_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}\.\d{2}\.\d{2}\.\d{3}-"
                     r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\.msg$")
MID = "3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f"


def load(project, session_id, name):
    with open(os.path.join(project.store, session_id, name), "rb") as handle:
        return json.loads(handle.read())


def test_write_creates_one_named_record_with_logger_fields(project):
    result = project.cli(*message_args("s1", "one two three four five six seven"),
                         "--priority", "2", "--attributes", '{"k": [1, 2]}',
                         "--occurred-at", "2026-10-01T15:57:45.123456+02:00",
                         "--message-id", MID)
    assert result.rc == 0 and result.out["store"] == "file"
    data = result.data
    assert data["message_id"] == MID and data["sequence_number"] == 0
    assert data["text_head"] == "one two three four five"
    assert data["text_tail"] == "three four five six seven"
    assert data["occurred_at"] == "2026-10-01T13:57:45.123456Z"
    files = project.files("s1")
    assert files == [f"2026-10-01T13.57.45.123-{MID}.msg"]
    assert NAME_RE.match(files[0])
    record = load(project, "s1", files[0])
    assert record["format_version"] == 1
    assert {k: record[k] for k in ("session_id", "message_id", "text", "sender_kind",
                                   "sender_identity", "receiver_kind", "receiver_identity",
                                   "priority", "attributes", "relations", "sequence_number",
                                   "corrects_message_id", "occurred_at")} == {
        "session_id": "s1", "message_id": MID, "text": "one two three four five six seven",
        "sender_kind": "human", "sender_identity": "alice", "receiver_kind": "model",
        "receiver_identity": "claude", "priority": 2, "attributes": {"k": [1, 2]},
        "relations": [], "sequence_number": 0, "corrects_message_id": None,
        "occurred_at": "2026-10-01T13:57:45.123456Z"}
    path = os.path.join(project.store, "s1", files[0])
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700


def test_sequence_number_counts_pending_and_imported(project):
    first = project.cli(*message_args("s1", "a")).data
    second = project.cli(*message_args("s1", "b")).data
    assert (first["sequence_number"], second["sequence_number"]) == (0, 1)
    imported = os.path.join(project.store, ".imported", "s1")
    os.makedirs(imported)
    name = project.files("s1")[0]
    os.rename(os.path.join(project.store, "s1", name), os.path.join(imported, name))
    assert project.cli(*message_args("s1", "c")).data["sequence_number"] == 2


def test_text_from_stdin_kept_exactly(project):
    result = project.cli(*message_args("s1", None), stdin="  multi\nline ünïcode \n".encode())
    assert result.rc == 0
    record = load(project, "s1", project.files("s1")[0])
    assert record["text"] == "  multi\nline ünïcode \n"


def test_relations_and_correction_recorded(project):
    first = project.cli(*message_args("s1", "question")).data["message_id"]
    second = project.cli(*message_args("s1", "answer"), "--relation", f"reply:{first}",
                         "--relation", f"influence:{first}", "--corrects", first).data
    name = [n for n in project.files("s1") if second["message_id"] in n][0]
    record = load(project, "s1", name)
    assert record["relations"] == [{"to_message_id": first, "kind": "reply"},
                                   {"to_message_id": first, "kind": "influence"}]
    assert record["corrects_message_id"] == first


def test_identical_replay_answers_as_first_and_writes_nothing(project):
    args = [*message_args("s1", "same"), "--message-id", MID,
            "--occurred-at", "2026-10-01T13:57:45Z"]
    first = project.cli(*args)
    again = project.cli(*args)
    assert first.rc == again.rc == 0
    assert again.data == first.data
    assert len(project.files("s1")) == 1


def test_replay_with_other_content_is_a_conflict(project):
    project.cli(*message_args("s1", "same"), "--message-id", MID)
    result = project.cli(*message_args("s1", "different"), "--message-id", MID)
    assert result.rc == 1 and result.code == "MESSAGE_CONFLICT"
    assert len(project.files("s1")) == 1


@pytest.mark.parametrize("session_id", ["a/b", "..", "../x", ".hidden", "x" * 129, "",
                                        "a b", "-dash"])
def test_bad_session_ids_are_usage_errors(project, session_id):
    result = project.cli(*message_args(session_id))
    assert result.rc == 2 and result.code == "INVALID_SESSION_ID"
    assert os.listdir(project.store) == []


def test_session_id_with_nul_is_refused():
    from agent_memory.outbox.contract import is_valid_session_id
    assert not is_valid_session_id("a\x00b")
    assert is_valid_session_id("x" * 128)


@pytest.mark.parametrize("extra, code", [
    (["--message-id", "not-a-uuid"], "INVALID_MESSAGE_ID"),
    (["--message-id", "3f2b8c1e-9d4a-1e5b-8c7d-1a2b3c4d5e6f"], "INVALID_MESSAGE_ID"),  # v1
    (["--occurred-at", "2026-10-01T13:57:45"], "INVALID_TIME"),  # no offset
    (["--occurred-at", "yesterday"], "INVALID_TIME"),
    (["--relation", "reply:not-a-uuid"], "INVALID_MESSAGE_ID"),
    (["--relation", "correction:" + MID], "INVALID_RELATION"),
    (["--relation", MID], "INVALID_RELATION"),
    (["--corrects", "nope"], "INVALID_MESSAGE_ID"),
    (["--attributes", "[1]"], "INVALID_JSON"),
    (["--attributes", "{bad"], "INVALID_JSON"),
    (["--priority", "-1"], "INVALID_NUMBER"),
])
def test_bad_fields_are_usage_errors_and_nothing_written(project, extra, code):
    result = project.cli(*message_args("s1", "text"), *extra)
    assert result.rc == 2 and result.code == code
    assert project.files("s1") == []


def test_unknown_sender_kind(project):
    args = message_args("s1", "text")
    args[args.index("human")] = "robot"
    result = project.cli(*args)
    assert result.rc == 2 and result.code == "INVALID_KIND"
    assert project.files("s1") == []


def test_empty_text(project):
    assert project.cli(*message_args("s1", "")).code == "INVALID_TEXT"
    assert project.cli(*message_args("s1", None), stdin=b"").code == "INVALID_TEXT"
    assert project.files("s1") == []


def test_non_utf8_text(project):
    result = project.cli(*message_args("s1", None), stdin=b"caf\xe9")
    assert result.rc == 2 and result.code == "INVALID_TEXT"
    assert project.files("s1") == []


def test_text_over_the_cap(project):
    from agent_memory.cli.inputs import MAX_TEXT_BYTES
    result = project.cli(*message_args("s1", None), stdin=b"a" * (MAX_TEXT_BYTES + 1))
    assert result.rc == 2 and result.code == "TEXT_TOO_LARGE"
    assert project.cli(*message_args("s1", None), stdin=b"a" * MAX_TEXT_BYTES).rc == 0


def test_missing_required_option_is_json_usage_error(project):
    result = project.cli("write", "--session-id", "s1", "--text", "x")
    assert result.rc == 2 and result.code == "USAGE"
    assert "required" in result.out["error"]["message"]


def test_store_logger_without_logger_configured_is_exit_4(project):
    result = project.cli("--store", "logger", *message_args("s1", "x"))
    assert result.rc == 4 and result.code == "LOGGER_UNREACHABLE"
    assert project.files("s1") == []


def test_a_malformed_embed_budget_is_a_usage_error_before_any_write(project):
    project.env["AGENT_MEMORY_EMBED_BUDGET"] = "soon"
    result = project.cli(*message_args("s1", "text"))
    assert result.rc == 2 and "AGENT_MEMORY_EMBED_BUDGET" in result.out["error"]["message"]
    assert project.files("s1") == []
