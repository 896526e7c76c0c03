"""`agent-memory status` against stores whose contents the test knows, with no watcher, a
watcher's stale state, a lock held by some other process, and --probe both ways."""

import json
import os
import subprocess
import sys
import time

from amtest import make_project
from agent_memory.outbox.store import IMPORTED, QUARANTINED, Store
from watchutil import fill, wait_for


def _pending_sizes(p, sid):
    folder = os.path.join(p.store, sid)
    return {n: os.path.getsize(os.path.join(folder, n)) for n in p.final_files(sid)}


def test_status_figures_of_a_known_store(tmp_path):
    p = make_project(tmp_path)  # no configuration: the file store only
    expected = fill(p, {"alpha": 3, "beta": 4})
    now = time.time()
    # alpha: everything pending; the oldest file was written 100 s ago
    alpha = sorted(p.final_files("alpha"))
    os.utime(os.path.join(p.store, "alpha", alpha[0]), (now - 100, now - 100))
    alpha_bytes = sum(_pending_sizes(p, "alpha").values())
    # beta: 2 messages imported (one of them with its vector), 1 quarantined, 1 pending + event
    with Store(p.root) as store:
        files = store.files("beta", ".msg", ("pending",))
        first = files[0]
        store.append_vector("beta", first.name, {"format_version": 1,
                                                 "message_id": first.item_id, "model": "m",
                                                 "dimension": 2, "embedding": [0.0, 1.0]})
        vector = store.files("beta", ".emb", ("pending",))
        store.move([first, *vector, files[1]], IMPORTED)
        store.move([files[2]], QUARANTINED)
    beta_bytes = sum(_pending_sizes(p, "beta").values())

    result = p.cli("status")
    assert result.rc == 0 and result.out["store"] == "file", result.stdout
    data = result.data
    by_id = {s["session_id"]: s for s in data["sessions"]}
    assert by_id["alpha"]["pending_messages"] == 3 and by_id["alpha"]["pending_events"] == 1
    assert by_id["alpha"]["pending_bytes"] == alpha_bytes
    assert by_id["alpha"]["missing_vectors"] == 3 and by_id["alpha"]["quarantined"] == 0
    assert 100 <= by_id["alpha"]["oldest_pending_age_s"] < 100 + 600
    assert by_id["beta"]["pending_messages"] == 1 and by_id["beta"]["pending_events"] == 1
    assert by_id["beta"]["pending_bytes"] == beta_bytes
    assert by_id["beta"]["quarantined"] == 1
    assert by_id["beta"]["missing_vectors"] == 2  # the pending one and one imported one
    totals = data["totals"]
    assert totals["pending_messages"] == 4 and totals["pending_events"] == 2
    assert totals["pending_bytes"] == alpha_bytes + beta_bytes
    assert totals["quarantined"] == 1 and totals["missing_vectors"] == 5
    assert totals["oldest_pending_age_s"] == by_id["alpha"]["oldest_pending_age_s"]
    assert data["watcher"] == {"alive": False, "pid": None, "lock_holder_pid": None,
                               "state": None}
    assert len(expected["beta"]) == 4


def test_status_does_not_believe_a_stale_state_and_names_another_lock_holder(tmp_path):
    p = make_project(tmp_path)
    fill(p, {"gamma": 1})
    # what a watcher killed with SIGKILL leaves behind: a state naming a dead pid
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    with open(os.path.join(p.store, ".watcher.json"), "w") as handle:
        json.dump({"format_version": 1, "pid": dead.pid, "status": "idle",
                   "backlog": {"pending_messages": 0}}, handle)
    result = p.cli("status")
    watcher = result.data["watcher"]
    assert watcher["alive"] is False and watcher["lock_holder_pid"] is None
    assert watcher["state"]["stale"] is True and watcher["state"]["pid"] == dead.pid
    assert result.data["totals"]["pending_messages"] == 1  # from the files, not the state

    # the lock held by a process that is not a watcher (a one-shot sync, say)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from agent_memory.sync.lock import SyncLock; "
         "lock = SyncLock(sys.argv[1]); assert lock.acquire(5); print('held', flush=True); "
         "time.sleep(120)", p.store], stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline().strip() == b"held"
        result = p.cli("status")
        watcher = result.data["watcher"]
        assert watcher["alive"] is False and watcher["lock_holder_pid"] == holder.pid
        assert "not a watcher" in watcher["lock_holder"]
    finally:
        holder.kill()
        holder.wait()
    wait_for(lambda: p.cli("status").data["watcher"]["lock_holder_pid"] is None,
             "the lock freed by the kill")


def test_status_probe(tmp_path, fleet, offline_config):
    (tmp_path / "up").mkdir()
    up = make_project(tmp_path / "up", config=str(fleet.config_path))
    result = up.cli("status", "--probe")
    assert result.rc == 0, result.stdout
    probe = result.data["probe"]
    assert probe["logger"]["answers"] is True, probe
    assert probe["embedder"]["answers"] is True, probe
    (tmp_path / "down").mkdir()
    down = make_project(tmp_path / "down", config=offline_config)
    result = down.cli("status", "--probe")
    assert result.rc == 0, result.stdout
    probe = result.data["probe"]
    assert probe["logger"]["answers"] is False and probe["logger"]["error"]
    assert probe["embedder"]["answers"] is False and probe["embedder"]["error"]
    plain = down.cli("status")
    assert "probe" not in plain.data
