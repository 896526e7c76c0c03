"""How many calls cross from one file of the package to another on one `write`: served (the
project's agent runs), inline (`--no-agent`) and through the MCP server, each counted in every
process that works on it (the command's, the agent's, the server's), in order.

    python -m ops.bench.call_walk [--list]

A call counts when its caller's file and its callee's file differ and both are the package's
own (api, cli, integrations, outbox, pipeline, sync; not ops, tests or libraries), as
sys.setprofile sees it; a generator or coroutine counts once, when it starts (not again at
each resumption after a yield or an await). A call made in a loop counts each time (a check
made per file of a scan would grow with the session; the store checks a listing in one call); the
call sites (distinct caller and callee functions) do not. Each walk is the second command
of its kind in its process, so imports are not counted: the code path, not the start-up.

The command runs in this process (cli.main.run, as `main` runs it). The agent and the MCP
server run under a tracer of their own (started here, hand-started agent, one MCP session):
SIGUSR1 starts their count as the command is sent, SIGUSR2 ends it once it has answered, so
their part is what they did while the command waited (the agent's round included; work it
does after the answer, such as the vector, only if it ran before). Prints on stderr, for each
process of each walk, its count and the files it passed through in order (with `--list`, every
call: caller file:function -> callee file:function), and on stdout one JSON object with the
counts.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SUBPACKAGES = ("api", "cli", "integrations", "mcpserve", "outbox", "pipeline", "sync")
OUT_ENV = "CALL_WALK_OUT"
ROLE_ENV = "CALL_WALK_ROLE"
SENDER = ["--sender-kind", "human", "--sender-identity", "alice", "--receiver-kind", "model",
          "--receiver-identity", "claude"]

_SUSPENDABLE = 0x20 | 0x80 | 0x200  # CO_GENERATOR, CO_COROUTINE, CO_ASYNC_GENERATOR

# What the agent and the MCP server run: the tracer, then the CLI's own entry point.
BOOT = (f"import sys; sys.path.insert(0, {REPO!r}); "
        "from ops.bench.call_walk import serve_traced; serve_traced()")


class Tracer:
    """Counts the package's calls between files while on (every thread)."""

    def __init__(self) -> None:
        import agent_memory
        root = os.path.dirname(os.path.abspath(agent_memory.__file__))
        self.root = root + os.sep
        self.prefixes = tuple(os.path.join(root, name) + os.sep for name in SUBPACKAGES) + (
            os.path.join(root, "__init__.py"),)
        self.crossings: list[tuple[str, str, str, str]] = []
        self.on = False
        self._starts: dict = {}  # a generator's or coroutine's code -> where its body starts

    def _ours(self, filename: str) -> bool:
        return filename.startswith(self.prefixes)

    def _resumed(self, frame) -> bool:
        """A generator or coroutine taken up again after a yield or an await (not a call)."""
        code = frame.f_code
        if not code.co_flags & _SUSPENDABLE:
            return False
        start = self._starts.get(code)
        if start is None:
            import dis
            start = next(i.offset for i in dis.get_instructions(code) if i.opname == "RESUME")
            self._starts[code] = start
        return frame.f_lasti > start

    def profile(self, frame, event, _arg) -> None:
        if event != "call" or not self.on:
            return
        callee = frame.f_code.co_filename
        caller_frame = frame.f_back
        if caller_frame is None or not self._ours(callee) or self._resumed(frame):
            return
        caller = caller_frame.f_code.co_filename
        if caller != callee and self._ours(caller):
            self.crossings.append((caller[len(self.root):], caller_frame.f_code.co_name,
                                   callee[len(self.root):], frame.f_code.co_name))

    def install(self) -> None:
        import threading
        threading.setprofile(self.profile)
        sys.setprofile(self.profile)

    def start(self) -> None:
        self.crossings = []
        self.on = True

    def stop(self) -> list[tuple[str, str, str, str]]:
        self.on = False
        return list(self.crossings)


def serve_traced() -> None:
    """In the agent or MCP server: the tracer on every thread, SIGUSR1/SIGUSR2 to start and
    end a count (written to $CALL_WALK_OUT/<role>.json), then the CLI as `agent-memory`."""
    tracer = Tracer()
    out = os.environ.pop(OUT_ENV)
    role = os.environ.pop(ROLE_ENV)

    def dump(*_):
        crossings = tracer.stop()
        with open(os.path.join(out, f"{role}.json.tmp"), "w") as handle:
            json.dump(crossings, handle)
        os.replace(os.path.join(out, f"{role}.json.tmp"), os.path.join(out, f"{role}.json"))

    signal.signal(signal.SIGUSR1, lambda *_: tracer.start())
    signal.signal(signal.SIGUSR2, dump)
    with open(os.path.join(out, f"{role}.pid"), "w") as handle:
        handle.write(str(os.getpid()))
    tracer.install()
    sys.path.pop(0)
    sys.argv = ["agent-memory", *sys.argv[1:]]
    from agent_memory.cli.main import main
    sys.exit(main())


class Remote:
    """A traced process (the agent, the MCP server): start and end its count."""

    def __init__(self, out: Path, role: str) -> None:
        self.out, self.role = out, role

    def pid(self) -> int:
        return int((self.out / f"{self.role}.pid").read_text())

    def start(self) -> None:
        (self.out / f"{self.role}.json").unlink(missing_ok=True)
        os.kill(self.pid(), signal.SIGUSR1)

    def stop(self) -> list:
        os.kill(self.pid(), signal.SIGUSR2)
        path = self.out / f"{self.role}.json"
        deadline = time.monotonic() + 10
        while not path.exists():
            if time.monotonic() > deadline:
                raise RuntimeError(f"the {self.role} did not write its count")
            time.sleep(0.01)
        return [tuple(c) for c in json.loads(path.read_text())]


def cli(args: list[str], cwd: Path, env: dict[str, str]) -> dict:
    done = subprocess.run([os.path.join(os.path.dirname(sys.executable), "agent-memory"), *args],
                          cwd=cwd, env=env, capture_output=True, check=False)
    answer = json.loads(done.stdout)
    if not answer.get("success"):
        raise RuntimeError(f"{args}: {done.stdout!r} {done.stderr[-2000:]!r}")
    return answer


def in_process(tracer: Tracer, argv: list[str]) -> tuple[dict, list]:
    """One command by cli.main.run in this process, traced."""
    from agent_memory.cli.main import run
    lines: list[str] = []
    tracer.start()
    run(argv, lines.append)
    crossings = tracer.stop()
    return json.loads(lines[0]), crossings


async def mcp_write(root: Path, env: dict[str, str], globals_: list[str], agent: Remote,
                    server: Remote) -> tuple[dict, list, list]:
    from mcp import ClientSession, StdioServerParameters, stdio_client
    params = StdioServerParameters(command=sys.executable, args=["-c", BOOT, *globals_, "mcp"],
                                   cwd=root, env={**env, ROLE_ENV: "server",
                                                  OUT_ENV: str(server.out)})
    arguments = {"session_id": "walk", "sender_kind": "human", "sender_identity": "alice",
                 "receiver_kind": "model", "receiver_identity": "claude"}
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                await session.call_tool("write", {**arguments, "text": "warm-up through MCP"})
                agent.start()
                server.start()
                result = await session.call_tool("write", {**arguments, "text": "through MCP"})
                server_side, agent_side = server.stop(), agent.stop()
    if result.is_error:
        raise RuntimeError(result.content[0].text)
    return result.structured_content, server_side, agent_side


def shown(crossings: list) -> list[str]:
    return [f"{a}:{f} -> {b}:{g}" for a, f, b, g in crossings]


def files_in_order(crossings: list) -> list[str]:
    """The files the walk passes through, in order, a file named again only after another."""
    order: list[str] = []
    for caller, _f, callee, _g in crossings:
        for name in (caller, callee):
            if not order or order[-1] != name:
                order.append(name)
    return order


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="print every crossing, in order")
    args = parser.parse_args()
    import anyio
    from ops.fleet.handle import Fleet
    walks: dict[str, dict[str, list]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        fleet = Fleet(base / "fleet", owner_pid=os.getpid()).start()
        root = base / "project"
        root.mkdir()
        out = base / "counts"
        out.mkdir()
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        env = {k: v for k, v in os.environ.items() if k != "AGENT_MEMORY_CONFIG"}
        env.update(HOME=tmp, AGENT_MEMORY_AGENT="use")
        globals_ = ["--config", str(fleet.config_path)]
        agent_process = None
        try:
            cli([*globals_, "store", "init"], root, env)
            cli([*globals_, "--no-agent", "session", "open", "--session-id", "walk",
                 "--project-id", "walk", "--dialogue-kind", "human,model", "--participant",
                 "alice", "claude"], root, env)
            os.environ.update(HOME=tmp, AGENT_MEMORY_AGENT="use")
            os.environ.pop("AGENT_MEMORY_CONFIG", None)
            os.chdir(root)
            tracer = Tracer()
            tracer.install()
            write = [*globals_, "write", "--session-id", "walk", *SENDER, "--text"]
            # inline first: with an agent running, it holds the sync lock
            in_process(tracer, ["--no-agent", *write, "warm-up, inline"])
            answer, command_side = in_process(tracer, ["--no-agent", *write, "inline"])
            if answer["store"] != "logger":
                raise RuntimeError(f"the inline write answered {answer}")
            walks["inline"] = {"command": command_side}
            agent_process = subprocess.Popen(
                [sys.executable, "-c", BOOT, *globals_, "sync", "--watch"], cwd=root,
                env={**env, ROLE_ENV: "agent", OUT_ENV: str(out)},
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 60
            while not cli([*globals_, "agent", "status"], root, env)["data"]["running"]:
                if time.monotonic() > deadline:
                    raise RuntimeError("the traced agent did not come up")
                time.sleep(0.1)
            agent = Remote(out, "agent")
            in_process(tracer, [*write, "warm-up, served"])
            agent.start()
            answer, command_side = in_process(tracer, [*write, "served"])
            agent_side = agent.stop()
            if answer["store"] != "logger":
                raise RuntimeError(f"the served write answered {answer}")
            walks["served"] = {"command": command_side, "agent": agent_side}
            sys.setprofile(None)
            answer, server_side, agent_side = anyio.run(mcp_write, root, env, globals_, agent,
                                                        Remote(out, "server"))
            if answer["store"] != "logger":
                raise RuntimeError(f"the MCP write answered {answer}")
            walks["mcp"] = {"server": server_side, "agent": agent_side}
        finally:
            os.chdir(REPO)
            if agent_process is not None:
                agent_process.send_signal(signal.SIGTERM)
                agent_process.wait(30)
            fleet.stop()
    for walk, processes in walks.items():
        for process, crossings in processes.items():
            print(f"## {walk} write, {process} process: {len(crossings)} calls between files, "
                  f"from {len(set(crossings))} call sites", file=sys.stderr)
            print("  " + " > ".join(files_in_order(crossings)), file=sys.stderr)
            if args.list:
                for line in shown(crossings):
                    print(f"    {line}", file=sys.stderr)
    print(json.dumps({walk: {process: {"calls": len(crossings), "call_sites": len(set(crossings))}
                             for process, crossings in processes.items()}
                      for walk, processes in walks.items()}))


if __name__ == "__main__":
    main()
