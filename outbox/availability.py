"""Is the store usable here? It must exist, be a real directory, and inside git be ignored.

An outbox committed to git by accident would publish every dialogue, so a store that git does
not ignore is unavailable rather than silently written. Git is asked, not guessed: only
`git check-ignore` knows every .gitignore, info/exclude and core.excludesFile rule.
"""

from __future__ import annotations

import os
import stat

from agent_memory.outbox.names import STORE_DIR


class StoreUnavailable(Exception):
    """The store cannot be used; the message says why and how to fix it."""


def git_toplevel(directory: str) -> str | None:
    """The git work tree's top level containing `directory`, or None outside git.

    Found the way git finds it, by the nearest `.git` entry (a directory, or a file for linked
    work trees and submodules), without paying for a git process on every command.
    """
    current = os.path.abspath(directory)
    while True:
        if os.path.lexists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _git_status(args: list[str], cwd: str) -> int | None:
    """Exit status of a quiet git command, or None when git is not installed.

    os.posix_spawnp rather than subprocess: this runs on every write, and importing
    subprocess costs more than the spawn itself.
    """
    devnull = os.open(os.devnull, os.O_RDWR)
    try:
        pid = os.posix_spawnp("git", ["git", "-C", cwd, *args], os.environ,
                              file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 0),
                                            (os.POSIX_SPAWN_DUP2, devnull, 1),
                                            (os.POSIX_SPAWN_DUP2, devnull, 2)])
    except FileNotFoundError:
        return None
    finally:
        os.close(devnull)
    _pid, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def git_ignores(project_root: str, relative: str) -> bool | None:
    """True/False whether git ignores `relative` under `project_root`; None outside a work tree."""
    status = _git_status(["check-ignore", "-q", "--no-index", relative], project_root)
    if status == 0:
        return True
    if status == 1:
        return False
    return None  # 128: not a git work tree (or git missing)


def check_available(project_root: str) -> str:
    """Return the store's path, or raise StoreUnavailable with a fix in the message."""
    path = os.path.join(project_root, STORE_DIR)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise StoreUnavailable(
            f"no file store at {path}: run `agent-memory store init` in the project "
            f"(or pass --project-root) to create it") from None
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise StoreUnavailable(
            f"{path} is not a real directory (symlink or file): remove it and run "
            f"`agent-memory store init`")
    if git_ignores(project_root, STORE_DIR + "/") is False:
        raise StoreUnavailable(
            f"{path} is inside a git work tree but not ignored: add `/{STORE_DIR}/` to "
            f"{os.path.join(project_root, '.gitignore')} (or run `agent-memory store init`)")
    return path
