"""The project's agent acts only on what is still true: its configuration (path and content, and
the files it names), agent-memory's version, the project's real path, and what its answers
claim. Each case is tried through the CLI as a user would, with the reference fleet."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time

from agentutil import agent_log, agent_pids, status, stop_agents, wait_serving
from amtest import make_project, message_args, open_args, wait_for
from fleetutil import closed_port, held_by, read_all


def document_of(config_path: str) -> dict:
    with open(config_path) as handle:
        return json.load(handle)


def write_document(path, document: dict) -> None:
    """Replace the document in place, the way an editor saving it would (same path)."""
    with open(path, "w") as handle:
        json.dump(document, handle)


def with_logger_port(document: dict, port: int) -> dict:
    changed = json.loads(json.dumps(document))
    changed["ailogger_client"]["server"]["port"] = port
    return changed


def pending_messages(project, sid) -> list[str]:
    return [n for n in project.final_files(sid) if n.endswith(".msg")]


def test_a_configuration_fixed_in_place_reaches_the_logger_without_agent_stop(
        agent_projects, fleet, tmp_path, unique_session_id):
    sid = unique_session_id
    good = document_of(str(fleet.config_path))
    config = tmp_path / "agent-memory.json"
    write_document(config, with_logger_port(good, closed_port()))  # a typo in the port
    project = agent_projects(str(config))
    first = project.cli(*open_args(sid))
    assert first.rc == 0 and first.out["store"] == "file", first.stdout
    old = wait_serving(project)
    assert old["autostarted"] is True
    stuck = project.cli(*message_args(sid, "written while the port was wrong"))
    assert stuck.rc == 0 and stuck.out["store"] == "file", stuck.stdout
    assert len(pending_messages(project, sid)) == 1

    write_document(config, good)  # the user fixes the document, same path
    fixed = project.cli(*message_args(sid, "written after the fix"))
    assert fixed.rc == 0, fixed.stdout  # the old agent handed over; the new one forwards it
    assert fixed.out["store"] == "logger" or "starting" in fixed.data["reason"], fixed.stdout
    wait_for(lambda: len(held_by(fleet, sid)) == 2, "both messages in the logger")
    assert [m["text"] for m in read_all(fleet, sid)] == [
        "written while the port was wrong", "written after the fix"]
    wait_for(lambda: not pending_messages(project, sid), "nothing left pending")
    wait_for(lambda: old["pid"] not in agent_pids(project), "the old agent to hand over")
    new = wait_serving(project)
    assert new["pid"] != old["pid"] and new["config_digest"] != old["config_digest"]
    assert new["matches"] is True and new["differs"] == []
    assert any(line.get("stop_reason") in ("configuration changed on disk",)
               or line["event"] == "config_changed" for line in agent_log(project))


def test_a_hand_started_agent_reloads_a_changed_configuration_in_place(
        agent_projects, fleet, tmp_path, unique_session_id):
    sid = unique_session_id
    good = document_of(str(fleet.config_path))
    config = tmp_path / "agent-memory.json"
    write_document(config, with_logger_port(good, closed_port()))
    project = agent_projects(str(config))
    watcher = project.popen("sync", "--watch", "--backoff-max", "60")
    try:
        before = wait_serving(project)
        assert before["autostarted"] is False
        assert project.cli("--store", "file", *open_args(sid)).rc == 0
        assert project.cli("--store", "file", *message_args(sid, "waits for a good port")).rc == 0
        write_document(config, {"not": "valid"})  # a broken save: logged, the old one kept
        wait_for(lambda: any(line["event"] == "config_invalid_kept"
                             for line in _stderr_lines(watcher)), "the invalid document logged")
        write_document(config, good)  # then the right one: reloaded in place, drained at once
        wait_for(lambda: not pending_messages(project, sid), "the pending message delivered",
                 timeout=30)
        assert [m["text"] for m in read_all(fleet, sid)] == ["waits for a good port"]
        after = status(project)
        assert after["pid"] == before["pid"] and after["matches"] is True
        assert after["config_digest"] != before["config_digest"]
        written = project.cli(*message_args(sid, "served after the reload"))
        assert written.out["store"] == "logger", written.stdout
    finally:
        watcher.send_signal(signal.SIGTERM)
        out, err = watcher.communicate(timeout=60)
    events = [json.loads(line)["event"] for line in err.decode().splitlines()
              if line.startswith("{")]
    assert "config_reloaded" in events and watcher.returncode == 0


_seen: dict[int, list[str]] = {}  # what each watcher wrote so far, by pid


def _stderr_lines(proc) -> list[dict]:
    """What a running watcher has logged so far (its stderr is a pipe; read without blocking)."""
    import fcntl
    fd = proc.stderr.fileno()
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)
    chunks = _seen.setdefault(proc.pid, [])
    try:
        while True:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk.decode("utf-8", "replace"))
    except BlockingIOError:
        pass
    return [json.loads(line) for line in "".join(chunks).splitlines() if line.startswith("{")]


def test_sync_with_another_configuration_beside_an_autostarted_agent_delivers_to_it(
        agent_projects, fleet, offline_config, unique_session_id):
    sid = unique_session_id
    project = agent_projects(offline_config)  # configuration A: a logger that is away
    assert project.cli(*open_args(sid)).out["store"] == "file"
    assert project.cli(*message_args(sid, "for whoever forwards with B")).out["store"] == "file"
    old = wait_serving(project)
    synced = project.cli("--config", str(fleet.config_path), "sync")  # configuration B
    assert synced.rc == 0, synced.stdout
    assert synced.data["skipped"] is False and synced.data["totals"]["imported"] == 1
    assert [m["text"] for m in read_all(fleet, sid)] == ["for whoever forwards with B"]
    wait_for(lambda: old["pid"] not in agent_pids(project), "the agent of A to hand over")


def test_another_configuration_beside_a_hand_started_agent_is_told_plainly(
        agent_projects, fleet, offline_config, unique_session_id):
    sid = unique_session_id
    project = agent_projects(offline_config)
    watcher = project.popen("sync", "--watch")  # configuration A, by hand
    try:
        agent = wait_serving(project)
        b = ["--config", str(fleet.config_path)]
        shown = project.cli(*b, "agent", "status").data
        assert shown["matches"] is False and shown["differs"] == ["config", "digest"]
        assert shown["config"] == os.path.realpath(offline_config)
        assert shown["version"] and shown["config_digest"]
        synced = project.cli(*b, "sync")
        assert synced.rc == 9 and synced.code == "STORE_HELD", synced.stdout
        message = synced.out["error"]["message"]
        assert f"pid {agent['pid']}" in message and "agent-memory agent stop" in message
        assert os.path.realpath(offline_config) in message
        assert project.cli(*b, "--store", "file", *open_args(sid)).rc == 0
        written = project.cli(*b, *message_args(sid, "not for A's logger"))
        assert written.rc == 0 and written.out["store"] == "file", written.stdout
        reason = written.data["reason"]
        assert "will deliver this too" not in reason
        assert f"pid {agent['pid']}" in reason and os.path.realpath(offline_config) in reason
        assert "it was not used" in written.stderr
        assert status(project)["pid"] == agent["pid"]  # never replaced by a command
        # the same configuration is still served by it, and told the truth
        same = project.cli(*message_args(sid, "with A"))
        assert same.rc == 0 and same.out["store"] == "file", same.stdout
        assert "it was not used" not in same.stderr
    finally:
        watcher.send_signal(signal.SIGTERM)
        watcher.communicate(timeout=60)


PROJECT_PACKAGES = ("cli", "sync", "outbox", "ops", "pipeline")


def test_the_agent_never_runs_the_projects_own_packages(agent_projects, fleet,
                                                        unique_session_id):
    project = agent_projects(str(fleet.config_path))
    trace = os.path.join(project.root, "imported-from-the-project")
    for package in PROJECT_PACKAGES:
        os.makedirs(os.path.join(project.root, package))
        leave_trace = (f"open({trace!r}, 'a').write({package!r} + ' ' + __name__ + '\\n')\n")
        for module in ("__init__.py", "__main__.py"):
            with open(os.path.join(project.root, package, module), "w") as handle:
                handle.write(leave_trace)
    with open(os.path.join(project.root, ".gitignore"), "a") as handle:
        handle.write("imported-from-the-project\n")
    first = project.cli(*open_args(unique_session_id))  # it starts the agent, which forwards it
    assert first.rc == 0 and first.out["store"] == "file", first.stdout
    agent = wait_serving(project)
    assert agent["autostarted"] is True
    for i in range(3):
        written = project.cli(*message_args(unique_session_id, f"from a project with cli/ {i}"))
        assert written.out["store"] == "logger", written.stdout
    assert status(project)["requests"] >= 3
    assert not os.path.exists(trace), open(trace).read()


def test_an_autostarted_agent_with_an_unreachable_logger_idles_out_leaving_its_backlog(
        agent_projects, tmp_path, unique_session_id):
    from fleetutil import offline_document
    document = offline_document()
    document["agent"] = {"mode": "auto", "idle_exit": 3}
    config = tmp_path / "away.json"
    write_document(config, document)
    project = agent_projects(str(config))
    sid = unique_session_id
    assert project.cli(*open_args(sid)).out["store"] == "file"
    wait_serving(project)
    assert project.cli(*message_args(sid, "kept for later")).out["store"] == "file"
    last_request = time.monotonic()
    wait_for(lambda: not agent_pids(project), "the idle agent to exit", timeout=20)
    assert time.monotonic() - last_request < 12  # idle_exit 3 s, a few seconds of slack
    assert len(pending_messages(project, sid)) == 1  # left pending, not lost
    with open(os.path.join(project.store, ".watcher.json")) as handle:
        assert json.load(handle)["stop_reason"] == "idle"
    assert any(line["event"] == "agent_idle_exit" and line["left_pending"] is True
               for line in agent_log(project))


FAKE_VERSION_AGENT = textwrap.dedent("""
    import sys
    import agent_memory.sync.identity
    agent_memory.sync.identity.VERSION = "1.0.0-older"
    from agent_memory.cli.main import main
    sys.exit(main(sys.argv[1:]))
""")


def test_an_autostarted_agent_of_another_version_is_replaced(agent_projects, fleet,
                                                             unique_session_id):
    project = agent_projects(str(fleet.config_path))
    older = subprocess.Popen(
        [sys.executable, "-P", "-c", FAKE_VERSION_AGENT, "--project-root", project.root,
         "--config", project.config, "sync", "--watch", "--autostarted", "--idle-exit", "600"],
        cwd=project.root, env=project.env, stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        agent = wait_serving(project)
        assert agent["pid"] == older.pid and agent["version"] == "1.0.0-older"
        assert agent["matches"] is False and agent["differs"] == ["version"]
        written = project.cli(*open_args(unique_session_id))  # left to the agent it starts
        assert written.rc == 0 and "starting" in written.data["reason"], written.stdout
        assert older.wait(timeout=30) == 0  # it handed over
        new = wait_serving(project)
        assert new["pid"] != older.pid and new["matches"] is True
        from agent_memory.sync.identity import VERSION
        assert new["version"] == VERSION
    finally:
        if older.poll() is None:
            older.kill()
            older.wait()


def test_a_project_reached_through_a_symlink_reaches_its_agent(agent_projects, fleet,
                                                              tmp_path, unique_session_id):
    project = agent_projects(str(fleet.config_path), "p" * 120)  # the socket lives elsewhere
    link = tmp_path / "short"
    os.symlink(project.root, link)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    via = ["--project-root", str(link)]
    started = project.cli(*via, "agent", "start", cwd=str(elsewhere))
    assert started.rc == 0 and started.data["running"] is True, started.stdout
    assert not started.data["socket"].startswith(project.store)
    assert project.cli("agent", "status").data["pid"] == started.data["pid"]
    shown = project.cli(*via, "agent", "status", cwd=str(elsewhere)).data
    assert shown["running"] is True and shown["pid"] == started.data["pid"]
    opened = project.cli(*via, *open_args(unique_session_id), cwd=str(elsewhere))
    assert opened.out["store"] == "logger", opened.stdout
    written = project.cli(*via, *message_args(unique_session_id, "through the link"),
                          cwd=str(elsewhere))
    assert written.out["store"] == "logger", written.stdout
    assert status(project)["requests"] >= 2
    stopped = project.cli(*via, "agent", "stop", cwd=str(elsewhere))
    assert stopped.data["stopped"] is True and not agent_pids(project)


def test_the_agents_log_resumes_after_a_full_disk(small_disk, fleet):
    project = make_project(small_disk, config=str(fleet.config_path))
    try:
        project.env["AGENT_MEMORY_AGENT"] = "auto"
        started = project.cli("agent", "start")
        assert started.rc == 0, started.stdout
        sock_path = started.data["socket"]
        log_path = os.path.join(project.store, ".agent.log")

        def knock(times: int) -> None:
            """Connections that close without a request: each makes the agent log a line."""
            for _ in range(times):
                with socket.socket(socket.AF_UNIX) as sock:
                    sock.connect(sock_path)
            time.sleep(0.1)

        knock(1)
        wait_for(lambda: "agent_connection_lost" in open(log_path).read(), "a first line")
        filler = os.path.join(str(small_disk), "filler")
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while True:
                os.write(fd, b"x" * 4096)
        except OSError:
            pass
        finally:
            os.close(fd)
        size_full = os.path.getsize(log_path)
        knock(40)  # these cannot all be written: the disk is full (past the log's last page)
        time.sleep(1.5)
        assert status(project)["running"] is True  # it serves on
        os.unlink(filler)
        knock(1)
        wait_for(lambda: "log_write_failed" in open(log_path).read()[size_full:],
                 "logging to resume and say it failed for a while", timeout=20)
        knock(1)
        wait_for(lambda: open(log_path).read()[size_full:].count("agent_connection_lost") >= 2,
                 "new lines after the disk had room again", timeout=20)
    finally:
        stop_agents(project)
