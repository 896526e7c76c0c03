"""Parameter checks of the reference logger, each failure a Refusal with a stable code.

The client validates nothing beyond Python typing, so the service does every check: an unnamed
parameter is REQUEST_PARAMETER_UNKNOWN, an absent required one REQUEST_PARAMETER_MISSING, a wrong
JSON type REQUEST_PARAMETER_TYPE, an inadmissible value REQUEST_PARAMETER_VALUE (the `violation`
detail says which), and a count above its ceiling CEILING_EXCEEDED.
"""

from __future__ import annotations

from typing import Any, Iterable

from ops.fleet.logger.refusal import Refusal
from agent_memory.outbox import contract as c

MESSAGE_REQUIRED = ("session_id", "text", "sender_kind", "sender_identity", "receiver_kind",
                    "receiver_identity")
MESSAGE_OPTIONAL = ("priority", "message_id", "relations", "corrects_message_id", "attributes",
                    "occurred_at", "force_overwrite")
IMPORT_REQUIRED = MESSAGE_REQUIRED + ("message_id", "occurred_at")

_TYPE_NAMES = {str: "string", int: "integer", bool: "boolean", dict: "object", list: "array"}


def unknown(params: dict[str, Any], allowed: Iterable[str]) -> None:
    extra = sorted(set(params) - set(allowed))
    if extra:
        raise Refusal(c.REQUEST_PARAMETER_UNKNOWN, f"unknown parameter: {extra[0]}",
                      violation="unknown", expected=sorted(allowed), got=extra[0])


def required(params: dict[str, Any], names: Iterable[str]) -> None:
    for name in names:
        if name not in params:
            raise Refusal(c.REQUEST_PARAMETER_MISSING, f"missing required parameter: {name}",
                          violation="missing", expected=name)


def typed(params: dict[str, Any], name: str, kind: type) -> Any:
    """The value of an optional parameter (None when absent), refused when of the wrong type."""
    if name not in params:
        return None
    value = params[name]
    ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
    if not ok:
        raise Refusal(c.REQUEST_PARAMETER_TYPE, f"{name} must be a {_TYPE_NAMES[kind]}",
                      violation="type", expected=_TYPE_NAMES[kind], got=type(value).__name__)
    return value


def text(params: dict[str, Any], name: str, non_empty: bool = True) -> str | None:
    value = typed(params, name, str)
    if value is not None and non_empty and not value.strip():
        raise Refusal(c.REQUEST_PARAMETER_VALUE, f"{name} must be non-empty",
                      violation="value", expected="non-empty string", got=value)
    return value


def choice(params: dict[str, Any], name: str, allowed: Iterable[str]) -> str | None:
    value = typed(params, name, str)
    allowed = tuple(allowed)
    if value is not None and value not in allowed:
        raise Refusal(c.REQUEST_PARAMETER_VALUE, f"{name} must be one of {', '.join(allowed)}",
                      violation="value", expected=list(allowed), got=value)
    return value


def count(params: dict[str, Any], name: str, default: int, ceiling: int | None,
          minimum: int = 0) -> int:
    """A resolved count: the call's value or the shipped default, held to its ceiling."""
    value = typed(params, name, int)
    if value is None:
        return default
    if value < minimum:
        raise Refusal(c.REQUEST_PARAMETER_VALUE, f"{name} must be >= {minimum}",
                      violation="value", expected=f">= {minimum}", got=value)
    if ceiling is not None and value > ceiling:
        raise Refusal(c.CEILING_EXCEEDED, f"{name} {value} is above its ceiling {ceiling}",
                      violation="value", expected=f"<= {ceiling}", got=value)
    return value


def uuid4(params: dict[str, Any], name: str) -> str | None:
    value = typed(params, name, str)
    if value is not None and not c.is_uuid4(value):
        raise Refusal(c.REQUEST_PARAMETER_VALUE, f"{name} must be a version 4 UUID",
                      violation="value", expected="uuid4", got=value)
    return value


def session_id(params: dict[str, Any], name: str = "session_id") -> str:
    required(params, [name])
    value = typed(params, name, str)
    if not c.is_valid_session_id(value):
        raise Refusal(c.REQUEST_PARAMETER_VALUE, f"{name} is not a valid session identifier",
                      violation="value", expected="[A-Za-z0-9_][A-Za-z0-9._-]{0,127}", got=value)
    return value


def occurred_at(params: dict[str, Any]) -> str | None:
    value = typed(params, "occurred_at", str)
    if value is None:
        return None
    try:
        return c.normalise_occurred_at(value)
    except ValueError:
        raise Refusal(c.OCCURRED_AT_INVALID,
                      "occurred_at must be an RFC 3339 time with an explicit offset",
                      violation="value", expected="RFC 3339 with Z or +hh:mm", got=value) from None


def relations(params: dict[str, Any]) -> list[dict[str, str]]:
    value = typed(params, "relations", list)
    if value is None:
        return []
    out = []
    for i, entry in enumerate(value):
        if not isinstance(entry, dict):
            raise Refusal(c.REQUEST_PARAMETER_TYPE, f"relations[{i}] must be an object",
                          violation="type", expected="object", got=type(entry).__name__)
        unknown(entry, ("to_message_id", "kind"))
        required(entry, ("to_message_id", "kind"))
        target = uuid4(entry, "to_message_id")
        kind = typed(entry, "kind", str)
        if kind not in c.DECLARABLE_RELATION_KINDS:
            raise Refusal(c.RELATION_INADMISSIBLE,
                          f"relation kind {kind!r} cannot be declared (declarable: "
                          f"{', '.join(c.DECLARABLE_RELATION_KINDS)}; a correction is stated "
                          "with corrects_message_id)",
                          violation="value", expected=list(c.DECLARABLE_RELATION_KINDS), got=kind)
        pair = {"to_message_id": target, "kind": kind}
        if pair in out:
            raise Refusal(c.RELATION_INADMISSIBLE, f"relation declared twice: {kind} -> {target}",
                          violation="value", got=target)
        out.append(pair)
    return out


def message(params: dict[str, Any], *, imported: bool) -> dict[str, Any]:
    """One append_message parameter set (an import item when `imported`), normalised.

    Returns the stored form: every field resolved (priority default, relations [], attributes
    {}), `occurred_at` normalised to UTC or None when the caller stated none.
    """
    unknown(params, MESSAGE_REQUIRED + MESSAGE_OPTIONAL)
    required(params, IMPORT_REQUIRED if imported else MESSAGE_REQUIRED)
    out: dict[str, Any] = {"session_id": session_id(params)}
    out["text"] = text(params, "text", non_empty=False)
    out["sender_kind"] = choice(params, "sender_kind", c.PARTICIPANT_KINDS)
    out["sender_identity"] = text(params, "sender_identity")
    out["receiver_kind"] = choice(params, "receiver_kind", c.PARTICIPANT_KINDS)
    out["receiver_identity"] = text(params, "receiver_identity")
    out["priority"] = count(params, "priority", c.DEFAULT_PRIORITY, None)
    out["message_id"] = uuid4(params, "message_id")
    out["relations"] = relations(params)
    out["corrects_message_id"] = uuid4(params, "corrects_message_id")
    attributes = typed(params, "attributes", dict)
    out["attributes"] = {} if attributes is None else attributes
    out["occurred_at"] = occurred_at(params)
    out["force_overwrite"] = bool(typed(params, "force_overwrite", bool))
    return out
