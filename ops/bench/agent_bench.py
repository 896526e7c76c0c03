"""Benchmark: commands served by the project's agent against the same commands with `--store
file`, and the first write that starts the agent against today's inline write. Whole CLI
processes, interleaved (agent, file, agent, file...), medians, a private reference fleet.

1. With the fleet up and an agent running: `write` (the default, embedding and confirmation
   included) vs `write --store file`; `read`, `get`, `working-set`, `search` (its query
   vector cached after the first call) each vs the same command with `--store file`.
2. The first `write` with no agent running in mode auto (inline, then it starts the agent) vs
   `write --no-agent` (today's inline path), each in a fresh project; the agent is stopped
   before the next pair.

    python -m ops.bench.agent_bench [--pairs 20] [--first-pairs 8] [--memory-only]

3. The agent's resident memory (VmRSS from /proc, in MB): once it answers after `agent start`
   (its start-up backfill done), after the writes that precede 1, and after it served the
   commands of 1. Then the same three figures in fresh projects, with the fleet's configuration
   and with that configuration less its embedder: 21 writes, then each read command once
   (`--memory-only` runs only these).

Targets: each served command at most 1.5x its `--store file` twin; the autostarting write no
slower than the inline one. Prints one JSON object; progress on stderr.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import time
from pathlib import Path

from ops.agents import agent_pids
from ops.bench.timing import fleet_in_scratch, log, ms, timed_cli


def resident_mb(root: Path) -> float:
    """The project's agent's resident memory (VmRSS), in MB."""
    pids = agent_pids(str(root))
    if len(pids) != 1:
        raise RuntimeError(f"expected one agent for {root}, found {pids}")
    with open(f"/proc/{pids[0]}/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    raise RuntimeError("no VmRSS in /proc/<pid>/status")


def settled_mb(root: Path) -> float:
    """The agent's resident memory once it has stopped growing (its start-up work done)."""
    previous, deadline = -1.0, time.monotonic() + 10
    while time.monotonic() < deadline:
        current = resident_mb(root)
        if current == previous:
            return current
        previous = current
        time.sleep(0.5)
    return previous






def project(base: Path, name: str, env: dict[str, str]) -> Path:
    root = base / name
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    timed_cli(["store", "init"], root, env)
    return root


def write_args(sid: str, text: str) -> list[str]:
    return ["write", "--session-id", sid, "--sender-kind", "human", "--sender-identity",
            "alice", "--receiver-kind", "model", "--receiver-identity", "claude", "--text", text]


def open_args(sid: str) -> list[str]:
    return ["session", "open", "--session-id", sid, "--project-id", "bench", "--dialogue-kind",
            "human,model", "--participant", "alice", "claude"]


def pairs(name: str, served: list[str], plain: list[str], cwd: Path, env: dict[str, str],
          count: int) -> dict:
    timed_cli(served, cwd, env), timed_cli(plain, cwd, env)  # warm: page cache, query vector
    agent_times, file_times, stores = [], [], set()
    for _ in range(count):
        answer, seconds = timed_cli(served, cwd, env)
        agent_times.append(seconds)
        stores.add(answer["store"])
        file_times.append(timed_cli(plain, cwd, env)[1])
    agent, file = statistics.median(agent_times), statistics.median(file_times)
    log(f"{name}: agent {ms(agent)} ms, --store file {ms(file)} ms")
    return {"agent_median_ms": ms(agent), "file_median_ms": ms(file),
            "ratio": round(agent / file, 2), "agent_answered_from": sorted(stores)}


def served_commands(base: Path, config: str, env: dict[str, str], count: int) -> dict:
    root = project(base, "served", env)
    prefix = ["--config", config]
    sid = "bench-served"
    timed_cli([*prefix, "agent", "start"], root, env)
    started_mb = settled_mb(root)
    timed_cli([*prefix, *open_args(sid)], root, env)
    first, _ = timed_cli([*prefix, *write_args(sid, "agents keep their memory in the outbox")],
                         root, env)
    for i in range(20):
        timed_cli([*prefix, *write_args(sid, f"message {i} about memory and vectors")], root, env)
    written_mb = settled_mb(root)
    message_id = first["data"]["message_id"]
    results = {}
    try:
        results["write"] = pairs(
            "write", [*prefix, *write_args(sid, "a served write of a few words")],
            [*prefix, "--store", "file", *write_args(sid + "-file", "a file write")],
            root, env, count)
        reads = {
            "read": ["read", "--session-id", sid, "--block-size", "20"],
            "get": ["get", message_id],
            "working-set": ["working-set", "--session-id", sid, "--anchor-text", "memory"],
            "search": ["search", "--query", "memory and vectors", "--scope", "session",
                       "--target", sid],
        }
        for name, args in reads.items():
            results[name] = pairs(name, [*prefix, *args], [*prefix, "--store", "file", *args],
                                  root, env, count)
        results["agent_rss_mb"] = {"started": started_mb, "after_writes": written_mb,
                                   "after_serving": settled_mb(root)}
        log(f"agent resident memory: {results['agent_rss_mb']}")
    finally:
        timed_cli([*prefix, "agent", "stop"], root, env)
    return results


def resident(base: Path, name: str, config: str, env: dict[str, str]) -> dict:
    """The agent's resident memory in a fresh project: started, after 21 served writes, and
    after one each of the read commands (what they import stays for the agent's life)."""
    root = project(base, name, env)
    prefix = ["--config", config]
    sid = f"bench-{name}"
    timed_cli([*prefix, "agent", "start"], root, env)
    try:
        figures = {"started": settled_mb(root)}
        timed_cli([*prefix, *open_args(sid)], root, env)
        first, _ = timed_cli([*prefix, *write_args(sid, "agents keep their memory")], root, env)
        for i in range(20):
            timed_cli([*prefix, *write_args(sid, f"message {i} about memory")], root, env)
        figures["after_writes"] = settled_mb(root)
        for args in (["read", "--session-id", sid], ["get", first["data"]["message_id"]],
                     ["working-set", "--session-id", sid, "--anchor-text", "memory"],
                     ["search", "--query", "memory", "--scope", "session", "--target", sid]):
            timed_cli([*prefix, *args], root, env)
        figures["after_serving"] = settled_mb(root)
    finally:
        timed_cli([*prefix, "agent", "stop"], root, env)
    log(f"agent resident memory, {name}: {figures}")
    return figures


def without_embedder(config: str, base: Path) -> str:
    """The fleet's configuration less its embedder (`embedding_client`)."""
    document = json.loads(Path(config).read_text())
    document.pop("embedding_client")
    path = base / "config-without-embedder.json"
    path.write_text(json.dumps(document))
    return str(path)


def first_writes(base: Path, config: str, env: dict[str, str], count: int) -> dict:
    prefix = ["--config", config]
    autostart, inline = [], []
    for i in range(count):
        for kind in ("autostart", "inline"):
            root = project(base, f"first-{kind}-{i}", env)
            sid = f"bench-first-{i}"
            extra = ["--no-agent"] if kind == "inline" else []
            timed_cli([*prefix, "--no-agent", *open_args(sid)], root, env)
            answer, seconds = timed_cli([*prefix, *extra, *write_args(sid, "the first write")],
                                        root, env)
            if answer["store"] != "logger":
                raise RuntimeError(f"the first write answered from {answer['store']}")
            (autostart if kind == "autostart" else inline).append(seconds)
            if kind == "autostart":
                deadline = time.monotonic() + 60
                while not timed_cli([*prefix, "agent", "status"], root, env)[0]["data"]["running"]:
                    if time.monotonic() > deadline:
                        raise RuntimeError("the autostarted agent did not come up")
                    time.sleep(0.05)
                timed_cli([*prefix, "agent", "stop"], root, env)
    a, b = statistics.median(autostart), statistics.median(inline)
    log(f"first write: autostart {ms(a)} ms, inline {ms(b)} ms")
    return {"autostart_median_ms": ms(a), "inline_median_ms": ms(b), "ratio": round(a / b, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--first-pairs", type=int, default=8)
    parser.add_argument("--memory-only", action="store_true",
                        help="only the agent's resident memory with and without an embedder")
    args = parser.parse_args()
    with fleet_in_scratch() as (base, fleet, env):
        config = str(fleet.config_path)
        memory = {"with_embedder": resident(base, "with-embedder", config, env),
                  "without_embedder": resident(base, "without-embedder",
                                               without_embedder(config, base), env)}
        if args.memory_only:
            print(json.dumps({"agent_rss_mb": memory}, indent=1))
            return
        log(f"served commands, {args.pairs} interleaved pairs each")
        served = served_commands(base, config, env, args.pairs)
        log(f"first write, {args.first_pairs} pairs")
        first = first_writes(base, config, env, args.first_pairs)
    print(json.dumps({"served_vs_store_file": served, "first_write": first,
                      "agent_rss_mb": memory,
                      "targets": {"served_ratio": 1.5, "first_write_ratio": 1.0}}, indent=1))


if __name__ == "__main__":
    main()
