import os

import pytest

from amtest import clean_env, git_init, run_cli


class Project:
    """A scratch git project with an initialised store, and the CLI run inside it."""

    def __init__(self, root: str, home: str) -> None:
        self.root = root
        self.home = home
        self.env = clean_env(home)
        self.store = os.path.join(root, ".agent-memory")

    def cli(self, *args: str, stdin: bytes | None = None, cwd: str | None = None):
        return run_cli(list(args), cwd=cwd or self.root, env=self.env, stdin=stdin)

    def files(self, session_id: str, area: str = "") -> list[str]:
        path = os.path.join(self.store, area, session_id)
        return sorted(os.listdir(path)) if os.path.isdir(path) else []


@pytest.fixture
def bare_project(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    git_init(str(root))
    home = tmp_path / "home"
    home.mkdir()
    return Project(str(root), str(home))


@pytest.fixture
def project(bare_project):
    result = bare_project.cli("store", "init")
    assert result.rc == 0, result.stdout
    return bare_project
