"""Benchmark: how large a read's answer is. A session of messages of 100,000 characters (three,
as in the issue that asked for budgets, and 50), forwarded to the reference fleet: the size of a
default `read` through the CLI, of the same `read --max-chars 0` (everything, as before the
budget), and of the default `read` tool through `agent-memory mcp`, in characters and in tokens
(4 characters a token).

    python -m ops.bench.answer_size_bench [--messages 3 50] [--size 100000]

Prints one JSON object; progress on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

from ops.bench.timing import CLI, log
from ops.fleet.handle import Fleet

SENDER = ["--sender-kind", "human", "--sender-identity", "alice", "--receiver-kind", "model",
          "--receiver-identity", "claude"]


def cli(args: list[str], cwd: Path, env: dict[str, str], stdin: bytes | None = None) -> str:
    done = subprocess.run([CLI, *args], cwd=cwd, env=env, input=stdin, capture_output=True,
                          check=False)
    line = done.stdout.decode("utf-8")
    if not json.loads(line).get("success"):
        raise RuntimeError(f"{args}: {line[:2000]!r} {done.stderr[-2000:]!r}")
    return line


def sizes(text: str) -> dict:
    return {"chars": len(text), "tokens": round(len(text) / 4)}


async def tool_text(root: Path, config: str, env: dict[str, str], sid: str) -> str:
    params = StdioServerParameters(command=CLI, args=["--config", config, "mcp"], cwd=root,
                                   env=env)
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=120) as session:
                await session.initialize()
                result = await session.call_tool("read", {"session_id": sid})
                return result.content[0].text


def measure(root: Path, config: str, env: dict[str, str], count: int, size: int) -> dict:
    sid = f"long-{count}"
    cli(["--config", config, "session", "open", "--session-id", sid, "--project-id", "bench",
         "--dialogue-kind", "human,model", "--participant", "alice", "claude"], root, env)
    for i in range(count):
        text = (f"message {i} " + "lorem ipsum dolor sit amet " * (size // 27 + 1))[:size]
        cli(["--config", config, "--store", "file", "write", "--session-id", sid, *SENDER],
            root, env, text.encode())
    cli(["--config", config, "sync"], root, env)
    read = ["--config", config, "read", "--session-id", sid]
    default, whole = cli(read, root, env), cli([*read, "--max-chars", "0"], root, env)
    tool = anyio.run(tool_text, root, config, env, sid)
    return {"messages": count, "text_chars": size,
            "cli_default": {**sizes(default), "messages": len(
                json.loads(default)["data"]["messages"])},
            "cli_unlimited": sizes(whole), "mcp_default": sizes(tool)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, nargs="+", default=[3, 50])
    parser.add_argument("--size", type=int, default=100_000)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch)
        fleet = Fleet(base / "fleet").start()
        try:
            root = base / "project"
            root.mkdir()
            subprocess.run(["git", "init", "-q", str(root)], check=True)
            home = base / "home"
            home.mkdir()
            env = {k: v for k, v in os.environ.items()
                   if k not in ("AGENT_MEMORY_CONFIG", "AGENT_MEMORY_AGENT")}
            env.update(HOME=str(home), AGENT_MEMORY_AGENT="off")
            cli(["store", "init"], root, env)
            runs = []
            for count in options.messages:
                log(f"a session of {count} messages of {options.size} characters")
                runs.append(measure(root, str(fleet.config_path), env, count, options.size))
        finally:
            fleet.stop()
    print(json.dumps({"benchmark": "answer_size", "runs": runs}))


if __name__ == "__main__":
    main()
