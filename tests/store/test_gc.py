"""`gc --older-than`: only confirmed messages and vectors old enough, only records of our own
making; pending, quarantined, events and strangers' files stay."""

from __future__ import annotations

import os
import time

from amtest import message_args, open_args


def age(path: str, seconds: float) -> None:
    """Make a file look `seconds` old (its mtime; the ctime check uses the later of both)."""
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_gc_removes_only_old_confirmed_records_of_its_own_making(synced_project, fleet,
                                                                 unique_session_id):
    p, sid = synced_project, unique_session_id
    assert p.cli("--no-agent", *open_args(sid)).rc == 0
    for i in range(3):
        assert p.cli("--no-agent", *message_args(sid, f"confirmed {i}")).out["store"] == "logger"
    pending = p.cli("--store", "file", *message_args(sid, "still pending")).data
    imported = os.path.join(p.store, ".imported", sid)
    before = sorted(os.listdir(imported))
    assert sum(n.endswith(".msg") for n in before) == 3
    assert sum(n.endswith(".emb") for n in before) == 3
    stranger = os.path.join(imported, "2026-01-01T00.00.00.000-"
                                      "77777777-7777-4777-8777-777777777777.msg")
    with open(stranger, "w") as handle:
        handle.write("not ours")
    notes = os.path.join(imported, "notes.txt")
    with open(notes, "w") as handle:
        handle.write("a user's note")

    bad = p.cli("gc", "--older-than", "soon")
    assert bad.rc == 2 and "duration" in bad.out["error"]["message"]
    # ctime is set by the move and cannot be moved back: nothing is old enough yet
    fresh = p.cli("gc", "--older-than", "1h")
    assert fresh.rc == 0 and fresh.data["removed_files"] == 0
    time.sleep(1.2)
    dry = p.cli("gc", "--older-than", "1s", "--dry-run")
    assert dry.data["removed_files"] == 6 and dry.data["dry_run"] is True
    assert sorted(os.listdir(imported)) == sorted(before + [os.path.basename(stranger),
                                                            "notes.txt"])
    done = p.cli("gc", "--older-than", "1s")
    assert done.rc == 0 and done.data["removed_files"] == 6, done.stdout
    assert done.data["kept_unrecognised"] == [
        f".agent-memory/.imported/{sid}/{os.path.basename(stranger)}"]
    left = sorted(os.listdir(imported))
    assert [n for n in left if n.endswith(".ses")] and not [
        n for n in left if n.endswith(".emb")]
    assert os.path.basename(stranger) in left and "notes.txt" in left
    assert os.path.exists(os.path.join(p.root, pending["file"]))  # pending never touched
    damage = p.cli("verify").out["error"]["details"]["damage"]
    assert [d["file"] for d in damage] == done.data["kept_unrecognised"]  # only the stranger
