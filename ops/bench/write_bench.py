"""Benchmark: `agent-memory --store file write` as a whole process, against a minimal Python
script that writes and fsyncs one JSON file. Interleaved pairs in one run, medians, ratio.

    python -m ops.bench.write_bench [--pairs 30] [--other-cli PATH]

`--other-cli` interleaves a third command, the same write by another build's `agent-memory`
(an earlier release's, to measure what a change costs the write path; in a project of its
own), and reports it beside the others.

Target: ratio at most 1.5. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

MINIMAL = (
    "import json, os, sys, uuid\n"
    "path = os.path.join(sys.argv[1], str(uuid.uuid4()) + '.json')\n"
    "fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)\n"
    "os.write(fd, json.dumps({'text': sys.argv[2]}).encode())\n"
    "os.fsync(fd)\n"
    "os.close(fd)\n"
)


def timed(cmd: list[str], cwd: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=30)
    parser.add_argument("--other-cli", default=None,
                        help="another build's agent-memory, timed in the same runs")
    args = parser.parse_args()
    cli = os.path.join(os.path.dirname(sys.executable), "agent-memory")
    with tempfile.TemporaryDirectory() as tmp:
        project = os.path.join(tmp, "project")
        scratch = os.path.join(tmp, "minimal")
        os.makedirs(project)
        os.makedirs(scratch)
        env = {**os.environ, "HOME": tmp}
        env.pop("AGENT_MEMORY_CONFIG", None)
        subprocess.run(["git", "init", "-q", project], check=True)
        subprocess.run([cli, "store", "init"], cwd=project, env=env, check=True,
                       stdout=subprocess.DEVNULL)
        other_project = os.path.join(tmp, "other")
        if args.other_cli:
            os.makedirs(other_project)
            subprocess.run(["git", "init", "-q", other_project], check=True)
            subprocess.run([args.other_cli, "store", "init"], cwd=other_project, env=env,
                           check=True, stdout=subprocess.DEVNULL)
        words = ["--store", "file", "write", "--session-id", "bench", "--sender-kind",
                 "human", "--sender-identity", "a", "--receiver-kind", "model",
                 "--receiver-identity", "b", "--text", "a benchmark message of a few words"]
        write = [cli, *words]
        other = [args.other_cli, *words] if args.other_cli else None
        minimal = [sys.executable, "-c", MINIMAL, scratch, "a benchmark message"]
        timed(write, project, env), timed(minimal, project, env)  # warm the page cache
        if other:
            timed(other, other_project, env)
        cli_times, minimal_times, other_times = [], [], []
        for _ in range(args.pairs):
            cli_times.append(timed(write, project, env))
            minimal_times.append(timed(minimal, project, env))
            if other:
                other_times.append(timed(other, other_project, env))
    cli_median = statistics.median(cli_times)
    minimal_median = statistics.median(minimal_times)
    report = {
        "benchmark": "write --store file vs minimal fsync script",
        "pairs": args.pairs,
        "cli_median_ms": round(cli_median * 1000, 1),
        "minimal_median_ms": round(minimal_median * 1000, 1),
        "ratio": round(cli_median / minimal_median, 2),
        "target_ratio": 1.5,
    }
    if other_times:
        other_median = statistics.median(other_times)
        report.update(other_cli=args.other_cli, other_median_ms=round(other_median * 1000, 1),
                      other_ratio=round(other_median / minimal_median, 2),
                      cli_to_other=round(cli_median / other_median, 2))
    print(json.dumps(report))


if __name__ == "__main__":
    main()
