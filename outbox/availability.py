"""Is the store usable here? It must exist, be a real directory, and inside git be ignored.

An outbox committed to git by accident would publish every dialogue, so a store that git does
not ignore is unavailable rather than silently written. Git is asked, not guessed: only
`git check-ignore` knows every .gitignore, info/exclude and core.excludesFile rule.
"""

from __future__ import annotations

import os
import stat
import subprocess

from outbox.names import STORE_DIR


class StoreUnavailable(Exception):
    """The store cannot be used; the message says why and how to fix it."""


def git_toplevel(directory: str) -> str | None:
    """The git work tree's top level containing `directory`, or None outside git."""
    try:
        done = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=directory,
                              capture_output=True, text=True, check=False)
    except (FileNotFoundError, NotADirectoryError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip() or None


def git_ignores(project_root: str, relative: str) -> bool | None:
    """True/False whether git ignores `relative` under `project_root`; None outside a work tree."""
    try:
        done = subprocess.run(["git", "check-ignore", "-q", "--no-index", relative],
                              cwd=project_root, capture_output=True, check=False)
    except FileNotFoundError:
        return None
    if done.returncode == 0:
        return True
    if done.returncode == 1:
        return False
    return None  # 128: not a git work tree


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
