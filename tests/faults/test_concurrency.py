"""Everything at once: 8 writers over 12 sessions, the watcher (the project's agent, which
serves their writes) and a cron-style `sync` loop, while the logger goes down and comes back
and the watcher is killed with SIGKILL and restarted. Afterwards every written message is in
the logger exactly once, in the session it was written to."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time

import pytest

from amtest import CLI, make_project, message_args, open_args, wait_for

WRITERS = 8
MESSAGES_EACH = 25
SESSIONS = 12


@pytest.mark.slow
def test_writers_watcher_and_cron_at_once_while_the_logger_flaps(fleet_factory, tmp_path):
    fleet = fleet_factory()
    project = make_project(tmp_path, config=str(fleet.config_path))
    sessions = [f"busy-{k}" for k in range(SESSIONS)]
    for sid in sessions:
        assert project.cli("--no-agent", *open_args(sid)).rc == 0
    logs = open(tmp_path / "watcher.log", "ab", buffering=0)
    started: list[subprocess.Popen] = []

    def start_watcher() -> subprocess.Popen:
        """Start a watcher (its log to a file: a full pipe would block it) and return once it
        serves as the project's agent, so the writes around it really go through it."""
        serving = (tmp_path / "watcher.log").read_text().count('"agent_serving"')
        proc = subprocess.Popen([CLI, "--config", project.config, "sync", "--watch"],
                                cwd=project.root, env=project.env, stdout=subprocess.PIPE,
                                stderr=logs)
        started.append(proc)
        wait_for(lambda: (tmp_path / "watcher.log").read_text().count('"agent_serving"')
                 > serving, "the watcher to serve as the agent", timeout=60, proc=proc)
        return proc

    written: dict[str, str] = {}
    failures: list[str] = []
    lock = threading.Lock()
    done = threading.Event()

    def writer(worker: int) -> None:
        for i in range(MESSAGES_EACH):
            sid = sessions[(worker * MESSAGES_EACH + i) % SESSIONS]
            result = project.cli(*message_args(sid, f"worker {worker} message {i}"))
            with lock:
                if result.rc == 0:
                    written[result.data["message_id"]] = sid
                else:
                    failures.append(result.stdout)

    def cron() -> None:
        while not done.is_set():
            result = project.cli("--no-agent", "sync")
            if result.rc not in (0, 4):  # 4: the logger is down right now
                with lock:
                    failures.append("cron: " + result.stdout)
            time.sleep(0.3)

    def flapping() -> None:
        try:
            while not done.is_set():
                fleet.control.go_down("logger")
                time.sleep(0.7)
                fleet.control.come_up("logger")
                time.sleep(1.0)
        except TimeoutError as exc:  # the reference logger failed to follow its switch
            with lock:
                failures.append(f"flapping: {exc}")

    writers = [threading.Thread(target=writer, args=(w,)) for w in range(WRITERS)]
    helpers = [threading.Thread(target=cron), threading.Thread(target=flapping)]
    try:
        watcher = start_watcher()
        for thread in writers + helpers:
            thread.start()
        time.sleep(3.0)
        watcher.kill()  # the agent dies mid-run; writes fall back inline, cron carries on
        watcher.wait(timeout=30)
        time.sleep(2.0)
        watcher = start_watcher()
        for thread in writers:
            thread.join(600)
        done.set()
        for thread in helpers:
            thread.join(60)
        fleet.control.clear_faults()  # `down` off too: the flapping may have stopped while down
        assert not failures, failures[:3]
        assert len(written) == WRITERS * MESSAGES_EACH

        def drained() -> bool:
            return all(not [n for n in project.final_files(sid) if n.endswith((".msg", ".ses"))]
                       for sid in sessions)
        wait_for(drained, "the restarted watcher to drain the outbox", timeout=180, proc=watcher)
        watcher.send_signal(signal.SIGTERM)
        out, _ = watcher.communicate(timeout=60)
        assert json.loads(out)["success"] is True
    finally:
        done.set()
        for proc in started:
            if proc.poll() is None:
                proc.kill()
                proc.wait(30)
    seen: dict[str, int] = {}
    for sid in sessions:
        for message in fleet.read_session(sid):
            seen[message["message_id"]] = seen.get(message["message_id"], 0) + 1
            assert written.get(message["message_id"]) == sid  # in the session it was written to
    assert [m for m, n in seen.items() if n > 1] == []  # nothing twice
    assert sorted(set(written) - set(seen)) == []  # nothing lost
