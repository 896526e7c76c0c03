"""docs/getting-started.md, walked as a new user walks it: every ```sh block of the page (but
those it marks as not run: the install, a real fleet's hosts) runs in order in one shell, in a
fresh home, with this checkout as ~/agent-memory and its reference fleet as the logger. Then
what the page promises is checked: the file-store-only sync is not a failure, the logger gets
every message once, a write with the logger down is kept and delivered."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

from amtest import watcher_pids
from markdown import ROOT, code_blocks, read

PAGE = os.path.join("docs", "getting-started.md")
NOT_RUN = "<!-- not run by tests/docs/test_getting_started.py"


def walk() -> tuple[str, str]:
    """The page's shell: everything up to its clean-up, and the clean-up."""
    blocks = [(body, before) for language, body, before in code_blocks(read(PAGE))
              if language == "sh" and not before.startswith(NOT_RUN)]
    cleanup = [body for body, before in blocks if before.startswith("Clean up")]
    assert len(cleanup) == 1, "the page ends with one clean-up block, after 'Clean up:'"
    steps = [body for body, before in blocks if not before.startswith("Clean up")]
    return "".join(steps), cleanup[0]


def answers(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


# What the test reads from the logger before the page's clean-up stops it (in the page's shell,
# where its `cd` and `export` hold).
LOOK = ("agent-memory --store logger --no-agent read --session-id chat-1 "
        "> \"$HOME/logger-read.json\"\n")


def test_the_getting_started_page_works_as_written(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    os.symlink(ROOT, home / "agent-memory")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_MEMORY_")}
    env.update(HOME=str(home), PATH=os.path.dirname(sys.executable) + os.pathsep + env["PATH"])
    steps, cleanup = walk()
    config = home / "am-fleet" / "agent-memory.json"
    try:
        done = subprocess.run(["bash", "-c", "set -euo pipefail -x\n" + steps + LOOK + cleanup],
                              cwd=home, env=env, capture_output=True, text=True, timeout=300)
    finally:
        for pid in watcher_pids(str(tmp_path)):  # the page's watcher, should the walk fail
            os.kill(pid, signal.SIGKILL)
        if config.exists():  # the page's fleet, likewise (after its own `down`: nothing to do)
            subprocess.run([sys.executable, "-m", "ops.fleet", "down", "--data",
                            str(config.parent)], cwd=ROOT, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr[-4000:]
    data = [a.get("data", {}) for a in answers(done.stdout) if a.get("success")]
    no_logger = [d for d in data if d.get("logger_configured") is False]
    assert len(no_logger) == 1 and no_logger[0]["skipped"] is True
    assert no_logger[0]["pending"] == {"messages": 2, "events": 1}
    first = [d for d in data if d.get("totals", {}).get("imported") == 2]
    assert first and first[0]["totals"]["events_applied"] == 1, done.stdout
    kept = [d for d in data if d.get("forwarded") is False]
    assert len(kept) == 1 and kept[0]["outbox"] == "pending", done.stdout
    assert "sync exit code: 4" in done.stdout
    started = [d for d in data if "started_now" in d]
    assert len(started) == 1 and started[0]["running"] is True, done.stdout
    logged = json.loads((home / "logger-read.json").read_text())
    assert logged["store"] == "logger"
    assert [m["text"] for m in logged["data"]["messages"]] == [
        "The staging database listens on port 5433.",
        "Noted: staging's database is on port 5433.",
        "Written while the logger is down."]
