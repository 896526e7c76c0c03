"""Benchmark: one `write` through the MCP server (`agent-memory mcp`, a warm session of the
official SDK's client over stdio) against one `write` through the CLI (a whole process), in
interleaved pairs, in one project with the reference fleet up and the project's agent running
(both confirmed by the logger); and what a session costs to start (spawn to `initialize`
answered).

A burst (fleet up, agent running): `--burst` warm writes back to back, each timed, against the
same number of writes `--spacing` seconds apart, alternately, `--burst-rounds` times, through
one MCP server and through the Python API (`Memory`, in this process): the background work of
a settled write (its vector, its move) must not slow the next write's answer (target: back to
back within 1.3x of spaced, medians).

    python -m ops.bench.mcp_bench [--pairs 30] [--starts 5] [--store auto|file]
                                  [--burst 20] [--spacing 0.15] [--burst-rounds 3]

`--store file` compares the append alone (no logger, no agent). Prints one JSON object
(median and p90 per path, in ms, and the ratio MCP / CLI); progress on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

from ops.bench.timing import CLI, log, ms, timed_cli
from ops.fleet.handle import Fleet

QUIET = open(os.devnull, "w")  # the servers' stderr (their closing line)
SENDER = {"sender_kind": "human", "sender_identity": "alice", "receiver_kind": "model",
          "receiver_identity": "claude"}




def figures(times: list[float]) -> dict:
    ordered = sorted(times)
    return {"median_ms": ms(statistics.median(ordered)),
            "p90_ms": ms(ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))])}



def cli_write_args(sid: str, text: str) -> list[str]:
    return ["write", "--session-id", sid, *[f"--{k.replace('_', '-')}={v}"
                                            for k, v in SENDER.items()], "--text", text]


async def tool(session: ClientSession, name: str, **arguments) -> tuple[dict, float]:
    start = time.perf_counter()
    result = await session.call_tool(name, arguments)
    elapsed = time.perf_counter() - start
    if result.is_error:
        raise RuntimeError(f"{name}: {result.content[0].text}")
    return result.structured_content, elapsed


def server(root: Path, globals_: list[str], env: dict[str, str]) -> StdioServerParameters:
    return StdioServerParameters(command=CLI, args=[*globals_, "mcp"], cwd=root, env=env)


async def pairs(root: Path, globals_: list[str], env: dict[str, str], count: int) -> dict:
    sid = "bench-mcp"
    mcp_times, cli_times, stores = [], [], set()
    async with stdio_client(server(root, globals_, env), errlog=QUIET) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await tool(session, "session_open", session_id=sid, project_id="bench",
                       dialogue_kind=["human", "model"], participant=["alice", "claude"])
            if "--store" not in globals_:
                timed_cli([*globals_, "agent", "start"], root, env)
            for i in range(3):  # warm: the agent's links, the page cache
                await tool(session, "write", session_id=sid, text=f"warm {i}", **SENDER)
                timed_cli([*globals_, *cli_write_args(sid, f"warm {i}")], root, env)
            for i in range(count):
                answer, seconds = await tool(session, "write", session_id=sid,
                                             text=f"message {i} through MCP", **SENDER)
                mcp_times.append(seconds)
                stores.add(answer["store"])
                argv = [*globals_, *cli_write_args(sid, f"message {i} by CLI")]
                answer, seconds = timed_cli(argv, root, env)
                cli_times.append(seconds)
                stores.add(answer["store"])
    result = {"mcp_write": figures(mcp_times), "cli_write": figures(cli_times),
              "ratio_median": round(statistics.median(mcp_times) / statistics.median(cli_times),
                                    2),
              "answered_from": sorted(stores)}
    log(f"write: MCP {result['mcp_write']}, CLI {result['cli_write']}")
    return result


def burst_figures(name: str, times: dict[str, list[float]]) -> dict:
    result = {kind: figures(values) for kind, values in times.items()}
    result["ratio_median"] = round(statistics.median(times["back_to_back"])
                                   / statistics.median(times["spaced"]), 2)
    log(f"{name} burst: {result}")
    return result


async def mcp_burst(root: Path, globals_: list[str], env: dict[str, str], count: int,
                    spacing: float, rounds: int) -> dict:
    sid = "bench-mcp-burst"
    times: dict[str, list[float]] = {"back_to_back": [], "spaced": []}
    async with stdio_client(server(root, globals_, env), errlog=QUIET) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await tool(session, "session_open", session_id=sid, project_id="bench",
                       dialogue_kind=["human", "model"], participant=["alice", "claude"])
            for i in range(3):
                await tool(session, "write", session_id=sid, text=f"warm {i}", **SENDER)
            for r in range(rounds):
                for kind in times:
                    await anyio.sleep(1.0)  # the previous series' background work done
                    for i in range(count):
                        answer, seconds = await tool(session, "write", session_id=sid,
                                                     text=f"{kind} {r}.{i}", **SENDER)
                        if answer["store"] != "logger":
                            raise RuntimeError(f"not confirmed: {answer}")
                        times[kind].append(seconds)
                        if kind == "spaced":
                            await anyio.sleep(spacing)
    return burst_figures("MCP", times)


def api_burst(root: Path, config: str | None, count: int, spacing: float, rounds: int) -> dict:
    from agent_memory import Memory
    memory = Memory(root, config)
    sid = "bench-api-burst"
    memory.open_session(sid, project_id="bench", dialogue_kind=["human", "model"],
                        participants=["alice", "claude"])
    sender = {"sender_kind": "human", "sender_identity": "alice", "receiver_kind": "model",
              "receiver_identity": "claude"}
    for i in range(3):
        memory.write(sid, f"warm {i}", **sender)
    times: dict[str, list[float]] = {"back_to_back": [], "spaced": []}
    for r in range(rounds):
        for kind in times:
            time.sleep(1.0)
            for i in range(count):
                start = time.perf_counter()
                answer = memory.write(sid, f"{kind} {r}.{i}", **sender)
                times[kind].append(time.perf_counter() - start)
                if not answer.forwarded:
                    raise RuntimeError(f"not confirmed: {answer}")
                if kind == "spaced":
                    time.sleep(spacing)
    return burst_figures("Python API", times)


async def starts(root: Path, globals_: list[str], env: dict[str, str], count: int) -> dict:
    times = []
    for _ in range(count):
        start = time.perf_counter()
        async with stdio_client(server(root, globals_, env), errlog=QUIET) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                times.append(time.perf_counter() - start)
    log(f"spawn to initialize: {figures(times)}")
    return figures(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=30)
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--store", choices=("auto", "file"), default="auto")
    parser.add_argument("--burst", type=int, default=20)
    parser.add_argument("--spacing", type=float, default=0.15)
    parser.add_argument("--burst-rounds", type=int, default=3)
    parser.add_argument("--burst-only", action="store_true", help="only the burst figures")
    args = parser.parse_args()
    burst = {}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        root = base / "project"
        root.mkdir()
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        env = {**os.environ, "HOME": tmp, "AGENT_MEMORY_AGENT": "auto"}
        env.pop("AGENT_MEMORY_CONFIG", None)
        fleet = None
        if args.store == "file":
            globals_ = ["--store", "file"]
        else:
            fleet = Fleet(base / "fleet", owner_pid=os.getpid()).start()
            globals_ = ["--config", str(fleet.config_path)]
        try:
            timed_cli([*globals_, "store", "init"], root, env)
            writes = started = None
            if not args.burst_only:
                log(f"write, {args.pairs} interleaved pairs (--store {args.store})")
                writes = anyio.run(pairs, root, globals_, env, args.pairs)
                log(f"spawn to initialize, {args.starts} times")
                started = anyio.run(starts, root, globals_, env, args.starts)
            if fleet is not None and args.burst:
                timed_cli([*globals_, "agent", "start"], root, env)
                log(f"burst: {args.burst} writes back to back vs {args.spacing} s apart, "
                    f"{args.burst_rounds} rounds")
                burst["mcp"] = anyio.run(mcp_burst, root, globals_, env, args.burst,
                                         args.spacing, args.burst_rounds)
                os.environ["AGENT_MEMORY_AGENT"] = "auto"  # this process: the Python API
                burst["python_api"] = api_burst(root, str(fleet.config_path), args.burst,
                                                args.spacing, args.burst_rounds)
        finally:
            if fleet is not None:
                timed_cli([*globals_, "agent", "stop"], root, env)
                fleet.stop()
    print(json.dumps({"store": args.store, "write": writes, "spawn_to_initialize": started,
                      "burst": burst, "targets": {"burst_ratio": 1.3}}, indent=1))


if __name__ == "__main__":
    main()
