"""Starting, retiring and finding a project's agent: the process side of it, one place for the
CLI (cli.agent_client decides what to ask and what an answer means for its command) and for the
agent's own start (cli.watch_cmd keeps the start lock it inherits).

- Finding: reaching the agent on the store's socket and asking it are sync.agent.channel's
  (`reach`, `ask`): nothing answering (no socket, or a killed agent's stale one) is None, never
  an error. `alive` and `wait_gone` follow a pid.
- Starting: `start` spawns `sync --watch --autostarted` in the background unless one runs or
  is being started: `.agent-memory/.agent.lock` decides who starts it (the starter takes it
  without waiting and hands it to the agent, which holds it for its life: `keep_start_lock`),
  so concurrent first calls start exactly one. Its own session, stdin from /dev/null, stdout
  and stderr appended to `.agent-memory/.agent.log` (rotated past 8 MiB), never the caller's
  pipes; `python -P`, so the caller's project never shadows agent-memory's packages.
- Retiring: an autostarted agent of an older release (another socket protocol) cannot be asked
  to hand over; `retire_older` stops it with SIGTERM, as it would hand over if it could.

Pure standard library at import time: this module is on the write path.
"""

from __future__ import annotations

import os

from agent_memory.sync.agent import channel

LOG_ROTATE_BYTES = 8 << 20
LOCK_FD_ENV = "AGENT_MEMORY_AGENT_LOCK_FD"  # the start lock's descriptor, handed to the agent
MODE_ENV = "AGENT_MEMORY_AGENT"  # the CLI's agent mode: never inherited by the agent


# --- finding -----------------------------------------------------------------------------------
def alive(pid: int) -> bool:
    """Is `pid` a live process (a zombie counts as gone: it holds no lock, serves nothing)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[-1].split()[0] != b"Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def wait_gone(pid: int, timeout: float) -> bool:
    """Wait up to `timeout` seconds for `pid` to exit; whether it did."""
    import time
    deadline = time.monotonic() + timeout
    while alive(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
    return True


# --- retiring ----------------------------------------------------------------------------------
def retire_older(store_path: str) -> int | None:
    """An autostarted agent of an older release (another socket protocol) is stopped with
    SIGTERM, as it would hand over if it could; its pid, or None when it is not one."""
    import signal
    from agent_memory.sync.agent import published
    from agent_memory.sync.lock import SyncLock
    holder = SyncLock(store_path).holder()
    state = published.read(store_path) or {}
    if holder is None or holder <= 0 or state.get("pid") != holder \
            or not (state.get("agent") or {}).get("autostarted"):
        return None
    try:
        os.kill(holder, signal.SIGTERM)
    except OSError:
        return None
    return holder


# --- starting ----------------------------------------------------------------------------------
def start(store_path: str, config_source: str | None, idle_exit: float) -> int | None:
    """Start the store's agent in the background unless one runs or is being started; its
    pid."""
    import fcntl
    lock_fd = os.open(os.path.join(store_path, channel.LOCK_NAME),
                      os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return None  # an agent runs, or another command is starting it
        probe = channel.reach(store_path)
        if probe is not None:  # one started by hand (or by systemd) answers
            probe.close()
            return None
        return _spawn(store_path, config_source, idle_exit, lock_fd)
    finally:
        os.close(lock_fd)


def _spawn(store_path: str, config_source: str | None, idle_exit: float, lock_fd: int) -> int:
    import sys
    log_path = os.path.join(store_path, channel.LOG_NAME)
    try:
        if os.stat(log_path).st_size > LOG_ROTATE_BYTES:
            os.replace(log_path, log_path + ".1")
    except FileNotFoundError:
        pass
    log_fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW
                     | os.O_CLOEXEC, 0o600)
    # -P: the working directory (the caller's project) is not put on sys.path, so a project's
    # own `cli/`, `sync/` or `outbox/` package is never imported in place of agent-memory's.
    argv = [sys.executable, "-P", "-m", "agent_memory.cli", "--project-root",
            os.path.dirname(store_path), "--config", config_source, "sync", "--watch",
            "--autostarted", "--idle-exit", repr(float(idle_exit))]
    env = dict(os.environ)
    env[LOCK_FD_ENV] = str(lock_fd)
    env.pop(MODE_ENV, None)
    os.set_inheritable(lock_fd, True)  # the agent keeps .agent.lock for its whole life
    try:
        return os.posix_spawn(sys.executable, argv, env, setsid=True, file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_DUP2, log_fd, 1),
            (os.POSIX_SPAWN_DUP2, log_fd, 2)])
    finally:
        os.set_inheritable(lock_fd, False)
        os.close(log_fd)


def keep_start_lock() -> None:
    """In the agent: an autostarted agent inherits `.agent.lock` from the command that started
    it and holds it for its life; its own children (git) must not."""
    inherited = os.environ.pop(LOCK_FD_ENV, None)
    if inherited and inherited.isdigit():
        try:
            os.set_inheritable(int(inherited), False)
        except OSError:
            pass
