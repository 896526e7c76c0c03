import json

import pytest

from amtest import make_project
from vtest import offline_document


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
