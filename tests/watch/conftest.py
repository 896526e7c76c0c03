import json

import pytest

from amtest import make_project
from fleetutil import closed_port
from watchutil import WatcherSet


@pytest.fixture
def synced_project(tmp_path, fleet):
    """A project whose configuration points at the shared reference fleet."""
    return make_project(tmp_path, config=str(fleet.config_path))


@pytest.fixture
def offline_config(tmp_path):
    """A configuration whose logger and embedder listen nowhere (connection refused)."""
    path = tmp_path / "offline.json"
    port = closed_port()
    path.write_text(json.dumps({
        "ailogger_client": {"protocol": "http", "server": {"host": "127.0.0.1", "port": port},
                            "client": {"timeout": 5}},
        "embedding_client": {"protocol": "http", "server": {"host": "127.0.0.1", "port": port},
                             "client": {"timeout": 5}}}))
    return str(path)


@pytest.fixture
def watchers():
    """Starts `sync --watch` processes; every one still running at the end is killed."""
    started = WatcherSet()
    yield started
    started.kill_all()
