"""No room for one more file: a full disk (a small tmpfs) and the configured outbox cap. A clean
error, exit 8, nothing half-written, and the store usable again once there is room."""

from __future__ import annotations

import json
import os

from amtest import make_project, message_args, open_args


def final_and_temporary(store: str, sid: str) -> tuple[list[str], list[str]]:
    names = os.listdir(os.path.join(store, sid))
    return ([n for n in names if n.endswith((".msg", ".ses"))],
            [n for n in names if n.startswith(".tmp-")])


def test_a_full_disk_is_exit_8_with_nothing_half_written(small_disk, unique_session_id):
    project = make_project(small_disk)
    sid = unique_session_id
    assert project.cli("--store", "file", *open_args(sid)).rc == 0
    filler = os.path.join(str(small_disk), "filler")
    with open(filler, "wb") as handle:  # leave a few KiB
        free = os.statvfs(str(small_disk))
        handle.write(b"x" * max(0, free.f_bavail * free.f_frsize - 24 * 1024))
    written, refused = [], None
    for i in range(200):
        result = project.cli("--store", "file", *message_args(sid, f"message {i} " + "y" * 900))
        if result.rc != 0:
            refused = result
            break
        written.append(result.data["message_id"])
    assert refused is not None, "the disk never filled"
    assert refused.rc == 8 and refused.code == "NO_SPACE", refused.stdout
    assert "nothing was written" in refused.out["error"]["message"]
    finals, temporaries = final_and_temporary(project.store, sid)
    assert temporaries == [] and len([n for n in finals if n.endswith(".msg")]) == len(written)
    os.unlink(filler)
    again = project.cli("--store", "file", *message_args(sid, "room again"))
    assert again.rc == 0, again.stdout
    assert project.cli("verify").rc == 0  # every file whole


def test_the_outbox_cap_refuses_clearly_and_never_drops(tmp_path, offline_config,
                                                        unique_session_id):
    document = json.load(open(offline_config))
    document["outbox"] = {"max_pending_messages": 3}
    capped = tmp_path / "capped.json"
    capped.write_text(json.dumps(document))
    project = make_project(tmp_path, config=str(capped))
    sid = unique_session_id
    assert project.cli("--store", "file", *open_args(sid)).rc == 0
    for i in range(3):  # the logger is away: each waits in the outbox
        result = project.cli(*message_args(sid, f"waiting {i}"))
        assert result.rc == 0 and result.out["store"] == "file", result.stdout
    full = project.cli(*message_args(sid, "one too many"))
    assert full.rc == 8 and full.code == "OUTBOX_FULL", full.stdout
    assert "outbox.max_pending_messages is 3" in full.out["error"]["message"]
    assert full.out["error"]["details"]["pending_messages"] == 3
    assert len([n for n in project.final_files(sid) if n.endswith(".msg")]) == 3

    document["outbox"] = {"max_pending_bytes": 2000}
    capped.write_text(json.dumps(document))
    big = project.cli("--store", "file", *message_args(sid, "z" * 5000))
    assert big.rc == 8 and "outbox.max_pending_bytes is 2000" in big.out["error"]["message"]
    document["outbox"] = {"max_pending_bytes": 0}
    capped.write_text(json.dumps(document))
    invalid = project.cli("--store", "file", *message_args(sid, "x"))
    assert invalid.rc == 6 and "outbox.max_pending_bytes" in invalid.stdout
