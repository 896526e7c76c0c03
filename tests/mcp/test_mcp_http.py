"""`agent-memory mcp --listen`: the same tools over streamable HTTP, driven by the official
SDKs' own HTTP clients (Python's at protocol 2026-07-28 and at the initialize handshake;
TypeScript's StreamableHTTPClientTransport) against the reference fleet. The door: a bearer
token when one is set (401 without it, nothing run), Host and Origin of this server only (403),
no address beyond loopback without a token (exit 2 at start), TLS with a given certificate, no
token or text in the log. The stop: SIGTERM lets a running call finish and refuses new ones,
exit 0. Many clients writing at once while the agent is killed: nothing lost, nothing twice.
The conformance suite's run is tests/mcp/conformance/run.py (CI)."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
import uuid
from contextlib import asynccontextmanager, contextmanager

import anyio
import pytest
from mcp import Client, types
from mcp.shared.exceptions import MCPError

from amtest import CLI, make_project, run_cli, wait_for, watcher_pids
from fleetutil import read_all
from test_mcp import (TOOLS, auto_project, outbox_files, scratch,  # noqa: F401 - a fixture
                      stop_agent, write_arguments)

MODERN, LEGACY = "2026-07-28", "legacy"


# --- the server and its clients ---------------------------------------------------------------

class Served:
    def __init__(self, process: subprocess.Popen, url: str, errors: str) -> None:
        self.process = process
        self.url = url
        self.errors = errors  # the server's stderr, a file

    def log(self) -> str:
        with open(self.errors, encoding="utf-8", errors="replace") as handle:
            return handle.read()

    def stop(self, how: int = signal.SIGTERM, timeout: float = 60) -> tuple[int, dict]:
        """SIGTERM (or `how`); (its exit code, its closing answer on stdout)."""
        self.process.send_signal(how)
        rc = self.process.wait(timeout)
        return rc, json.loads(self.process.stdout.read())


@contextmanager
def listening(project, *options: str, after: tuple[str, ...] = (), cwd: str | None = None,
              env: dict | None = None):
    """`agent-memory [--config C] OPTIONS mcp --listen 127.0.0.1:0 AFTER` run in the project
    (or `cwd`), until it printed its URL; stopped (killed if it must) at the end."""
    prefix = ["--config", project.config] if project.config else []
    errors = os.path.join(os.path.dirname(project.root), f"mcp-http-{uuid.uuid4().hex[:6]}.err")
    with open(errors, "w") as sink:
        process = subprocess.Popen([CLI, *prefix, *options, "mcp", "--listen", "127.0.0.1:0",
                                    *after], cwd=cwd or project.root, env=env or project.env,
                                   stdout=subprocess.PIPE, stderr=sink, text=True)

    def url():
        with open(errors, encoding="utf-8") as handle:
            found = re.search(r"serving (https?://\S+)", handle.read())
        return found and found.group(1)
    try:
        yield Served(process, wait_for(url, "the server to listen", proc=process), errors)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        process.stdout.close()


@asynccontextmanager
async def client(url: str, mode: str, headers: dict | None = None, verify=True, roots=()):
    """The Python SDK's client over streamable HTTP: at 2026-07-28, or `legacy` (the
    initialize handshake), offering `roots` when given."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client
    listed = None
    if roots:
        async def listed(_context):
            return types.ListRootsResult(roots=[types.Root(uri=f"file://{r}") for r in roots])
    http = httpx2.AsyncClient(headers=headers or {}, verify=verify,
                              timeout=httpx2.Timeout(30, read=120))
    async with http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode,
                          list_roots_callback=listed, read_timeout_seconds=120) as session:
            yield session


async def call(session, name: str, **arguments) -> tuple[bool, dict]:
    result = await session.call_tool(name, arguments)
    if result.is_error:
        return False, json.loads(result.content[0].text)
    return True, result.structured_content


def post(url: str, body: dict, headers: dict | None = None, context=None) -> tuple[int, str]:
    """One raw POST of a JSON-RPC message at 2026-07-28 (its headers as the SDK's clients send
    them): (status, body)."""
    sent = {"content-type": "application/json", "accept": "application/json, text/event-stream",
            "mcp-protocol-version": MODERN, "mcp-method": body["method"]}
    if body["method"] == "tools/call":
        sent["mcp-name"] = body["params"]["name"]
    sent.update(headers or {})
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=sent)
    try:
        with urllib.request.urlopen(request, timeout=60, context=context) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def modern_call(name: str, arguments: dict) -> dict:
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}}
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": meta}}


def stored_texts(project, session_id: str) -> list[str]:
    done = project.cli("--store", "file", "read", "--session-id", session_id, "--max-chars", "0")
    return sorted(m["text"] for m in done.data["messages"]) if done.rc == 0 else []


def port_of(url: str) -> int:
    return int(re.search(r":(\d+)/mcp$", url).group(1))


# --- the official clients ----------------------------------------------------------------------

def test_the_python_sdk_client_at_each_protocol_version(scratch, fleet, unique_session_id):
    """At 2026-07-28 and at the initialize handshake: every tool listed, a write lands in the
    outbox and the logger, a read answers it, an unknown tool is -32602; SIGINT (Ctrl-C) then
    stops the server with exit 0 and its closing answer on stdout."""
    project = make_project(scratch, config=str(fleet.config_path))
    sid = unique_session_id
    assert project.cli("session", "open", "--session-id", sid, "--project-id", "p",
                       "--dialogue-kind", "human,model", "--participant", "alice").rc == 0

    async def scenario(url: str) -> dict:
        seen = {}
        for mode in (MODERN, LEGACY):
            async with client(url, mode) as session:
                assert {t.name for t in (await session.list_tools()).tools} == TOOLS
                ok, wrote = await call(session, "write", **write_arguments(sid, f"over {mode}"))
                assert ok and wrote["data"]["message_id"], wrote
                ok, read = await call(session, "read", session_id=sid)
                assert ok and f"over {mode}" in [m["text"] for m in read["data"]["messages"]]
                with pytest.raises(MCPError) as refused:
                    await session.call_tool("no_such_tool", {})
                assert refused.value.error.code == -32602, refused.value
                seen[mode] = wrote["data"]["message_id"]
        return seen

    with listening(project, "--no-agent") as served:
        written = anyio.run(scenario, served.url)
        rc, closing = served.stop(signal.SIGINT)
    assert rc == 0 and closing["success"] and closing["data"]["calls"] == 4, closing
    assert closing["data"]["url"] == served.url
    in_logger = {m["message_id"]: m["text"] for m in read_all(fleet, sid)}
    assert in_logger == {written[MODERN]: f"over {MODERN}", written[LEGACY]: f"over {LEGACY}"}
    kept = [f for f in outbox_files(project) if f.endswith(".msg")]  # forwarded, then moved
    assert {m for m in written.values() if any(m in f for f in kept)} == set(written.values())


@pytest.mark.slow
def test_the_typescript_sdk_streamable_http_client(scratch, fleet, unique_session_id):
    """StreamableHTTPClientTransport (@modelcontextprotocol/sdk): the tools listed, each result
    checked against its output schema by the client, a write in the outbox and the logger,
    a read, an unknown tool thrown as -32602."""
    from test_mcp_ts_client import CLIENT_DIR
    if not os.path.isdir(os.path.join(CLIENT_DIR, "node_modules", "@modelcontextprotocol")):
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--silent"],
                       cwd=CLIENT_DIR, check=True, timeout=300)
    project = make_project(scratch, config=str(fleet.config_path))
    sid, mid = unique_session_id, str(uuid.uuid4())
    opened = dict(session_id=sid, project_id="ts", dialogue_kind=["human", "model"],
                  participant=["alice"])
    calls = [["session_open", opened],
             ["write", dict(write_arguments(sid, "from typescript"), message_id=mid)],
             ["read", dict(session_id=sid)], ["no_such_tool", {}]]
    with listening(project, "--no-agent") as served:
        done = subprocess.run(["node", os.path.join(CLIENT_DIR, "client.mjs")],
                              input=json.dumps({"url": served.url, "calls": calls}).encode(),
                              capture_output=True, timeout=120)
        assert done.returncode == 0, done.stderr.decode(errors="replace")[-3000:]
        assert served.stop()[0] == 0
    out = json.loads(done.stdout)
    assert {t["name"] for t in out["tools"]} == TOOLS
    opened_r, wrote, read, unknown = out["results"]
    assert not opened_r["isError"] and not wrote["isError"] and not read["isError"], out
    assert wrote["structured"]["data"]["message_id"] == mid
    assert [m["text"] for m in read["structured"]["data"]["messages"]] == ["from typescript"]
    assert unknown["code"] == -32602 and "no_such_tool" in unknown["thrown"], unknown
    assert [m["message_id"] for m in read_all(fleet, sid)] == [mid]
    assert any(mid in f for f in outbox_files(project))


def test_roots_serve_older_clients_and_the_working_directory_or_project_root_the_rest(scratch):
    """Run elsewhere than the project: an older client's root names the project; a 2026-07-28
    client (roots deprecated) gets the working directory's, which is no project here; with
    --project-root every client gets that one. --tools serves its subset, and the longest
    text, each character one JSON escapes in 6 bytes, is taken whole."""
    project = make_project(scratch)
    elsewhere = str(scratch / "elsewhere")
    os.mkdir(elsewhere)

    async def both(url: str) -> list:
        found = []
        for mode in (LEGACY, MODERN):
            async with client(url, mode, roots=[project.root]) as session:
                found.append(await call(session, "status"))
        return found

    with listening(project, "--store", "file", cwd=elsewhere) as served:
        (old_ok, old), (new_ok, new) = anyio.run(both, served.url)
        assert "roots could not be listed" not in served.log()
    assert old_ok and old["data"]["store"] == project.store, old
    assert not new_ok and new["code"] == "STORE_UNAVAILABLE" and elsewhere in new["message"]
    longest = "\x01" * (1 << 20)

    async def subset(url: str) -> tuple:
        async with client(url, MODERN) as session:
            listed = {t.name for t in (await session.list_tools()).tools}
            return listed, await call(session, "write", **write_arguments("s-long", longest))

    with listening(project, "--store", "file", "--project-root", project.root,
                   after=("--tools", "core"), cwd=elsewhere) as served:
        for ok, answer in anyio.run(both, served.url):
            assert ok and answer["data"]["store"] == project.store, answer
        listed, (ok, wrote) = anyio.run(subset, served.url)
    from agent_memory.mcpserve.tools import TOOLS as ALL
    assert listed == {t.name for t in ALL if t.group == "core"} != TOOLS
    assert ok, wrote
    assert stored_texts(project, "s-long") == [longest]


# --- the door ----------------------------------------------------------------------------------

def test_the_token_tls_and_the_hosts_and_origins_of_this_server(scratch):
    """Served over https with a given certificate and a token file: a call without the token,
    with another, from a foreign Origin or to a foreign Host is refused (401, 403) and writes
    nothing; with the token the SDK's client writes. Neither the token nor the text ever
    reaches the log."""
    from ops.fleet.tls import make_pki
    project = make_project(scratch)
    pki = make_pki(scratch / "pki")
    token = f"tok-{uuid.uuid4().hex}"
    token_file = scratch / "token"
    token_file.write_text(token + "\n")
    token_file.chmod(0o600)
    secret_text = f"a text that stays out of the log {uuid.uuid4().hex}"
    verify = ssl.create_default_context(cafile=pki["ca"])
    attempt = modern_call("write", write_arguments("s-door", secret_text))
    right = {"authorization": f"Bearer {token}"}
    refusals = [({}, 401), ({"authorization": "Bearer wrong-" + token}, 401),
                ({"authorization": token}, 401),
                ({**right, "origin": "http://evil.example.com"}, 403),
                ({**right, "host": "evil.example.com"}, 403), ({**right, "origin": "null"}, 403)]

    async def with_token(url: str) -> tuple:
        async with client(url, MODERN, headers=right, verify=verify) as session:
            return await call(session, "write", **write_arguments("s-door", secret_text))

    with listening(project, "--store", "file", after=(
            "--token-file", str(token_file), "--tls-cert", pki["server_cert"],
            "--tls-key", pki["server_key"])) as served:
        assert served.url.startswith("https://127.0.0.1:")
        for headers, status in refusals:
            got, body = post(served.url, attempt, headers, context=verify)
            assert got == status, (headers, got, body)
            if status == 401:
                assert "error" in json.loads(body)
        assert stored_texts(project, "s-door") == []  # nothing ran
        ok, wrote = anyio.run(with_token, served.url)
        assert ok, wrote
        assert served.stop()[0] == 0
        log = served.log()
    assert stored_texts(project, "s-door") == [secret_text]
    assert log.count("refused POST") == len(refusals)
    assert token not in log and secret_text not in log


def test_beyond_loopback_a_token_is_required_at_start(scratch):
    """`--listen 0.0.0.0:PORT` (or [::]) without a token: exit 2, saying why, nothing listens;
    a token given, the plan is accepted (checked without listening: the unit is printed)."""
    project = make_project(scratch)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    for address in (f"0.0.0.0:{port}", f"[::]:{port}"):
        refused = project.cli("mcp", "--listen", address)
        assert refused.rc == 2, refused.stdout
        assert refused.out["error"]["code"] == "TOKEN_REQUIRED", refused.stdout
        assert "AGENT_MEMORY_MCP_TOKEN" in refused.out["error"]["message"]
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
    token_file = scratch / "token"
    token_file.write_text("t" * 32)
    token_file.chmod(0o600)
    unit = project.cli("mcp", "--listen", f"0.0.0.0:{port}", "--token-file", str(token_file),
                       "--systemd-unit")
    assert unit.rc == 0, unit.stdout
    assert "t" * 32 not in unit.stdout
    exec_start = next(line for line in unit.data["unit"].splitlines()
                      if line.startswith("ExecStart="))
    assert f"mcp --listen 0.0.0.0:{port} --token-file {token_file}" in exec_start
    assert unit.data["name"] == f"agent-memory-mcp-{port}.service"
    env = dict(project.env, AGENT_MEMORY_MCP_TOKEN="t" * 32)
    no_file = project.cli("mcp", "--listen", f"0.0.0.0:{port}", "--systemd-unit", timeout=60)
    assert no_file.rc == 2  # no token anywhere
    env_only = run_cli(["mcp", "--listen", f"0.0.0.0:{port}", "--systemd-unit"],
                       cwd=project.root, env=env)
    assert env_only.rc == 2 and env_only.out["error"]["code"] == "TOKEN_FILE_REQUIRED"


# --- the stop ----------------------------------------------------------------------------------

def test_sigterm_lets_running_calls_finish_refuses_new_ones_and_exits_0(scratch, fleet_factory):
    """Two writes begun (one forwarding to a slow logger, one waiting its turn), one from each
    protocol's client, when SIGTERM arrives: both are answered, over the older client's event
    stream too, and whole; writes sent meanwhile are refused as tool errors and write nothing;
    exit 0."""
    fleet = fleet_factory()
    project = make_project(scratch, config=str(fleet.config_path))
    sid = "s-stop"
    assert project.cli("session", "open", "--session-id", sid, "--project-id", "p",
                       "--dialogue-kind", "human,model", "--participant", "alice").rc == 0
    fleet.control.set_faults("logger", delay=2.0)
    begun = {LEGACY: "begun over the event stream " * 2000, MODERN: "begun at 2026-07-28"}
    late = {mode: f"sent while stopping, {mode}" for mode in begun}

    async def scenario(served: Served) -> dict:
        answers = {}
        async with client(served.url, LEGACY) as old, client(served.url, MODERN) as new:
            sessions = {LEGACY: old, MODERN: new}

            async def write(mode: str, texts: dict) -> None:
                answers[texts[mode]] = await call(sessions[mode], "write",
                                                  **write_arguments(sid, texts[mode]))
            async with anyio.create_task_group() as group:
                group.start_soon(write, LEGACY, begun)
                await anyio.to_thread.run_sync(lambda: wait_for(
                    lambda: [f for f in outbox_files(project) if f.endswith(".msg")],
                    "the first write in the outbox"))
                group.start_soon(write, MODERN, begun)  # its turn comes after the first's
                await anyio.sleep(0.5)
                assert not answers  # the first still forwarding (each logger call takes 2 s)
                served.process.send_signal(signal.SIGTERM)
                await anyio.sleep(0.3)
                for mode in late:
                    group.start_soon(write, mode, late)
        return answers

    with listening(project, "--no-agent") as served:
        answers = anyio.run(scenario, served)
        rc = served.process.wait(60)
        closing = json.loads(served.process.stdout.read())
    for text in begun.values():
        ok, answer = answers[text]
        assert ok and answer["data"]["message_id"], answer
    for text in late.values():
        ok, refusal = answers[text]
        assert not ok and refusal["code"] == "SERVER_STOPPING", refusal
    assert rc == 0, closing
    assert closing["data"]["calls"] == 2 and closing["data"]["refused_while_stopping"] == 2
    fleet.control.clear_faults("logger")
    assert stored_texts(project, sid) == sorted(begun.values())  # whole; the late never written
    assert project.cli("verify").rc == 0


# --- many clients, the agent killed ------------------------------------------------------------

@pytest.mark.slow
def test_several_http_clients_write_at_once_while_the_agent_is_killed(scratch, fleet,
                                                                       unique_session_id):
    """Four clients (two at each protocol version) write 12 messages each through one server
    that uses the project's agent, which is killed twice meanwhile; a call that fails is
    retried with its message_id, the documented rule. Then every message is in the logger
    exactly once: 0 lost, 0 duplicated."""
    project = auto_project(scratch, "agented", str(fleet.config_path))
    sid = unique_session_id
    assert project.cli("session", "open", "--session-id", sid, "--project-id", "p",
                       "--dialogue-kind", "human,model", "--participant", "alice").rc == 0
    plan = {f"{w}-{i}": str(uuid.uuid4()) for w in range(4) for i in range(12)}
    acknowledged, retries = {}, []
    kills = []

    async def writer(url: str, worker: int, mode: str) -> None:
        async with client(url, mode) as session:
            for i in range(12):
                key = f"{worker}-{i}"
                for _attempt in range(5):
                    try:
                        ok, answer = await call(session, "write", message_id=plan[key],
                                                **write_arguments(sid, f"message {key}"))
                    except Exception as exc:  # noqa: BLE001 - retried, as a client would
                        ok, answer = False, {"thrown": repr(exc)}
                    if ok:
                        acknowledged[key] = answer["data"]["message_id"]
                        break
                    retries.append((key, answer))

    async def killer() -> None:
        for threshold in (10, 26):
            await anyio.to_thread.run_sync(lambda: wait_for(
                lambda: len(acknowledged) >= threshold and watcher_pids(project.root),
                "writes to go on with an agent serving", timeout=240))
            for pid in watcher_pids(project.root):
                os.kill(pid, signal.SIGKILL)
                kills.append(pid)

    async def scenario(url: str) -> None:
        async with anyio.create_task_group() as group:
            for worker, mode in enumerate((MODERN, LEGACY, MODERN, LEGACY)):
                group.start_soon(writer, url, worker, mode)
            group.start_soon(killer)

    with listening(project) as served:
        anyio.run(scenario, served.url)
        assert served.stop()[0] == 0
    assert len(kills) >= 2 and len(acknowledged) == len(plan), (kills, retries[:3])
    assert acknowledged == plan
    if watcher_pids(project.root):
        stop_agent(project)
    assert project.cli("--no-agent", "sync").rc == 0
    in_logger = [m["message_id"] for m in read_all(fleet, sid)]
    assert sorted(in_logger) == sorted(plan.values())  # 0 lost, 0 duplicated
    assert project.final_files(sid) == []


# --- the plan, in process ----------------------------------------------------------------------

def test_addresses_host_names_and_bearer_headers_are_read_as_meant():
    from agent_memory.cli.errors import UsageError
    from agent_memory.mcpserve import guard, listen
    assert listen.address("8765") == ("127.0.0.1", 8765)
    assert listen.address("[::1]:0") == ("::1", 0)
    assert listen.address("localhost:80") == ("localhost", 80)
    for bad in ("::1:80", "127.0.0.1:99999", "127.0.0.1:http", "no.such.host.invalid:80"):
        with pytest.raises(UsageError):
            listen.address(bad)
    assert listen.is_loopback("127.0.0.1") and listen.is_loopback("::1")
    assert not listen.is_loopback("0.0.0.0") and not listen.is_loopback("::")
    assert [guard.host_name(h) for h in ("LocalHost:8765", "[::1]:80", "127.0.0.1", "[::1]")] \
        == ["localhost", "::1", "127.0.0.1", "::1"]
    assert guard.origin_name("http://[::1]:6274") == "::1"
    assert guard.origin_name("null") is None and guard.origin_name("file:///x") is None
    assert guard.bearer("bearer  abc ") == b"abc" and guard.bearer("Basic abc") is None
    assert listen.allowed_name("[FE80::1]:8443") == "fe80::1"
    assert listen.allowed_name("Proxy.Example.org:443") == "proxy.example.org"
    with pytest.raises(UsageError):
        listen.allowed_name("https://proxy.example.org/")
    assert listen.read_token(None, {"AGENT_MEMORY_MCP_TOKEN": " s3cret-token-0123456789 "}) \
        == ("s3cret-token-0123456789", "AGENT_MEMORY_MCP_TOKEN")
    for bad in ("", "two words"):
        with pytest.raises(UsageError):
            listen.read_token(None, {"AGENT_MEMORY_MCP_TOKEN": bad})
    from agent_memory.mcpserve.unit import quoted
    assert quoted("/a b/%h$X") == '"/a b/%%h$$X"' and quoted("/plain/path") == "/plain/path"
    from agent_memory.mcpserve.http_serve import bind
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        plan = listen.Plan("127.0.0.1", taken.getsockname()[1], True, None, None, None, None,
                           frozenset(listen.LOOPBACK_NAMES))
        with pytest.raises(UsageError) as busy:
            bind(plan)
    assert busy.value.code == "ADDRESS_UNAVAILABLE"


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
