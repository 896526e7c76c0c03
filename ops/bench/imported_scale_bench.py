"""Benchmark: does one directory per session hold a million imported messages? What the store
does to `.agent-memory/.imported/<session>/` on a command's path, timed at 10^3, 10^5 and 10^6
entries of real names (`<time>-<uuid>.msg`, a record's size): a move into it (rename, then
fsync of both directories, as the sync engine confirms a batch), a stat and a read of one name
(a window's files, `get`), and what only upkeep does (`gc`, `verify`, a ledger rebuild): list it
whole. This is the measurement behind keeping one directory per session rather than a
partition by time: `what_a_command_does_holds` says whether a move, a stat and a read at the
largest size cost at most twice what they cost at the smallest.

    python -m ops.bench.imported_scale_bench [--sizes 1000,100000,1000000] [--where DIR]

Prints one JSON object (progress on stderr). Needs about 4 KiB of disk per entry (10^6: 4 GB).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import tempfile
import time
import uuid
from datetime import datetime, timedelta, timezone

from ops.bench.timing import log

RECORD = b'{"format_version":1,"text":"' + b"x" * 300 + b'"}\n'


def _name(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H.%M.%S.") + f"{moment.microsecond // 1000:03d}" + \
        f"-{uuid.uuid4()}.msg"


def _median_ms(call, repeat: int = 50) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return round(statistics.median(times) * 1000, 3)


def measure(root: str, size: int) -> dict:
    imported = os.path.join(root, "imported")
    pending = os.path.join(root, "pending")
    os.makedirs(imported)
    os.makedirs(pending)
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    began = time.perf_counter()
    names = []
    fd = os.open(imported, os.O_RDONLY | os.O_DIRECTORY)
    for i in range(size):
        name = _name(start + timedelta(milliseconds=i))
        with open(os.path.join(imported, name), "wb") as handle:
            handle.write(RECORD)
        names.append(name)
    os.fsync(fd)
    log(f"{size}: filled in {time.perf_counter() - began:.1f} s")
    src = os.open(pending, os.O_RDONLY | os.O_DIRECTORY)
    moment = [start + timedelta(days=1)]

    def move() -> None:  # one confirmed message into .imported/, as Store.move does
        moment[0] += timedelta(milliseconds=1)
        name = _name(moment[0])
        with open(os.path.join(pending, name), "wb") as handle:
            handle.write(RECORD)
        os.rename(name, name, src_dir_fd=src, dst_dir_fd=fd)
        os.fsync(fd)
        os.fsync(src)

    picks = [random.choice(names) for _ in range(50)]

    def stat_one() -> None:
        os.stat(picks[random.randrange(50)], dir_fd=fd)

    def read_one() -> None:
        one = os.open(picks[random.randrange(50)], os.O_RDONLY, dir_fd=fd)
        os.read(one, 1 << 16)
        os.close(one)

    row = {"entries": size, "move_ms": _median_ms(move), "stat_ms": _median_ms(stat_one),
           "open_read_ms": _median_ms(read_one),
           "listdir_ms": _median_ms(lambda: os.listdir(fd), repeat=3)}
    os.close(src)
    os.close(fd)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,100000,1000000")
    parser.add_argument("--where", default=None, help="a directory on the disk to measure")
    args = parser.parse_args()
    rows = []
    for size in [int(x) for x in args.sizes.split(",") if x]:
        root = tempfile.mkdtemp(prefix="imported-scale-", dir=args.where)
        try:
            rows.append(measure(root, size))
        finally:
            shutil.rmtree(root, ignore_errors=True)
        log(json.dumps(rows[-1]))
    first, last = rows[0], rows[-1]
    ratios = {key: round(last[key] / max(first[key], 1e-6), 2)
              for key in ("move_ms", "stat_ms", "open_read_ms", "listdir_ms")}
    print(json.dumps({"benchmark": "one session directory of N imported entries", "rows": rows,
                      f"ratio_{last['entries']}_to_{first['entries']}": ratios,
                      "what_a_command_does_holds": all(ratios[key] <= 2.0 for key in
                                                       ("move_ms", "stat_ms", "open_read_ms"))}))


if __name__ == "__main__":
    main()
