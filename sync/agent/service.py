"""What the project's agent does with a request from the CLI (sync.agent.server moves the
frames; cli.agent_client is the other end). The service sees the agent only through its port
(sync.agent.port), never the watcher itself.

- `ping`: who is serving (pid, socket, store, whether it was autostarted, its idle deadline).
- `stop`: stop as on SIGTERM (the batch in flight finishes).
- `deliver`: a `write` or `session` command appended a file: the watcher forwards it at once
  while its vector is made (a `.msg`, within the budget, written when it comes), and the
  Delivery says what became of the file.
- `call`: one logger command of `write`/`session` with `--store logger` (no outbox file): the
  agent calls the logger through its open link and returns the logger's answer, or the failure
  (unreachable, refused, failed) for the caller to report exactly as it would have itself.
- `run`: a read-side command, run here by the CLI's own code on a copy of the caller's
  arguments, so the stdout line and exit code are the ones the caller would have produced
  itself. The shell hands that code over (`run_command`, cli.main.serve_command) when it starts
  the agent: nothing here reaches back up into the CLI. Fleet calls go through the agent's open
  links (a sync.links.route.Route over its pool).

- `claim`: a command of another identity (a one-shot `sync` with another configuration)
  asks for the store: an autostarted agent hands over, any other declines.
- `sync`: a one-shot `sync` of this identity (cron, or a user who wants it delivered now)
  has the agent run a full round at once, even while it backs off, and hears that round's
  report (sync.agent.rounds): the command answers it as it would answer its own.

Every request but `ping` and `stop` carries the caller's identity (sync.identity: store,
configuration path and digest, version). One that differs from the agent's is declined
(`mismatch`), and the caller does the work itself. An autostarted agent then also hands over:
it answers `handover`, finishes the batch in flight and exits, so the caller (and the next
agent it starts) runs with the caller's configuration and code. A hand-started or systemd agent
never does: the caller says plainly that it was not used, and why. When only the digest
differs, the agent first looks at its document on disk: a hand-started one that finds it
changed reloads it and serves.
"""

from __future__ import annotations

import os
from typing import Any, Callable

from agent_memory.outbox import names
from agent_memory.outbox.contract import is_valid_session_id
from agent_memory.outbox.store import PENDING, StoredFile
from agent_memory.sync.agent import channel
from agent_memory.sync.agent.port import AgentPort
from agent_memory.sync import delivery, identity
from agent_memory.sync.links import failures


# The CLI's dispatcher for a served command: (argv, project root, configuration path, route) ->
# {"ok", "exit_code", "line"} or {"ok": False, "error"}.
RunCommand = Callable[[list, str, "str | None", Any], dict]

# The logger commands `write` and `session` make with `--store logger`.
CALLS = frozenset({"append_message", "open_session", "close_session", "reopen_session"})

# The batch bounds a `sync` request may set for its round (sync.engine.Limits).
SYNC_BOUNDS = ("batch_items", "batch_bytes", "quarantine_after", "sessions_in_flight")


class AgentService:
    def __init__(self, port: AgentPort, run_command: RunCommand) -> None:
        self.port = port
        self.store = port.store
        self._run_command = run_command

    @property
    def route(self):
        from agent_memory.sync.links.route import Route
        return Route(self.port.pool())

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        op = request.get("op")
        if op == "ping":  # watching the agent does not keep it alive: no touch()
            return {"ok": True, **self.describe()}
        if op == "stop":
            self.port.stop("stop requested")
            return {"ok": True, "pid": self.port.pid}
        if request.get("protocol") != channel.PROTOCOL:
            return {"ok": False, "mismatch": True, "handover": False, "differs": ["protocol"],
                    "agent": self.describe(),
                    "error": f"protocol {request.get('protocol')!r} is not "
                             f"{channel.PROTOCOL}"}
        declined = self._decline(request)
        if declined is not None:
            return declined
        if op == "claim":
            return {"ok": True, **self.describe()}
        if op == "deliver":
            self.port.touch()
            return self._deliver(request)
        if op == "call":
            self.port.touch()
            return self._call(request)
        if op == "run":
            self.port.touch()
            return self._run(request)
        if op == "sync":
            self.port.touch()
            return self._sync(request)
        return {"ok": False, "error": f"unknown op {op!r}"}

    def describe(self) -> dict[str, Any]:
        return self.port.describe()

    def _decline(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """None when the caller's identity is the agent's; else the refusal, with a handover
        when this agent was autostarted (a command's agent follows the commands)."""
        theirs = {field: request.get(field) for field in identity.FIELDS}
        port = self.port
        different = identity.differences(port.identity(), theirs)
        if different == ["digest"] and port.follow_config():
            if not port.stopping():  # reloaded in place
                different = identity.differences(port.identity(), theirs)
        if not different:
            return None
        if port.stopping() and port.autostarted:
            handover = True  # already leaving (its document changed)
        else:
            handover = port.autostarted and "store" not in different
            if handover:
                port.stop("handover to a command with " + identity.describe(theirs, different))
        mine = identity.describe(port.identity(), different)
        return {"ok": False, "mismatch": True, "handover": handover, "differs": different,
                "agent": self.describe(),
                "error": f"the agent (pid {port.pid}) runs with {mine}"}

    def _deliver(self, request: dict[str, Any]) -> dict[str, Any]:
        session_id, name = request.get("session_id"), request.get("name")
        wait, budget = request.get("wait"), request.get("embed_budget") or 0.0
        if not isinstance(session_id, str) or not is_valid_session_id(session_id) \
                or not isinstance(name, str) or not names.is_final(name) \
                or not isinstance(wait, (int, float)) or not isinstance(budget, (int, float)):
            return {"ok": False, "error": "a deliver request needs session_id, name, wait"}
        embed = None
        if budget > 0 and name.endswith(names.MESSAGE_EXT) \
                and self.port.config().embedder is not None:
            def embed() -> dict[str, Any] | None:
                return self._vector(StoredFile(session_id, PENDING, name), float(budget))
        settled = self.port.deliver(session_id, name, float(wait), embed)
        return {"ok": True, "delivery": delivery.as_dict(settled)}

    def _vector(self, file: StoredFile, budget: float) -> dict[str, Any] | None:
        """The `.emb` record of a message just written, as the write would have made it."""
        from agent_memory.outbox.records import as_dict
        from agent_memory.sync.vectors.emb import vector_for
        record = as_dict(self.store.load(file, "message"))
        return vector_for(self.route, self.port.config(), budget, record, file.relpath)

    def _call(self, request: dict[str, Any]) -> dict[str, Any]:
        command, params = request.get("command"), request.get("params")
        if command not in CALLS or not isinstance(params, dict):
            return {"ok": False, "error": f"a call request needs one of {sorted(CALLS)} and "
                                          "its params"}
        if isinstance(params.get("dialogue_kind"), list):  # JSON has no tuple
            params["dialogue_kind"] = tuple(params["dialogue_kind"])
        try:
            return {"ok": True, "result": self.route.call(self.port.config(), command,
                                                          **params)}
        except Exception as exc:  # noqa: BLE001 - the call may have been made: never repeat it
            return {"ok": True, "failure": failures.as_failure(exc).as_dict()}

    def _run(self, request: dict[str, Any]) -> dict[str, Any]:
        argv = request.get("argv")
        if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
            return {"ok": False, "error": "a run request needs argv"}
        return self._run_command(argv, os.path.dirname(self.store.path),
                                 self.port.config().source, self.route)

    def _sync(self, request: dict[str, Any]) -> dict[str, Any]:
        """A full round now, with the command's batch bounds; its report, or why there was
        none (the agent is stopping: the command then waits for the lock and syncs itself)."""
        import asyncio
        from agent_memory.sync.engine import Limits
        bounds = request.get("limits") if isinstance(request.get("limits"), dict) else {}
        try:
            limits = Limits(**{key: int(bounds[key]) for key in SYNC_BOUNDS if key in bounds},
                            refused_holdoff=self.port.refused_holdoff)
        except (TypeError, ValueError):
            return {"ok": False, "error": f"a sync request's limits are {SYNC_BOUNDS}"}
        loop = self.port.serving_loop(30.0)
        if loop is None:
            return {"ok": False, "stopping": True, "error": "the agent is stopping"}
        from concurrent.futures import CancelledError
        future = asyncio.run_coroutine_threadsafe(self.port.sync_now(limits), loop)
        try:
            result = future.result()
        except (CancelledError, asyncio.CancelledError):  # the loop ended before the round
            return {"ok": False, "stopping": True, "error": "the agent stopped"}
        if result.cut_short:
            return {"ok": False, "stopping": True, "error": "the agent stopped mid-round"}
        return {"ok": True, **result.as_dict()}
