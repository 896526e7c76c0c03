"""The agent's requests and answers as typed records (msgspec): what travels over the socket
(sync.agent.channel moves the frames).

A request is one of the tagged records below (`op` is the tag), and decoding is validation:
the service gets a record whose fields have their types and whose values hold (a valid session
id, a final file name, a known logger command), or a DecodeError saying what the op needs. The
client builds the same shape with the standard library (channel.request): the CLI's write
path never imports msgspec, and a test proves these records decode what it builds.

Every request is checked in two steps, as the agent always did: first its `Envelope` (op,
protocol, the caller's identity: sync.identity.FIELDS), whatever its other fields hold, so a
caller of another release or identity hears `mismatch`; then the whole record.

Answers are records too, turned into the same JSON objects as before (field order included)
by `as_builtins`; `run` and `sync` answer the served command's or the round's own dict.
"""

from __future__ import annotations

from typing import Any, Union

import msgspec

from agent_memory.outbox import names
from agent_memory.outbox.contract import is_valid_session_id
from agent_memory.sync.events import COMMANDS

# What a `--store logger` command may have the agent call: an append, or an event's command
# (sync.events: session events and forgetting).
CALLS = frozenset({"append_message", *COMMANDS.values()})

# The batch bounds a `sync` request may set for its round (sync.engine.Limits).
SYNC_BOUNDS = ("batch_items", "batch_bytes", "quarantine_after", "sessions_in_flight")


class DecodeError(ValueError):
    """A request the agent cannot take: its answer's `error`."""


class Envelope(msgspec.Struct):
    """What every request carries, read before anything else (any types: a caller of another
    release is told so, not that its fields are wrong)."""
    op: Any = None
    protocol: Any = None
    store: Any = None
    config: Any = None
    digest: Any = None
    version: Any = None

    def caller(self) -> dict[str, Any]:
        """The caller's identity (sync.identity)."""
        return {"store": self.store, "config": self.config, "digest": self.digest,
                "version": self.version}


class Request(msgspec.Struct, tag_field="op", kw_only=True):
    protocol: Any = None
    store: Any = None
    config: Any = None
    digest: Any = None
    version: Any = None


class Ping(Request, tag="ping"):
    """Who is serving. Watching the agent does not keep it alive."""


class Stop(Request, tag="stop"):
    """Stop as on SIGTERM (the batch in flight finishes)."""


class Claim(Request, tag="claim"):
    """A command of another identity asks for the store (an autostarted agent hands over)."""


class Deliver(Request, tag="deliver"):
    """A `write` or `session` command appended `name` in `session_id`'s pending area."""
    session_id: str
    name: str
    wait: float
    embed_budget: Union[float, None] = 0.0

    def __post_init__(self) -> None:
        if not is_valid_session_id(self.session_id) or not names.is_final(self.name):
            raise ValueError("not a pending file")


class Call(Request, tag="call"):
    """One logger command of `--store logger`, with its parameters."""
    command: str
    params: dict[str, Any]

    def __post_init__(self) -> None:
        if self.command not in CALLS:
            raise ValueError(f"unknown logger command {self.command!r}")


class Run(Request, tag="run"):
    """A read-side command, on a copy of the caller's arguments."""
    argv: list[str]


class Sync(Request, tag="sync"):
    """A full round now, with the command's batch bounds."""
    limits: dict[str, int] = {}

    def bounds(self) -> dict[str, int]:
        return {key: self.limits[key] for key in SYNC_BOUNDS if key in self.limits}


AnyRequest = Union[Ping, Stop, Claim, Deliver, Call, Run, Sync]
OPS = {"ping", "stop", "claim", "deliver", "call", "run", "sync"}

# What an op needs, said to a caller whose request does not decode.
NEEDS = {"deliver": "a deliver request needs session_id, name, wait",
         "call": f"a call request needs one of {sorted(CALLS)} and its params",
         "run": "a run request needs argv",
         "sync": f"a sync request's limits are {SYNC_BOUNDS}"}

_envelope = msgspec.json.Decoder(Envelope)
_request = msgspec.json.Decoder(AnyRequest)


def envelope(body: bytes) -> Envelope:
    """The envelope of a frame; ValueError when the frame is not a JSON object."""
    try:
        return _envelope.decode(body)
    except msgspec.ValidationError:
        raise ValueError("a frame that is not a JSON object") from None
    except msgspec.DecodeError as exc:
        raise ValueError(f"not a JSON frame: {exc}") from None


def decode(body: bytes, op: Any) -> AnyRequest:
    """The whole request (its envelope already read); DecodeError saying what `op` needs."""
    if op not in OPS:
        raise DecodeError(f"unknown op {op!r}")
    try:
        return _request.decode(body)
    except (msgspec.ValidationError, msgspec.DecodeError):
        raise DecodeError(NEEDS.get(op, f"a {op} request is malformed")) from None


# --- answers -------------------------------------------------------------------------------------
class Failed(msgspec.Struct):
    """The request was not done: the caller does the work itself."""
    ok: bool = False
    error: str = ""


class Stopping(msgspec.Struct):
    """The agent is stopping: a `sync` waits for the lock and syncs itself."""
    ok: bool = False
    stopping: bool = True
    error: str = ""


class Declined(msgspec.Struct):
    """Another identity (or protocol): with `handover`, an autostarted agent is leaving."""
    ok: bool = False
    mismatch: bool = True
    handover: bool = False
    differs: list[str] = []
    agent: dict[str, Any] = {}
    error: str = ""


class Stopped(msgspec.Struct):
    """A `stop` was taken: the pid to wait for."""
    ok: bool = True
    pid: int = 0


class Delivered(msgspec.Struct):
    """What became of a delivered file (sync.delivery.as_dict)."""
    ok: bool = True
    delivery: dict[str, Any] = {}


class Called(msgspec.Struct, omit_defaults=True):
    """The logger's answer to a `call`, or the failure (sync.links.failures) it met."""
    ok: bool  # required: always written
    result: Any = msgspec.UNSET
    failure: Union[dict[str, Any], msgspec.UnsetType] = msgspec.UNSET


def as_builtins(answer: Any) -> dict[str, Any]:
    """An answer as the JSON object the client reads (a dict passes through)."""
    if isinstance(answer, dict):
        return answer
    return msgspec.to_builtins(answer)
