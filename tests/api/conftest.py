"""The Python API runs commands in the test's own process: its environment is the project's
(HOME isolated, no user configuration, the agent used but never started by a command unless a
test turns autostart on and stops what it started)."""

from __future__ import annotations

import pytest

from amtest import make_project


def _adopt(monkeypatch, project):
    for key, value in project.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("AGENT_MEMORY_CONFIG", raising=False)
    return project


@pytest.fixture
def api_project(synced_project, monkeypatch):
    """A project configured for the shared reference fleet, this process's environment its."""
    return _adopt(monkeypatch, synced_project)


@pytest.fixture
def own_fleet_project(fleet_factory, tmp_path, monkeypatch):
    """(a reference fleet of the test's own, which it may stop and start; a project configured
    for it, this process's environment its)."""
    fleet = fleet_factory()
    return fleet, _adopt(monkeypatch, make_project(tmp_path, config=str(fleet.config_path)))


@pytest.fixture
def file_project(tmp_path, monkeypatch):
    """A project without configuration (file store only)."""
    return _adopt(monkeypatch, make_project(tmp_path))


@pytest.fixture
def agent_running(api_project):
    """api_project with its agent running, so a CLI process beside the API skips the fleet
    clients' import (the agent serves both the same way); stopped at the end."""
    assert api_project.cli("agent", "start").rc == 0
    yield api_project
    assert api_project.cli("agent", "stop").rc == 0
