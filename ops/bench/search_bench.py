"""Benchmark: local `agent-memory search` over 10,000 and 100,000 messages with 1024-dimension
hash vectors, each run a whole CLI process, against a brute-force scan that reads every `.emb`
per query (same data, one run).

    python -m ops.bench.search_bench [--sizes 10000 100000] [--sessions 100] [--runs 7]

Per size: the index rebuild from scratch (the first search after deleting `.index/`), the
median of `--runs` searches with a warm index and the query's vector in the query cache, the
median with a fresh query text each run (embedded by the reference embedder: includes the
embed-client import), and one brute-force scan. Target (issue 5): warm median under 0.5 s at
100,000. Prints one JSON object; progress on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ops.fleet.embedder import hashing
from agent_memory.outbox import encoding, names
from agent_memory.outbox.contract import format_utc, new_uuid4
from agent_memory.outbox.store import Store, utc_now

MODEL, DIMENSION = "hash-1024", 1024
CLI = os.path.join(os.path.dirname(sys.executable), "agent-memory")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def vocabulary(size: int = 3000, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    return sorted({"".join(rng.choice(letters) for _ in range(rng.randint(3, 9)))
                   for _ in range(size)})


def make_project(root: Path, messages: int, sessions: int, seed: int = 1) -> None:
    """`messages` imported-or-pending messages with their `.emb`, written as `write` and
    `embed` write them (outbox.encoding records, atomic create), sequence numbers counted
    here (Store.append_message counts a session's files on every call)."""
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".gitignore").write_text("/.agent-memory/\n")
    (root / ".agent-memory").mkdir(mode=0o700)
    words = vocabulary()
    rng = random.Random(seed)
    counts = [0] * sessions
    with Store(str(root)) as store:
        for s in range(sessions):
            sid = f"bench-{s}"
            store.append_event(sid, "open", project_id=f"proj-{s % 10}",
                               dialogue_kind=["human", "model"], participants=["a", "b"],
                               title=None, metadata=None)
        chunk = 2000
        for start in range(0, messages, chunk):
            texts = [" ".join(rng.choice(words) for _ in range(rng.randint(6, 16)))
                     for _ in range(min(chunk, messages - start))]
            vectors = hashing.embed(texts, DIMENSION)
            for offset, (text, vector) in enumerate(zip(texts, vectors)):
                i = start + offset
                s = i % sessions
                now = utc_now()
                record = encoding.message(
                    session_id=f"bench-{s}", message_id=new_uuid4(), text=text,
                    sender_kind="human" if i % 2 else "model", sender_identity="a",
                    receiver_kind="model", receiver_identity="b",
                    occurred_at=format_utc(now), sequence_number=counts[s],
                    written_at=format_utc(now))
                counts[s] += 1
                name = names.final_name(now, record["message_id"], names.MESSAGE_EXT)
                store.add_record(f"bench-{s}", name, encoding.encode(record))
                store.append_vector(f"bench-{s}", name, encoding.vector(
                    message_id=record["message_id"], model=MODEL, dimension=DIMENSION,
                    embedding=vector.tolist()))
            log(f"  {start + len(texts)}/{messages} messages written")


CPU: list[float] = []  # user+sys CPU seconds of each cli_search (the machine is shared)


def cli_search(root: Path, config: Path, query: str) -> tuple[float, dict]:
    start = time.perf_counter()
    proc = subprocess.Popen([CLI, "--config", str(config), "--store", "file", "search",
                             "--query", query, "--scope", "all_projects", "--ranking", "vector"],
                            cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    stdout = proc.stdout.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    CPU.append(usage.ru_utime + usage.ru_stime)
    answer = json.loads(stdout)
    if os.waitstatus_to_exitcode(status) != 0 or not answer["success"]:
        raise RuntimeError(f"search failed: {stdout[:500]!r}")
    return seconds, answer["data"]


def brute_force(root: str, query: str, top: int = 20) -> dict:
    """Read every `.emb` of the store (json), score, sort: the naive local search."""
    q = hashing.embed([query], DIMENSION)[0].astype(np.float32)
    store = os.path.join(root, ".agent-memory")
    hits = []
    for area in (store, os.path.join(store, ".imported")):
        if not os.path.isdir(area):
            continue
        for session in os.listdir(area):
            folder = os.path.join(area, session)
            if session.startswith(".") or not os.path.isdir(folder):
                continue
            for name in os.listdir(folder):
                if not name.endswith(".emb"):
                    continue
                with open(os.path.join(folder, name), "rb") as handle:
                    record = json.loads(handle.read())
                if record["model"] != MODEL or record["dimension"] != DIMENSION:
                    continue
                score = float(np.asarray(record["embedding"], dtype=np.float32) @ q)
                if score > 0:
                    hits.append((-score, record["message_id"]))
    hits.sort()
    return {"total": len(hits), "top": [h[1] for h in hits[:top]]}


def bench_size(tmp: Path, size: int, sessions: int, runs: int, config: Path) -> dict:
    root = tmp / f"p{size}"
    log(f"size {size}: generating")
    started = time.perf_counter()
    make_project(root, size, sessions)
    generated = time.perf_counter() - started
    words = vocabulary()
    rng = random.Random(size)
    query = " ".join(rng.choice(words) for _ in range(5))
    index_dir = root / ".agent-memory" / ".index"
    shutil.rmtree(index_dir, ignore_errors=True)
    log(f"size {size}: index rebuild")
    rebuild, first = cli_search(root, config, query)  # embeds the query too (cached after)
    warm = []
    CPU.clear()
    for _ in range(runs):
        seconds, data = cli_search(root, config, query)
        warm.append(seconds)
    warm_cpu = list(CPU)
    assert data["total"] == first["total"]
    fresh = []
    for k in range(max(3, runs // 2)):
        seconds, _ = cli_search(root, config, f"{query} {rng.choice(words)} {k}")
        fresh.append(seconds)
    log(f"size {size}: brute force")
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "ops.bench.search_bench", "--brute",
                           str(root), "--query", query], capture_output=True, check=True)
    brute_seconds = time.perf_counter() - start
    brute = json.loads(done.stdout)
    local_top = [m["message"]["message_id"] for m in data["matches"]]
    index_bytes = sum(f.stat().st_size for f in index_dir.iterdir() if f.is_file())
    return {
        "messages": size, "sessions": sessions, "generate_s": round(generated, 1),
        "index_rebuild_cli_s": round(rebuild, 2),
        "warm_cached_query_median_s": round(statistics.median(warm), 3),
        "warm_cached_query_runs_s": [round(x, 3) for x in warm],
        "warm_cached_query_cpu_median_s": round(statistics.median(warm_cpu), 3),
        "load_average": round(os.getloadavg()[0], 1),
        "warm_embedded_query_median_s": round(statistics.median(fresh), 3),
        "brute_force_scan_s": round(brute_seconds, 2),
        "matches_total": data["total"], "same_top_as_brute_force": local_top == brute["top"],
        "index_mb": round(index_bytes / 2**20, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--brute", metavar="ROOT", help=argparse.SUPPRESS)
    parser.add_argument("--query", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.brute:
        print(json.dumps(brute_force(args.brute, args.query)))
        return
    from ops.fleet.handle import Fleet
    result: dict = {"benchmark": "local search (all_projects scope) as a whole CLI process",
                    "model": MODEL, "cpus": os.cpu_count(), "sizes": []}
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        fleet = Fleet(tmp_path / "fleet").start()
        try:
            for size in args.sizes:
                result["sizes"].append(bench_size(tmp_path, size, args.sessions, args.runs,
                                                  fleet.config_path))
                log(json.dumps(result["sizes"][-1]))
                shutil.rmtree(tmp_path / f"p{size}", ignore_errors=True)
        finally:
            fleet.stop()
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
