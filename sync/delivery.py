"""The outcome of forwarding one file that a command just appended: one typed value, whoever
forwarded it (the command itself, inline, or the project's agent over its socket).

`cli.forwarding.answer` is the one place that turns it into the command's answer. It travels
over the agent's socket as JSON (`as_dict` / `from_dict`), so the two paths cannot drift apart.
"""

from __future__ import annotations

from collections import namedtuple  # not typing.NamedTuple: typing costs the write path

TYPE_CHECKING = False  # typing costs the write path 3 ms: annotations only
if TYPE_CHECKING:
    from typing import Any

# Plain standard library (no msgspec, no dataclasses): this is on the write path.
STATUSES = ("confirmed", "pending", "waiting", "refused", "quarantined", "failed")


class Delivery(namedtuple("Delivery", "status answer reason code statement waits_for",
                          defaults=(None, None, None, None, None))):
    """What happened to one appended `.msg` or `.ses` (`status`, one of STATUSES):

    confirmed    the logger has it; `answer` is the logger's own answer (None when it was
                 confirmed without one reaching us: the file is in `.imported/`)
    pending      not delivered yet (logger unreachable, another forwarder, no answer in time);
                 `reason` says why; it stays in the outbox and is delivered later
    waiting      it waits for files the logger refused (`waits_for`, their ids): a message it
                 relates to or corrects, or its session's open event (`reason` says which)
    refused      the logger refused it (`code`, `statement`); it stays pending
    quarantined  refused for good, set aside in `.quarantine/`
    failed       the logger failed without refusing (`reason`); it stays pending
    """

    __slots__ = ()


def pending(reason: str) -> Delivery:
    return Delivery("pending", reason=reason)


def confirmed(answer: dict[str, Any] | None) -> Delivery:
    return Delivery("confirmed", answer=answer if isinstance(answer, dict) else None)


def from_outcome(outcome: Any) -> Delivery | None:
    """The delivery of a file from the engine's Outcome (None while it is not settled)."""
    info = outcome.info
    if outcome.status == "confirmed":
        return confirmed(info.get("answer"))
    if outcome.status == "waiting":
        return Delivery("waiting", waits_for=info.get("waits_for"), reason=info.get("reason"))
    if outcome.status in ("refused", "quarantined"):
        return Delivery(outcome.status, code=info.get("code") or "REFUSED",
                        statement=info.get("statement") or info.get("reason")
                        or "refused by the logger")
    return None


def from_failure(exc: BaseException) -> Delivery:
    """What a file's forward met when the logger could not take it: unreachable or credentials
    refused, it stays pending (the reason says which); refused, the logger's code; anything
    else, failed."""
    from agent_memory.sync.links.failures import Failed, Refused, Unreachable, describe
    from agent_memory.sync.links.failures import pending_reason
    if isinstance(exc, Unreachable):
        return pending(pending_reason(exc))
    if isinstance(exc, Refused):
        return Delivery("refused", code=exc.code, statement=exc.statement)
    return Delivery("failed", reason=str(exc) if isinstance(exc, Failed) else describe(exc))


def lacks_number(settled: Delivery, name: str) -> bool:
    """A confirmed message whose answer has no sequence number (it was confirmed through
    messages_import, whose outcomes carry none): message_get gives it (`completed`)."""
    return (settled.status == "confirmed" and name.endswith(".msg")
            and not (isinstance(settled.answer, dict) and "sequence_number" in settled.answer))


async def completed(link, settled: Delivery, message_id: str) -> Delivery:
    """`settled` with the logger's append answer, sequence number included, from message_get
    (as it is when the logger cannot be asked: the message is confirmed either way)."""
    try:
        entry = await link.call("message_get", message_id=message_id)
    except Exception:  # noqa: BLE001 - confirmed either way; the answer just lacks its number
        return settled
    if not isinstance(entry, dict) or "sequence_number" not in entry:
        return settled
    return confirmed(append_answer(entry, settled.answer))


def append_answer(entry: dict[str, Any], known: dict[str, Any] | None) -> dict[str, Any]:
    """The append answer's five facts (message_id, sequence_number, audience, text_head,
    text_tail) from a `message_get` entry and what the import said of the message."""
    known = known or {}
    audience = entry.get("audience") or known.get("audience")
    if audience is None and "receiver_kind" in entry:
        audience = {"receiver_kind": entry["receiver_kind"],
                    "receiver_identity": entry.get("receiver_identity")}
    answer = {"message_id": known.get("message_id", entry.get("message_id")),
              "sequence_number": entry.get("sequence_number"), "audience": audience}
    if known.get("text_head") is not None:
        answer["text_head"] = known["text_head"]
        answer["text_tail"] = known.get("text_tail")
    elif isinstance(entry.get("text"), str):
        from agent_memory.outbox.contract import excerpts
        answer.update(excerpts(entry["text"]))
    return answer


def as_dict(delivery: Delivery) -> dict[str, Any]:
    """The JSON-ready form (for the agent's socket): the fields that are set."""
    return {key: value for key, value in delivery._asdict().items() if value is not None}


def from_dict(value: Any) -> Delivery:
    """Back from `as_dict`; ValueError when it is not a delivery."""
    if not isinstance(value, dict) or value.get("status") not in STATUSES \
            or not set(value) <= set(Delivery._fields):
        raise ValueError(f"not a delivery: {value!r:.200}")
    for key in ("reason", "code", "statement"):
        if value.get(key) is not None and not isinstance(value[key], str):
            raise ValueError(f"delivery field {key} is not a string")
    waits_for = value.get("waits_for")
    if waits_for is not None and not (isinstance(waits_for, list)
                                      and all(isinstance(i, str) for i in waits_for)):
        raise ValueError("delivery field waits_for is not a list of ids")
    if value.get("answer") is not None and not isinstance(value["answer"], dict):
        raise ValueError("delivery answer is not an object")
    return Delivery(**value)
