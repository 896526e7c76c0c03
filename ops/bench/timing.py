"""What the benchmarks share: the CLI beside this interpreter, one timed command, the figures
in milliseconds, progress on stderr (stdout is each bench's one JSON report)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

CLI = os.path.join(os.path.dirname(sys.executable), "agent-memory")


@contextmanager
def fleet_in_scratch() -> Iterator[tuple[Path, object, dict[str, str]]]:
    """(a scratch directory, the reference fleet started under it, an environment whose HOME
    is the scratch directory and whose projects autostart their agent); the fleet stopped and
    the directory removed at the end."""
    from ops.fleet.handle import Fleet
    with tempfile.TemporaryDirectory() as tmp:
        fleet = Fleet(Path(tmp) / "fleet", owner_pid=os.getpid()).start()
        try:
            env = {**os.environ, "HOME": tmp, "AGENT_MEMORY_AGENT": "auto"}
            env.pop("AGENT_MEMORY_CONFIG", None)
            yield Path(tmp), fleet, env
        finally:
            fleet.stop()


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
