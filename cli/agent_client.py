"""The CLI's side of the project's agent: ask it, and start it when none runs.

The agent is the project's watcher (`sync --watch`) serving the CLI over a Unix socket (see
sync.agent_socket). It has the fleet clients imported and its links open, so a command it serves
never pays their import (about 0.6 to 0.9 s) in the CLI process:

- `write` and `session open|close|reopen` append their file here first, always; then the agent
  embeds (within the budget) and forwards it and tells what became of it (`deliver`). If it
  dies before answering, the answer is `"store": "file"` and the file is delivered later.
- `write` and `session` with `--store logger` (no outbox file) have the agent make their one
  logger call (`call`).
- `read`, `get`, `sessions`, `search`, `working-set` and `status --probe` are run by the agent
  (`serve`): the same code, so the same bytes on stdout and the same exit code.
- Nothing answers at the socket (none, or a killed agent's stale socket): the command runs
  inline as before, then, in mode "auto", starts an agent in the background for the next ones
  (`after_command`): its own session, stdin from /dev/null, stdout and stderr to
  `.agent-memory/.agent.log`, never the caller's pipes. `.agent-memory/.agent.lock` decides
  who starts it: the starter takes it without waiting and hands it to the agent, which holds it
  for its life, so concurrent first calls start exactly one.

Modes, first found wins: `--no-agent` (off), `$AGENT_MEMORY_AGENT`, the configuration's
`agent.mode`; "auto" (default) uses and starts, "use" only uses a running one, "off" neither.
Only commands that would talk to the fleet (a logger configured, not `--store file`) ask.
Pure standard library at import time: this module is on the write path.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing costs the write path 3 ms: annotations only
if TYPE_CHECKING:
    from typing import Any

from cli.errors import CliError, UsageError
from sync import agent_socket

ENV_MODE = "AGENT_MEMORY_AGENT"
MODES = ("auto", "use", "off")
CONNECT_TIMEOUT = 2.0
RUN_TIMEOUT = 300.0
LOG_ROTATE_BYTES = 8 << 20

_autostart_wanted = False


class AgentLost(Exception):
    """The agent took the request but the connection broke before its answer."""


def mode(ctx) -> str:
    if getattr(ctx.args, "no_agent", False):
        return "off"
    env = os.environ.get(ENV_MODE)
    if env:
        if env not in MODES:
            raise UsageError(f"${ENV_MODE} must be one of {', '.join(MODES)}, got {env!r}")
        return env
    return ctx.config.agent["mode"]


def _wanted(ctx) -> bool:
    """Would this command talk to the fleet, and may it ask the agent? Configuration and
    store problems answer False: the inline path reports them exactly as before."""
    try:
        return ctx.store_mode != "file" and ctx.side() == "logger" and mode(ctx) != "off"
    except UsageError:
        raise
    except CliError:
        return False


def _identity(ctx) -> dict[str, Any] | None:
    """What the agent checks before serving: the same store and the same configuration (None
    without a usable store: the command then reports it, or does without, as it always did)."""
    try:
        store = ctx.store().path
    except CliError:
        return None
    return {"protocol": agent_socket.PROTOCOL, "store": store, "config": ctx.config.source}


def connect(store_path: str, timeout: float = CONNECT_TIMEOUT):
    """A connection to the store's agent; None when none answers (no socket, or a stale one)."""
    try:
        return agent_socket.connect(agent_socket.socket_path(store_path), timeout)
    except OSError:  # ENOENT: none; ECONNREFUSED: a dead agent's socket; EACCES: not ours
        return None


def ask(store_path: str, message: dict[str, Any], timeout: float) -> dict[str, Any] | None:
    """The agent's answer; None when no agent answers the connection; AgentLost when it took
    the request and went away without answering."""
    sock = connect(store_path)
    if sock is None:
        return None
    try:
        try:
            agent_socket.send(sock, message)
        except OSError:
            return None  # it never had the request
        sock.settimeout(timeout)
        try:
            return agent_socket.receive(sock)
        except (OSError, ConnectionError) as exc:
            raise AgentLost(str(exc) or type(exc).__name__) from None
    finally:
        sock.close()


def serve(ctx, args, argv: list[str]) -> tuple[int, str] | None:
    """Run a read-side command (cli.main.SERVED, `status --probe`) in the agent: (exit code,
    the stdout line), or None to run it here (no agent, another store or configuration, or
    the agent lost midway: reads are safe to repeat)."""
    global _autostart_wanted
    identity = _identity(ctx) if _wanted(ctx) else None
    if identity is None:
        return None
    message = {**identity, "op": "run", "argv": list(argv)}
    try:
        answer = ask(identity["store"], message, RUN_TIMEOUT)
    except AgentLost:
        return None
    if answer is None:
        _autostart_wanted = True
        return None
    if not answer.get("ok") or not isinstance(answer.get("line"), str):
        return None
    return int(answer.get("exit_code", 1)), answer["line"]


def call(ctx, command: str, params: dict[str, Any]) -> dict[str, Any] | None:
    """One logger command of `--store logger` (`write`, `session`) made by the agent: its
    answer, {"result": ...} or {"failure": {"kind", ...}}; None to make it here (no agent, or
    another store or configuration). AgentLost when the agent took it and went away without
    answering: the logger may or may not have done it, so it is not repeated."""
    global _autostart_wanted
    identity = _identity(ctx) if _wanted(ctx) else None
    if identity is None:
        return None
    message = {**identity, "op": "call", "command": command, "params": params}
    answer = ask(identity["store"], message, RUN_TIMEOUT)
    if answer is None:
        _autostart_wanted = True
        return None
    if not answer.get("ok") or not ("result" in answer or isinstance(answer.get("failure"),
                                                                      dict)):
        return None
    return answer


def deliver(ctx, file, wait: float, embed_budget: float = 0.0):
    """The agent's Delivery of a file this command appended; None to forward it inline."""
    global _autostart_wanted
    identity = _identity(ctx) if _wanted(ctx) else None
    if identity is None:
        return None
    from sync import delivery
    message = {**identity, "op": "deliver", "session_id": file.session_id,
               "name": file.name, "wait": wait, "embed_budget": embed_budget}
    try:
        answer = ask(identity["store"], message, wait + embed_budget + 30.0)
    except AgentLost as exc:
        return delivery.pending(f"the agent stopped before answering ({exc}); the file stays "
                                "pending and is delivered later")
    if answer is None:
        _autostart_wanted = True
        return None
    if not answer.get("ok"):
        return None
    try:
        return delivery.from_dict(answer.get("delivery"))
    except ValueError:
        return delivery.pending("the agent answered something unreadable; the file stays "
                                "pending and is delivered later")


def will_start(ctx) -> bool:
    """No agent answered and this command will start one once it has answered (mode auto)."""
    try:
        return _autostart_wanted and mode(ctx) == "auto"
    except CliError:
        return False


def after_command(ctx) -> None:
    """Start an agent for the next commands when this one found none (mode "auto")."""
    if not _autostart_wanted:
        return
    try:
        if mode(ctx) == "auto":
            start(ctx)
    except Exception as exc:  # noqa: BLE001 - the command already answered; never fail it now
        import sys
        sys.stderr.write(f"agent-memory: could not start the agent: {exc}\n")


def start(ctx) -> int | None:
    """Start the agent in the background unless one runs or is being started; its pid."""
    import fcntl
    store_path = ctx.store().path
    lock_fd = os.open(os.path.join(store_path, agent_socket.LOCK_NAME),
                      os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return None  # an agent runs, or another command is starting it
        probe = connect(store_path)
        if probe is not None:  # one started by hand (or by systemd) answers
            probe.close()
            return None
        return _spawn(ctx, store_path, lock_fd)
    finally:
        os.close(lock_fd)


def _spawn(ctx, store_path: str, lock_fd: int) -> int:
    import sys
    log_path = os.path.join(store_path, agent_socket.LOG_NAME)
    try:
        if os.stat(log_path).st_size > LOG_ROTATE_BYTES:
            os.replace(log_path, log_path + ".1")
    except FileNotFoundError:
        pass
    log_fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW
                     | os.O_CLOEXEC, 0o600)
    argv = [sys.executable, "-m", "cli", "--project-root", os.path.dirname(store_path),
            "--config", ctx.config.source, "sync", "--watch", "--autostarted",
            "--idle-exit", repr(float(ctx.config.agent["idle_exit"]))]
    env = dict(os.environ)
    env["AGENT_MEMORY_AGENT_LOCK_FD"] = str(lock_fd)
    env.pop(ENV_MODE, None)
    os.set_inheritable(lock_fd, True)  # the agent keeps .agent.lock for its whole life
    try:
        return os.posix_spawn(sys.executable, argv, env, setsid=True, file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_DUP2, log_fd, 1),
            (os.POSIX_SPAWN_DUP2, log_fd, 2)])
    finally:
        os.set_inheritable(lock_fd, False)
        os.close(log_fd)
