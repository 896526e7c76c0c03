"""Benchmark: what a command costs in a long session. One session of N messages already imported
(files written directly into `.agent-memory/.imported/<session>/`, as a long-lived session
leaves them), for each N; then, as whole CLI processes with `--store file` and no agent, the
median of each command: a write, a window of the last 20 (`read --start N-20 --block-size
20`), the default read, `get` of a message in the middle, and `status` with nothing pending.
The ledger is built by a first read before anything is timed (it is built once per session).

    python -m ops.bench.long_session_bench [--sizes 0,1000,10000,100000] [--runs 7]
    python -m ops.bench.long_session_bench --no-ledger   # the files alone, for comparison

Targets (a long session stays fast): at every N, a write within 1.1x of N = 0; the window,
`get` and `status` within 1.5x of N = 0. Prints one JSON object (progress on stderr).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
import uuid
from datetime import datetime, timedelta, timezone

from ops.bench.timing import CLI, log, ms

SESSION = "long"


def _fill(store: str, count: int) -> list[str]:
    """`count` imported messages of SESSION (and its open event), written as the sync engine
    leaves them, without fsync (a bench's setup, not a store's write path); their ids."""
    from agent_memory.outbox import encoding, names
    imported = os.path.join(store, ".imported", SESSION)
    os.makedirs(imported, mode=0o700, exist_ok=True)
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    opened = encoding.event(event="open", event_id=str(uuid.uuid4()), session_id=SESSION,
                            occurred_at="2026-01-01T00:00:00.000000Z", project_id="bench",
                            dialogue_kind=["human", "model"], participants=["alice", "claude"])
    with open(os.path.join(imported, names.final_name(start, opened["event_id"],
                                                      names.EVENT_EXT)), "wb") as handle:
        handle.write(encoding.encode(opened))
    ids = []
    for i in range(count):
        moment = start + timedelta(milliseconds=i + 1)
        message_id = str(uuid.uuid4())
        stamp = moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        record, data = encoding.encoded_message(
            session_id=SESSION, message_id=message_id,
            text=f"message {i}: a few words of an ordinary turn of a long dialogue",
            sender_kind="human" if i % 2 == 0 else "model",
            sender_identity="alice" if i % 2 == 0 else "claude",
            receiver_kind="model" if i % 2 == 0 else "human",
            receiver_identity="claude" if i % 2 == 0 else "alice",
            occurred_at=stamp, sequence_number=i, written_at=stamp)
        name = names.final_name(moment, message_id, names.MESSAGE_EXT)
        with open(os.path.join(imported, name), "wb") as handle:
            handle.write(data)
        ids.append(message_id)
    return ids


def _timed(args: list[str], cwd: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run([CLI, *args], cwd=cwd, env=env, capture_output=True)
    elapsed = time.perf_counter() - start
    answer = json.loads(done.stdout)
    if not answer.get("success"):
        raise RuntimeError(f"{args}: {done.stdout!r} {done.stderr[-2000:]!r}")
    return elapsed


def measure(size: int, runs: int, ledger: bool) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        project = os.path.join(tmp, "project")
        os.makedirs(project)
        env = {**os.environ, "HOME": tmp, "AGENT_MEMORY_AGENT": "off"}
        env.pop("AGENT_MEMORY_CONFIG", None)
        subprocess.run(["git", "init", "-q", project], check=True)
        subprocess.run([CLI, "store", "init"], cwd=project, env=env, check=True,
                       stdout=subprocess.DEVNULL)
        store = os.path.join(project, ".agent-memory")
        started = time.perf_counter()
        ids = _fill(store, size)
        log(f"N={size}: filled in {time.perf_counter() - started:.1f} s")
        if not ledger:  # a file where its directory belongs: every command reads the files
            with open(os.path.join(store, ".ledger"), "w") as handle:
                handle.write("no ledger: the bench's comparison")
        started = time.perf_counter()
        build = _timed(["--store", "file", "read", "--session-id", SESSION], project, env)
        log(f"N={size}: first read (builds the ledger) {build:.2f} s")
        middle = ids[len(ids) // 2] if ids else None
        commands = {
            "write": ["--store", "file", "write", "--session-id", SESSION, "--sender-kind",
                      "human", "--sender-identity", "alice", "--receiver-kind", "model",
                      "--receiver-identity", "claude", "--text", "one more turn"],
            "window_last_20": ["--store", "file", "read", "--session-id", SESSION, "--start",
                               str(max(0, size - 20)), "--block-size", "20"],
            "default_read": ["--store", "file", "read", "--session-id", SESSION],
            "status": ["--store", "file", "status"],
        }
        if middle:
            commands["get"] = ["--store", "file", "get", middle]
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(runs):
            for name, args in commands.items():
                times[name].append(_timed(args, project, env))
        return {"messages": size, "first_read_s": round(build, 2),
                **{f"{name}_ms": ms(statistics.median(values)) for name, values in times.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="0,1000,10000,100000")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--no-ledger", action="store_true",
                        help="make the ledger unusable: every command reads the files")
    args = parser.parse_args()
    rows = []
    for size in [int(x) for x in args.sizes.split(",") if x]:
        rows.append(measure(size, args.runs, not args.no_ledger))
        log(json.dumps(rows[-1]))
    base = rows[0]
    for row in rows:
        row["ratio_to_first"] = {key[:-3]: round(row[key] / base[key], 2)
                                 for key in row if key.endswith("_ms") and key in base}
    print(json.dumps({"benchmark": "commands in a session of N imported messages, whole "
                                   "processes, --store file, no agent",
                      "ledger": not args.no_ledger, "runs": args.runs, "rows": rows,
                      "target": "write within 1.1x of the first size; window, get, status "
                                "within 1.5x"}))


if __name__ == "__main__":
    main()
