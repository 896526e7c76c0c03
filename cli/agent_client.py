"""The CLI's side of the project's agent: ask it, and start it when none runs.

The agent is the project's watcher (`sync --watch`) serving the CLI over a Unix socket (see
sync.agent.channel). It has the fleet clients imported and its links open, so a command it serves
never pays their import (about 0.6 to 0.9 s) in the CLI process:

- `write` and `session open|close|reopen` append their file here first, always; then the agent
  embeds (within the budget) and forwards it and tells what became of it (`deliver`). If it
  dies before answering, the answer is `"store": "file"` and the file is delivered later.
- `write` and `session` with `--store logger` (no outbox file) have the agent make their one
  logger call (`call`).
- `read`, `get`, `sessions`, `search`, `working-set` and `status --probe` are run by the agent
  (`serve`): the same code, so the same bytes on stdout and the same exit code.
- Nothing answers at the socket (none, or a killed agent's stale socket): in mode "auto" an
  agent is started in the background: its own session, stdin from /dev/null, stdout and
  stderr to `.agent-memory/.agent.log`, never the caller's pipes. `.agent-memory/.agent.lock`
  decides who starts it: the starter takes it without waiting and hands it to the agent,
  which holds it for its life, so concurrent first calls start exactly one.
- An agent's start (the interpreter, the fleet client's import: half a second to a second or
  two on a loaded machine) is never paid by a command, nor doubled by commands importing
  the fleet client themselves meanwhile (`while_starting`). A `write` or `session` command
  whose file no agent answered for leaves it to the agent that is starting, or starts one
  now: it answers at once, the file pending and safe in the outbox, saying so; the agent's
  first round forwards it. A command the agent runs for it (a read, a `--store logger` call)
  waits for the starting agent instead. An agent that does not come up within
  STARTING_GRACE, or whose last start failed (it exited before it ever served), is not
  counted on: the command works inline as before and says why, then starts a new agent
  after its answer (`after_command`), as does a read that found no agent at all.

Modes, first found wins: `--no-agent` (off), `$AGENT_MEMORY_AGENT`, the configuration's
`agent.mode`; "auto" (default) uses and starts, "use" only uses a running one, "off" neither.
Only commands that would talk to the fleet (a logger configured, not `--store file`) ask.

Every request carries this command's identity (sync.identity: the store's real path, the
configuration's path and content digest, agent-memory's version); an agent of another identity
declines it. An autostarted one hands over as it declines: the command waits (briefly) for it
to exit, does its work inline and starts a new agent with its own configuration and code. A
hand-started or systemd agent is never replaced: the command does without it and says so on
stderr (a write's answer names it too, through the sync lock). An agent of an older release
(another socket protocol) that was autostarted is asked to stop with SIGTERM.
Starting, retiring and finding the agent (the process side) is sync.agent.lifecycle, and a
request's round trip one call of sync.agent.channel (`ask`); this module is the command's
side: what to ask, and what the answer means for the command.
Pure standard library at import time: this module is on the write path.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing costs the write path 3 ms: annotations only
if TYPE_CHECKING:
    from typing import Any

from agent_memory.cli.errors import CliError, UsageError
from agent_memory.sync.agent import channel, lifecycle
from agent_memory.sync.agent.channel import AgentLost, ask
from agent_memory.sync.agent.lifecycle import wait_gone

ENV_MODE = lifecycle.MODE_ENV
MODES = ("auto", "use", "off")
CONNECT_TIMEOUT = channel.CONNECT_TIMEOUT
RUN_TIMEOUT = 300.0
STARTING_GRACE = 10.0  # seconds an agent may take to come up before commands stop counting on it
STARTING_POLL = 0.02  # seconds between two looks at a starting agent's socket
HANDOVER_WAIT = 15.0  # seconds an agent handing over gets to finish its batch and exit


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
    """What the agent checks before serving: this command's store, configuration (path and
    content) and version (None without a usable store: the command then reports it, or does
    without, as it always did)."""
    if ctx.agent_declined_by is not None:
        return None  # asked once already in this command: it stays, and is not used
    try:
        store = ctx.store().path
    except CliError:
        return None
    from agent_memory.sync import identity
    return {"protocol": channel.PROTOCOL, **identity.of(store, ctx.config)}


def _asked(ctx, op: str, timeout: float, **fields: Any) -> dict[str, Any] | None:
    """The preamble of `run`, `call` and `deliver`: the agent's answer to this command's
    request, or None to do the work here (not wanted; no agent answers, so one is started after
    the command; or one of another identity declined). AgentLost passes through: what it means
    depends on the request."""
    identity = _identity(ctx) if _wanted(ctx) else None
    if identity is None:
        return None
    answer = ask(identity["store"], identity, op, fields, timeout)
    if answer is None and op != "deliver":  # a read or a call: worth a wait, not an import
        answer = _when_up(identity, op, fields, timeout)
    if answer is None:
        ctx.agent_wanted = True
        return None
    if answer.get("mismatch"):
        _declined(ctx, identity["store"], answer)
        return None
    return answer


def _starting(store_path: str) -> dict | None:
    """The agent being started for this store ({"pid", "started"}), while it may still come
    up (within STARTING_GRACE of its start); None when none is, or it is overdue."""
    import time
    started = lifecycle.starting(store_path)
    if started is None:
        return None
    if started["started"] is not None and time.time() - started["started"] > STARTING_GRACE:
        return None
    return started


def _when_up(identity: dict[str, Any], op: str, fields: dict[str, Any],
             timeout: float) -> dict[str, Any] | None:
    """The answer of an agent that is starting, asked again every STARTING_POLL seconds until
    it answers (None when none is starting, or it exits or is overdue first)."""
    import time
    store_path = identity["store"]
    deadline = time.monotonic() + STARTING_GRACE
    while _starting(store_path) is not None and time.monotonic() < deadline:
        time.sleep(STARTING_POLL)
        answer = ask(store_path, identity, op, fields, timeout)
        if answer is not None:
            return answer
    return None


def while_starting(ctx):
    """No agent answered for the file this `write` or `session` command appended: its
    Delivery, pending at once, when an agent is starting (or this command starts one now)
    and will forward it; None to forward it here (mode "use" with none starting, an agent
    overdue or whose last start failed, one that cannot be started: said on stderr)."""
    if not ctx.agent_wanted:
        return None
    from agent_memory.sync import delivery
    store_path = ctx.store().path
    started = _starting(store_path)
    if started is None:
        if not will_start(ctx):
            return None
        from agent_memory.sync.lock import SyncLock
        if SyncLock(store_path).holder() is not None:  # a watcher started by hand, not
            return None  # listening yet, or a one-shot sync: asked again within --wait
        import sys
        failed = lifecycle.failed_start(store_path)
        if failed is not None:
            sys.stderr.write(f"agent-memory: note: {failed}; this command forwards its file "
                             "itself, then starts the agent again\n")
            return None
        try:
            channel.socket_path(store_path)  # an agent that could not listen would serve nobody
            pid = start(ctx)
        except Exception as exc:  # noqa: BLE001 - the command forwards it itself, and says why
            ctx.agent_wanted = False
            sys.stderr.write(f"agent-memory: note: could not start the project's agent "
                             f"({exc}); this command forwards its file itself\n")
            return None
        started = {"pid": pid} if pid is not None else (lifecycle.starting(store_path) or {})
    ctx.agent_wanted = False
    who = f" (pid {started['pid']})" if started.get("pid") else ""
    return delivery.pending(f"the project's agent{who} is starting; it forwards this file "
                            "as soon as it is up (the file is safe in the outbox)")


def _declined(ctx, store_path: str, answer: dict[str, Any], wait: bool = True) -> None:
    """The agent declined this command (another identity): wait for one that hands over to
    exit (unless the caller waits for the sync lock instead), and start a new one after the
    command; remember one that stays."""
    agent = answer.get("agent") if isinstance(answer.get("agent"), dict) else {}
    pid = agent.get("pid")
    if "handover" not in answer:  # an older release: it cannot be asked to hand over
        pid = lifecycle.retire_older(store_path)
        handing_over = pid is not None
    else:
        handing_over = bool(answer.get("handover"))
    if handing_over:
        if wait and isinstance(pid, int):
            wait_gone(pid, HANDOVER_WAIT)
        ctx.agent_wanted = True
        return
    ctx.agent_declined_by = agent or {"error": answer.get("error")}
    import sys
    sys.stderr.write(f"agent-memory: note: {describe_conflict(ctx.agent_declined_by)}\n")


def describe_conflict(agent: dict[str, Any]) -> str:
    """In words: an agent that runs with another identity and stays (it was not used)."""
    how = "autostarted" if agent.get("autostarted") else "started by hand or by systemd"
    return (f"the project's watcher (pid {agent.get('pid')}, {how}) runs with the configuration "
            f"{agent.get('config') or '(none)'} (digest {str(agent.get('config_digest'))[:12]}, "
            f"agent-memory {agent.get('version')}), not this command's; it was not used. Stop "
            "it (`agent-memory agent stop`, or its systemd unit) or run it with this "
            "configuration")


def serve(ctx, args, argv: list[str]) -> tuple[int, str] | None:
    """Run a read-side command (one cli.commands declares served) in the agent: (exit code, the
    stdout line), or None to run it here (no agent, another store or configuration, or
    the agent lost midway: reads are safe to repeat)."""
    try:
        answer = _asked(ctx, "run", RUN_TIMEOUT, argv=list(argv))
    except AgentLost:
        return None
    if answer is None or not answer.get("ok") or not isinstance(answer.get("line"), str):
        return None
    return int(answer.get("exit_code", 1)), answer["line"]


def call(ctx, command: str, params: dict[str, Any]) -> dict[str, Any] | None:
    """One logger command of `--store logger` (`write`, `session`) made by the agent: its
    answer, {"result": ...} or {"failure": {"kind", ...}}; None to make it here (no agent, or
    another store or configuration). AgentLost when the agent took it and went away without
    answering: the logger may or may not have done it, so it is not repeated."""
    answer = _asked(ctx, "call", RUN_TIMEOUT, command=command, params=params)
    if answer is None or not answer.get("ok") \
            or not ("result" in answer or isinstance(answer.get("failure"), dict)):
        return None
    return answer


def deliver(ctx, file, wait: float, embed_budget: float = 0.0):
    """The agent's Delivery of a file this command appended; None to forward it inline."""
    from agent_memory.sync import delivery
    try:
        answer = _asked(ctx, "deliver", wait + embed_budget + 30.0,
                        session_id=file.session_id, name=file.name, wait=wait,
                        embed_budget=embed_budget)
    except AgentLost as exc:
        return delivery.pending(f"the project's watcher stopped before answering ({exc}); the file stays "
                                "pending and is delivered later")
    if answer is None or not answer.get("ok"):
        return None
    try:
        return delivery.from_dict(answer.get("delivery"))
    except ValueError:
        return delivery.pending("the project's watcher answered something unreadable; the file stays "
                                "pending and is delivered later")


def claim(ctx) -> str | dict[str, Any] | None:
    """Ask the store's agent for the store on behalf of a command that forwards it itself (a
    one-shot `sync`): "same" (it runs with this identity and forwards the store), "handed_over"
    (an autostarted agent of another identity is stopping: the caller waits for the sync lock,
    not for the process to exit, and meanwhile gets ready), the agent's description when one of
    another identity stays, or None when no agent answers."""
    identity = _identity(ctx)
    if identity is None:
        return ctx.agent_declined_by
    try:
        answer = ask(identity["store"], identity, "claim", {}, CONNECT_TIMEOUT + 10.0)
    except AgentLost:
        return None
    if answer is None:
        return None
    if answer.get("ok"):
        return "same"
    if answer.get("mismatch"):
        wanted = ctx.agent_wanted
        _declined(ctx, identity["store"], answer, wait=False)
        ctx.agent_wanted = wanted  # a sync never starts an agent
        return ctx.agent_declined_by if ctx.agent_declined_by is not None else "handed_over"
    return None


def sync_round(ctx, limits: dict[str, int]) -> dict[str, Any] | None:
    """A one-shot `sync` beside the agent of its own identity: the agent runs a full round now
    (even while backing off) and answers its report ({"ok": True, "sessions", "warnings",
    "failure"?}), {"ok": False, "stopping": True} when it stopped instead (the lock is then
    free soon), {"ok": False, "mismatch": True} when it runs with another identity after all;
    None when no agent answers, or one of a release that runs no rounds for commands."""
    identity = _identity(ctx)
    if identity is None:
        return None
    try:
        answer = ask(identity["store"], identity, "sync", {"limits": limits}, RUN_TIMEOUT)
    except AgentLost as exc:
        return {"ok": False, "stopping": True, "error": str(exc)}
    if answer is None or answer.get("ok") or answer.get("stopping"):
        return answer
    if answer.get("mismatch"):  # its identity changed since it took the lock: claim it
        return {"ok": False, "mismatch": True}
    return None  # an agent of a release without this request


def declined(ctx) -> bool:
    """Did an agent of another identity decline this command and stay?"""
    return ctx.agent_declined_by is not None


def will_start(ctx) -> bool:
    """No agent answered and this command will start one once it has answered (mode auto)."""
    try:
        return ctx.agent_wanted and mode(ctx) == "auto"
    except CliError:
        return False


def after_command(ctx) -> None:
    """Start an agent for the next commands when this one found none (mode "auto")."""
    if not ctx.agent_wanted:
        return
    try:
        if mode(ctx) == "auto":
            start(ctx)
    except Exception as exc:  # noqa: BLE001 - the command already answered; never fail it now
        import sys
        sys.stderr.write(f"agent-memory: could not start the project's watcher: {exc}\n")


def start(ctx) -> int | None:
    """Start the agent of this command's store and configuration in the background unless one
    runs or is being started (sync.agent.lifecycle); its pid."""
    pid = lifecycle.start(ctx.store().path, ctx.config.source, ctx.config.agent["idle_exit"])
    if pid is not None:
        STARTED.add(pid)
    return pid


# Agents this process started: a long-lived caller (the Python API) collects their exit
# status (reap_started) so none stays a zombie, without waiting on children that are not ours.
STARTED: set[int] = set()


def reap_started() -> None:
    """Collect the exit status of the agents this process started that have exited since."""
    for pid in list(STARTED):
        try:
            done = os.waitpid(pid, os.WNOHANG)[0] == pid
        except ChildProcessError:  # already collected (the MCP server reaps every child)
            done = True
        if done:
            STARTED.discard(pid)
