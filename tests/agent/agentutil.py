"""Helpers for the agent tests: projects whose commands start the agent by themselves, and a
way to find (and stop) every agent process a test caused."""

from __future__ import annotations

import json
import os
import signal
import time

from amtest import Project, make_project, wait_for


def agent_project(tmp_path, config: str, name: str = "project", **env: str) -> Project:
    """A project whose commands use and start the agent (`AGENT_MEMORY_AGENT=auto`)."""
    base = tmp_path / name
    base.mkdir()
    project = make_project(base, config=config)
    project.env["AGENT_MEMORY_AGENT"] = "auto"
    project.env.update(env)
    return project


def agent_pids(project: Project) -> list[int]:
    """Live `sync --watch` processes serving this project (by their command line)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                argv = handle.read().split(b"\0")
            with open(f"/proc/{entry}/stat", "rb") as handle:
                state = handle.read().rsplit(b")", 1)[-1].split()[0]
        except OSError:
            continue
        if state == b"Z" or b"--watch" not in argv:
            continue
        if os.fsencode(project.root) in argv:
            found.append(int(entry))
    return found


def status(project: Project) -> dict:
    result = project.cli("agent", "status")
    assert result.rc == 0, result.stdout
    return result.data


def wait_serving(project: Project) -> dict:
    return wait_for(lambda: (lambda s: s if s["running"] else None)(status(project)),
                    "the agent to answer on its socket")


def stop_agents(project: Project) -> None:
    """Stop the project's agent (politely, then kill -9 whatever is left)."""
    project.cli("agent", "stop", "--timeout", "20")
    for pid in agent_pids(project):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 10
    while agent_pids(project) and time.monotonic() < deadline:
        time.sleep(0.05)


def agent_log(project: Project) -> list[dict]:
    try:
        with open(os.path.join(project.store, ".agent.log")) as handle:
            return [json.loads(line) for line in handle if line.startswith("{")]
    except FileNotFoundError:
        return []
