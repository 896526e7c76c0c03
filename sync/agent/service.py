"""What the project's agent does with a request from the CLI (sync.agent.server moves the
frames; sync.agent.requests is what they hold; cli.agent_client is the other end). The service
sees the agent only through its port (sync.agent.port), never the watcher itself.

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

from typing import Any, Callable

from agent_memory.outbox import names
from agent_memory.outbox.store import IMPORTED, PENDING, StoredFile
from agent_memory.sync.agent import channel, requests
from agent_memory.sync.agent.port import AgentPort
from agent_memory.sync import delivery, identity
from agent_memory.sync.links import failures


# The CLI's dispatcher for a served command: (argv, the agent's store, its configuration, route)
# -> {"ok", "exit_code", "line"} or {"ok": False, "error"}. The caller's identity matched both.
RunCommand = Callable[[list, Any, Any, Any], dict]


class AgentService:
    def __init__(self, port: AgentPort, run_command: RunCommand) -> None:
        self.port = port
        self.store = port.store
        self._run_command = run_command

    @property
    def route(self):
        from agent_memory.sync.links.route import Route
        return Route(self.port.pool())

    def handle(self, envelope: requests.Envelope, body: bytes) -> dict[str, Any]:
        """The answer to one request frame (its envelope read by the server), as the JSON
        object sent back."""
        return requests.as_builtins(self._answer(envelope, body))

    def _answer(self, envelope: requests.Envelope, body: bytes) -> Any:
        port = self.port
        op = envelope.op
        if op == "ping":  # watching the agent does not keep it alive: no touch()
            return {"ok": True, **self.describe()}
        if op == "stop":
            port.stop("stop requested")
            return requests.Stopped(pid=port.pid)
        if envelope.protocol != channel.PROTOCOL:
            return requests.Declined(differs=["protocol"], agent=self.describe(),
                                     error=f"protocol {envelope.protocol!r} is not "
                                           f"{channel.PROTOCOL}")
        declined = self._decline(envelope.caller())
        if declined is not None:
            return declined
        if op == "claim":
            return {"ok": True, **self.describe()}
        if op in requests.OPS:
            port.touch()
        try:
            request = requests.decode(body, op)
        except requests.DecodeError as exc:
            return requests.Failed(error=str(exc))
        if isinstance(request, requests.Deliver):
            return self._deliver(request)
        if isinstance(request, requests.Call):
            return self._call(request)
        if isinstance(request, requests.Run):
            return self._run(request)
        if isinstance(request, requests.Sync):
            return self._sync(request)
        return requests.Failed(error=f"unknown op {op!r}")  # ping, stop, claim: above

    def describe(self) -> dict[str, Any]:
        return self.port.describe()

    def _decline(self, theirs: dict[str, Any]) -> requests.Declined | None:
        """None when the caller's identity is the agent's; else the refusal, with a handover
        when this agent was autostarted (a command's agent follows the commands)."""
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
                port.stop("handover to a command with "
                          + identity.describe(theirs, different))
        mine = identity.describe(port.identity(), different)
        return requests.Declined(handover=handover, differs=different, agent=self.describe(),
                                 error=f"the agent (pid {port.pid}) runs with {mine}")

    def _deliver(self, request: requests.Deliver) -> requests.Delivered:
        session_id, name = request.session_id, request.name
        budget = request.embed_budget or 0.0
        embed = None
        if budget > 0 and name.endswith(names.MESSAGE_EXT) \
                and self.port.config().embedder is not None:
            def embed() -> dict[str, Any] | None:
                return self._vector(session_id, name, float(budget))
        settled = self.port.deliver(session_id, name, float(request.wait), embed)
        return requests.Delivered(delivery=delivery.as_dict(settled))

    def _vector(self, session_id: str, name: str, budget: float) -> dict[str, Any] | None:
        """The `.emb` record of a message just written, as the write would have made it. The
        round forwarding the message may already have moved it to `.imported/`: files move
        only that way, so it is read where it is then (otherwise its vector was lost, left to a
        backfill that opened the index for it)."""
        from agent_memory.outbox.records import as_dict
        from agent_memory.sync.vectors.emb import vector_for
        for area in (PENDING, IMPORTED):
            file = StoredFile(session_id, area, name)
            try:
                record = as_dict(self.store.load(file, "message"))
            except FileNotFoundError:
                continue
            return vector_for(self.route, self.port.config(), budget, record, file.relpath)
        raise FileNotFoundError(f"{session_id}/{name}: neither pending nor imported")

    def _call(self, request: requests.Call) -> requests.Called:
        params = request.params
        if isinstance(params.get("dialogue_kind"), list):  # JSON has no tuple
            params["dialogue_kind"] = tuple(params["dialogue_kind"])
        try:
            return requests.Called(ok=True, result=self.route.call(
                self.port.config(), request.command, **params))
        except Exception as exc:  # noqa: BLE001 - the call may have been made: never repeat it
            return requests.Called(ok=True, failure=failures.as_failure(exc).as_dict())

    def _run(self, request: requests.Run) -> dict[str, Any]:
        return self._run_command(request.argv, self.store, self.port.config(), self.route)

    def _sync(self, request: requests.Sync) -> Any:
        """A full round now, with the command's batch bounds; its report, or why there was
        none (the agent is stopping: the command then waits for the lock and syncs itself)."""
        import asyncio
        from agent_memory.sync.engine import Limits
        try:
            limits = Limits(**request.bounds(), refused_holdoff=self.port.refused_holdoff)
        except (TypeError, ValueError):
            return requests.Failed(error=requests.NEEDS["sync"])
        loop = self.port.serving_loop(30.0)
        if loop is None:
            return requests.Stopping(error="the agent is stopping")
        from concurrent.futures import CancelledError
        future = asyncio.run_coroutine_threadsafe(self.port.sync_now(limits), loop)
        try:
            result = future.result()
        except (CancelledError, asyncio.CancelledError):  # the loop ended before the round
            return requests.Stopping(error="the agent stopped")
        if result.cut_short:
            return requests.Stopping(error="the agent stopped mid-round")
        return {"ok": True, **result.as_dict()}
