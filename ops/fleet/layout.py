"""Where a fleet keeps its files inside its data directory.

One data directory = one fleet: both services, the queue worker and the test control API find
everything from it, so a restarted fleet on the same directory comes back with the same data.
"""

from __future__ import annotations

import os
from pathlib import Path

# The data directory of the running fleet; set for the service processes (and so inherited by
# the logger's queue worker) so that every process opens the same SQLite file and faults file.
DATA_ENV = "AGENT_MEMORY_FLEET_DATA"

SERVICES = ("logger", "embedder")


def data_dir_from_env() -> Path:
    """The data directory named by the environment (service and worker processes)."""
    value = os.environ.get(DATA_ENV)
    if not value:
        raise RuntimeError(f"{DATA_ENV} is not set: the reference fleet has no data directory")
    return Path(value)


def db_path(data: Path) -> Path:
    return Path(data) / "logger.sqlite3"


def faults_path(data: Path) -> Path:
    return Path(data) / "faults.json"


def state_path(data: Path) -> Path:
    """What `up` started: ports, pids, process groups, model."""
    return Path(data) / "fleet.json"


def config_path(data: Path) -> Path:
    """The agent-memory configuration document pointing at this fleet."""
    return Path(data) / "agent-memory.json"


def log_path(data: Path, service: str) -> Path:
    return Path(data) / f"{service}.log"


def ready_path(data: Path, service: str) -> Path:
    """Written by a service process once it answers: {"port", "pid"}."""
    return Path(data) / f"{service}.ready"

# The pid whose end stops the fleet (set by test fixtures; see serve.watch_owner).
OWNER_ENV = "AGENT_MEMORY_FLEET_OWNER"
