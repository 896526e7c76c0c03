"""Is the store usable here? It must exist, be a real directory, and inside git be ignored.

An outbox committed to git by accident would publish every dialogue, so a store that git does
not ignore is unavailable rather than silently written. Git is asked, not guessed: only
`git check-ignore` knows every .gitignore, info/exclude and core.excludesFile rule.

Asking git costs a process (about 2 ms of every write), so its answer is kept in the store
(IGNORE_CHECKED) with the fingerprint of what git read for it (`ignore_mark`: where the work
tree starts, every `.gitignore` from there to the project, the repository's info/exclude and
configuration, the user's and the system's git configuration and excludes file, and the
`GIT_*` variables), and reused while that fingerprint is the same and the answer is younger
than RECHECK_SECONDS (for the rules git reads from places not looked at here: a
core.excludesFile set elsewhere). Only "ignored" and "not a work tree" are kept: a store git
does not ignore is asked about again at every command. A kept answer that is unreadable,
torn or of another fingerprint is no answer: git is asked.
"""

from __future__ import annotations

import os
import stat
import time

from agent_memory.outbox.names import STORE_DIR

IGNORE_CHECKED = ".ignore-checked"  # in the store: git's last answer, with its fingerprint
RECHECK_SECONDS = 60.0


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


def file_mark(path: str) -> list:
    """A file's stat fingerprint, or its absence (the errno) as one."""
    try:
        info = os.stat(path)
    except OSError as exc:
        return [path, exc.errno]
    return [path, info.st_dev, info.st_ino, info.st_mode, info.st_size, info.st_mtime_ns,
            info.st_ctime_ns]


def _git_dirs(toplevel: str) -> list[str]:
    """The directories holding the repository's own rules (info/exclude, config): `.git`, or
    for a linked work tree the directory its `.git` file names and the common one."""
    dot_git = os.path.join(toplevel, ".git")
    if os.path.isdir(dot_git):
        return [dot_git]
    try:
        with open(dot_git, encoding="utf-8", errors="replace") as handle:
            line = handle.readline().strip()
    except OSError:
        return []
    if not line.startswith("gitdir:"):
        return []
    gitdir = os.path.join(toplevel, line[len("gitdir:"):].strip())
    dirs = [gitdir]
    try:
        with open(os.path.join(gitdir, "commondir"), encoding="utf-8") as handle:
            dirs.append(os.path.normpath(os.path.join(gitdir, handle.read().strip())))
    except OSError:
        pass
    return dirs


def ignore_mark(project_root: str) -> list:
    """The fingerprint of what `git check-ignore` reads to decide about the store: where the
    work tree starts (a `git init` made later changes it), every `.gitignore` from there down
    to the project, the repository's info/exclude and config, the user's git configuration
    and default global excludes file, the system's configuration, and the `GIT_*` variables.
    A list of lists (the same after a round trip through JSON)."""
    toplevel = git_toplevel(project_root)
    variables = sorted([name, value] for name, value in os.environ.items()
                       if name.startswith("GIT_"))
    if toplevel is None:
        return [None, variables]
    dot_git = file_mark(os.path.join(toplevel, ".git"))
    home = os.path.expanduser("~")
    key = (toplevel, tuple(dot_git), home, os.environ.get("XDG_CONFIG_HOME"))
    held = _IGNORE_PATHS.get(project_root)
    if held is None or held[0] != key:
        held = _IGNORE_PATHS[project_root] = (key, _ignore_paths(project_root, toplevel, home,
                                                                 key[-1]))
    return [toplevel, dot_git, variables, *(file_mark(path) for path in held[1])]


def _ignore_paths(project_root: str, toplevel: str, home: str, xdg: str | None) -> tuple:
    """The files ignore_mark looks at besides `.git`, for one project, work tree and user."""
    paths = []
    directory = project_root
    while True:
        paths.append(os.path.join(directory, ".gitignore"))
        if directory == toplevel or os.path.dirname(directory) == directory:
            break
        directory = os.path.dirname(directory)
    for gitdir in _git_dirs(toplevel):
        paths += [os.path.join(gitdir, "info", "exclude"), os.path.join(gitdir, "config"),
                  os.path.join(gitdir, "config.worktree")]
    xdg = xdg or os.path.join(home, ".config")
    paths += [os.path.join(home, ".gitconfig"), os.path.join(xdg, "git", "config"),
              os.path.join(xdg, "git", "ignore"), "/etc/gitconfig"]
    return tuple(paths)


# project -> ((work tree, `.git` as it was, home, XDG_CONFIG_HOME), the paths to look at):
# worked out again when any of those changed (a linked work tree's `.git` names its
# directories)
_IGNORE_PATHS: dict[str, tuple[tuple, tuple]] = {}


def _kept_answer(store_path: str, mark: list) -> str | None:
    """Git's answer kept in the store for this very fingerprint, younger than
    RECHECK_SECONDS ("ignored" or "outside"); None when there is none to trust."""
    import json
    try:
        fd = os.open(os.path.join(store_path, IGNORE_CHECKED), os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        kept = json.loads(os.read(fd, 1 << 16))
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)
    if not isinstance(kept, dict) or kept.get("mark") != mark:
        return None
    age = time.time() - kept.get("at", 0) if isinstance(kept.get("at"), (int, float)) else -1
    answer = kept.get("answer")
    return answer if 0 <= age < RECHECK_SECONDS and answer in ("ignored", "outside") else None


def _keep_answer(store_path: str, mark: list, answer: str) -> None:
    """Keep git's answer (a cache: one write, no fsync; a torn or lost one is asked again)."""
    import json
    data = json.dumps({"answer": answer, "at": time.time(), "mark": mark}).encode("utf-8")
    try:
        fd = os.open(os.path.join(store_path, IGNORE_CHECKED),
                     os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    except OSError:
        return
    try:
        os.write(fd, data)
    except OSError:
        pass
    finally:
        os.close(fd)


def store_ignored(project_root: str, path: str) -> bool:
    """Is the store at `path` usable as far as git goes (ignored, or not in a work tree)? Git's
    answer kept in the store is used while what git reads is unchanged (see above)."""
    mark = ignore_mark(project_root)
    if _kept_answer(path, mark) is not None:
        return True
    ignored = git_ignores(project_root, STORE_DIR + "/")
    if ignored is False:
        return False
    if ignored is True or mark[0] is None:
        _keep_answer(path, mark, "ignored" if ignored else "outside")
    return True


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
    if not store_ignored(project_root, path):
        raise StoreUnavailable(
            f"{path} is inside a git work tree but not ignored: add `/{STORE_DIR}/` to "
            f"{os.path.join(project_root, '.gitignore')} (or run `agent-memory store init`)")
    return path
