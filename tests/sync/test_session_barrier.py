"""A session's open event decides whose session its messages join: when the logger refuses it
(another project owns that session id), what is written behind it waits, then is quarantined
with it, and never lands in the other project's session."""

from __future__ import annotations

import json
import os

from amtest import make_project, message_args, open_args
from fleetutil import read_all


def test_messages_behind_a_refused_open_never_join_another_projects_session(
        tmp_path, fleet, unique_session_id):
    sid = unique_session_id
    a_dir, b_dir = tmp_path / "a", tmp_path / "b"
    a_dir.mkdir(), b_dir.mkdir()
    a = make_project(a_dir, config=str(fleet.config_path))
    b = make_project(b_dir, config=str(fleet.config_path))
    assert a.cli(*open_args(sid, "project-a")).out["store"] == "logger"
    assert a.cli(*message_args(sid, "project A's own words")).out["store"] == "logger"

    refused = b.cli(*open_args(sid, "project-b"))
    assert refused.rc == 1 and refused.code == "SESSION_CONFLICT", refused.stdout
    event_id = next(n for n in b.final_files(sid) if n.endswith(".ses"))[24:-4]

    # a message back-dated to before B's open waits for it too (written behind it)
    back_dated = b.cli(*message_args(sid, "B back-dated", occurred_at="2020-01-01T00:00:00Z"))
    assert back_dated.rc == 0 and back_dated.out["store"] == "file", back_dated.stdout
    assert back_dated.data["waits_for"] == [event_id]
    assert "open event was refused by the logger (SESSION_CONFLICT" in back_dated.data["reason"]

    # the default holds three refusals: the open's third (with this write) quarantines it, and
    # everything written behind it follows it to .quarantine/
    answers = [b.cli(*message_args(sid, f"B message {i}")) for i in range(4)]
    assert [r.rc for r in answers] == [1, 1, 1, 1], [r.stdout for r in answers]
    assert {r.code for r in answers} == {"SESSION_CONFLICT"}
    assert all("open event was refused by the logger" in r.out["error"]["message"]
               and "quarantined" in r.out["error"]["message"] for r in answers)

    texts = [m["text"] for m in read_all(fleet, sid)]
    assert texts == ["project A's own words"]  # nothing of B's in A's session
    assert not b.final_files(sid)  # nothing pending either: all set aside, none lost
    quarantined = b.final_files(sid, ".quarantine")
    assert len([n for n in quarantined if n.endswith(".msg")]) == 5
    assert len([n for n in quarantined if n.endswith(".ses")]) == 1
    reasons = [json.loads(open(os.path.join(b.store, ".quarantine", sid, n)).read())
               for n in b.files(sid, ".quarantine") if n.endswith(".msg.reason.json")]
    assert {r["reason"] for r in reasons} == {"session_refused"}
    # a later sync sends none of it; a write now is set aside at once, with the same reason
    assert b.cli("--no-agent", "sync").rc == 0
    late = b.cli(*message_args(sid, "B later"))
    assert late.rc == 1 and late.code == "SESSION_CONFLICT", late.stdout
    assert [m["text"] for m in read_all(fleet, sid)] == ["project A's own words"]
    # project A goes on as before
    assert a.cli(*message_args(sid, "A again")).out["store"] == "logger"
