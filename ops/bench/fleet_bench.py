"""Benchmark of the reference fleet: `python -m ops.bench.fleet_bench [--runs N]`.

Measures, on this machine: the time from `python -m ops.fleet up` to both services answering
(the command returns only then); the append_message round trip through ailogger-client; and
messages_import of 1, 100 and 1000 items, submitted with messages_import_submit and polled with
get_job_status every 20 ms (the client's own waiting form polls every 1 s, so it always costs at
least a second). Prints one JSON object. Targets: ready < 2 s, 1000-item import < 1 s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from ops.fleet import launcher

REPO = Path(__file__).resolve().parents[2]


def _up(data: Path) -> tuple[float, dict]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "ops.fleet", "up", "--data", str(data)],
                          cwd=REPO, capture_output=True, text=True, check=True)
    return time.perf_counter() - start, json.loads(done.stdout)


def _item(session_id: str, i: int) -> dict:
    return {"session_id": session_id, "text": f"bulk message {i} lorem ipsum dolor sit amet",
            "sender_kind": "model", "sender_identity": "gpt", "receiver_kind": "human",
            "receiver_identity": "alice", "message_id": str(uuid.uuid4()),
            "occurred_at": "2026-01-01T00:00:00Z"}


async def _import(client, session_id: str, n: int, poll: float = 0.02) -> tuple[float, int]:
    from ailogger_client import queued_methods

    items = [_item(session_id, i) for i in range(n)]
    start = time.perf_counter()
    job_id = await client.messages_import_submit(items)
    while True:
        snapshot = await client.get_job_status(job_id, sync_from_queue=True)
        if snapshot.is_terminal:
            break
        await asyncio.sleep(poll)
    elapsed = time.perf_counter() - start
    raw = snapshot.summary.get("last_queue_poll", snapshot.summary)
    result = queued_methods._find_result_array(raw) or []
    return elapsed, sum(1 for r in result if r.get("success"))


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ops.bench.fleet_bench")
    parser.add_argument("--runs", type=int, default=3, help="start/stop cycles to time")
    parser.add_argument("--appends", type=int, default=200)
    args = parser.parse_args(argv)
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
