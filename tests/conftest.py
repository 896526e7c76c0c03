"""Shared fixtures: the reference fleet (ops/fleet) for every test that talks to a logger.

fleet              session-scoped ops.fleet.handle.Fleet, started once per run in a temporary
                   directory and stopped at the end. Attributes: data_dir, config_path,
                   logger_port, embedder_port, logger_pid, embedder_pid, embedding_model,
                   dimension, control (ops.fleet.control.FleetControl); methods logger_client(),
                   embedding_client(), logger_section(), embedding_kwargs(). Do not set faults on
                   it (other tests share it): use fleet_factory.
tls_fleet          session-scoped Fleet serving mTLS with a token (its throw-away certificates
                   in data_dir/tls/, see ops.fleet.tls; `security` names the files and token).
fleet_factory      fleet_factory(embed_model="hash-1024", faults=None, logger_port=0,
                   embedder_port=0, protocol="http", token=None) -> a private, started Fleet;
                   everything it started is stopped when the test ends. Use it for faults (fleet.control.set_faults/go_down/...)
                   and for restarts (fleet.restart(), fleet.stop(); fleet.start()).
unique_session_id  a fresh, valid session id per test.
synced_project     a scratch git project (tests/amtest.Project) configured for the shared fleet.
offline_config     a configuration path whose logger and embedder listen nowhere.
small_disk         a 1 MiB tmpfs mounted for the test (skipped where mounting is not allowed).

At the end of the run no agent (`sync --watch`) of any test project may be left running: the
fixtures that start them stop them, and `no_agent_left` fails the run (after killing them)
when one was forgotten.
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid

import pytest

from amtest import make_project, watcher_pids
from fleetutil import offline_document

from ops.fleet.handle import Fleet


@pytest.fixture(scope="session", autouse=True)
def no_agent_left(tmp_path_factory):
    yield
    import signal
    base = str(tmp_path_factory.getbasetemp())
    left = watcher_pids(base)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert not left, f"agents (sync --watch) left running after the tests: pids {left}"


@pytest.fixture(scope="session")
def fleet(tmp_path_factory):
    handle = Fleet(tmp_path_factory.mktemp("fleet"), owner_pid=os.getpid()).start()
    try:
        yield handle
    finally:
        handle.stop()


TLS_TOKEN = "a-token-for-the-tls-fleet-" + uuid.uuid4().hex


@pytest.fixture(scope="session")
def tls_fleet(tmp_path_factory):
    handle = Fleet(tmp_path_factory.mktemp("tls-fleet"), owner_pid=os.getpid(), protocol="mtls",
                   token=TLS_TOKEN).start()
    try:
        yield handle
    finally:
        handle.stop()


@pytest.fixture
def fleet_factory(tmp_path_factory):
    started: list[Fleet] = []

    def make(embed_model: str = "hash-1024", faults: dict | None = None, logger_port: int = 0,
             embedder_port: int = 0, protocol: str = "http", token: str | None = None) -> Fleet:
        handle = Fleet(tmp_path_factory.mktemp("private-fleet"), embed_model, logger_port,
                       embedder_port, faults, owner_pid=os.getpid(), protocol=protocol,
                       token=token)
        started.append(handle)
        return handle.start()

    yield make
    for handle in started:
        handle.stop()


@pytest.fixture
def unique_session_id() -> str:
    return f"t-{uuid.uuid4().hex}"


@pytest.fixture
def synced_project(tmp_path, fleet):
    """A project whose configuration points at the shared reference fleet (hash-1024)."""
    return make_project(tmp_path, config=str(fleet.config_path))


@pytest.fixture
def offline_config(tmp_path):
    """Logger and embedder configured but listening nowhere (connection refused)."""
    path = tmp_path / "offline.json"
    path.write_text(json.dumps(offline_document()))
    return str(path)


@pytest.fixture
def small_disk(tmp_path):
    """A 1 MiB tmpfs, to fill up: a full disk is real, not simulated."""
    mount_point = tmp_path / "small"
    mount_point.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount_point)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)
