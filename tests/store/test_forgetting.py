"""Forgetting in the file store, the logger down: soft delete and marks hide at once, a hard
delete and a session delete purge the text from every file of the store, even when a `kill -9`
interrupts them (the next command completes the purge)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from amtest import make_project, message_args, open_args

SECRET = "the-password-is-hunter2-" + "x" * 8


def _write(project, session_id, text, *extra):
    result = project.cli(*message_args(session_id, text), *extra)
    assert result.rc == 0, result.stdout
    return result.data["message_id"]


def _texts(project, session_id, *extra):
    return [m["text"] for m in project.cli("read", "--session-id", session_id,
                                           *extra).data["messages"]]


def _holding(store_dir: str, needle: bytes) -> list[str]:
    """Every file under the store whose bytes contain `needle`."""
    found = []
    for folder, _dirs, files in os.walk(store_dir):
        for name in files:
            path = os.path.join(folder, name)
            with open(path, "rb") as handle:
                if needle in handle.read():
                    found.append(path)
    return found


@pytest.fixture
def project(tmp_path, offline_config):
    """A project whose logger and embedder listen nowhere: everything stays in the outbox."""
    project = make_project(tmp_path, config=offline_config)
    assert project.cli(*open_args("s1")).rc == 0
    return project


def test_soft_delete_and_marks_hide_at_once_and_unmark_restores(project):
    a = _write(project, "s1", "first")
    b = _write(project, "s1", "second", "--relation", f"reply:{a}")
    c = _write(project, "s1", "third")
    deleted = project.cli("delete", b, "--mode", "soft")
    assert deleted.rc == 0 and deleted.out["store"] == "file", deleted.stdout
    assert deleted.data["pending"] is True and deleted.data["mode"] == "soft"
    assert _texts(project, "s1") == ["first", "third"]
    assert _texts(project, "s1", "--show-deleted") == ["first", "second", "third"]
    shown = project.cli("get", b).data
    assert shown["soft_deleted"] is True and shown["text"] == "second"
    preview = project.cli("read", "--preview", "--session-id", "s1").data
    assert [e["message_id"] for e in preview["entries"]] == [a, c]
    # the structure keeps the node, flagged
    path = project.cli("path", "--session-id", "s1", "--node-id", b).data["path"]
    assert [(e["message_id"], e["soft_deleted"]) for e in path] == [(b, True), (a, False)]
    # a repeat is an idempotent success that writes nothing: it answers for the first event,
    # still pending (the logger is down)
    again = project.cli("delete", b, "--mode", "soft")
    assert again.rc == 0 and again.data["pending"] is True, again.stdout
    assert again.data["file"] == deleted.data["file"]
    found = project.cli("search", "--query", "second", "--scope", "session", "--target", "s1",
                        "--ranking", "bm25").data
    assert b not in [m["message"]["message_id"] for m in found["matches"]]
    marked = project.cli("mark", a, c)
    assert marked.rc == 0 and marked.data["marked"] is True
    assert _texts(project, "s1") == []
    assert project.cli("mark", a, b, c, "--unmark").rc == 0
    assert _texts(project, "s1") == ["first", "second", "third"]


def test_mark_is_all_or_nothing_and_refuses_an_unknown_message(project):
    a = _write(project, "s1", "first")
    before = project.final_files("s1")
    unknown = "00000000-0000-4000-8000-000000000000"
    result = project.cli("mark", a, unknown)
    assert result.rc == 5 and result.code == "MESSAGE_UNKNOWN"
    assert project.final_files("s1") == before
    assert _texts(project, "s1") == ["first"]
    twice = project.cli("mark", a, a)
    assert twice.rc == 2


def test_a_write_toward_a_deleted_message_is_refused_and_writes_nothing(project):
    a = _write(project, "s1", "first")
    b = _write(project, "s1", "second")
    assert project.cli("delete", a, "--mode", "soft").rc == 0
    assert project.cli("mark", b).rc == 0
    before = project.final_files("s1")
    for extra in (["--relation", f"reply:{a}"], ["--corrects", a], ["--relation",
                                                                   f"influence:{b}"]):
        result = project.cli(*message_args("s1", "late"), *extra)
        assert result.rc == 1 and result.code == "MESSAGE_DELETED", result.stdout
    assert project.final_files("s1") == before


def test_hard_delete_purges_the_text_from_every_file(project):
    keep = _write(project, "s1", "kept words")
    secret = _write(project, "s1", SECRET)
    # the derived index and a sync attempt have seen it
    project.cli("search", "--query", "password", "--scope", "session", "--target", "s1",
                "--ranking", "bm25")
    project.cli("sync")
    assert _holding(project.store, SECRET.encode())
    result = project.cli("delete", secret, "--mode", "hard")
    assert result.rc == 0, result.stdout
    assert result.data["purged"] is True and result.data["pending"] is True
    assert _holding(project.store, SECRET.encode()) == []
    assert _holding(project.store, b"hunter2") == []
    assert project.cli("get", secret).code == "MESSAGE_UNKNOWN"
    assert _texts(project, "s1") == ["kept words"]
    assert project.cli("get", keep).data["text"] == "kept words"
    # the event that carries it holds the id, never the text
    event = [n for n in project.final_files("s1") if n.endswith(".ses")][-1]
    with open(os.path.join(project.store, "s1", event), "rb") as handle:
        record = handle.read()
    assert secret.encode() in record and b"hard" in record and b"hunter2" not in record
    verify = project.cli("verify")
    assert verify.rc == 0, verify.stdout


def test_hard_delete_of_a_referenced_message_is_refused_and_changes_nothing(project):
    a = _write(project, "s1", "first")
    b = _write(project, "s1", "second", "--corrects", a)
    before = project.final_files("s1")
    result = project.cli("delete", a, "--mode", "hard")
    assert result.rc == 1 and result.code == "MESSAGE_REFERENCED"
    assert b in result.out["error"]["details"]["referenced_by"]
    assert project.final_files("s1") == before


def test_session_delete_asks_twice_then_purges_everything(project):
    _write(project, "s1", SECRET)
    _write(project, "s1", "other words")
    slip = project.cli("session", "delete", "--session-id", "s1", "--confirm", "s2")
    assert slip.rc == 2 and _holding(project.store, SECRET.encode())
    result = project.cli("session", "delete", "--session-id", "s1", "--confirm", "s1")
    assert result.rc == 0 and result.data["purged"] is True, result.stdout
    assert _holding(project.store, SECRET.encode()) == []
    assert _holding(project.store, b"other words") == []
    assert project.cli("sessions").data["sessions"] == []
    refused = project.cli(*message_args("s1", "after"))
    assert refused.rc == 1 and refused.code == "SESSION_UNKNOWN"
    assert project.cli(*open_args("s1")).rc == 0  # a new session of the same id
    _write(project, "s1", "anew")
    assert _texts(project, "s1") == ["anew"]


KILLER = """
import os, signal, sys
calls = {"n": 0}
limit = int(os.environ["KILL_AT"])
real = os.unlink
def unlink(*args, **kwargs):
    calls["n"] += 1
    if calls["n"] == limit:
        os.kill(os.getpid(), signal.SIGKILL)
    return real(*args, **kwargs)
os.unlink = unlink
from agent_memory.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.slow
@pytest.mark.parametrize("what", ["message", "session"])
def test_a_purge_killed_at_any_unlink_is_completed_by_the_next_command(tmp_path, what):
    """kill -9 at the 1st, 2nd, ... unlink of a purge, until one runs to its end: each time
    the next command finishes it, the text is gone and the delete is recorded once."""
    for kill_at in range(1, 40):
        case = tmp_path / f"k{kill_at}"
        case.mkdir()
        project = make_project(case)
        assert project.cli(*open_args("s1")).rc == 0
        secret = _write(project, "s1", SECRET)
        _write(project, "s1", "kept words")
        project.cli("search", "--query", "password", "--scope", "session", "--target", "s1",
                    "--ranking", "bm25")
        argv = (["delete", secret, "--mode", "hard"] if what == "message"
                else ["session", "delete", "--session-id", "s1", "--confirm", "s1"])
        done = subprocess.run([sys.executable, "-c", KILLER, *argv], cwd=project.root,
                              env={**project.env, "KILL_AT": str(kill_at)},
                              capture_output=True)
        killed = done.returncode == -signal.SIGKILL
        after = project.cli("read", "--session-id", "s1", "--show-deleted")
        assert _holding(project.store, SECRET.encode()) == [], (kill_at, done.stderr)
        events = [n for n in project.final_files("s1") if n.endswith(".ses")]
        if what == "message":
            assert [m["text"] for m in after.data["messages"]] == ["kept words"]
            kinds = [open(os.path.join(project.store, "s1", n), "rb").read() for n in events]
            assert sum(b'"delete"' in k for k in kinds) == 1
        else:  # the session is gone: unknown, as the logger answers for a deleted session
            assert (after.rc, after.code) == (1, "SESSION_UNKNOWN")
            assert len(events) == 1
            assert _holding(project.store, b"kept words") == []
        assert not os.listdir(os.path.join(project.store, ".purge"))
        if not killed:
            assert done.returncode == 0, done.stdout
            assert kill_at > 1
            return
    pytest.fail("the purge never ran to its end")
