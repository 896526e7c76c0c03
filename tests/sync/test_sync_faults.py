"""Fault injection: the logger going down mid-sync, sync killed with SIGKILL at many points,
two syncs at once. After each, a clean sync leaves every message exactly once in the logger
and nothing pending."""

import random
import signal
import time

import pytest

from amtest import make_project, message_args, open_args
from fleetutil import read_all

SESSIONS = 4
PER_SESSION = 30


def prepare(tmp_path, fleet):
    """A project with SESSIONS sessions of PER_SESSION pending messages each."""
    p = make_project(tmp_path, config=str(fleet.config_path))
    expected = {}
    for s in range(SESSIONS):
        sid = f"fault-{s}-{int(time.time() * 1000)}"
        assert p.cli("--store", "file", *open_args(sid)).rc == 0
        expected[sid] = [p.cli("--store", "file", *message_args(sid, f"m {i} of {sid}"))
                         .data["message_id"] for i in range(PER_SESSION)]
    return p, expected


def imported_count(p, expected) -> int:
    return sum(len([n for n in p.final_files(sid, ".imported") if n.endswith(".msg")])
               for sid in expected)


def assert_exactly_once(p, fleet, expected) -> None:
    for sid, ids in expected.items():
        assert [m["message_id"] for m in read_all(fleet, sid)] == ids, sid
        assert p.final_files(sid) == [], sid
        assert len([n for n in p.final_files(sid, ".imported") if n.endswith(".msg")]) == len(ids)


@pytest.mark.slow
def test_logger_down_in_the_middle_of_a_sync(tmp_path, fleet_factory):
    private = fleet_factory()
    p, expected = prepare(tmp_path, private)
    private.control.set_faults("logger", delay=0.15)
    proc = p.popen("sync", "--batch-items", "10")
    deadline = time.monotonic() + 60
    while imported_count(p, expected) == 0:
        assert proc.poll() is None and time.monotonic() < deadline, "sync ended too soon"
        time.sleep(0.02)
    private.control.go_down("logger")
    out, _err = proc.communicate(timeout=120)
    assert proc.returncode == 4, out
    moved = imported_count(p, expected)
    assert 0 < moved < SESSIONS * PER_SESSION
    private.control.come_up("logger")
    private.control.clear_faults("logger")
    final = p.cli("sync")
    assert final.rc == 0, final.stdout
    assert final.data["totals"]["imported"] == SESSIONS * PER_SESSION - moved
    assert_exactly_once(p, private, expected)


@pytest.mark.slow
def test_sync_killed_at_many_points_then_a_clean_sync(tmp_path, fleet_factory):
    private = fleet_factory()
    p, expected = prepare(tmp_path, private)
    private.control.set_faults("logger", delay=0.05)
    rng = random.Random(20261202)
    kills = 0
    for _ in range(8):
        proc = p.popen("sync", "--batch-items", "7")
        time.sleep(rng.uniform(0.3, 1.5))  # past the client import: inside submit/poll/move
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.communicate(timeout=60)
        if imported_count(p, expected) == SESSIONS * PER_SESSION:
            break
    assert kills >= 3
    private.control.clear_faults("logger")
    final = p.cli("sync")
    assert final.rc == 0, final.stdout
    assert_exactly_once(p, private, expected)


@pytest.mark.slow
def test_two_syncs_at_once(tmp_path, fleet_factory):
    private = fleet_factory()
    p, expected = prepare(tmp_path, private)
    procs = [p.popen("sync", "--batch-items", "20") for _ in range(2)]
    outputs = [proc.communicate(timeout=120) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], outputs
    assert_exactly_once(p, private, expected)
