"""Hostile and damaged files in the store: every command answers (none hangs on a FIFO or
follows a symlink), `status` and `verify` report them, `sync` and the watcher set them aside
with a reason, and the good messages beside them still reach the logger."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess

import pytest

from amtest import CLI, message_args, open_args, wait_for
from fleetutil import read_all

FIFO_ID = "11111111-1111-4111-8111-111111111111"
LINK_ID = "22222222-2222-4222-8222-222222222222"
GARBAGE_ID = "33333333-3333-4333-8333-333333333333"
TRUNCATED_ID = "44444444-4444-4444-8444-444444444444"
MISNAMED_ID = "55555555-5555-4555-8555-555555555555"
HUGE_ID = "66666666-6666-4666-8666-666666666666"


def plant(project, sid: str) -> dict[str, str]:
    """Two good messages, then one of each kind of damage; {kind: file name}."""
    assert project.cli("--store", "file", *open_args(sid)).rc == 0
    good = [project.cli("--store", "file", *message_args(sid, f"good {i}")).data
            for i in range(2)]
    session = os.path.join(project.store, sid)
    first = os.path.join(project.root, good[0]["file"])
    record = open(first, "rb").read()
    planted = {
        "fifo": f"2026-01-01T00.00.00.000-{FIFO_ID}.msg",
        "symlink": f"2026-01-01T00.00.00.001-{LINK_ID}.msg",
        "garbage": f"2026-01-01T00.00.00.002-{GARBAGE_ID}.msg",
        "truncated": f"2026-01-01T00.00.00.003-{TRUNCATED_ID}.msg",
        "misnamed": f"2026-01-01T00.00.00.004-{MISNAMED_ID}.msg",
        "huge": f"2026-01-01T00.00.00.005-{HUGE_ID}.msg",
    }
    os.mkfifo(os.path.join(session, planted["fifo"]))
    os.symlink("/etc/passwd", os.path.join(session, planted["symlink"]))
    with open(os.path.join(session, planted["garbage"]), "wb") as handle:
        handle.write(b"\x00\xffnot json at all")
    with open(os.path.join(session, planted["truncated"]), "wb") as handle:
        handle.write(record[: len(record) // 2])
    with open(os.path.join(session, planted["misnamed"]), "wb") as handle:
        handle.write(record)  # a valid record whose id is not the name's
    with open(os.path.join(session, planted["huge"]), "wb") as handle:
        handle.truncate(17 << 20)
    # a vector of the first good message whose dimension disagrees with its values
    vector = first[:-len(".msg")] + ".emb"
    with open(vector, "w") as handle:
        json.dump({"format_version": 1, "message_id": good[0]["message_id"],
                   "model": "hash-1024", "dimension": 1024, "embedding": [0.5, 0.5, 0.5]},
                  handle)
    planted["vector"] = os.path.basename(vector)
    # and one of the second whose values are not numbers JSON allows
    nan_vector = os.path.join(project.root, good[1]["file"])[:-len(".msg")] + ".emb"
    with open(nan_vector, "w") as handle:
        handle.write('{"format_version": 1, "message_id": "%s", "model": "hash-1024", '
                     '"dimension": 2, "embedding": [NaN, 0.5]}' % good[1]["message_id"])
    planted["nan_vector"] = os.path.basename(nan_vector)
    elsewhere = os.path.join(os.path.dirname(project.root), "elsewhere")
    os.mkdir(elsewhere)
    os.symlink(elsewhere, os.path.join(project.store, "linked-session"))
    planted["good"] = [g["message_id"] for g in good]
    return planted


def test_hostile_files_are_reported_set_aside_and_block_nothing(synced_project, fleet,
                                                                unique_session_id):
    p, sid = synced_project, unique_session_id
    planted = plant(p, sid)
    # every command answers within its timeout (a FIFO would block a plain open forever)
    status = p.cli("status", timeout=60)
    assert status.rc == 0
    session = next(s for s in status.data["sessions"] if s["session_id"] == sid)
    unsafe = {u["file"]: u["reason"] for u in session["unsafe"]}
    assert set(unsafe) == {planted["fifo"], planted["symlink"], planted["huge"]}, unsafe
    assert status.data["unsafe_entries"] == [
        {"entry": ".agent-memory/linked-session",
         "reason": "a symbolic link, named like a session"}]
    read = p.cli("--store", "file", "read", "--session-id", sid, timeout=60)
    assert read.rc == 0 and len(read.data["messages"]) == 2
    warned = {os.path.basename(w["file"]) for w in read.data["warnings"]}
    assert warned >= {planted[k] for k in ("fifo", "symlink", "garbage", "truncated", "huge")}
    assert p.cli("--store", "file", "read", "--session-id", "linked-session").rc == 3

    verify = p.cli("verify", timeout=60)
    assert verify.rc == 1 and verify.code == "STORE_DAMAGED", verify.stdout
    damaged = {os.path.basename(d["file"]) for d in verify.out["error"]["details"]["damage"]}
    assert damaged == {planted[k] for k in ("fifo", "symlink", "garbage", "truncated",
                                            "misnamed", "huge", "vector", "nan_vector")} | {
                                                "linked-session"}

    synced = p.cli("--no-agent", "sync", timeout=120)
    assert synced.rc == 0, synced.stdout
    report = synced.data["sessions"][0]
    assert report["imported"] == 2 and report["pending"] == 0
    reasons = {os.path.basename(q["file"]): q["reason"] for q in report["quarantined"]}
    assert reasons == {planted["fifo"]: "unsafe", planted["symlink"]: "unsafe",
                       planted["huge"]: "unsafe", planted["garbage"]: "unreadable",
                       planted["truncated"]: "unreadable", planted["misnamed"]: "unreadable",
                       planted["vector"]: "unreadable", planted["nan_vector"]: "unreadable"}
    assert any("linked-session" in w for w in synced.data["warnings"])
    quarantine = os.path.join(p.store, ".quarantine")
    for name in reasons:
        assert os.path.lexists(os.path.join(quarantine, sid, name))
        with open(os.path.join(quarantine, sid, name + ".reason.json")) as handle:
            assert json.load(handle)["reason"] == reasons[name]
    assert os.path.islink(os.path.join(quarantine, ".unsafe", "linked-session"))
    assert [m["message_id"] for m in read_all(fleet, sid)] == planted["good"]
    # the damaged vectors were set aside alone: their messages went on to .imported/
    for name in (planted["vector"], planted["nan_vector"]):
        assert os.path.exists(os.path.join(p.store, ".imported", sid, name[:-4] + ".msg"))
    after_status = next(s for s in p.cli("status").data["sessions"] if s["session_id"] == sid)
    assert after_status["quarantined"] == len(reasons)
    after = p.cli("verify")
    assert after.rc == 0 and after.data["damage"] == [], after.stdout
    assert after.data["checked"]["quarantined"] == len(reasons) - 2  # vectors are not counted


def test_the_watcher_sets_hostile_files_aside_and_keeps_serving(synced_project, fleet,
                                                                unique_session_id):
    p, sid = synced_project, unique_session_id
    planted = plant(p, sid)
    watcher = p.popen("sync", "--watch")
    try:
        wait_for(lambda: not os.path.lexists(os.path.join(p.store, sid, planted["fifo"])),
                 "the watcher's first round to set the FIFO aside", proc=watcher)
        written = p.cli(*message_args(sid, "after the damage"), "--wait", "30")
        assert written.rc == 0 and written.out["store"] == "logger", written.stdout
        ids = [m["message_id"] for m in read_all(fleet, sid)]
        assert ids == planted["good"] + [written.data["message_id"]]
    finally:
        watcher.send_signal(signal.SIGTERM)
        out, _err = watcher.communicate(timeout=60)
    assert watcher.returncode == 0 and json.loads(out)["success"] is True


SETPRIV = shutil.which("setpriv")


def without_dac_override(project, *args: str):
    """Run the CLI as this user minus the capabilities that let root ignore file modes, so a
    mode-000 directory is as unopenable to it as to any other user. (One JSON line, as always.)"""
    done = subprocess.run([SETPRIV, "--bounding-set=-dac_override,-dac_read_search", CLI,
                           "--config", project.config, *args], cwd=project.root,
                          env=project.env, capture_output=True, timeout=120)
    return done.returncode, json.loads(done.stdout)


@pytest.mark.skipif(os.getuid() != 0 or SETPRIV is None,
                    reason="needs root and setpriv to drop the mode-bypassing capabilities")
def test_an_unopenable_session_directory_is_reported_and_blocks_nothing(synced_project, fleet,
                                                                        unique_session_id):
    p, sid = synced_project, unique_session_id
    locked = sid + "-locked"
    for session in (locked, sid):
        assert p.cli("--store", "file", *open_args(session)).rc == 0
        assert p.cli("--store", "file", *message_args(session, "kept")).rc == 0
    locked_dir = os.path.join(p.store, locked)
    os.chmod(locked_dir, 0)
    try:
        rc, status = without_dac_override(p, "status")
        assert rc == 0, status
        assert [(u["entry"], "permission denied" in u["reason"])
                for u in status["data"]["unsafe_entries"]] == [
            (f".agent-memory/{locked}", True)]
        rc, verify = without_dac_override(p, "verify")
        assert rc == 1 and [d["file"] for d in verify["error"]["details"]["damage"]] == [
            f".agent-memory/{locked}"]
        rc, read = without_dac_override(p, "--store", "file", "read", "--session-id", locked)
        assert (rc, read["error"]["code"]) == (3, "STORE_PERMISSION_DENIED"), read
        rc, written = without_dac_override(p, "--store", "file",
                                           *message_args(locked, "refused"))
        assert (rc, written["error"]["code"]) == (3, "STORE_PERMISSION_DENIED"), written
        rc, listed = without_dac_override(p, "--store", "file", "sessions")
        assert rc == 0 and sid in [s["session_id"] for s in listed["data"]["sessions"]]
        rc, found = without_dac_override(p, "--store", "file", "search", "--query", "kept",
                                         "--scope", "all_projects", "--ranking", "bm25")
        assert rc == 0 and [m["session_id"] for m in found["data"]["matches"]] == [sid], found

        rc, synced = without_dac_override(p, "--no-agent", "sync")
        assert rc == 0, synced
        assert [s["session_id"] for s in synced["data"]["sessions"]] == [sid]
        assert any(w.startswith(f"skipped .agent-memory/{locked}")
                   for w in synced["data"]["warnings"]), synced
        assert [m["text"] for m in read_all(fleet, sid)] == ["kept"]

        # the watcher too: it keeps serving beside the directory it may not watch
        watcher = subprocess.Popen([SETPRIV, "--bounding-set=-dac_override,-dac_read_search",
                                    CLI, "--config", p.config, "sync", "--watch"],
                                   cwd=p.root, env=p.env, stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL)
        try:
            rc, later = without_dac_override(p, *message_args(sid, "later"), "--wait", "30")
            assert rc == 0 and later["store"] == "logger", later
            assert watcher.poll() is None
        finally:
            watcher.send_signal(signal.SIGTERM)
            out, _err = watcher.communicate(timeout=60)
        assert watcher.returncode == 0 and json.loads(out)["success"] is True
    finally:
        os.chmod(locked_dir, 0o700)
    assert os.listdir(locked_dir)  # left in place, untouched: its message is still there
    rc, synced = without_dac_override(p, "--no-agent", "sync")  # the mode fixed: it goes too
    assert rc == 0 and [m["text"] for m in read_all(fleet, locked)] == ["kept"], synced
