"""The project's agent: commands it serves answer exactly as inline, it starts by itself once,
it never loses or duplicates a write when killed, it replaces a stale socket, it idles out, it
refuses strangers, and the off switches turn it off."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid

import pytest

from agent_memory.sync.agent.channel import socket_path as agent_socket
from agentutil import agent_pids, status, stop_agents, wait_logged, wait_serving
from amtest import message_args, open_args, wait_for
from fleetutil import read_all


def imports_fleet_client(result_stderr: str) -> bool:
    return any(line.startswith("import time:")
               and line.rsplit("|", 1)[-1].strip() in ("ailogger_client", "embed_client")
               for line in result_stderr.splitlines())


def started_agent(project) -> dict:
    result = project.cli("agent", "start")
    assert result.rc == 0 and result.data["running"], result.stdout
    return result.data


def test_each_served_command_answers_byte_for_byte_as_inline(agent_projects, fleet,
                                                             unique_session_id):
    sid = unique_session_id
    served = agent_projects(str(fleet.config_path), "served")
    inline = agent_projects(str(fleet.config_path), "inline", AGENT_MEMORY_AGENT="off")
    agent = started_agent(served)
    # writes: the same message twice (the second is the logger's identical repeat), once
    # through the agent and once inline, answer the same bytes
    first_open = served.cli(*open_args(sid))
    second_open = inline.cli(*open_args(sid))
    assert first_open.rc == 0 and first_open.out["store"] == "logger", first_open.stdout
    assert (second_open.rc, second_open.stdout) == (first_open.rc, first_open.stdout)
    ids = []
    for i in range(3):
        fixed = {"message_id": str(uuid.uuid4()), "occurred_at": f"2026-11-0{i + 1}T10:00:00Z"}
        a = served.cli(*message_args(sid, f"agents remember message {i}", **fixed))
        b = inline.cli(*message_args(sid, f"agents remember message {i}", **fixed))
        assert a.rc == 0 and a.out["store"] == "logger", a.stdout
        assert a.data["sequence_number"] == i
        assert (b.rc, b.stdout) == (a.rc, a.stdout)
        ids.append(a.data["message_id"])
    # a served write stays light: no fleet client, not even asyncio (the inline forward's)
    profiled_write = subprocess.run(
        [sys.executable, "-m", "agent_memory.cli", *message_args(sid, "a light write")], cwd=served.root,
        env={**served.env, "PYTHONPROFILEIMPORTTIME": "1", "AGENT_MEMORY_CONFIG": served.config},
        capture_output=True, text=True, timeout=120)
    assert json.loads(profiled_write.stdout)["store"] == "logger", profiled_write.stdout
    assert not imports_fleet_client(profiled_write.stderr)
    assert not [line for line in profiled_write.stderr.splitlines()
                if line.rsplit("|", 1)[-1].strip() == "asyncio"]
    wait_for(lambda: len([n for n in served.final_files(sid, ".imported")
                          if n.endswith(".msg")]) == 4, "the agent moved the files")
    commands = [
        ["read", "--session-id", sid],
        ["read", "--session-id", sid, "--mode", "full", "--block-size", "2"],
        ["get", ids[1]],
        ["get", str(uuid.uuid4())],                       # not found: exit 5
        ["sessions", "--project-id", "proj"],
        ["search", "--query", "agents remember", "--scope", "session", "--target", sid],
        ["search", "--query", "message", "--scope", "project", "--target", "proj"],
        ["working-set", "--session-id", sid, "--anchor-text", "remember"],
        ["working-set", "--session-id", sid, "--anchor-message-id", ids[0]],
        ["read", "--session-id", "no-such-session"],
    ]
    for args in commands:
        through_agent = served.cli(*args)
        env = dict(served.env, PYTHONPROFILEIMPORTTIME="1")
        profiled = subprocess.run([sys.executable, "-m", "agent_memory.cli", *args], cwd=served.root,
                                  env={**env, "AGENT_MEMORY_CONFIG": served.config},
                                  capture_output=True, text=True, timeout=120)
        assert not imports_fleet_client(profiled.stderr), f"{args} imported a fleet client"
        here = served.cli("--no-agent", *args)
        assert (through_agent.rc, through_agent.stdout) == (here.rc, here.stdout), args
        assert profiled.stdout == here.stdout, args
    # status --probe: the same but for the times of the call
    probe_agent = served.cli("status", "--probe")
    probe_here = served.cli("--no-agent", "status", "--probe")
    assert probe_agent.rc == probe_here.rc == 0
    assert probe_agent.data["probe"]["logger"]["answers"] is True
    timeless = lambda probe: {side: {k: v for k, v in answer.items() if k != "seconds"}
                              for side, answer in probe.items()}
    assert timeless(probe_agent.data["probe"]) == timeless(probe_here.data["probe"])
    assert probe_agent.data["sessions"] == probe_here.data["sessions"]
    now = status(served)
    assert now["pid"] == agent["pid"] and now["requests"] >= len(commands) * 2


def test_store_logger_writes_are_made_by_the_agent_and_answer_as_inline(
        agent_projects, fleet_factory, unique_session_id):
    private = fleet_factory()
    sid = unique_session_id
    served = agent_projects(str(private.config_path), "served")
    inline = agent_projects(str(private.config_path), "inline", AGENT_MEMORY_AGENT="off")
    started_agent(served)
    before = status(served)["requests"]
    fixed = {"message_id": str(uuid.uuid4()), "occurred_at": "2026-11-05T10:00:00Z"}
    steps = [
        open_args(sid),
        message_args(sid, "straight to the logger", **fixed),
        message_args(sid, "the same id, other words", **fixed),   # refused: exit 1
        ["session", "close", "--session-id", sid],
        message_args(sid, "into a closed session"),               # refused: exit 1
        ["session", "reopen", "--session-id", sid],
    ]
    for args in steps:
        through_agent = served.cli("--store", "logger", *args)
        here = inline.cli("--store", "logger", *args)
        assert (through_agent.rc, through_agent.stdout) == (here.rc, here.stdout), args
    assert [served.cli("--store", "logger", *args).rc for args in steps[1:3]] == [0, 1]
    # made by the agent: the CLI process imports no fleet client and still has the answer
    profiled = subprocess.run(
        [sys.executable, "-m", "agent_memory.cli", "--store", "logger", *message_args(sid, "light")],
        cwd=served.root, capture_output=True, text=True, timeout=120,
        env={**served.env, "PYTHONPROFILEIMPORTTIME": "1", "AGENT_MEMORY_CONFIG": served.config})
    answer = json.loads(profiled.stdout)
    assert answer["store"] == "logger" and answer["data"]["sequence_number"] == 1, answer
    assert not imports_fleet_client(profiled.stderr)
    assert status(served)["requests"] >= before + len(steps) + 3
    assert sid not in os.listdir(served.store)  # no outbox file
    # the logger down: the same failure, exit 4, both ways
    private.control.go_down("logger")
    try:
        through_agent = served.cli("--store", "logger", *message_args(sid, "nobody hears"))
        here = inline.cli("--store", "logger", *message_args(sid, "nobody hears"))
    finally:
        private.control.come_up("logger")
    assert through_agent.rc == here.rc == 4, (through_agent.stdout, here.stdout)
    assert through_agent.out["error"]["code"] == here.out["error"]["code"] \
        == "LOGGER_UNREACHABLE"
    assert [m["text"] for m in read_all(private, sid)] == ["straight to the logger", "light"]
    # the agent killed while its call is at the logger: exit 4, and the call is not repeated
    agent = status(served)
    private.control.set_faults("logger", delay=3.0)
    try:
        pending = served.popen("--store", "logger", *message_args(sid, "in flight"))
        # every request counts, each status ping included: past this ping's own, the call's
        wait_for(lambda: status(served)["requests"] > agent["requests"] + 1,
                 "the agent to take the call")
        os.kill(agent["pid"], signal.SIGKILL)
        out, _err = pending.communicate(timeout=60)
    finally:
        private.control.clear_faults("logger")
    lost = json.loads(out)
    assert pending.returncode == 4 and lost["error"]["code"] == "LOGGER_UNREACHABLE", lost
    assert "may or may not" in lost["error"]["message"]


def test_an_agent_whose_stderr_nobody_reads_keeps_serving(agent_projects, fleet,
                                                          unique_session_id):
    import fcntl
    from amtest import CLI
    project = agent_projects(str(fleet.config_path))
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 4096)  # one page: a dozen log lines fill it
    try:
        watcher = subprocess.Popen([CLI, "--config", project.config, "sync", "--watch"],
                                   cwd=project.root, env=project.env, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=write_end)
    finally:
        os.close(write_end)
    try:
        wait_serving(project)
        assert project.cli(*open_args(unique_session_id)).out["store"] == "logger"
        for i in range(30):  # each round logs about 400 bytes: the pipe is full long before
            written = project.cli(*message_args(unique_session_id, f"nobody reads it {i}"))
            assert written.rc == 0 and written.out["store"] == "logger", (i, written.stdout)
        assert status(project)["requests"] >= 31
        watcher.send_signal(signal.SIGTERM)
        assert watcher.wait(timeout=30) == 0  # it exits although its last lines cannot go out
    finally:
        if watcher.poll() is None:
            watcher.kill()
            watcher.wait()
    with os.fdopen(read_end, "rb") as pipe:
        lines = pipe.read().splitlines()
    assert 0 < len(b"\n".join(lines)) <= 4096
    assert all(json.loads(line)["event"] for line in lines)  # whole JSON lines, in order
    assert len(read_all(fleet, unique_session_id)) == 30


def test_eight_first_calls_start_exactly_one_agent(agent_projects, fleet, unique_session_id):
    project = agent_projects(str(fleet.config_path))
    assert project.cli("--no-agent", *open_args(unique_session_id)).rc == 0
    procs = [project.popen(*message_args(unique_session_id, f"first call {i}"))
             for i in range(8)]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        answer = json.loads(out)
        assert proc.returncode == 0 and answer["success"], (out, err)
    wait_serving(project)
    time.sleep(1.0)  # a late second starter would show up now
    assert len(agent_pids(project)) == 1, agent_pids(project)
    assert status(project)["autostarted"] is True
    wait_for(lambda: len([n for n in project.final_files(unique_session_id, ".imported")
                          if n.endswith(".msg")]) == 8, "every message delivered")


def test_a_stale_socket_is_replaced(agent_projects, fleet, unique_session_id):
    project = agent_projects(str(fleet.config_path))
    first = started_agent(project)
    os.kill(first["pid"], signal.SIGKILL)
    wait_for(lambda: not agent_pids(project), "the killed agent gone")
    socket_path = agent_socket(project.store)  # in the store, or elsewhere for a long path
    assert os.path.exists(socket_path)  # left behind by the kill
    assert status(project) == {"running": False, "socket": socket_path, "stale_socket": True}
    opened = project.cli(*open_args(unique_session_id))  # starts a new agent, which forwards it
    assert opened.rc == 0 and opened.out["store"] == "file", opened.stdout
    assert "starting" in opened.data["reason"], opened.stdout
    second = wait_serving(project)
    assert second["pid"] != first["pid"] and second["socket"] == socket_path
    written = project.cli(*message_args(unique_session_id, "after the stale socket"))
    assert written.rc == 0 and written.out["store"] == "logger", written.stdout
    wait_logged(project, "agent_stale_socket_replaced")


def test_an_autostarted_agent_exits_when_idle(agent_projects, fleet, tmp_path,
                                              unique_session_id):
    config = tmp_path / "idle.json"
    document = json.loads(open(fleet.config_path).read())
    document["agent"] = {"mode": "auto", "idle_exit": 1.5}
    config.write_text(json.dumps(document))
    project = agent_projects(str(config))
    assert project.cli(*open_args(unique_session_id)).rc == 0
    started = wait_serving(project)
    assert started["autostarted"] is True and started["idle_exit_s"] == 1.5
    assert started["idle_deadline"]
    shown = project.cli("status").data["agent"]  # `status` shows it too
    assert shown["running"] is True and shown["pid"] == started["pid"]
    assert shown["socket"] == started["socket"] and shown["autostarted"] is True
    wait_for(lambda: not agent_pids(project), "the idle agent to exit")
    with open(os.path.join(project.store, ".watcher.json")) as handle:
        state = json.load(handle)
    assert state["status"] == "stopped" and state["stop_reason"] == "idle"
    assert not os.path.exists(agent_socket(project.store))


def test_a_watcher_started_by_hand_never_idles_out(agent_projects, fleet):
    project = agent_projects(str(fleet.config_path))
    watcher = project.popen("sync", "--watch")
    try:
        info = wait_serving(project)
        assert info["autostarted"] is False and info["idle_exit_s"] is None
        assert info["idle_deadline"] is None
    finally:
        watcher.send_signal(signal.SIGTERM)
        watcher.communicate(timeout=60)


def test_the_off_switches(agent_projects, fleet, tmp_path, unique_session_id):
    config = tmp_path / "off.json"
    document = json.loads(open(fleet.config_path).read())
    document["agent"] = {"mode": "off"}
    config.write_text(json.dumps(document))
    by_flag = agent_projects(str(fleet.config_path), "flag")
    by_env = agent_projects(str(fleet.config_path), "env", AGENT_MEMORY_AGENT="off")
    by_config = agent_projects(str(config), "config")
    del by_config.env["AGENT_MEMORY_AGENT"]  # the environment would win over the file
    for project, extra in ((by_flag, ["--no-agent"]), (by_env, []), (by_config, [])):
        sid = f"{unique_session_id}-{os.path.basename(os.path.dirname(project.root))}"
        assert project.cli(*extra, *open_args(sid)).rc == 0
        written = project.cli(*extra, *message_args(sid, "inline, no agent"))
        assert written.rc == 0 and written.out["store"] == "logger", written.stdout
        time.sleep(0.5)
        assert agent_pids(project) == [] and not status(project)["running"]
    by_flag.env["AGENT_MEMORY_AGENT"] = "sometimes"
    bad = by_flag.cli("read", "--session-id", "x")
    assert bad.rc == 2 and "AGENT_MEMORY_AGENT" in bad.out["error"]["message"], bad.stdout


def test_the_agent_dying_mid_request_answers_file_and_loses_nothing(agent_projects, fleet,
                                                                    unique_session_id):
    project = agent_projects(str(fleet.config_path))
    sid = unique_session_id
    assert project.cli(*open_args(sid)).rc == 0
    agent = wait_serving(project)
    os.kill(agent["pid"], signal.SIGSTOP)  # it accepts nothing more and answers nothing
    try:
        writer = project.popen(*message_args(sid, "asked, never answered"), "--wait", "5")
        wait_for(lambda: os.listdir(os.path.join(project.store, sid)), "the .msg written first")
        time.sleep(0.3)  # the request is sent and waits for its answer
    finally:
        os.kill(agent["pid"], signal.SIGKILL)
    out, err = writer.communicate(timeout=60)
    answer = json.loads(out)
    assert writer.returncode == 0 and answer["store"] == "file", (out, err)
    assert answer["data"]["outbox"] == "pending" and "watcher stopped" in answer["data"]["reason"]
    wait_for(lambda: not agent_pids(project), "the killed agent gone")
    synced = project.cli("--no-agent", "sync")
    assert synced.rc == 0 and synced.data["totals"]["imported"] == 1, synced.stdout
    in_logger = [m["message_id"] for m in read_all(fleet, sid)]
    assert in_logger == [answer["data"]["message_id"]]


@pytest.mark.slow
def test_kill_9_of_the_agent_during_120_writes_delivers_each_exactly_once(
        agent_projects, fleet, unique_session_id):
    project = agent_projects(str(fleet.config_path))
    sid = unique_session_id
    assert project.cli(*open_args(sid)).rc == 0
    wait_serving(project)
    answers: list[dict] = []
    failures: list[str] = []
    lock = threading.Lock()

    def writer(worker: int) -> None:
        for i in range(30):
            result = project.cli(*message_args(sid, f"worker {worker} message {i}"))
            with lock:
                if result.rc != 0:
                    failures.append(result.stdout)
                else:
                    answers.append(result.out)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    killed = []
    for _ in range(3):  # kill whichever agent serves, three times, while the writes go on
        wait_for(lambda: len(answers) >= 25 * (len(killed) + 1) or len(answers) >= 110,
                 "writes to go on", timeout=300)
        pids = agent_pids(project)
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        killed.extend(pids)
    for thread in threads:
        thread.join(600)
    assert not failures, failures[:3]
    assert len(answers) == 120 and killed
    stop_agents(project)
    synced = project.cli("--no-agent", "sync")
    assert synced.rc == 0, synced.stdout
    written = sorted(a["data"]["message_id"] for a in answers)
    in_logger = [m["message_id"] for m in read_all(fleet, sid)]
    assert sorted(in_logger) == written  # each exactly once: no loss, no duplicate
    assert project.final_files(sid) == []  # nothing stuck pending
    assert {a["store"] for a in answers} <= {"logger", "file"}


def test_another_uid_is_refused(agent_projects, fleet):
    if os.getuid() != 0:
        pytest.skip("needs root to run a client as nobody")
    project = agent_projects(str(fleet.config_path))
    started_agent(project)
    socket_path = agent_socket(project.store)  # in the store, or elsewhere for a long path
    # open the way on purpose (as a careless chmod would): the agent must still refuse
    opened = []
    path = os.path.dirname(socket_path)
    while path != "/":
        opened.append((path, os.stat(path).st_mode & 0o7777))
        os.chmod(path, os.stat(path).st_mode | 0o011)
        path = os.path.dirname(path)
    os.chmod(socket_path, 0o666)
    try:
        # the frame format by hand: the client must not need anything of the project's
        probe = ("import json, socket, struct, sys\n"
                 "s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])\n"
                 "body = json.dumps({'protocol': 1, 'op': 'ping'}).encode()\n"
                 "s.sendall(struct.pack('>I', len(body)) + body)\n"
                 "data = b''\n"
                 "while True:\n"
                 "    chunk = s.recv(65536)\n"
                 "    if not chunk: break\n"
                 "    data += chunk\n"
                 "print(data[4:].decode())\n")
        done = subprocess.run(["/usr/bin/python3", "-c", probe, socket_path],
                              capture_output=True, text=True, timeout=60, user="nobody",
                              cwd="/")
    finally:
        for path, mode in opened:
            os.chmod(path, mode)
        os.chmod(socket_path, 0o600)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["ok"] is False and answer["refused"] is True, answer
    assert wait_logged(project, "agent_peer_refused")["peer_uid"] != os.getuid()


def test_a_long_project_path_puts_the_socket_in_a_private_directory(agent_projects, fleet,
                                                                    unique_session_id):
    project = agent_projects(str(fleet.config_path), "p" * 120)
    assert len(os.path.join(project.store, ".agent.sock")) > 107
    info = started_agent(project)
    assert not info["socket"].startswith(project.store)
    directory = os.path.dirname(info["socket"])
    assert os.stat(directory).st_mode & 0o777 == 0o700
    assert os.stat(info["socket"]).st_mode & 0o777 == 0o600
    assert project.cli(*open_args(unique_session_id)).out["store"] == "logger"
    written = project.cli(*message_args(unique_session_id, "through a long path"))
    assert written.rc == 0 and written.out["store"] == "logger", written.stdout


def test_the_agent_serves_only_read_side_commands_of_its_own_store(agent_projects, fleet,
                                                                   tmp_path):
    from agent_memory.sync.agent import channel
    from agent_memory.sync import config, identity as identity_of
    project = agent_projects(str(fleet.config_path))
    watcher = project.popen("sync", "--watch")  # by hand: it declines, never hands over
    info = wait_serving(project)
    identity = {"protocol": channel.PROTOCOL,
                **identity_of.of(project.store, config.load(project.config))}

    def ask(message: dict) -> dict:
        sock = channel.connect(info["socket"], 30)
        try:
            channel.send(sock, message)
            return channel.receive(sock)
        finally:
            sock.close()

    served = ask({**identity, "op": "run", "argv": ["sessions"]})
    assert served["ok"] is True and served["exit_code"] == 0
    assert json.loads(served["line"])["success"] is True
    for argv in (["config", "validate"], ["sync"], ["store", "init"], ["write", "--help"]):
        answer = ask({**identity, "op": "run", "argv": argv})
        assert answer["ok"] is False, (argv, answer)
    other = ask({**identity, "store": str(tmp_path), "op": "run", "argv": ["sessions"]})
    assert other["ok"] is False and other["mismatch"] is True
    assert other["differs"] == ["store"] and other["handover"] is False
    elsewhere = ask({**identity, "config": str(tmp_path / "other.json"), "op": "run",
                     "argv": ["sessions"]})
    assert elsewhere["ok"] is False and elsewhere["mismatch"] is True
    assert elsewhere["differs"] == ["config"] and elsewhere["handover"] is False
    for field, value in (("digest", "0" * 32), ("version", "0.0.1")):
        other_content = ask({**identity, field: value, "op": "run", "argv": ["sessions"]})
        assert other_content["mismatch"] is True and other_content["differs"] == [field]
    older = ask({**identity, "protocol": 1, "op": "run", "argv": ["sessions"]})
    assert older["ok"] is False and older["mismatch"] is True
    bad = ask({**identity, "op": "deliver", "session_id": "../x", "name": "n", "wait": 1})
    assert bad["ok"] is False and "mismatch" not in bad
    assert status(project)["pid"] == info["pid"]  # declining never stops a hand-started agent
    watcher.send_signal(signal.SIGTERM)
    assert watcher.wait(timeout=60) == 0


def test_the_first_write_leaves_its_vector_to_the_agent_it_starts(agent_projects, fleet,
                                                                  unique_session_id):
    project = agent_projects(str(fleet.config_path))
    sid = unique_session_id
    assert project.cli("--no-agent", *open_args(sid)).rc == 0
    first = subprocess.run(
        [sys.executable, "-m", "agent_memory.cli", *message_args(sid, "the first write of the day")],
        cwd=project.root, capture_output=True, text=True, timeout=120,
        env={**project.env, "PYTHONPROFILEIMPORTTIME": "1", "AGENT_MEMORY_CONFIG": project.config})
    assert json.loads(first.stdout)["store"] == "file", first.stdout  # left to the agent
    assert not [line for line in first.stderr.splitlines()  # not embedded inline
                if line.rsplit("|", 1)[-1].strip() == "embed_client"]
    wait_serving(project)
    wait_for(lambda: [n for n in project.final_files(sid, ".imported") if n.endswith(".msg")],
             "the agent to forward the first write")

    def vectors() -> list[str]:
        return [n for n in project.final_files(sid, ".imported") + project.final_files(sid)
                if n.endswith(".emb")]
    wait_for(vectors, "the agent's backfill to write the first message's vector")
    assert vectors()[0].startswith(
        next(n for n in project.final_files(sid, ".imported") if n.endswith(".msg"))[:-4])
