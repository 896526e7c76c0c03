"""`agent-memory mcp` on every kind of standard input and output a client may give it: pipes
and sockets (read and written by the server's event loop, mcpserve.stdio), and plain files (the
SDK's own transport). Each answers the protocol on stdout alone, takes long lines whole, and
leaves the descriptors it shares with its client as it found them."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from contextlib import contextmanager

from amtest import CLI, make_project

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "test", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def write_call(call_id: int, text: str) -> dict:
    return {"jsonrpc": "2.0", "id": call_id, "method": "tools/call",
            "params": {"name": "write", "arguments": {
                "session_id": "s", "sender_kind": "human", "sender_identity": "alice",
                "receiver_kind": "model", "receiver_identity": "claude", "text": text}}}


def lines(*messages: dict) -> bytes:
    return b"".join(json.dumps(m).encode() + b"\n" for m in messages)


def answers(raw: bytes) -> dict[int, dict]:
    """The server's stdout, every line one JSON-RPC message: the answers by id."""
    out = {}
    for line in raw.splitlines():
        message = json.loads(line)
        out[message["id"]] = message
    return out


def stored_texts(project) -> list[str]:
    done = project.cli("--store", "file", "read", "--session-id", "s")
    return sorted(m["text"] for m in done.data["messages"])


@contextmanager
def server_on(project, stdin, stdout):
    """`agent-memory --store file mcp` on the given stdin and stdout; at the end, once this
    test's side has ended its input, it must exit 0 (it is killed otherwise). Yields the
    process and a list that then holds its stderr."""
    server = subprocess.Popen([CLI, "--store", "file", "mcp"], cwd=project.root,
                              env=project.env, stdin=stdin, stdout=stdout,
                              stderr=subprocess.PIPE)
    err: list[str] = []
    try:
        yield server, err
        assert server.wait(30) == 0
    finally:
        if server.poll() is None:
            server.kill()
        err.append(server.stderr.read().decode())
        server.stderr.close()


def exchange_on_sockets(project, stdin: socket.socket, stdout: socket.socket,
                        ours_in: socket.socket, ours_out: socket.socket, texts: list[str]
                        ) -> tuple[dict[int, dict], str]:
    """The server on the given sockets: initialize, then a write of each text; its answers
    by id (once all came) and its stderr, after it exited at the end of its input."""
    with server_on(project, stdin, stdout) as (_server, err):
        stdin.close()
        stdout.close()
        ours_in.sendall(lines(INITIALIZE, INITIALIZED,
                              *(write_call(2 + i, text) for i, text in enumerate(texts))))
        received = b""
        while received.count(b"\n") < 1 + len(texts):
            chunk = ours_out.recv(1 << 16)
            assert chunk, received
            received += chunk
        ours_in.shutdown(socket.SHUT_WR)
    return answers(received), err[0]


def test_a_server_on_a_socket_each_answers_and_takes_a_long_line_whole(tmp_path):
    """stdin and stdout a socket each (as Node's child processes get them, the TypeScript
    SDK's client among them): a write of 1 MB (a line far longer than a default buffer) is
    answered and stored whole, and so is the short one after it."""
    project = make_project(tmp_path)
    long_text = "x" * 1_000_000  # under the 1 MiB a text may have
    in_ours, in_theirs = socket.socketpair()
    out_ours, out_theirs = socket.socketpair()
    with in_ours, out_ours:
        got, err = exchange_on_sockets(project, in_theirs, out_theirs, in_ours, out_ours,
                                       [long_text, "short"])
    assert sorted(got) == [1, 2, 3], got
    assert not got[2]["result"].get("isError") and not got[3]["result"].get("isError"), got
    assert "Traceback" not in err, err
    long_id, short_id = (got[i]["result"]["structuredContent"]["data"]["message_id"]
                         for i in (2, 3))
    tail = project.cli("--store", "file", "get", long_id, "--text-offset", "999990").data
    assert tail["text"] == "x" * 10 and tail["text_range"]["total_length"] == 1_000_000, tail
    assert project.cli("--store", "file", "get", short_id).data["text"] == "short"


def test_a_server_on_one_socket_for_both_answers(tmp_path):
    """stdin and stdout the same socket (the SDK's transport serves it): answered alike."""
    project = make_project(tmp_path)
    ours, theirs = socket.socketpair()
    with ours:
        got, err = exchange_on_sockets(project, theirs, theirs.dup(), ours, ours,
                                       ["one socket"])
    assert sorted(got) == [1, 2] and not got[2]["result"].get("isError"), got
    assert "Traceback" not in err, err
    assert stored_texts(project) == ["one socket"]


def test_a_server_writing_to_a_file_answers_through_the_sdk_transport(tmp_path):
    """stdout a file (neither a pipe nor a socket): the SDK's transport serves it, every
    request is answered there, and the server exits at the end of its input."""
    project = make_project(tmp_path)
    replies = tmp_path / "replies.jsonl"
    with open(replies, "wb") as stdout, \
            server_on(project, subprocess.PIPE, stdout) as (server, err):
        server.stdin.write(lines(INITIALIZE, INITIALIZED, write_call(2, "to a file")))
        server.stdin.flush()
        deadline = time.monotonic() + 60
        while replies.read_bytes().count(b"\n") < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        server.stdin.close()
    got = answers(replies.read_bytes())
    assert sorted(got) == [1, 2] and not got[2]["result"].get("isError"), (got, err)
    assert stored_texts(project) == ["to a file"]


def test_the_server_leaves_the_pipes_it_shares_blocking(tmp_path):
    """The server makes its end of each pipe non-blocking while it serves; a client (or a
    shell) holding the same pipe ends finds them blocking, as they were given, once the
    server has exited."""
    project = make_project(tmp_path)
    read_in, write_in = os.pipe()
    read_out, write_out = os.pipe()
    try:
        with server_on(project, read_in, write_out):
            os.write(write_in, lines(INITIALIZE))
            with os.fdopen(os.dup(read_out), "rb") as replies:
                first = json.loads(replies.readline())
            assert first["id"] == 1 and "result" in first, first
            os.close(write_in)
            write_in = None
        # read_in and write_out are the very descriptions the server was given
        assert os.get_blocking(read_in) and os.get_blocking(write_out)
    finally:
        for fd in (read_in, write_in, read_out, write_out):
            if fd is not None:
                os.close(fd)
