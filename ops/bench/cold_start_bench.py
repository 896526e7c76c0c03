"""Benchmark: the first commands after an agent's cold start, as a user meets them. A fresh
project with the reference logger up, no agent running (mode auto): `session open`, then
`--writes` writes back to back, each a whole CLI process; repeated `--repeat` times, each in a
fresh project, its agent stopped afterwards. Interleaved with the same commands with `--store
file` in another fresh project (the baseline: what a write costs without the fleet).

For each write: its wall time, what it answered (`store`, and whether it was forwarded), and
whether its process imported the fleet client (`ailogger_client`, seen by
PYTHONPROFILEIMPORTTIME, set on both sides alike). Also how long after `session open` began
the agent answered on its socket (watched from a thread of this process every 10 ms): what a
write that waited for the agent would have cost.

    python -m ops.bench.cold_start_bench [--writes 8] [--repeat 3]

Target: every write within 2.5x of the median `--store file` write; no process but the
agent's imports the fleet client. Prints one JSON object; progress on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import threading
import time
from pathlib import Path

from ops.agents import agent_pids
from ops.bench.agent_bench import open_args, write_args
from ops.bench.timing import CLI, fleet_in_scratch, log, ms

FLEET_CLIENT = "ailogger_client"


def profiled_cli(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[dict, float, bool]:
    """One whole CLI process: its answer, its wall time, whether it imported the fleet client."""
    start = time.perf_counter()
    done = subprocess.run([CLI, *args], cwd=cwd, env={**env, "PYTHONPROFILEIMPORTTIME": "1"},
                          capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    answer = json.loads(done.stdout)
    if not answer.get("success"):
        raise RuntimeError(f"{args}: {done.stdout!r} {done.stderr[-2000:]!r}")
    imported = any(line.rsplit(b"|", 1)[-1].strip() == FLEET_CLIENT.encode()
                   for line in done.stderr.splitlines() if line.startswith(b"import time:"))
    return answer, elapsed, imported


def fresh_project(base: Path, name: str, env: dict[str, str]) -> Path:
    root = base / name
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run([CLI, "store", "init"], cwd=root, env=env, capture_output=True, check=True)
    return root


def stop_agent(root: Path, prefix: list[str], env: dict[str, str]) -> None:
    subprocess.run([CLI, *prefix, "agent", "stop", "--timeout", "30"], cwd=root, env=env,
                   capture_output=True, check=False)
    for pid in agent_pids(str(root)):
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass


def watch_socket(store: Path, seen: dict) -> threading.Thread:
    """A thread noting (in `seen["at"]`) when the store's agent first answers on its socket."""
    from agent_memory.sync.agent.channel import reach

    def watch() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            sock = reach(str(store), 0.05)
            if sock is not None:
                sock.close()
                seen["at"] = time.monotonic()
                return
            time.sleep(0.01)
    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def one_run(base: Path, run: int, prefix: list[str], env: dict[str, str], writes: int,
            store: str) -> dict:
    """`session open` then `writes` writes back to back in a fresh project."""
    root = fresh_project(base, f"{store}-{run}", env)
    extra = ["--store", "file"] if store == "file" else []
    sid = f"cold-{store}-{run}"
    seen: dict = {}
    watcher = watch_socket(root / ".agent-memory", seen) if store == "auto" else None
    opened_at = time.monotonic()
    answer, seconds, imported = profiled_cli([*prefix, *extra, *open_args(sid)], root, env)
    rows = [{"command": "session open", "ms": ms(seconds), "store": answer["store"],
             "imported_fleet_client": imported}]
    for i in range(writes):
        answer, seconds, imported = profiled_cli(
            [*prefix, *extra, *write_args(sid, f"cold start write {i}")], root, env)
        rows.append({"command": f"write {i}", "ms": ms(seconds), "store": answer["store"],
                     "forwarded": answer["data"].get("forwarded", answer["store"] == "logger"),
                     "imported_fleet_client": imported})
    up_after = None
    if store == "auto":
        watcher.join()
        if "at" not in seen:
            raise RuntimeError("the autostarted agent did not come up")
        up_after = ms(seen["at"] - opened_at)
        deadline = time.monotonic() + 60
        done = False
        while not done and time.monotonic() < deadline:  # every file forwarded, none lost
            pending = [n for n in os.listdir(root / ".agent-memory" / sid)
                       if n.endswith((".msg", ".ses"))]
            done = not pending
            time.sleep(0.05)
        if not done:
            raise RuntimeError(f"files left pending: {pending}")
        stop_agent(root, prefix, env)
    return {"rows": rows, "agent_up_after_ms": up_after}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with fleet_in_scratch() as (base, fleet, env):
        prefix = ["--config", str(fleet.config_path)]
        runs = {"auto": [], "file": []}
        for run in range(args.repeat):
            for store in ("auto", "file"):
                runs[store].append(one_run(base, run, prefix, env, args.writes, store))
                rows = runs[store][-1]["rows"]
                log(f"{store} {run + 1}/{args.repeat}: "
                    + " ".join(f"{r['ms']:.0f}{'*' if r['imported_fleet_client'] else ''}"
                               for r in rows))
    auto_writes = [r for run in runs["auto"] for r in run["rows"][1:]]
    file_writes = [r for run in runs["file"] for r in run["rows"][1:]]
    baseline = statistics.median(r["ms"] for r in file_writes)
    worst = max(r["ms"] for r in auto_writes)
    print(json.dumps({
        "writes": len(auto_writes),
        "file_write_median_ms": baseline,
        "auto_write_median_ms": statistics.median(r["ms"] for r in auto_writes),
        "auto_write_max_ms": worst,
        "worst_ratio": round(worst / baseline, 2),
        "writes_over_2_5x": sum(r["ms"] > 2.5 * baseline for r in auto_writes),
        "writes_importing_fleet_client": sum(r["imported_fleet_client"] for r in auto_writes),
        "session_opens_importing_fleet_client": sum(run["rows"][0]["imported_fleet_client"]
                                                    for run in runs["auto"]),
        "session_open_ms": [run["rows"][0]["ms"] for run in runs["auto"]],
        "answered": {store: sum(r["store"] == store for r in auto_writes)
                     for store in ("logger", "file")},
        "agent_listening_after_ms": [run["agent_up_after_ms"] for run in runs["auto"]],
        "runs": runs, "target_ratio": 2.5}, indent=1))


if __name__ == "__main__":
    main()
