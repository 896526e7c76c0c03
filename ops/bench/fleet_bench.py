"""Benchmark of the reference fleet: `python -m ops.bench.fleet_bench [--runs N]`.

Measures, on this machine: the time from `python -m ops.fleet up` to both services answering
(the command returns only then); the append_message round trip through ailogger-client; and
messages_import of 1, 100 and 1000 items, submitted with messages_import_submit and polled with
get_job_status every 20 ms (the client's own waiting form polls every 1 s, so it always costs at
least a second). Prints one JSON object. Targets: ready < 2 s, 1000-item import < 1 s.

`--drain [N]` (default 100,000) measures a bulk drain instead: N messages imported into one
logger in batches of `--batch` (500) round-robin over `--sessions` (10) sessions, each batch
submitted with messages_import_submit and polled with get_job_status every `--poll` s (0.03),
one batch in flight at a time. Reported: total seconds, seconds and messages/s of every 10k
block (first vs last must stay close: per-item cost independent of table size), the seconds
until the background Vectorizer has vectorized everything, and the peak RSS (MB) of each fleet
process (logger server, its queue processes, embedder), sampled every 0.2 s from /proc.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

from ops.fleet import launcher, procs

REPO = Path(__file__).resolve().parents[2]


def _up(data: Path, *extra: str) -> tuple[float, dict]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "ops.fleet", "up", "--data", str(data), *extra],
                          cwd=REPO, capture_output=True, text=True, check=True)
    return time.perf_counter() - start, json.loads(done.stdout)


def _item(session_id: str, i: int) -> dict:
    return {"session_id": session_id, "text": f"bulk message {i} lorem ipsum dolor sit amet",
            "sender_kind": "model", "sender_identity": "gpt", "receiver_kind": "human",
            "receiver_identity": "alice", "message_id": str(uuid.uuid4()),
            "occurred_at": "2026-01-01T00:00:00Z"}


async def _submit_and_wait(client, items: list[dict], poll: float) -> int:
    """messages_import submitted, its job polled every `poll` s; how many items were stored."""
    from ailogger_client import queued_methods

    job_id = await client.messages_import_submit(items)
    while True:
        snapshot = await client.get_job_status(job_id, sync_from_queue=True)
        if snapshot.is_terminal:
            break
        await asyncio.sleep(poll)
    raw = snapshot.summary.get("last_queue_poll", snapshot.summary)
    result = queued_methods._find_result_array(raw) or []
    return sum(1 for r in result if r.get("success"))


async def _import(client, session_id: str, n: int, poll: float = 0.02) -> tuple[float, int]:
    items = [_item(session_id, i) for i in range(n)]
    start = time.perf_counter()
    stored = await _submit_and_wait(client, items, poll)
    return time.perf_counter() - start, stored


async def _workload(port: int, appends: int) -> dict:
    from ailogger_client import AiLoggerClient

    client = AiLoggerClient({"protocol": "http", "server": {"host": "127.0.0.1", "port": port},
                             "client": {"timeout": 30}})
    async with client:
        session_id = f"bench-{uuid.uuid4().hex}"
        await client.open_session(session_id, "bench", ("human", "model"), ["alice", "gpt"])
        await client.health()
        rtts = []
        for i in range(appends):
            start = time.perf_counter()
            await client.append_message(session_id, f"append number {i}", "human", "alice",
                                        "model", "gpt")
            rtts.append(time.perf_counter() - start)
        imports = {}
        await _import(client, session_id, 1)  # warm the queue path
        for n in (1, 100, 1000):
            elapsed, ok = await _import(client, session_id, n)
            imports[str(n)] = {"seconds": round(elapsed, 3), "stored": ok}
        start = time.perf_counter()
        await client.messages_import([_item(session_id, 0)], timeout=60)
        client_wait = time.perf_counter() - start
    rtts.sort()
    return {"append_rtt_ms": {"median": round(statistics.median(rtts) * 1000, 2),
                              "p90": round(rtts[int(len(rtts) * 0.9)] * 1000, 2),
                              "n": appends},
            "import_submit_to_result_20ms_poll": imports,
            "import_1_item_client_own_wait_s": round(client_wait, 3)}


def _rss_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


class RssSampler(threading.Thread):
    """Peak and last RSS of every process in the fleet's two process groups.

    Roles: logger_server (the service), logger_queue_manager (queuemgr's manager, a child of
    the server), logger_queue_state (its multiprocessing manager server, present from the
    start), logger_job_workers (one short-lived fork per queued job: the peak over all of
    them, with their count), embedder.
    """

    def __init__(self, logger_pid: int, embedder_pid: int, every: float = 0.2) -> None:
        super().__init__(daemon=True)
        self.logger_pid, self.embedder_pid = logger_pid, embedder_pid
        self.every = every
        self.peak: dict[str, float] = {}
        self.last: dict[str, float] = {}
        self.workers: set[int] = set()
        self.halt = threading.Event()
        self.resident: dict[int, str] = {}
        members = procs.group_members(logger_pid)
        parents = {pid: self._ppid(pid) for pid in members}
        managers = [pid for pid, ppid in parents.items() if ppid == logger_pid]
        for manager in managers:
            self.resident[manager] = "logger_queue_manager"
            for pid, ppid in parents.items():
                if ppid == manager:
                    self.resident[pid] = "logger_queue_state"
        self.resident[logger_pid] = "logger_server"
        self.resident[embedder_pid] = "embedder"

    @staticmethod
    def _ppid(pid: int) -> int:
        try:
            return int(procs._stat_fields(pid)[1])  # noqa: SLF001 - /proc parsing helper
        except (TypeError, ValueError, IndexError):
            return -1

    def sample(self) -> None:
        for pgid in (self.logger_pid, self.embedder_pid):
            for pid in procs.group_members(pgid):
                rss = _rss_mb(pid)
                if rss is None:
                    continue
                role = self.resident.get(pid)
                if role is None:
                    role = "logger_job_workers" if pgid == self.logger_pid else "embedder_other"
                    self.workers.add(pid)
                self.last[role] = rss
                self.peak[role] = max(self.peak.get(role, 0.0), rss)

    def run(self) -> None:
        while not self.halt.is_set():
            self.sample()
            self.halt.wait(self.every)

    def report(self) -> dict:
        out = {role: {"peak_mb": round(self.peak[role], 1), "last_mb": round(self.last[role], 1)}
               for role in sorted(self.peak)}
        if "logger_job_workers" in out:
            out["logger_job_workers"]["seen"] = len(self.workers)
            del out["logger_job_workers"]["last_mb"]
        return out


async def _drain(port: int, total: int, batch: int, sessions: int, poll: float,
                 vector_wait: float, hold: bool = False) -> dict:
    from ailogger_client import AiLoggerClient

    client = AiLoggerClient({"protocol": "http", "server": {"host": "127.0.0.1", "port": port},
                             "client": {"timeout": 60}})
    block = 10_000 if total >= 20_000 else max(batch, total // 10)
    async with client:
        sids = [f"drain-{s}-{uuid.uuid4().hex}" for s in range(sessions)]
        for sid in sids:
            await client.open_session(sid, "drain", ("human", "model"), ["alice", "gpt"])
        stored, blocks, batch_seconds = 0, [], []
        start = block_start = time.perf_counter()
        done = 0
        for number in range(0, (total + batch - 1) // batch):
            sid = sids[number % sessions]
            items = [_item(sid, done + i) for i in range(min(batch, total - done))]
            began = time.perf_counter()
            stored += await _submit_and_wait(client, items, poll)
            batch_seconds.append(time.perf_counter() - began)
            done += len(items)
            if done % block == 0 or done == total:
                now = time.perf_counter()
                blocks.append({"upto": done, "seconds": round(now - block_start, 2),
                               "msgs_per_s": round(block / max(now - block_start, 1e-9))})
                block_start = now
        imported_s = time.perf_counter() - start
        health = (await client.health())
        pending = _pending(health)
        if hold:
            vector_wait = 0.0
        deadline = time.perf_counter() + vector_wait
        while pending and time.perf_counter() < deadline:
            await asyncio.sleep(0.5)
            pending = _pending(await client.health())
        vectorized_s = time.perf_counter() - start
    batch_seconds.sort()
    return {"messages": total, "stored": stored, "batch": batch, "sessions": sessions,
            "poll_s": poll, "import_total_s": round(imported_s, 2),
            "msgs_per_s": round(total / imported_s),
            "batch_s": {"median": round(statistics.median(batch_seconds), 3),
                        "p90": round(batch_seconds[int(len(batch_seconds) * 0.9)], 3),
                        "max": round(batch_seconds[-1], 3)},
            "blocks": blocks,
            "first_vs_last_block_s": [blocks[0]["seconds"], blocks[-1]["seconds"]],
            "hold_vectors": hold,
            "all_vectorized_s": round(vectorized_s, 2) if not pending else None,
            "pending_vectors_left": pending}


def _pending(health) -> int | None:
    data = health.get("data", health) if isinstance(health, dict) else {}
    return data.get("pending_vectors")


def drain_main(args) -> int:
    with tempfile.TemporaryDirectory(prefix="fleet-drain-") as tmp:
        data = Path(args.data) if args.data else Path(tmp) / "drain"
        _, up = _up(data, *(["--hold-vectors"] if args.hold_vectors else []))
        sampler = RssSampler(up["logger"]["pid"], up["embedder"]["pid"])
        sampler.sample()
        start_rss = {k: round(v, 1) for k, v in sampler.last.items()}
        sampler.peak.pop("logger_job_workers", None)
        sampler.start()
        try:
            work = asyncio.run(_drain(up["logger"]["port"], args.drain, args.batch,
                                      args.sessions, args.poll, args.vector_wait,
                                      args.hold_vectors))
        finally:
            sampler.halt.set()
            sampler.join()
            sampler.sample()
            launcher.stop(data)
    out = {"drain": work, "rss_start_mb": start_rss, "rss_mb": sampler.report(),
           "cpus": os.cpu_count()}
    sys.stdout.write(json.dumps(out) + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ops.bench.fleet_bench")
    parser.add_argument("--runs", type=int, default=3, help="start/stop cycles to time")
    parser.add_argument("--appends", type=int, default=200)
    parser.add_argument("--drain", type=int, nargs="?", const=100_000, default=None,
                        metavar="N", help="bulk drain of N messages (default 100000) instead")
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--poll", type=float, default=0.03, help="get_job_status interval, s")
    parser.add_argument("--vector-wait", type=float, default=300.0,
                        help="after the drain, wait up to this long for every vector")
    parser.add_argument("--data", default=None, help="drain: data dir (default: a temp dir)")
    parser.add_argument("--hold-vectors", action="store_true",
                        help="drain with the logger's hold_vectors switch on (import cost alone)")
    args = parser.parse_args(argv)
    if args.drain is not None:
        return drain_main(args)
    with tempfile.TemporaryDirectory(prefix="fleet-bench-") as tmp:
        readies, work = [], {}
        for run in range(args.runs):
            data = Path(tmp) / f"run{run}"
            ready, up = _up(data)
            readies.append(ready)
            try:
                if run == args.runs - 1:
                    work = asyncio.run(_workload(up["logger"]["port"], args.appends))
            finally:
                launcher.stop(data)
    out = {"ready_s": {"median": round(statistics.median(readies), 3),
                       "all": [round(r, 3) for r in readies]}, **work,
           "targets": {"ready_s": 2.0, "import_1000_s": 1.0}}
    out["targets_met"] = (out["ready_s"]["median"] < 2.0
                          and work["import_submit_to_result_20ms_poll"]["1000"]["seconds"] < 1.0)
    sys.stdout.write(json.dumps(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
