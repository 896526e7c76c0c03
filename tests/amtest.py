"""Helpers shared by the tests: run the real `agent-memory` CLI as a subprocess in a project."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable

CLI = os.path.join(os.path.dirname(sys.executable), "agent-memory")


@dataclass
class Result:
    rc: int
    out: dict[str, Any]
    stdout: str
    stderr: str

    @property
    def data(self) -> Any:
        assert self.out.get("success") is True, (self.rc, self.stdout, self.stderr)
        return self.out["data"]

    @property
    def code(self) -> str:
        assert self.out.get("success") is False, (self.rc, self.stdout)
        return self.out["error"]["code"]


def clean_env(home: str, **extra: str) -> dict[str, str]:
    """An environment where no user configuration leaks in. Commands use a running agent (a
    watcher the test started) but never start one by themselves (`AGENT_MEMORY_AGENT=use`):
    the agent tests (tests/agent/) turn autostart on explicitly and stop what they started."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("AGENT_MEMORY_CONFIG", "AGENT_MEMORY_AGENT")}
    env["HOME"] = home
    env["AGENT_MEMORY_AGENT"] = "use"
    env.update(extra)
    return env


def run_cli(args: list[str], cwd: str, env: dict[str, str], stdin: bytes | None = None,
            timeout: float = 60) -> Result:
    done = subprocess.run([CLI, *args], cwd=cwd, env=env, input=stdin, capture_output=True,
                          timeout=timeout)
    stdout = done.stdout.decode("utf-8")
    lines = [line for line in stdout.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected exactly one JSON line on stdout, got {stdout!r}"
    return Result(done.returncode, json.loads(lines[0]), stdout, done.stderr.decode("utf-8", "replace"))


def git_init(path: str) -> None:
    subprocess.run(["git", "init", "-q", path], check=True)


def message_args(session_id: str, text: str | None = "hello", **extra: str) -> list[str]:
    """`write` arguments for a human->model message."""
    args = ["write", f"--session-id={session_id}", "--sender-kind", "human",
            "--sender-identity", "alice", "--receiver-kind", "model",
            "--receiver-identity", "claude"]
    if text is not None:
        args += ["--text", text]
    for key, value in extra.items():
        args += [f"--{key.replace('_', '-')}", value]
    return args


class Project:
    """A scratch git project with the CLI run inside it (HOME isolated, no user config)."""

    def __init__(self, root: str, home: str, config: str | None = None) -> None:
        self.root = root
        self.home = home
        self.env = clean_env(home)
        self.store = os.path.join(root, ".agent-memory")
        self.config = config

    def cli(self, *args: str, stdin: bytes | None = None, cwd: str | None = None,
            timeout: float = 120) -> Result:
        prefix = ["--config", self.config] if self.config else []
        return run_cli(prefix + list(args), cwd=cwd or self.root, env=self.env, stdin=stdin,
                       timeout=timeout)

    def popen(self, *args: str, **kwargs) -> subprocess.Popen:
        prefix = ["--config", self.config] if self.config else []
        return subprocess.Popen([CLI, *prefix, *args], cwd=self.root, env=self.env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)

    def files(self, session_id: str, area: str = "") -> list[str]:
        path = os.path.join(self.store, area, session_id)
        return sorted(os.listdir(path)) if os.path.isdir(path) else []

    def final_files(self, session_id: str, area: str = "") -> list[str]:
        from agent_memory.outbox.names import is_final
        return [n for n in self.files(session_id, area) if is_final(n)]


def make_project(tmp_path, config: str | None = None, init: bool = True) -> Project:
    root = tmp_path / "project"
    root.mkdir()
    git_init(str(root))
    home = tmp_path / "home"
    home.mkdir()
    project = Project(str(root), str(home), config)
    if init:
        result = project.cli("store", "init")
        assert result.rc == 0, result.stdout
    return project


def open_args(session_id, project_id="proj"):
    return ["session", "open", "--session-id", session_id, "--project-id", project_id,
            "--dialogue-kind", "human,model", "--participant", "alice", "claude",
            "--title", "T", "--metadata", '{"origin": "test"}']


# Every read of one session, but for the session's id (given last).
_M = "3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f"
SESSION_READS = [["read"], ["relations"], ["leaves"], ["path", "--node-id", _M],
                 ["graph", "--anchor", _M], ["working-set", "--anchor-text", "x"],
                 ["search", "--query", "x", "--scope", "session", "--target"]]


def session_read(project, read: list[str], session_id: str, *options: str) -> Result:
    if read[0] == "search":
        return project.cli(*options, *read, session_id)
    return project.cli(*options, *read, "--session-id", session_id)


def write_offline(project, session_id, count, **extra):
    ids = []
    for i in range(count):
        result = project.cli("--store", "file", *message_args(session_id, f"message {i}",
                                                                **extra))
        assert result.rc == 0, result.stdout
        ids.append(result.data["message_id"])
    return ids


DEADLINE = 60.0


def wait_for(predicate: Callable[[], Any], what: str, timeout: float = DEADLINE,
             pause: float = 0.05, proc: subprocess.Popen | None = None, err=None) -> Any:
    """Poll `predicate` until it returns something true; fail with `what` after `timeout`
    (or at once when `proc` exited)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            tail = err.read_stderr()[-3000:] if err is not None else ""
            raise AssertionError(f"{what}: the process exited with {proc.returncode}: {tail}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for: {what}")
        time.sleep(pause)


def watcher_pids(base: str) -> list[int]:
    """Live `sync --watch` processes of the projects under `base` (see ops.agents)."""
    from ops.agents import agent_pids
    return agent_pids(base)
