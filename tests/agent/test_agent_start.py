"""An agent's start: while the project's agent is starting, no command imports the fleet
client or forwards its file itself (checked by the modules each command's process loaded);
a write leaves its file to the agent at once, pending and saying so, and a read waits for the
agent. An agent that cannot start, or dies before it serves, never leaves a file unanswered or
undelivered: the next command forwards itself and says why."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

from agent_memory.sync.agent.handoff import Handoff, Rounds
from agentutil import wait_serving
from amtest import message_args, open_args, wait_for
from fleetutil import held_by, read_all

INLINE = ("ailogger_client", "agent_memory.sync.runner")  # the fleet client, the inline forward


def loaded(project, *args: str) -> tuple[dict, set[str]]:
    """One CLI process: its answer and the modules it imported (PYTHONPROFILEIMPORTTIME)."""
    done = subprocess.run([sys.executable, "-m", "agent_memory.cli", *args], cwd=project.root,
                          env={**project.env, "PYTHONPROFILEIMPORTTIME": "1",
                               "AGENT_MEMORY_CONFIG": project.config},
                          capture_output=True, text=True, timeout=120)
    modules = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()
               if line.startswith("import time:")}
    assert done.returncode == 0, (done.stdout, done.stderr[-2000:])
    return json.loads(done.stdout), modules


def delivered(fleet, project, sid: str, count: int) -> None:
    wait_for(lambda: len(held_by(fleet, sid)) == count, f"{count} messages in the logger")
    wait_for(lambda: not [n for n in project.final_files(sid) if n.endswith((".msg", ".ses"))],
             "nothing left pending")


def test_no_command_forwards_itself_while_the_agent_starts(agent_projects, fleet,
                                                           unique_session_id):
    project = agent_projects(str(fleet.config_path))
    sid = unique_session_id
    opened, modules = loaded(project, *open_args(sid))  # no agent: it starts one
    assert not modules & set(INLINE), modules & set(INLINE)
    assert opened["store"] == "file" and "agent" in opened["data"]["reason"], opened
    # a read right away waits for the starting agent, which serves it
    read, modules = loaded(project, "read", "--session-id", sid)
    assert not modules & set(INLINE), modules & set(INLINE)
    answers = []
    for i in range(3):
        answer, modules = loaded(project, *message_args(sid, f"while it starts {i}"))
        assert not modules & set(INLINE), (i, modules & set(INLINE))
        answers.append(answer)
    for answer in answers:
        data = answer["data"]
        assert answer["store"] == "logger" or (
            data["outbox"] == "pending" and data["forwarded"] is False
            and "starting" in data["reason"]), answer
    delivered(fleet, project, sid, 3)
    assert [m["text"] for m in read_all(fleet, sid)] == [f"while it starts {i}" for i in range(3)]


def test_a_write_asked_of_an_agent_not_up_yet_is_answered_at_once():
    def never(*_args, **_kwargs):
        raise AssertionError("a starting agent has no loop or round to offer yet")
    rounds = Rounds(pid=4242, log=None, touch=lambda: None, serving_loop=never,
                    wants_round=never, backing_off=never, engine_lock=never,
                    logger_link=never, ready=lambda: False)
    answer = Handoff(None, rounds).deliver("a-session", "a-name.msg", 5.0)
    assert answer.status == "pending" and "pid 4242" in answer.reason
    assert "starting" in answer.reason


def test_an_agent_that_cannot_be_started_leaves_the_command_to_forward(agent_projects, fleet,
                                                                       unique_session_id):
    project = agent_projects(str(fleet.config_path))
    sid = unique_session_id
    os.mkdir(os.path.join(project.store, ".agent.log"))  # its log cannot be opened
    opened = project.cli(*open_args(sid))
    assert opened.rc == 0 and opened.out["store"] == "logger", opened.stdout
    assert "could not start the project's agent" in opened.stderr, opened.stderr
    assert ".agent.log" in opened.stderr
    written = project.cli(*message_args(sid, "no agent, delivered all the same"))
    assert written.rc == 0 and written.out["store"] == "logger", written.stdout
    assert [m["text"] for m in read_all(fleet, sid)] == ["no agent, delivered all the same"]


def test_an_agent_that_dies_before_it_serves_is_not_counted_on(agent_projects, fleet,
                                                               unique_session_id):
    project = agent_projects(str(fleet.config_path))
    sid = unique_session_id
    opened = project.cli(*open_args(sid))
    assert opened.rc == 0 and opened.out["store"] == "file", opened.stdout
    with open(os.path.join(project.store, ".agent.lock")) as handle:
        pid = json.load(handle)["pid"]
    os.kill(pid, signal.SIGKILL)  # long before it could listen
    wait_for(lambda: not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read()
             .rsplit(")", 1)[-1].split()[0] == "Z", "the killed agent gone")
    written = project.cli(*message_args(sid, "after the agent died"))
    assert written.rc == 0 and written.out["store"] == "logger", written.stdout
    assert f"agent (pid {pid}) exited before it served" in written.stderr, written.stderr
    # the open it had left pending went first, then the write
    assert [m["text"] for m in read_all(fleet, sid)] == ["after the agent died"]
    assert not [n for n in project.final_files(sid) if n.endswith((".msg", ".ses"))]
    wait_serving(project)  # the command started another, which serves


def test_an_agent_still_starting_is_shown_and_stopped(agent_projects, fleet, unique_session_id):
    from agentutil import agent_pids
    project = agent_projects(str(fleet.config_path))
    assert project.cli(*open_args(unique_session_id)).rc == 0  # it starts the agent
    with open(os.path.join(project.store, ".agent.lock")) as handle:
        pid = json.load(handle)["pid"]
    shown = project.cli("agent", "status").data  # long before it listens
    assert shown["running"] is False and shown["starting"] is True and shown["pid"] == pid
    stopped = project.cli("agent", "stop", "--timeout", "20")
    assert stopped.rc == 0 and stopped.data["stopped"] is True, stopped.stdout
    assert stopped.data["pid"] == pid and not agent_pids(project)
    assert project.final_files(unique_session_id)  # its file waits for the next agent or sync
