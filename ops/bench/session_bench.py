"""Benchmark: the OpenAI Agents SDK's `Session` kept by agent-memory (`AgentMemorySession`, a
project without a logger: the file store) against the SDK's own `SQLiteSession` on a file, the
same conversation side by side in one process. Each turn reads the history (`get_items()`),
then adds a user and an assistant item, as the SDK's Runner does; at the end, and at each
checkpoint, the reads alone are timed again.

    python -m ops.bench.session_bench [--turns 300] [--checkpoints 300,5000]

Targets (a long session stays fast): at 600 and at 10,000 items, the whole conversation and
`get_items(limit=20)` within 2x of SQLiteSession. Beside them runs a yardstick, `floor`: the
least a store of one durable file per item can do (each item an unnamed file fsynced, then
linked to its name, the directory fsynced once per batch, the history held in memory; the
store's own way of creating a record), which tells what
of the gap is the file-per-message design and what is our code. Prints one JSON object
(progress on stderr).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import tempfile
import time

from ops.bench.timing import CLI, log, ms


def _items(turn: int) -> list[dict]:
    return [{"role": "user", "content": f"question {turn}: what about the {turn}th thing?"},
            {"type": "message", "role": "assistant", "id": f"msg_{turn}", "status": "completed",
             "content": [{"type": "output_text", "annotations": [],
                          "text": f"answer {turn}: the {turn}th thing is fine."}]}]


class FileFloor:
    """The yardstick, as a Session: the writes a file-per-item store cannot skip, nothing
    else. Not a store (no names, numbers, index or checks); it runs its calls in a worker
    thread, as both sessions do."""

    def __init__(self, directory: str) -> None:
        os.makedirs(directory)
        self.fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        self.items: list = []

    async def get_items(self, limit: int | None = None) -> list:
        return await asyncio.to_thread(lambda: list(self.items[-limit:] if limit
                                                    else self.items))

    async def add_items(self, items: list) -> None:
        await asyncio.to_thread(self._add, items)

    def _add(self, items: list) -> None:
        for item in items:
            fd = os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o600, dir_fd=self.fd)
            try:
                os.write(fd, json.dumps(item).encode())
                os.fsync(fd)
                os.link(f"/proc/self/fd/{fd}", f"{len(self.items):08d}.json",
                        dst_dir_fd=self.fd, follow_symlinks=True)
            finally:
                os.close(fd)
            self.items.append(item)
        os.fsync(self.fd)


async def _timed(call) -> tuple[object, float]:
    start = time.perf_counter()
    value = await call()
    return value, time.perf_counter() - start


async def _reads(session, repeat: int = 7) -> dict[str, float]:
    """Median times of get_items() and get_items(limit=20) on the session as it stands."""
    whole, latest = [], []
    for _ in range(repeat):
        whole.append((await _timed(lambda: session.get_items()))[1])
        latest.append((await _timed(lambda: session.get_items(limit=20)))[1])
    return {"get_items_ms": ms(statistics.median(whole)),
            "get_items_limit20_ms": ms(statistics.median(latest))}


async def run(turns: int, checkpoints: list[int]) -> dict:
    from agents import SQLiteSession

    from agent_memory.integrations.openai_agents import AgentMemorySession
    with tempfile.TemporaryDirectory() as tmp:
        project = os.path.join(tmp, "project")
        os.makedirs(project)
        env = {**os.environ, "HOME": tmp}
        env.pop("AGENT_MEMORY_CONFIG", None)
        os.environ.update(HOME=tmp, AGENT_MEMORY_AGENT="off")
        os.environ.pop("AGENT_MEMORY_CONFIG", None)
        subprocess.run(["git", "init", "-q", project], check=True)
        subprocess.run([CLI, "store", "init"], cwd=project, env=env, check=True,
                       stdout=subprocess.DEVNULL)
        sessions = {"sqlite": SQLiteSession("bench", os.path.join(tmp, "sdk.sqlite3")),
                    "agent_memory": AgentMemorySession("bench", project_root=project),
                    "floor": FileFloor(os.path.join(tmp, "floor"))}
        totals = {name: 0.0 for name in sessions}
        adds: dict[str, list[float]] = {name: [] for name in sessions}
        report: dict = {"benchmark": "AgentMemorySession vs SQLiteSession, one conversation",
                        "turns": turns, "checkpoints": []}
        for turn in range(1, turns + 1):
            for name, session in sessions.items():
                history, read = await _timed(lambda: session.get_items())
                assert len(history) == 2 * (turn - 1), (name, len(history))
                _none, added = await _timed(lambda: session.add_items(_items(turn)))
                totals[name] += read + added
                adds[name].append(added)
            if turn in checkpoints or turn == turns:
                point = {"turns": turn, "items": 2 * turn}
                for name, session in sessions.items():
                    point[name] = {"conversation_s": round(totals[name], 3),
                                   "add_items_last10_ms": ms(statistics.median(adds[name][-10:])),
                                   **await _reads(session)}
                ours, theirs = point["agent_memory"], point["sqlite"]
                floor = point["floor"]["conversation_s"]
                point["ratio"] = {
                    "conversation": round(ours["conversation_s"] / theirs["conversation_s"], 2),
                    "floor_conversation": round(floor / theirs["conversation_s"], 2),
                    "conversation_over_floor": round(ours["conversation_s"] / floor, 2),
                    "get_items": round(ours["get_items_ms"] / max(theirs["get_items_ms"], 0.01), 2),
                    "get_items_limit20": round(ours["get_items_limit20_ms"]
                                               / max(theirs["get_items_limit20_ms"], 0.01), 2),
                    "add_items": round(ours["add_items_last10_ms"]
                                       / max(theirs["add_items_last10_ms"], 0.01), 2)}
                report["checkpoints"].append(point)
                log(json.dumps(point))
        report["target"] = "conversation and get_items(limit=20) within 2x at 600 and 10,000 items"
        return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--checkpoints", default="300,5000",
                        help="turn counts at which to report (each turn adds two items)")
    args = parser.parse_args()
    checkpoints = [int(x) for x in args.checkpoints.split(",") if x]
    print(json.dumps(asyncio.run(run(args.turns, checkpoints))))


if __name__ == "__main__":
    main()
