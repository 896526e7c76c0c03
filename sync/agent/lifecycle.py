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
- Starting, seen from outside: the starter writes the agent's pid and start time into
  `.agent.lock`; `starting` reads them while the lock is held (an agent is being started or
  runs), `failed_start` tells an agent that exited before it ever served (it never published
  its state) from one that served and exited, with the last line of its log.
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
        os.ftruncate(lock_fd, 0)  # the note of the agent started before is no longer true
        pid = _spawn(store_path, config_source, idle_exit, lock_fd)
        _note_start(lock_fd, pid)
        return pid
    finally:
        os.close(lock_fd)


def _note_start(lock_fd: int, pid: int) -> None:
    """Say in `.agent.lock` which agent was started, and when (`starting`, `failed_start`)."""
    import json
    import time
    try:
        os.ftruncate(lock_fd, 0)
        os.pwrite(lock_fd, json.dumps({"pid": pid, "started": time.time()}).encode() + b"\n", 0)
    except OSError:
        pass  # a report only: without it a start is taken as fresh


def _start_lock(store_path: str) -> tuple[bool, dict]:
    """(is `.agent.lock` held, what its starter wrote there)."""
    import fcntl
    import json
    try:
        fd = os.open(os.path.join(store_path, channel.LOCK_NAME),
                     os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False, {}
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            held = False
            fcntl.flock(fd, fcntl.LOCK_UN)
        except BlockingIOError:
            held = True
        try:
            noted = json.loads(os.pread(fd, 4096, 0) or b"{}")
        except ValueError:
            noted = {}
    finally:
        os.close(fd)
    return held, noted if isinstance(noted, dict) else {}


def starting(store_path: str) -> dict | None:
    """While `.agent.lock` is held (an agent is being started, or runs without answering
    yet): {"pid", "started"} as its starter wrote them (None each when not written yet, or
    by an agent started by hand, which holds no start lock); None when it is not held."""
    held, noted = _start_lock(store_path)
    if not held:
        return None
    pid, started = noted.get("pid"), noted.get("started")
    return {"pid": pid if isinstance(pid, int) else None,
            "started": started if isinstance(started, (int, float)) else None}


def failed_start(store_path: str) -> str | None:
    """Why the agent started last exited before it ever served (it never published its
    state: a configuration or an option it refused, an import that failed, a kill), in words
    with the last line of its log; None when none was started, it published (it had taken
    the store), or it still runs."""
    held, noted = _start_lock(store_path)
    pid = noted.get("pid")
    if held or not isinstance(pid, int):
        return None
    from agent_memory.sync.agent import published
    state = published.read(store_path) or {}
    if state.get("pid") == pid:
        return None
    said = _last_line(os.path.join(store_path, channel.LOG_NAME))
    return (f"the project's agent (pid {pid}) exited before it served"
            + (f"; its log ({channel.LOG_NAME}) ends: {said}" if said else ""))


def _last_line(path: str, limit: int = 400) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(max(0, os.fstat(handle.fileno()).st_size - 4096))
            lines = [line.strip() for line in handle.read().splitlines() if line.strip()]
    except OSError:
        return ""
    return lines[-1].decode("utf-8", "replace")[:limit] if lines else ""


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
