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


def _counting_git(project, tmp_path) -> str:
    """Put a `git` first on the project's PATH that logs each check-ignore it is asked, then
    runs the real one; the log's path."""
    import shutil
    real = shutil.which("git")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "git-calls.log"
    wrapper = bin_dir / "git"
    wrapper.write_text(f'#!/bin/sh\ncase "$*" in *check-ignore*) echo asked >> "{log}";; esac\n'
                       f'exec "{real}" "$@"\n')
    wrapper.chmod(0o755)
    project.env["PATH"] = f"{bin_dir}:{project.env.get('PATH', '')}"
    return str(log)


def _asked(log: str) -> int:
    return len(open(log).read().splitlines()) if os.path.exists(log) else 0


def test_git_is_asked_again_only_when_what_it_reads_changed(project, tmp_path):
    """Git's answer is kept in the store with the fingerprint of what git read: commands in a
    row ask it once; a changed `.gitignore` is asked about at the very next command, and a
    store no longer ignored is refused by it, nothing written."""
    log = _counting_git(project, tmp_path)
    for text in ("one", "two", "three"):
        assert project.cli(*message_args("s1", text)).rc == 0
    assert _asked(log) == 1
    kept = os.path.join(project.store, ".ignore-checked")
    assert stat.S_IMODE(os.lstat(kept).st_mode) == 0o600
    gitignore = os.path.join(project.root, ".gitignore")
    with open(gitignore, "a") as handle:
        handle.write("# a comment\n")
    assert project.cli(*message_args("s1", "four")).rc == 0
    assert _asked(log) == 2
    with open(gitignore, "w") as handle:
        handle.write("*.log\n")
    before = project.files("s1")
    refused = project.cli(*message_args("s1", "five"))
    assert refused.rc == 3 and refused.code == "STORE_UNAVAILABLE"
    assert _asked(log) == 3 and project.files("s1") == before
    again = project.cli(*message_args("s1", "six"))  # a refusal is never kept
    assert again.rc == 3 and _asked(log) == 4


def test_git_is_asked_again_for_an_old_or_unreadable_kept_answer(project, tmp_path):
    """A kept answer older than a minute (rules git reads from places not looked at), one torn
    or garbled, or one made for another fingerprint is not used: git is asked."""
    import json
    log = _counting_git(project, tmp_path)
    assert project.cli(*message_args("s1", "one")).rc == 0
    kept = os.path.join(project.store, ".ignore-checked")
    with open(kept) as handle:
        answer = json.load(handle)
    asked = _asked(log)
    for changed in (dict(answer, at=answer["at"] - 61), dict(answer, mark=[]), None):
        with open(kept, "w") as handle:
            handle.write(json.dumps(answer)[:-7] if changed is None else json.dumps(changed))
        assert project.cli(*message_args("s1", "again")).rc == 0
        asked += 1
        assert _asked(log) == asked
    assert project.cli(*message_args("s1", "kept")).rc == 0
    assert _asked(log) == asked
