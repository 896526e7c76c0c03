"""What the benchmarks share: the CLI beside this interpreter, one timed command, the figures
in milliseconds, progress on stderr (stdout is each bench's one JSON report)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

CLI = os.path.join(os.path.dirname(sys.executable), "agent-memory")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def timed_cli(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[dict, float]:
    """One whole CLI process: its answer and its wall time; a failed command stops the bench."""
    start = time.perf_counter()
    done = subprocess.run([CLI, *args], cwd=cwd, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    answer = json.loads(done.stdout)
    if not answer.get("success"):
        raise RuntimeError(f"{args}: {done.stdout!r} {done.stderr[-2000:]!r}")
    return answer, elapsed
