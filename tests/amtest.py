"""Helpers shared by the tests: run the real `agent-memory` CLI as a subprocess in a project."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

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
    """An environment where no user configuration leaks in."""
    env = {k: v for k, v in os.environ.items() if k != "AGENT_MEMORY_CONFIG"}
    env["HOME"] = home
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
