"""Helpers for the watcher tests: real `agent-memory sync --watch` subprocesses, polling with
generous deadlines (never asserting speed), and a fast way to fill an outbox with real files."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from typing import Any, Callable

from amtest import DEADLINE, wait_for  # noqa: F401 - the watcher tests import it from here
from agent_memory.outbox.store import Store



def read_state(project) -> dict | None:
    try:
        with open(os.path.join(project.store, ".watcher.json")) as handle:
            return json.load(handle)
    except FileNotFoundError:
        return None


class Watcher:
    def __init__(self, project, proc: subprocess.Popen, err) -> None:
        self.project = project
        self.proc = proc
        self.err = err
        self.summary: dict | None = None
        self.stdout = ""
        self.stderr = ""

    @property
    def pid(self) -> int:
        return self.proc.pid

    def wait_ready(self) -> "Watcher":
        """Until it holds the lock and has published its state (status says alive)."""
        def ready():
            state = read_state(self.project)
            return state is not None and state.get("pid") == self.pid \
                and state.get("status") != "starting"
        wait_for(ready, "the watcher to publish its state", proc=self.proc, err=self)
        return self

    def stop(self, sig: int = signal.SIGTERM, timeout: float = DEADLINE) -> int:
        """Signal it, collect its output; returns the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        out, _ = self.proc.communicate(timeout=timeout)
        self.stdout, self.stderr = out.decode(), self.read_stderr()
        lines = [line for line in self.stdout.splitlines() if line.strip()]
        if sig != signal.SIGKILL:
            assert len(lines) == 1, f"expected one JSON object on stdout: {self.stdout!r}"
            self.summary = json.loads(lines[0])
        return self.proc.returncode

    def read_stderr(self) -> str:
        self.err.seek(0)
        return self.err.read().decode(errors="replace")

    def log_lines(self) -> list[dict]:
        """Every stderr line, each parsed as JSON (fails on a line that is not)."""
        lines = []
        for line in self.stderr.splitlines():
            if line.strip():
                try:
                    lines.append(json.loads(line))
                except ValueError:
                    raise AssertionError(f"a stderr line is not JSON: {line!r}\n"
                                         f"{self.stderr[-3000:]}") from None
        return lines


class WatcherSet:
    def __init__(self) -> None:
        self.started: list[Watcher] = []

    def start(self, project, *extra: str, rescan: float = 30.0) -> Watcher:
        """Start a watcher; its stderr goes to a file (a pipe nobody reads would fill up and
        block it)."""
        from amtest import CLI
        prefix = ["--config", project.config] if project.config else []
        err_path = os.path.join(os.path.dirname(project.root),
                                f"watcher-{len(self.started)}.stderr")
        err = open(err_path, "w+b")
        proc = subprocess.Popen([CLI, *prefix, "sync", "--watch", "--rescan-interval",
                                 str(rescan), *extra], cwd=project.root, env=project.env,
                                stdout=subprocess.PIPE, stderr=err)
        watcher = Watcher(project, proc, err)
        self.started.append(watcher)
        return watcher

    def kill_all(self) -> None:
        for watcher in self.started:
            if watcher.proc.poll() is None:
                watcher.proc.kill()
            try:
                watcher.proc.communicate(timeout=30)
            except (ValueError, subprocess.TimeoutExpired):
                pass
            watcher.err.close()


def fill(project, sessions: dict[str, int], open_sessions: bool = True) -> dict[str, list[str]]:
    """Pending messages written with the store's own code (atomic files, as `write` makes
    them), fast: {session_id: count} -> {session_id: [message_id in name order]}."""
    expected: dict[str, list[str]] = {}
    with Store(project.root) as store:
        for sid, count in sessions.items():
            if open_sessions:
                store.append_event(sid, "open", project_id="watch-tests",
                                   dialogue_kind=["human", "model"],
                                   participants=["alice", "claude"], title=None, metadata=None)
            named = []
            for i in range(count):
                new = store.append_message({
                    "session_id": sid, "text": f"message {i} of {sid}",
                    "sender_kind": "human", "sender_identity": "alice",
                    "receiver_kind": "model", "receiver_identity": "claude"})
                named.append((new.file.name, new.record["message_id"]))
            # the logger receives a session in name order (time, then uuid within a millisecond)
            expected[sid] = [message_id for _name, message_id in sorted(named)]
    return expected


def count_final(project, sid: str, area: str, ext: str = ".msg") -> int:
    return len([n for n in project.final_files(sid, area) if n.endswith(ext)])


def all_imported(project, expected: dict[str, list[str]]) -> bool:
    return all(count_final(project, sid, ".imported") == len(ids) and
               count_final(project, sid, "") == 0 for sid, ids in expected.items())
