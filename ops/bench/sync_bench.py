"""Benchmark: drain pending messages into the reference logger with a one-shot `agent-memory
sync` (a whole process), against a naive loop that sends each message through `append_message`
(same messages, same logger, one run); then, optionally, the 100,000-message drain, its time
against the 10,000 figure, and the sync process's peak memory.

The one-shot sync is timed in two cases, interleaved with the minimal drain, `--repeat` times
each (medians):
- minimal: the least a process can do with the fleet client (ops.bench.minimal_drain: import
  it, send the events and `messages_import` batches, rename): the yardstick of `no agent`;
- no agent: nothing else holds the store;
- handover: an autostarted agent of another configuration (its logger away, so the backlog is
  still there) holds the store; the sync claims it, the agent hands over and exits, the sync
  delivers with its own configuration. The handover's cost is the difference of the medians.

    python -m ops.bench.sync_bench [--messages 2000] [--sessions 4] [--repeat 5]
                                   [--large 100000] [--batch-items 1000] [--skip-naive]
                                   [--cases minimal,no_agent,handover]

Each drain's process is timed (wall) and its CPU seconds taken (user and system, from wait4):
on a shared machine the CPU figures move less.

Targets: each case at least 10x faster than the naive loop; no agent within 1.2x of the
minimal drain; the handover costs at most 0.1 s;
100,000 in at most 12x the 10,000 time; peak memory under 200 MB. Prints one JSON object;
progress on stderr.
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
import time
from pathlib import Path

from ops.fleet.handle import Fleet
from agent_memory.outbox import encoding, names
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
        for s in range(sessions):
            sid = f"{tag}-{s}"
            store.append_event(sid, "open", project_id="bench", dialogue_kind=["human", "model"],
                               participants=["alice", "model"], title=None, metadata=None)
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
            store.add_record(f"{tag}-{s}", name, encoding.encode(record))
            items.append(record)
    return items


CLI = os.path.join(os.path.dirname(sys.executable), "agent-memory")


def quiet_env() -> dict[str, str]:
    """The caller's environment without an agent mode of its own (the default, auto)."""
    env = dict(os.environ)
    env.pop("AGENT_MEMORY_AGENT", None)
    return env


def run_sync(root: Path, config: Path, batch_items: int) -> dict:
    start = time.perf_counter()
    proc = subprocess.Popen([CLI, "--config", str(config), "sync", "--batch-items",
                             str(batch_items)], cwd=root, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=quiet_env())
    stdout = proc.stdout.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    answer = json.loads(stdout)
    if os.waitstatus_to_exitcode(status) != 0 or not answer["success"]:
        raise RuntimeError(f"sync failed: {stdout[:500]!r}")
    return {"seconds": round(seconds, 2), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
            "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 2),
            "imported": answer["data"]["totals"]["imported"]}


def run_minimal(root: Path, config: Path, batch_items: int) -> dict:
    """The minimal drain (ops.bench.minimal_drain) as a whole process, timed as run_sync."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "ops.bench.minimal_drain", str(root),
                             str(config), str(batch_items)], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, cwd=Path(__file__).resolve().parents[2],
                            env=quiet_env())
    stdout = proc.stdout.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError("the minimal drain failed")
    return {"seconds": round(seconds, 2), "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 2),
            "imported": int(stdout)}


def away_config(fleet: Fleet, path: Path) -> Path:
    """Another configuration: the fleet's document with the logger at a port nobody listens on."""
    from ops.fleet.net import free_port
    document = json.loads(Path(fleet.config_path).read_text())
    document["ailogger_client"]["server"]["port"] = free_port()
    path.write_text(json.dumps(document))
    return path


def start_agent(root: Path, config: Path) -> int:
    """An autostarted agent of `config` (as a command starts it), once it has met its logger
    away (its first round failed: the backlog stays pending); its pid."""
    env = quiet_env()
    started = json.loads(subprocess.run([CLI, "--config", str(config), "agent", "start"],
                                        cwd=root, env=env, capture_output=True).stdout)
    pid = started["data"]["pid"]
    state = root / ".agent-memory" / ".watcher.json"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if json.loads(state.read_text()).get("status") == "backing_off":
                return pid
        except (OSError, ValueError):
            pass
        time.sleep(0.05)
    raise RuntimeError("the agent of the other configuration never backed off")


def stop_agent(root: Path, config: Path, pid: int) -> None:
    """The agent handed over and exited; if not, stop it (then kill it)."""
    subprocess.run([CLI, "--config", str(config), "agent", "stop", "--timeout", "20"],
                   cwd=root, env=quiet_env(), capture_output=True)
    try:
        os.kill(pid, 9)
    except ProcessLookupError:
        pass


def one_shot_cases(tmp: Path, fleet: Fleet, args) -> dict:
    """The one-shot drain with no agent and with a handover, interleaved, medians."""
    other = away_config(fleet, tmp / "another-configuration.json")
    times: dict[str, list[float]] = {case: [] for case in args.cases.split(",")}
    cpu: dict[str, list[float]] = {case: [] for case in times}
    for run in range(args.repeat):
        for case in times:
            root = tmp / f"{case}-{run}"
            make_project(root, args.sessions, args.messages, f"{case}-{run}")
            pid = start_agent(root, other) if case == "handover" else None
            try:
                done = (run_minimal if case == "minimal" else run_sync)(
                    root, fleet.config_path, args.batch_items)
            finally:
                if pid is not None:
                    stop_agent(root, other, pid)
            assert done["imported"] == args.messages, done
            times[case].append(done["seconds"])
            cpu[case].append(done["cpu_seconds"])
            log(f"{case} {run + 1}/{args.repeat}: {done['seconds']} s")
    result = {case: {"median_seconds": round(statistics.median(values), 3),
                     "seconds": values, "median_cpu_seconds": round(statistics.median(cpu[case]), 3),
                     "cpu_seconds": cpu[case]} for case, values in times.items()}
    if "handover" in times and "no_agent" in times:
        result["handover_cost_seconds"] = round(result["handover"]["median_seconds"]
                                                - result["no_agent"]["median_seconds"], 3)
    if "minimal" in times and "no_agent" in times:
        result["no_agent_to_minimal"] = round(result["no_agent"]["median_seconds"]
                                              / result["minimal"]["median_seconds"], 2)
        result["no_agent_to_minimal_per_run"] = [
            round(a / b, 2) for a, b in zip(times["no_agent"], times["minimal"])]
    return result


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
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--sessions", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--large", type=int, default=0, help="also drain this many (e.g. 100000)")
    parser.add_argument("--batch-items", type=int, default=1000)
    parser.add_argument("--skip-naive", action="store_true")
    parser.add_argument("--cases", default="minimal,no_agent,handover",
                        help="which drains to time, interleaved (minimal, no_agent, handover)")
    args = parser.parse_args()
    result: dict = {"benchmark": "one-shot sync drain vs naive append_message loop",
                    "messages": args.messages, "sessions": args.sessions,
                    "batch_items": args.batch_items, "repeat": args.repeat}
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        fleet = Fleet(tmp_path / "fleet").start()
        try:
            result["sync"] = one_shot_cases(tmp_path, fleet, args)
            if not args.skip_naive:
                log("naive append_message loop")
                records = make_project(tmp_path / "naive", args.sessions, args.messages, "n")
                naive = asyncio.run(naive_loop(fleet, records, "naive-"))
                result["naive_seconds"] = round(naive, 2)
                for case in [c for c in ("no_agent", "handover") if c in result["sync"]]:
                    result[f"speedup_{case}"] = round(
                        naive / result["sync"][case]["median_seconds"], 1)
                log(f"naive: {naive:.1f} s")
            if args.large:
                log(f"writing {args.large} pending messages")
                make_project(tmp_path / "plarge", args.sessions, args.large, "large")
                log("draining the large outbox")
                large = run_sync(tmp_path / "plarge", fleet.config_path, args.batch_items)
                result["large"] = {"messages": args.large, **large, "ratio_to_small": round(
                    large["seconds"] / result["sync"]["no_agent"]["median_seconds"], 1)}
        finally:
            fleet.stop()
    result["targets"] = {"speedup": ">= 10 (each case)", "no_agent_to_minimal": "<= 1.2", "handover_cost_seconds": "<= 0.1",
                         "large_ratio": "<= 12 (for 10x the messages)", "peak_rss_mb": "< 200"}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
