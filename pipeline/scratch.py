"""A scratch project for the live checks, and the CLI driven in it as a user would.

Each check gets a fresh git repository with `.agent-memory/` ignored (`agent-memory store
init`), under one temporary directory per pipeline run. Sessions are named
`pipeline-<run id>-<n>` under the project id `agent-memory-pipeline-<run id>`, so a run against
a production logger touches only what it created, and deletes it at the end.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import uuid
from typing import Any


def cli_path() -> str:
    """The `agent-memory` beside this interpreter (its virtual environment), else on PATH."""
    beside = os.path.join(os.path.dirname(sys.executable), "agent-memory")
    if os.path.exists(beside):
        return beside
    found = shutil.which("agent-memory")
    if found is None:
        raise RuntimeError("agent-memory is not installed beside this Python or on PATH")
    return found


class Answer:
    """What one CLI call returned: exit code, the JSON object, stderr."""

    def __init__(self, rc: int, stdout: str, stderr: str) -> None:
        self.rc = rc
        self.stdout = stdout
        self.stderr = stderr
        lines = [line for line in stdout.splitlines() if line.strip()]
        try:
            self.out: dict[str, Any] = json.loads(lines[0]) if len(lines) == 1 else {}
        except json.JSONDecodeError:
            self.out = {}
        self.one_object = len(lines) == 1 and bool(self.out)

    @property
    def data(self) -> Any:
        return self.out.get("data")

    @property
    def store(self) -> str | None:
        return self.out.get("store")

    @property
    def code(self) -> str | None:
        return (self.out.get("error") or {}).get("code")

    def brief(self) -> dict[str, Any]:
        return {"rc": self.rc, "stdout": self.stdout[:600], "stderr": self.stderr[-400:]}


class Run:
    """One pipeline run: its id, its temporary directory, the sessions it opened."""

    def __init__(self, config_path: str | None) -> None:
        self.run_id = uuid.uuid4().hex[:12]
        self.project_id = f"agent-memory-pipeline-{self.run_id}"
        self.config_path = config_path
        self.tmp = tempfile.mkdtemp(prefix="agent-memory-pipeline-")
        self.sessions: list[str] = []
        self._count = 0
        self._lock = threading.Lock()
        self.cli = cli_path()
        self.projects: list["Scratch"] = []

    def session_id(self) -> str:
        with self._lock:  # checks may run at once (--jobs)
            self._count += 1
            session_id = f"pipeline-{self.run_id}-{self._count}"
            self.sessions.append(session_id)
        return session_id

    def project(self, name: str, agent: bool = False) -> "Scratch":
        """A fresh scratch project; `agent=True` lets its commands use (and start) the project's
        agent as a user's do. Off by default: a check that stands for a fleet which is down (by
        a configuration naming closed ports) must not have an agent, started by an earlier
        command with the real configuration, deliver behind its back."""
        project = Scratch(self, os.path.join(self.tmp, name), agent)
        self.projects.append(project)
        return project

    def close(self) -> None:
        """Stop the agents the checks' commands started (as a user's would), then remove the
        scratch projects."""
        for project in self.projects:
            project.am("agent", "stop", config=None)
        shutil.rmtree(self.tmp, ignore_errors=True)


class Scratch:
    """A git project with an initialised store; `am(...)` runs the CLI inside it."""

    def __init__(self, run: Run, root: str, agent: bool = False) -> None:
        self.run = run
        self.root = root
        self.store = os.path.join(root, ".agent-memory")
        os.makedirs(root)
        subprocess.run(["git", "init", "-q", root], check=True)
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("AGENT_MEMORY_CONFIG", "AGENT_MEMORY_AGENT")}
        if not agent:
            self.env["AGENT_MEMORY_AGENT"] = "off"
        init = self.am("store", "init", config=None)
        if init.rc != 0:
            raise RuntimeError(f"store init failed: {init.brief()}")

    def am(self, *args: str, config: str | None | bool = True, stdin: bytes | None = None,
           timeout: float = 120) -> Answer:
        """Run the CLI; config=True uses the run's configuration, a path another, None none."""
        path = self.run.config_path if config is True else config
        prefix = ["--config", path] if path else []
        done = subprocess.run([self.run.cli, *prefix, *args], cwd=self.root, env=self.env,
                              input=stdin, capture_output=True, timeout=timeout)
        return Answer(done.returncode, done.stdout.decode("utf-8", "replace"),
                      done.stderr.decode("utf-8", "replace"))

    def open_session(self, config: str | None | bool = True) -> tuple[str, Answer]:
        session_id = self.run.session_id()
        answer = self.am("session", "open", "--session-id", session_id, "--project-id",
                         self.run.project_id, "--dialogue-kind", "human,model",
                         "--participant", "pipeline", "--participant", "agent",
                         "--title", "agent-memory pipeline check", config=config)
        return session_id, answer

    def write(self, session_id: str, text: str, *extra: str,
              config: str | None | bool = True) -> Answer:
        return self.am("write", "--session-id", session_id, "--sender-kind", "human",
                       "--sender-identity", "pipeline", "--receiver-kind", "model",
                       "--receiver-identity", "agent", "--text", text, *extra, config=config)

    def final_files(self, session_id: str, area: str = "") -> list[str]:
        from agent_memory.outbox.names import is_final
        path = os.path.join(self.store, area, session_id)
        return sorted(n for n in os.listdir(path) if is_final(n)) if os.path.isdir(path) else []
