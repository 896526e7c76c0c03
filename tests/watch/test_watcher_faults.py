"""The watcher under faults, on private fleets: the logger down for a while then back, SIGTERM
in the middle of a batch, kill -9 in the middle of a drain. After each: every message exactly
once in the logger, in order, and nothing left pending."""

import signal
import time

import pytest

from amtest import make_project, message_args, open_args
from fleetutil import read_all
from watchutil import all_imported, count_final, fill, read_state, wait_for

FAST_BACKOFF = ("--backoff-initial", "0.2", "--backoff-max", "1", "--probe-interval", "0.2")


def logger_ids(fleet, expected):
    out = {}
    for sid in expected:
        try:
            out[sid] = [m["message_id"] for m in read_all(fleet, sid)]
        except Exception as exc:  # a session the logger does not know yet holds nothing
            assert "SESSION_UNKNOWN" in str(exc), exc
            out[sid] = []
    return out


def assert_exactly_once(p, fleet, expected):
    assert logger_ids(fleet, expected) == expected
    assert all_imported(p, expected)


def imported_total(p, expected):
    return sum(count_final(p, sid, ".imported") for sid in expected)


@pytest.mark.slow
def test_logger_down_for_a_while_then_back(tmp_path, fleet_factory, watchers):
    private = fleet_factory()
    p = make_project(tmp_path, config=str(private.config_path))
    p.env["AGENT_MEMORY_EMBED_BUDGET"] = "0"  # vectors are not the subject here
    sid = f"down-{int(time.time() * 1000)}"
    assert p.cli(*open_args(sid)).rc == 0  # the logger is up: forwarded inline
    watcher = watchers.start(p, *FAST_BACKOFF, "--no-backfill").wait_ready()
    private.control.go_down("logger")
    down_since = time.monotonic()
    ids = []
    for i in range(5):
        result = p.cli(*message_args(sid, f"while the logger is down {i}"), "--wait", "0.2")
        assert result.rc == 0 and result.out["store"] == "file", result.stdout
        ids.append(result.data["message_id"])
    expected = {sid: ids + fill(p, {sid: 20}, open_sessions=False)[sid]}
    state = wait_for(lambda: (s := read_state(p)) and s["status"] == "backing_off" and s,
                     "the watcher to back off")
    assert state["last_error"]["kind"] == "unreachable"
    status = p.cli("status").data
    assert status["watcher"]["alive"] is True and status["watcher"]["pid"] == watcher.pid
    assert status["totals"]["pending_messages"] == 25
    time.sleep(2.0)  # stay down a while: the watcher must not spin meanwhile
    failures = read_state(p)["last_error"]["consecutive_failures"]
    elapsed = time.monotonic() - down_since
    # capped at 1 s with equal jitter: each failed round waits at least 0.1 s, later 0.5 s
    assert failures <= elapsed / 0.5 + 6, (failures, elapsed)
    private.control.come_up("logger")
    wait_for(lambda: all_imported(p, expected), "the backlog drained once the logger is back")
    assert_exactly_once(p, private, expected)
    state = wait_for(lambda: (s := read_state(p)) and s["status"] == "idle" and s,
                     "the watcher idle again")
    assert state["backlog"]["pending_messages"] == 0
    assert watcher.stop() == 0
    events = [line["event"] for line in watcher.log_lines()]
    assert "logger_unreachable" in events and "logger_back" in events


def _drain_setup(tmp_path, fleet_factory, tag):
    private = fleet_factory()
    p = make_project(tmp_path, config=str(private.config_path))
    stamp = int(time.time() * 1000)
    expected = fill(p, {f"{tag}-{s}-{stamp}": 30 for s in range(3)})
    private.control.set_faults("logger", delay=0.15)  # every batch takes a while
    return private, p, expected


@pytest.mark.slow
def test_sigterm_during_a_batch_loses_and_duplicates_nothing(tmp_path, fleet_factory, watchers):
    private, p, expected = _drain_setup(tmp_path, fleet_factory, "term")
    watcher = watchers.start(p, "--batch-items", "5", "--no-backfill")
    wait_for(lambda: imported_total(p, expected) > 0, "the first batch confirmed",
             proc=watcher.proc, err=watcher)
    assert watcher.stop(signal.SIGTERM) == 0
    assert watcher.summary["data"]["reason"] == "SIGTERM"
    moved = imported_total(p, expected)
    assert 0 < moved < 90, "the watcher should stop after the batch in flight, not drain all"
    assert watcher.summary["data"]["imported"] == moved
    # what moved is in the logger; nothing is there twice
    in_logger = logger_ids(private, expected)
    for sid, ids in expected.items():
        assert in_logger[sid] == ids[:len(in_logger[sid])]
        assert count_final(p, sid, ".imported") <= len(in_logger[sid])
    assert read_state(p)["status"] == "stopped"
    assert p.cli("status").data["watcher"]["alive"] is False
    private.control.clear_faults("logger")
    again = watchers.start(p, "--no-backfill").wait_ready()
    wait_for(lambda: all_imported(p, expected), "a new watcher drains the rest")
    assert_exactly_once(p, private, expected)
    assert again.stop() == 0


@pytest.mark.slow
def test_kill_9_during_a_drain_then_a_new_watcher(tmp_path, fleet_factory, watchers):
    private, p, expected = _drain_setup(tmp_path, fleet_factory, "kill")
    watcher = watchers.start(p, "--batch-items", "5", "--no-backfill")
    wait_for(lambda: imported_total(p, expected) > 0, "the first batch confirmed",
             proc=watcher.proc, err=watcher)
    watcher.stop(signal.SIGKILL)
    pending = sum(count_final(p, sid, "") for sid in expected)
    status = p.cli("status").data
    assert status["watcher"]["alive"] is False and status["watcher"]["lock_holder_pid"] is None
    assert status["watcher"]["state"]["stale"] is True
    assert status["totals"]["pending_messages"] == pending > 0
    # no live watcher: a write forwards inline again (its whole session, in order)
    private.control.clear_faults("logger")
    sid = next(iter(expected))
    extra = p.cli(*message_args(sid, "after the kill"))
    assert extra.rc == 0 and extra.out["store"] == "logger", extra.stdout
    expected[sid].append(extra.data["message_id"])
    again = watchers.start(p, "--no-backfill").wait_ready()
    wait_for(lambda: all_imported(p, expected), "the new watcher drains the rest")
    assert_exactly_once(p, private, expected)
    assert again.stop() == 0
