"""The store must exist, be a real directory and, inside git, be ignored (exit 3 otherwise)."""

import os
import stat
import subprocess

from amtest import message_args


def test_store_init_creates_private_dir_and_ignore_rule(bare_project):
    result = bare_project.cli("store", "init")
    assert result.rc == 0
    assert result.data["created"] is True and result.data["ignore_rule_added"] is True
    mode = stat.S_IMODE(os.stat(bare_project.store).st_mode)
    assert mode == 0o700
    with open(os.path.join(bare_project.root, ".gitignore")) as handle:
        assert "/.agent-memory/\n" in handle.read()
    ignored = subprocess.run(["git", "check-ignore", "-q", ".agent-memory/"], cwd=bare_project.root)
    assert ignored.returncode == 0


def test_store_init_is_idempotent_and_keeps_existing_rules(bare_project):
    with open(os.path.join(bare_project.root, ".gitignore"), "w") as handle:
        handle.write("*.log")  # no trailing newline
    assert bare_project.cli("store", "init").rc == 0
    second = bare_project.cli("store", "init")
    assert second.rc == 0
    assert second.data == {**second.data, "created": False, "ignore_rule_added": False}
    with open(os.path.join(bare_project.root, ".gitignore")) as handle:
        assert handle.read() == "*.log\n/.agent-memory/\n"


def test_store_init_outside_git_writes_no_ignore_file(tmp_path):
    from amtest import clean_env, run_cli
    root = tmp_path / "plain"
    root.mkdir()
    result = run_cli(["store", "init"], cwd=str(root), env=clean_env(str(tmp_path)))
    assert result.rc == 0 and result.data["ignore_rule_added"] is False
    assert not (root / ".gitignore").exists()
    assert (root / ".agent-memory").is_dir()


def test_missing_store_is_exit_3_with_fix(bare_project):
    result = bare_project.cli(*message_args("s1"))
    assert result.rc == 3 and result.code == "STORE_UNAVAILABLE"
    assert "store init" in result.out["error"]["message"]
    assert not os.path.exists(bare_project.store)


def test_store_not_ignored_by_git_is_exit_3_and_nothing_written(bare_project):
    os.mkdir(bare_project.store, 0o700)
    result = bare_project.cli(*message_args("s1"))
    assert result.rc == 3 and result.code == "STORE_UNAVAILABLE"
    assert ".gitignore" in result.out["error"]["message"]
    assert os.listdir(bare_project.store) == []


def test_store_that_is_a_symlink_is_refused(bare_project, tmp_path):
    target = tmp_path / "elsewhere"
    target.mkdir()
    os.symlink(target, bare_project.store)
    with open(os.path.join(bare_project.root, ".gitignore"), "w") as handle:
        handle.write("/.agent-memory\n")
    result = bare_project.cli(*message_args("s1"))
    assert result.rc == 3
    assert os.listdir(target) == []
    assert bare_project.cli("store", "init").rc == 3


def test_store_that_is_a_file_is_refused(bare_project):
    with open(bare_project.store, "w") as handle:
        handle.write("x")
    with open(os.path.join(bare_project.root, ".gitignore"), "w") as handle:
        handle.write("/.agent-memory\n")
    assert bare_project.cli(*message_args("s1")).rc == 3


def test_symlinked_session_directory_is_refused(project, tmp_path):
    target = tmp_path / "outside"
    target.mkdir()
    os.symlink(target, os.path.join(project.store, "s1"))
    result = project.cli(*message_args("s1"))
    assert result.rc == 3 and result.code == "STORE_UNSAFE_PATH"
    assert os.listdir(target) == []


def test_project_root_defaults_to_git_top_level(project):
    sub = os.path.join(project.root, "src", "deep")
    os.makedirs(sub)
    result = project.cli(*message_args("s1"), cwd=sub)
    assert result.rc == 0
    assert len(project.files("s1")) == 1


def test_project_root_option_and_globals_after_command(project, tmp_path):
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    result = project.cli(*message_args("s1"), "--project-root", project.root, "--store", "file",
                         cwd=str(elsewhere))
    assert result.rc == 0 and result.out["store"] == "file"
    assert len(project.files("s1")) == 1
