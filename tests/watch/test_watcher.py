"""The watcher against the shared reference fleet: writes reach the logger through it (the
agent's socket), a second watcher is refused, the one-shot sync steps aside, files written while no
watcher ran are picked up, the periodic rescan runs, and a text the embedder refuses is not sent
to it again."""

import os
import signal
import time

from amtest import clean_env, message_args, open_args, run_cli
from fleetutil import read_all
from watchutil import all_imported, count_final, fill, read_state, wait_for


def no_fleet_client_import(project, *args):
    """Run the CLI with -X importtime; the result and whether neither fleet client (the
    logger's nor the embedder's) was imported."""
    env = clean_env(project.home, PYTHONPROFILEIMPORTTIME="1")
    prefix = ["--config", project.config] if project.config else []
    result = run_cli(prefix + list(args), cwd=project.root, env=env)
    imported = [line for line in result.stderr.splitlines()
                if line.startswith("import time:")
                and line.rsplit("|", 1)[-1].strip() in ("ailogger_client", "embed_client")]
    return result, not imported


def test_writes_reach_the_logger_through_the_watcher(synced_project, fleet, watchers,
                                                     unique_session_id):
    p, sid = synced_project, unique_session_id
    watcher = watchers.start(p).wait_ready()
    opened = p.cli(*open_args(sid))  # `session` waits 1 s for the watcher: logger or file
    assert opened.rc == 0 and opened.out["store"] in ("logger", "file"), opened.stdout
    ids = []
    for i in range(3):
        result, clean = no_fleet_client_import(p, *message_args(sid, f"through the watcher {i}"),
                                               "--wait", "30")
        assert result.rc == 0, result.stdout
        assert clean, "write imported the fleet client although a watcher runs"
        assert result.out["store"] == "logger", (result.stdout, watcher.read_stderr()[-6000:])
        assert result.data["sequence_number"] == i  # the logger's number, not the file's
        ids.append(result.data["message_id"])
    # --wait 0: handed over without waiting for the logger, so still pending in the answer
    # (whether or not a round confirmed it meanwhile); the watcher delivers it
    quick = p.cli(*message_args(sid, "no waiting"), "--wait", "0")
    assert quick.rc == 0 and quick.out["store"] == "file", quick.stdout
    assert quick.data["forwarded"] is False
    assert quick.data["reason"] == f"handed to the agent (pid {watcher.pid}), which delivers it"
    ids.append(quick.data["message_id"])
    wait_for(lambda: [m["message_id"] for m in read_all(fleet, sid)] == ids,
             "all four messages in the logger, in order, once each")
    wait_for(lambda: all_imported(p, {sid: ids}), "every file moved to .imported/")
    assert watcher.stop(signal.SIGTERM) == 0
    summary = watcher.summary
    assert summary["success"] is True and summary["data"]["reason"] == "SIGTERM"
    assert summary["data"]["imported"] == 4 and summary["data"]["events_applied"] == 1
    logs = watcher.log_lines()  # every stderr line is a JSON object
    assert {"watcher_started", "watcher_stopped"} <= {line["event"] for line in logs}
    state = read_state(p)
    assert state["status"] == "stopped" and state["pid"] == watcher.pid


def test_a_refused_write_is_answered_through_the_watcher(synced_project, watchers,
                                                         unique_session_id):
    p, sid = synced_project, unique_session_id  # never opened: the logger refuses
    watcher = watchers.start(p).wait_ready()
    result = p.cli(*message_args(sid, "into a session nobody opened"), "--wait", "30")
    assert result.rc == 1 and result.out["error"]["code"] == "SESSION_UNKNOWN", \
        (result.stdout, watcher.read_stderr()[-6000:])
    assert count_final(p, sid, "") == 1  # kept pending
    assert watcher.stop(signal.SIGINT) == 0
    assert watcher.summary["data"]["items_refused"] >= 1


def test_a_second_watcher_is_refused_and_cron_has_the_watcher_sync(synced_project, watchers,
                                                                   unique_session_id):
    p = synced_project
    first = watchers.start(p).wait_ready()
    fill(p, {unique_session_id: 2})
    second = p.cli("sync", "--watch")
    assert second.rc == 0, second.stdout
    assert second.data["refused"] is True and second.data["holder_pid"] == first.pid
    cron, clean = no_fleet_client_import(p, "sync")  # the watcher runs a round for it
    assert cron.rc == 0 and cron.data["skipped"] is False, cron.stdout
    assert cron.data["totals"]["pending"] == 0
    assert clean, "the one-shot sync imported the fleet client while a watcher held the lock"
    assert first.proc.poll() is None  # the first one is not disturbed
    assert first.stop() == 0


def test_files_written_while_no_watcher_ran_are_picked_up(synced_project, fleet, watchers,
                                                          unique_session_id):
    p = synced_project
    sids = [unique_session_id + "-a", unique_session_id + "-b"]
    expected = fill(p, {sids[0]: 5, sids[1]: 3})
    watcher = watchers.start(p, rescan=600).wait_ready()  # only the start-up rescan can see them
    wait_for(lambda: all_imported(p, expected), "the start-up rescan to deliver everything")
    for sid, ids in expected.items():
        assert [m["message_id"] for m in read_all(fleet, sid)] == ids
    assert watcher.stop() == 0


def test_the_periodic_rescan_runs_and_is_published(synced_project, watchers):
    p = synced_project
    watcher = watchers.start(p, rescan=0.3).wait_ready()
    first = wait_for(lambda: (read_state(p) or {}).get("last_sync"), "a first round")
    wait_for(lambda: (read_state(p) or {}).get("last_sync", {}).get("at") != first["at"],
             "a later rescan")
    state = read_state(p)
    assert state["last_sync"]["kind"] == "rescan" and state["totals"]["rounds"] >= 2
    assert watcher.stop() == 0


def test_a_text_the_embedder_refuses_is_not_sent_again(synced_project, watchers,
                                                      unique_session_id):
    p, sid = synced_project, unique_session_id
    assert p.cli("--store", "file", *open_args(sid)).rc == 0
    refused = p.cli("--store", "file", *message_args(sid, "?!"))  # no letter, no digit
    kept = p.cli("--store", "file", *message_args(sid, "a text with words"))
    assert refused.rc == kept.rc == 0
    refused_id, kept_id = refused.data["message_id"], kept.data["message_id"]
    watcher = watchers.start(p, rescan=0.3).wait_ready()  # every rescan forces a backfill
    wait_for(lambda: (read_state(p) or {}).get("totals", {}).get("rounds", 0) >= 10,
             "ten rounds, each followed by a backfill")
    assert watcher.stop() == 0
    backfills = [line for line in watcher.log_lines() if line["event"] == "backfill"]
    refusals = [item for line in backfills for item in line.get("unembeddable") or ()
                if item["message_id"] == refused_id]
    assert len(refusals) == 1, backfills  # asked once, then skipped for the watcher's life
    vectors = [n for n in p.final_files(sid, ".imported") if n.endswith(".emb")]
    assert [n for n in vectors if kept_id in n] and not [n for n in vectors if refused_id in n]


def test_one_served_write_makes_one_round(synced_project, watchers, unique_session_id):
    """The command that wrote a file asks the agent, and watchdog reports the same file: one
    piece of news, one round (the summary counts rounds)."""
    p, sid = synced_project, unique_session_id
    watcher = watchers.start(p, "--no-backfill", rescan=600).wait_ready()
    assert p.cli(*open_args(sid)).rc == 0
    for i in range(5):
        written = p.cli(*message_args(sid, f"one round for me {i}"), "--wait", "30",
                        "--embed-budget", "0")
        assert written.out["store"] == "logger", written.stdout
    time.sleep(1.0)  # a second round for the same files would come within the debounce
    assert watcher.stop(signal.SIGTERM) == 0
    rounds = [line for line in watcher.log_lines() if line["event"] == "round"]
    assert watcher.summary["data"]["rounds"] == 1 + 6, (watcher.summary, rounds)
