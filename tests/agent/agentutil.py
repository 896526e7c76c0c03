"""Helpers for the agent tests: projects whose commands start the agent by themselves, and a
way to find (and stop) every agent process a test caused."""

from __future__ import annotations

import json
import os
import signal
import time

from amtest import Project, make_project, wait_for, watcher_pids


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
    return watcher_pids(project.root)


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


def wait_logged(project: Project, event: str) -> dict:
    """The first line of `.agent.log` with `event`, waited for: a running agent writes its log
    through a pump thread, so a line can land a moment after the answer that followed it."""
    return wait_for(lambda: next((line for line in agent_log(project)
                                  if line["event"] == event), None),
                    f"{event!r} in the agent's log", timeout=10)
