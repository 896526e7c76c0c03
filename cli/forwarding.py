"""How `write` and `session` commands forward what they just appended, and what they answer.

`--store auto`: the file is written first, in the command's own process. Then the project's
agent (see cli.agent_client) forwards it and says what became of it; with no agent (or
`--no-agent`) this session's pending files are forwarded inline through the sync engine. Either
way the outcome is one `sync.delivery.Delivery`, and `answer()` below is the only place that
turns it into the command's answer: confirmed, the logger's answer (`"store": "logger"`); not
delivered yet (logger unreachable, its credentials refused, the logger failing, another process
forwarding the store), the file stays pending (`"store": "file"`, exit 0, the reason said: a
durable message is never answered in a way that invites writing it again) and `sync` or the
agent delivers it; refused (the logger refused the message itself), exit 1 with the logger's
code, the file stays pending (and is quarantined after repeated refusals).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs the write path 3 ms: annotations only
if TYPE_CHECKING:
    from typing import Any, Callable

from agent_memory.cli.context import Context
from agent_memory.cli.errors import LoggerUnreachableError, RefusedError
from agent_memory.outbox.store import StoredFile
from agent_memory.sync.delivery import Delivery


def forward(ctx: Context, file: StoredFile, file_answer: dict[str, Any], wait: float,
            embed_budget: float = 0.0, embed_inline: Callable[[], Any] | None = None
            ) -> tuple[dict[str, Any], str]:
    """Forward the session of `file` (through the agent when there is one) and answer for it:
    `deliver`, then `answer`, in one call."""
    return answer(deliver(ctx, file, wait, embed_budget, embed_inline), file, file_answer)


def deliver(ctx: Context, file: StoredFile, wait: float, embed_budget: float = 0.0,
            embed_inline: Callable[[], Any] | None = None) -> Delivery:
    """What became of `file`: the agent forwards it when one answers (and embeds it within
    `embed_budget`), or will once it is up when one is starting (or is started now: the
    answer is then pending at once, cli.agent_client.while_starting); else `embed_inline()`
    and this process forwards it. When the sync lock
    turns out held, the agent is asked again and the lock tried again until `wait` runs out
    (`_while_held`): an agent started meanwhile (by the command before this one) takes the lock
    a moment before it listens on its socket, and a loaded machine can stretch that moment.

    A command that is about to start the agent leaves the vector to it (its first round
    backfills every message without one, within a second or two): the embed-client import
    would make the first write slower than the inline path it replaces."""
    from agent_memory.cli import agent_client
    delivered = agent_client.deliver(ctx, file, wait, embed_budget)
    if delivered is None:  # none answered: one starting (or started now) forwards it
        delivered = agent_client.while_starting(ctx)
    if delivered is not None:
        return delivered
    from agent_memory.sync.runner import LockBusy, deliver as inline  # asyncio: not before
    if embed_inline is not None and not agent_client.will_start(ctx):
        embed_inline()
    store = ctx.store()
    try:
        return inline(store, ctx.config, file.session_id, file.name, lock_wait=0.0,
                      busy_raises=True)
    except LockBusy:
        return _while_held(ctx, store, file, wait)


LOCK_POLL = 0.02  # seconds between two tries while the sync lock is held


def _while_held(ctx: Context, store, file: StoredFile, wait: float) -> Delivery:
    """The sync lock is held (by an agent that is starting or handing over, or by a one-shot
    sync): ask the agent, then try the lock, again and again until `wait` seconds are up; then
    the file stays pending with the holder named. Asking once and then waiting for the lock
    alone failed the race with a starting agent, which holds the lock for its whole life: the
    write answered "file" while that agent, ready a moment later, would have delivered it."""
    import time
    from agent_memory.cli import agent_client
    from agent_memory.sync.runner import LockBusy, deliver as inline
    deadline = time.monotonic() + wait
    while True:
        delivered = agent_client.deliver(ctx, file, wait)
        if delivered is not None:
            return delivered
        if agent_client.declined(ctx):  # an agent of another identity keeps the store: no wait
            return inline(store, ctx.config, file.session_id, file.name, lock_wait=0.0)
        last = time.monotonic() >= deadline
        try:
            return inline(store, ctx.config, file.session_id, file.name, lock_wait=0.0,
                          busy_raises=not last)
        except LockBusy:
            time.sleep(LOCK_POLL)


def answer(delivered: Delivery, file: StoredFile,
           file_answer: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The command's answer (data, store) for the delivery of `file`; raises for a refusal."""
    status = delivered.status
    if status == "confirmed":
        if delivered.answer is not None:
            return delivered.answer, "logger"
        imported = StoredFile(file.session_id, "imported", file.name).relpath
        return {**file_answer, "outbox": "imported", "file": imported, "forwarded": True}, "logger"
    if status == "pending":
        return {**file_answer, "forwarded": False, "reason": delivered.reason}, "file"
    if status == "waiting":
        return {**file_answer, "forwarded": False, "waits_for": delivered.waits_for,
                "reason": delivered.reason
                or "it refers to a message the logger refused; it waits for it"}, "file"
    if status == "failed":  # the logger failed, not the message: nothing to write again
        return {**file_answer, "forwarded": False,
                "reason": f"the logger failed: {delivered.reason}; the file stays pending and "
                          "is delivered later"}, "file"
    where = "quarantined" if status == "quarantined" else "kept pending"
    raise RefusedError(f"{delivered.statement} ({where}: {file.relpath})",
                       code=delivered.code or "REFUSED")


def direct(ctx: Context, command: str, **params: Any) -> tuple[Any, str]:
    """`--store logger`: the logger or nothing; no outbox file. The agent makes the call when
    one serves (cli.agent_client.call); its answer or failure is reported as if made here."""
    from agent_memory.cli import agent_client, fleet_errors
    from agent_memory.sync.links.failures import Failed, Refused, Unreachable
    try:
        served = agent_client.call(ctx, command, params)
    except agent_client.AgentLost as exc:
        raise LoggerUnreachableError(
            f"the project's watcher stopped before the logger's answer reached this command "
            f"({exc}); the logger may or may not have done it: read before trying again") from None
    try:
        if served is None:
            return ctx.route.call(ctx.config, command, **params), "logger"
        if "result" in served:
            return served["result"], "logger"
        from agent_memory.sync.links import failures
        raise failures.from_dict(served["failure"])
    except (Unreachable, Refused, Failed) as exc:
        fleet_errors.raise_for(exc, refusal=lambda code, statement: RefusedError(
            statement, code=code))
