"""Benchmark: the watcher (`agent-memory sync --watch`) against a private reference fleet.

1. Latency: with a watcher running, from `write` returning to the message being confirmed in
   the reference logger (polled with `message_get` every 5 ms from this process), over N
   writes: median and p95. Measured with `--wait 0` (the write hands the file to the watcher
   and returns at once, so the whole forward happens after it returns), with the vector
   embedded by the watcher (`AGENT_MEMORY_EMBED_BUDGET=0`) and, separately, with the default
   write (embed on write, then the agent's confirmation within the default `--wait`), where the answer
   already says whether the logger confirmed it.
2. Cron with a watcher alive: the one-shot `agent-memory sync` as a whole process (it returns
   at once, without loading the fleet client) against `agent-memory --store file write`, in
   interleaved pairs, medians and their ratio.

    python -m ops.bench.watch_bench [--writes 200] [--pairs 20] [--default-writes 30]

Targets (issue 6): latency median under 0.5 s; sync / write ratio at most 1.5. Prints one JSON
object; progress on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from ops.bench.timing import CLI, log, ms, timed_cli
from ops.fleet.handle import Fleet




def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]




def write_args(config: Path, sid: str, text: str, *extra: str) -> list[str]:
    return ["--config", str(config), "write", "--session-id", sid, "--sender-kind", "human",
            "--sender-identity", "alice", "--receiver-kind", "model", "--receiver-identity",
            "claude", "--text", text, *extra]


async def wait_confirmed(client, message_id: str, timeout: float = 60.0) -> float:
    """perf_counter() at which message_get first finds the message."""
    from ailogger_client.errors import ServiceRefusalError
    deadline = time.perf_counter() + timeout
    while True:
        try:
            await client.message_get(message_id=message_id)
            return time.perf_counter()
        except ServiceRefusalError:
            pass
        if time.perf_counter() > deadline:
            raise TimeoutError(f"{message_id} not confirmed within {timeout} s")
        await asyncio.sleep(0.005)


async def latency_run(fleet: Fleet, project: Path, config: Path, env: dict[str, str],
                      count: int, extra: tuple[str, ...], tag: str) -> dict:
    sid = f"{tag}-{int(time.time() * 1000)}"
    timed_cli(["--config", str(config), "session", "open", "--session-id", sid, "--project-id",
               "bench", "--dialogue-kind", "human,model", "--participant", "alice", "claude"],
              project, env)
    latencies, write_times, answered_logger = [], [], 0
    async with fleet.logger_client() as client:
        for i in range(count):
            answer, elapsed = await asyncio.to_thread(
                timed_cli, write_args(config, sid, f"watched message {i}", *extra), project, env)
            returned = time.perf_counter()
            write_times.append(elapsed)
            if answer["store"] == "logger":
                answered_logger += 1
            confirmed = await wait_confirmed(client, answer["data"]["message_id"])
            latencies.append(max(0.0, confirmed - returned))
            if (i + 1) % 50 == 0:
                log(f"  {tag}: {i + 1}/{count}")
    return {"writes": count, "latency_median_ms": ms(statistics.median(latencies)),
            "latency_p95_ms": ms(p95(latencies)), "latency_max_ms": ms(max(latencies)),
            "write_median_ms": ms(statistics.median(write_times)),
            "answered_store_logger": answered_logger}


def cron_run(project: Path, config: Path, env: dict[str, str], pairs: int,
             write_env: dict[str, str]) -> dict:
    sync_args = ["--config", str(config), "sync"]
    timed_cli(["--config", str(config), "session", "open", "--session-id", "cron-bench",
               "--project-id", "bench", "--dialogue-kind", "human,model", "--participant",
               "alice", "claude"], project, env)
    write = write_args(config, "cron-bench", "a benchmark message of a few words")
    file_write = ["--store", "file", *write]
    answer, _ = timed_cli(sync_args, project, env)
    assert answer["data"].get("skipped") is False, answer  # nothing pending: no round
    timed_cli(file_write, project, write_env)  # warm the page cache
    syncs, writes = [], []
    for _ in range(pairs):
        syncs.append(timed_cli(sync_args, project, env)[1])
        writes.append(timed_cli(file_write, project, write_env)[1])
    sync_median, write_median = statistics.median(syncs), statistics.median(writes)
    return {"pairs": pairs, "sync_median_ms": ms(sync_median),
            "file_write_median_ms": ms(write_median),
            "ratio": round(sync_median / write_median, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=200)
    parser.add_argument("--default-writes", type=int, default=30,
                        help="writes with embed-on-write and the default --wait")
    parser.add_argument("--pairs", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        log("starting a private reference fleet")
        fleet = Fleet(tmp_path / "fleet").start()
        watcher = None
        try:
            project = tmp_path / "project"
            project.mkdir()
            subprocess.run(["git", "init", "-q", str(project)], check=True)
            env = {**os.environ, "HOME": str(tmp_path)}
            env.pop("AGENT_MEMORY_CONFIG", None)
            no_embed = {**env, "AGENT_MEMORY_EMBED_BUDGET": "0"}
            timed_cli(["store", "init"], project, env)
            config = fleet.config_path
            err = open(tmp_path / "watcher.stderr", "wb")
            watcher = subprocess.Popen([CLI, "--config", str(config), "sync", "--watch"],
                                       cwd=project, env=env, stdout=subprocess.PIPE,
                                       stderr=err)
            state_file = project / ".agent-memory" / ".watcher.json"
            deadline = time.monotonic() + 60
            while not (state_file.exists()
                       and json.loads(state_file.read_text()).get("pid") == watcher.pid):
                if time.monotonic() > deadline or watcher.poll() is not None:
                    raise RuntimeError("the watcher did not start")
                time.sleep(0.05)
            log(f"latency, --wait 0, vectors by the watcher: {args.writes} writes")
            handed = asyncio.run(latency_run(fleet, project, config, no_embed, args.writes,
                                             ("--wait", "0"), "agent_wait_0"))
            log(f"latency, default write (embed on write, --wait 1): {args.default_writes}")
            default = asyncio.run(latency_run(fleet, project, config, env,
                                              args.default_writes, (), "default"))
            log(f"cron one-shot sync vs file write: {args.pairs} pairs")
            cron = cron_run(project, config, env, args.pairs, no_embed)
            watcher.send_signal(signal.SIGTERM)
            out, _ = watcher.communicate(timeout=60)
            summary = json.loads(out)["data"]
            result = {
                "agent_wait_0": handed,
                "default_write": default,
                "cron_sync_vs_file_write": cron,
                "watcher": {"exit_code": watcher.returncode, "imported": summary["imported"],
                            "rounds": summary["rounds"],
                            "vectors_written": summary["vectors_written"]},
                "targets": {"latency_median_ms": 500, "sync_over_write_ratio": 1.5},
            }
            print(json.dumps(result, indent=1))
        finally:
            if watcher is not None and watcher.poll() is None:
                watcher.kill()
                watcher.wait()
            fleet.stop()


if __name__ == "__main__":
    main()
