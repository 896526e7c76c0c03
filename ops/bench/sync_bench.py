"""Benchmark: drain pending messages into the reference logger with `agent-memory sync`,
against a naive loop that sends each message through `append_message` (same messages, same
logger, one run); then the 100,000-message drain, its time against 10 times the 10,000 figure,
and the sync process's peak memory.

    python -m ops.bench.sync_bench [--messages 10000] [--sessions 10] [--large 100000]
                                   [--batch-items 1000] [--skip-naive]

Targets (issue 4): at least 10x faster than the naive loop; 100,000 in at most 12x the 10,000
time; peak memory under 200 MB. Prints one JSON object; progress on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ops.fleet.handle import Fleet
from agent_memory.outbox import atomic, encoding, names
from agent_memory.outbox.contract import format_utc, new_uuid4
from agent_memory.outbox.store import Store, utc_now


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def make_project(root: Path, sessions: int, messages: int, tag: str) -> list[dict]:
    """A git project whose outbox holds `messages` pending messages over `sessions` sessions.

    The files are made as `write` makes them (outbox.encoding records, atomic create), but
    with sequence numbers counted here: `write` counts a session's files on every call, which
    would make generating 100,000 messages quadratic.
    """
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".gitignore").write_text("/.agent-memory/\n")
    (root / ".agent-memory").mkdir(mode=0o700)
    items = []
    counts = [0] * sessions
    with Store(str(root)) as store:
        fds = []
        for s in range(sessions):
            sid = f"{tag}-{s}"
            store.append_event(sid, "open", project_id="bench", dialogue_kind=["human", "model"],
                               participants=["alice", "model"], title=None, metadata=None)
            fds.append(store.session_fd(sid))
        try:
            for i in range(messages):
                s = i % sessions
                now = utc_now()
                record = encoding.message(
                    session_id=f"{tag}-{s}", message_id=new_uuid4(),
                    text=f"benchmark message {i}: the quick brown fox jumps over the lazy dog",
                    sender_kind="human", sender_identity="alice", receiver_kind="model",
                    receiver_identity="model", occurred_at=format_utc(now),
                    sequence_number=counts[s], written_at=format_utc(now))
                counts[s] += 1
                name = names.final_name(now, record["message_id"], names.MESSAGE_EXT)
                atomic.create_exclusive(fds[s], name, encoding.encode(record))
                items.append(record)
        finally:
            for fd in fds:
                os.close(fd)
    return items


def run_sync(root: Path, config: Path, batch_items: int) -> dict:
    cli = os.path.join(os.path.dirname(sys.executable), "agent-memory")
    start = time.perf_counter()
    proc = subprocess.Popen([cli, "--config", str(config), "sync", "--batch-items",
                             str(batch_items)], cwd=root, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    stdout = proc.stdout.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    answer = json.loads(stdout)
    if os.waitstatus_to_exitcode(status) != 0 or not answer["success"]:
        raise RuntimeError(f"sync failed: {stdout[:500]!r}")
    return {"seconds": round(seconds, 2), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
            "imported": answer["data"]["totals"]["imported"]}


async def naive_loop(fleet: Fleet, records: list[dict], tag: str) -> float:
    """Each message through append_message, one after the other, under other session ids."""
    async with fleet.logger_client() as client:
        sessions = sorted({r["session_id"] for r in records})
        for sid in sessions:
            await client.open_session(f"{tag}{sid}", "bench", ("human", "model"),
                                      ["alice", "model"])
        start = time.perf_counter()
        for r in records:
            item = {k: r[k] for k in ("text", "sender_kind", "sender_identity",
                                      "receiver_kind", "receiver_identity", "occurred_at")}
            await client.append_message(session_id=f"{tag}{r['session_id']}", **item)
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--large", type=int, default=0, help="also drain this many (e.g. 100000)")
    parser.add_argument("--batch-items", type=int, default=1000)
    parser.add_argument("--skip-naive", action="store_true")
    args = parser.parse_args()
    result: dict = {"benchmark": "sync drain vs naive append_message loop",
                    "messages": args.messages, "sessions": args.sessions,
                    "batch_items": args.batch_items}
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        fleet = Fleet(tmp_path / "fleet").start()
        try:
            log(f"writing {args.messages} pending messages")
            records = make_project(tmp_path / "p10k", args.sessions, args.messages, "small")
            log("draining with agent-memory sync")
            result["sync"] = run_sync(tmp_path / "p10k", fleet.config_path, args.batch_items)
            log(json.dumps(result["sync"]))
            if not args.skip_naive:
                log("naive append_message loop")
                naive = asyncio.run(naive_loop(fleet, records, "naive-"))
                result["naive_seconds"] = round(naive, 2)
                result["speedup"] = round(naive / result["sync"]["seconds"], 1)
                log(f"naive: {naive:.1f} s")
            if args.large:
                log(f"writing {args.large} pending messages")
                make_project(tmp_path / "plarge", args.sessions, args.large, "large")
                log("draining the large outbox")
                large = run_sync(tmp_path / "plarge", fleet.config_path, args.batch_items)
                result["large"] = {"messages": args.large, **large,
                                   "ratio_to_small": round(large["seconds"]
                                                           / result["sync"]["seconds"], 1)}
        finally:
            fleet.stop()
    result["targets"] = {"speedup": ">= 10", "large_ratio": "<= 12 (for 10x the messages)",
                         "peak_rss_mb": "< 200"}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
