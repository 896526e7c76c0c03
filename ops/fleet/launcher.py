"""Start, stop and inspect a reference fleet living in one data directory.

`start()` spawns the two services, each in its own process group (start_new_session) with the
fork start method for the logger's queue, waits until both answer, writes the agent-memory
configuration document and the state file, and returns what `up` prints. `stop()` stops both
whole groups. `status()` says whether each answers. Used by the `ops.fleet` command line, the
pytest fixtures and the benchmark; it imports nothing heavy.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ops.fleet import configdoc, faults, layout, procs, security
from ops.fleet.net import answers

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_MODEL = "hash-1024"


class FleetError(RuntimeError):
    """The fleet could not be started (the message says why; the logs are in the data dir)."""


def model_dimension(model: str) -> int:
    if model == "all-MiniLM-L6-v2":
        return 384
    if model.startswith("hash-") and model[5:].isdigit() and int(model[5:]) > 0:
        return int(model[5:])
    raise FleetError(f"unknown embedding model {model!r} (hash-<dimension> or all-MiniLM-L6-v2)")


def read_state(data: Path) -> dict[str, Any] | None:
    try:
        return json.loads(layout.state_path(data).read_text())
    except (OSError, ValueError):
        return None


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def _spawn(data: Path, service: str, args: list[str], env: dict[str, str],
           module: str | None = None) -> subprocess.Popen:
    log = open(layout.log_path(data, service), "ab")
    try:
        return subprocess.Popen(
            [sys.executable, "-m", module or f"ops.fleet.{service}.main", "--data", str(data),
             *args],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
            cwd=str(data), start_new_session=True, close_fds=True)
    finally:
        log.close()


def start(data: Path, logger_port: int = 0, embed_port: int = 0,
          embed_model: str = DEFAULT_MODEL, initial_faults: dict | None = None,
          timeout: float = 60.0, owner_pid: int | None = None,
          real_embedder: bool = False, protocol: str = "http",
          token: str | None = None) -> dict[str, Any]:
    """Start both services; return {"logger": {port, pid}, "embedder": {port, pid}, "config"}.

    `protocol` "https" or "mtls" serves TLS with certificates made for this fleet (in
    DATA/tls/), "mtls" requiring a client certificate of its CA; `token` makes every call need
    it (ops.fleet.security). A restart on the same data keeps them.
    With `owner_pid`, the services stop by themselves once that process is gone (a test run
    killed before its teardown must not leave a fleet behind). With `real_embedder`, the
    embedder is embedding-service 2.0.0 (ops.fleet.real_embedder) serving all-MiniLM-L6-v2; its
    fault switches do nothing."""
    data = Path(data).resolve()
    if real_embedder:
        from ops.fleet import real_embedder as real
        if protocol != "http" or token:
            raise FleetError("the real embedder is served over plain http without a token only")
        reason = real.unavailable_reason()
        if reason:
            raise FleetError(reason)
        if embed_model not in (DEFAULT_MODEL, real.MODEL):
            raise FleetError(f"the real embedder serves {real.MODEL} only, not {embed_model}")
        embed_model = real.MODEL
    data.mkdir(parents=True, exist_ok=True, mode=0o700)
    dimension = model_dimension(embed_model)
    previous = read_state(data)
    if previous and any(procs.alive(previous[s]["pid"]) for s in layout.SERVICES):
        raise FleetError(f"a fleet is already running in {data} (run `down` first)")
    faults.reset(layout.faults_path(data), initial_faults)
    secured = security.read(data) if security.path(data).exists() and previous else None
    if secured is None or (secured.get("protocol"), secured.get("token")) != (protocol, token):
        secured = security.make(data, protocol, token)
        security.write(data, secured)
    for service in layout.SERVICES:
        layout.ready_path(data, service).unlink(missing_ok=True)

    env = dict(os.environ)
    env[layout.DATA_ENV] = str(data)
    env["QUEUEMGR_MP_START_METHOD"] = "fork"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    env.pop("AGENT_MEMORY_CONFIG", None)
    env.pop(layout.OWNER_ENV, None)
    if owner_pid is not None:
        env[layout.OWNER_ENV] = str(owner_pid)
    children = {
        "embedder": _spawn(data, "embedder", ["--port", str(embed_port)], env,
                           "ops.fleet.real_embedder") if real_embedder else
        _spawn(data, "embedder", ["--port", str(embed_port), "--model", embed_model], env),
        "logger": _spawn(data, "logger", ["--port", str(logger_port), "--embed-model",
                                          embed_model], env),
    }
    try:
        ready = _wait_ready(data, children, timeout, secured)
    except BaseException:
        for child in children.values():
            procs.stop_group(child.pid, grace=2.0)
        raise
    config = configdoc.write(layout.config_path(data), configdoc.document(
        ready["logger"]["port"], ready["embedder"]["port"], embed_model, dimension,
        secured=secured))
    state = {**ready, "config": str(config), "embedding_model": embed_model,
             "dimension": dimension, "data": str(data), "real_embedder": real_embedder,
             "protocol": protocol, "token": bool(token)}
    tmp = layout.state_path(data).with_suffix(".tmp")
    tmp.write_text(json.dumps(state, indent=2))
    os.replace(tmp, layout.state_path(data))
    return {"logger": ready["logger"], "embedder": ready["embedder"], "config": str(config)}


def _wait_ready(data: Path, children: dict[str, subprocess.Popen],
                timeout: float, secured: dict[str, Any]) -> dict[str, dict]:
    deadline = time.monotonic() + timeout
    ready: dict[str, dict] = {}
    current = faults.read_all(layout.faults_path(data))
    while len(ready) < len(children):
        for service, child in children.items():
            if service in ready:
                continue
            if child.poll() is not None:
                raise FleetError(f"{service} exited with status {child.returncode}:\n"
                                 + _tail(layout.log_path(data, service)))
            try:
                announced = json.loads(layout.ready_path(data, service).read_text())
            except (OSError, ValueError):
                continue
            port = announced["port"]
            reachable = not (current[service]["down"] or current[service]["drop"]
                             or current[service]["delay"])
            if reachable and not answers(port, secured=secured):
                continue
            ready[service] = {"port": port, "pid": child.pid}
        if len(ready) < len(children):
            if time.monotonic() > deadline:
                raise FleetError(f"the fleet did not answer within {timeout:.0f} s; logs in {data}")
            time.sleep(0.01)
    return ready


def stop(data: Path, grace: float = 5.0) -> dict[str, Any]:
    """Stop both services' whole process groups (SIGTERM, then SIGKILL after `grace`)."""
    data = Path(data).resolve()
    state = read_state(data)
    if state is None:
        return {"logger": None, "embedder": None}
    return {service: procs.stop_group(state[service]["pid"], grace)
            for service in layout.SERVICES}


def status(data: Path) -> dict[str, Any]:
    """Whether each service of the fleet in `data` is running and answers."""
    data = Path(data).resolve()
    state = read_state(data)
    if state is None:
        return {"logger": None, "embedder": None, "config": None}
    secured = security.read(data)
    out: dict[str, Any] = {"config": state.get("config"),
                           "protocol": secured.get("protocol", "http"),
                           "token": bool(secured.get("token"))}
    for service in layout.SERVICES:
        port, pid = state[service]["port"], state[service]["pid"]
        out[service] = {"port": port, "pid": pid, "running": procs.alive(pid),
                        "answers": answers(port, secured=secured)}
    return out
