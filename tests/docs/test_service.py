"""`service systemd|cron`: what a pip install needs to run the background sync, made for this
installation and project. In-process (the command's own code through cli.main.run); the unit
is checked by systemd's own tools where the machine has them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from amtest import git_init
from agent_memory.cli import main, service_cmd


def run(*argv: str) -> tuple[int, dict]:
    lines = []
    rc = main.run(list(argv), lines.append)
    return rc, json.loads(lines[0])


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = tmp_path / "src" / "my shop-1"
    root.mkdir(parents=True)
    git_init(str(root))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("AGENT_MEMORY_CONFIG", raising=False)
    monkeypatch.setenv("AGENT_MEMORY_AGENT", "off")
    assert run("--project-root", str(root), "store", "init")[0] == 0
    return root


@pytest.mark.parametrize("path", ["/tmp/gs-home/home/src/demo", "/tmp/a b/.x/ü-é_:.y/", "/",
                                  "/.hidden/x", "//double//slash/"])
def test_the_instance_name_is_systemd_escape_s(path):
    if shutil.which("systemd-escape") is None:
        pytest.skip("systemd-escape is not installed here")
    made = subprocess.run(["systemd-escape", "--path", path], capture_output=True, text=True,
                          check=True).stdout.strip()
    assert service_cmd.escape_path(path) == made


def test_systemd_answers_the_unit_for_this_installation_and_project(project, tmp_path):
    rc, answer = run("--project-root", str(project), "service", "systemd")
    assert rc == 0, answer
    data = answer["data"]
    assert data["unit_file"] == str(tmp_path / "xdg" / "systemd" / "user" /
                                    "agent-memory-watch@.service")
    assert data["instance"] == f"agent-memory-watch@{service_cmd.escape_path(str(project))}.service"
    exec_start = next(line for line in data["unit"].splitlines() if line.startswith("ExecStart="))
    assert exec_start == (f"ExecStart={service_cmd.executable()[0]} --project-root %f sync "
                          "--watch")
    assert os.access(service_cmd.executable()[0], os.X_OK)
    assert "drop_in" not in data  # the default configuration: nothing to name
    assert any("no logger is configured" in note for note in data["notes"])
    assert not os.path.exists(data["unit_file"])  # shown, not written


def test_systemd_write_writes_once_and_refuses_to_replace_another_unit(project, tmp_path):
    config = tmp_path / "fleet.json"
    config.write_text("{}")
    argv = ["--config", str(config), "--project-root", str(project), "service", "systemd",
            "--write"]
    rc, answer = run(*argv)
    data = answer["data"]
    assert rc == 0 and data["written"] == [data["unit_file"], data["drop_in_file"]], answer
    with open(data["drop_in_file"], encoding="utf-8") as handle:
        assert handle.read() == f"[Service]\nEnvironment=\"AGENT_MEMORY_CONFIG={config}\"\n"
    assert oct(os.stat(data["unit_file"]).st_mode & 0o777) == "0o644"
    assert run(*argv)[1]["data"]["written"] == []  # the same text: nothing to do
    with open(data["unit_file"], "a", encoding="utf-8") as handle:
        handle.write("# edited by hand\n")
    rc, refused = run(*argv)
    assert rc == 2 and "--force" in refused["error"]["message"]
    rc, forced = run(*argv, "--force")
    assert rc == 0 and forced["data"]["written"] == [data["unit_file"]]


def test_the_unit_is_one_systemd_reads_without_a_complaint(project, tmp_path):
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed here")
    data = run("--project-root", str(project), "service", "systemd")[1]["data"]
    unit = tmp_path / data["instance"]  # an instance file, as systemd would read it
    unit.write_text(data["unit"])
    checked = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True,
                             text=True, timeout=60)
    complaints = [line for line in (checked.stdout + checked.stderr).splitlines()
                  if str(unit) in line]
    assert complaints == [], complaints


def test_cron_answers_the_line_for_this_project(project, tmp_path):
    config = tmp_path / "fleet.json"
    config.write_text("{}")
    rc, answer = run("--config", str(config), "--project-root", str(project), "service", "cron")
    assert rc == 0, answer
    line = answer["data"]["line"]
    assert line.startswith("*/5 * * * * AGENT_MEMORY_CONFIG=")
    assert f"--project-root '{project}' sync >> " in line  # the space in its name quoted
    assert service_cmd.executable()[0] in line


def test_a_project_without_a_store_is_told_how_to_make_one(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    git_init(str(tmp_path))
    rc, answer = run("--project-root", str(tmp_path), "service", "cron")
    assert rc == 3 and "store init" in answer["error"]["message"]
