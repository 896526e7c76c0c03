"""Which models the reference embedder offers and how a request resolves to one.

Model omitted -> the default model; dimension omitted -> the model's own. Refusals answer the
way `embedding-service` 2.0.0 (the real service on PyPI) does, since agent-memory can tell the
difference: a dimension the model cannot give is a -32603 error "Requested dimension N does not
match model dimension M" without a stable code (ModelRefusal with `code` None); a model the
service does not offer is not an error at all but a per-text error in a successful answer
(UnknownModel; the caller builds that answer). A dimension that is not the default model's
is checked first, against the default model, as the real service does. A provider other than
"local" is UNKNOWN_PROVIDER with a code, as embed-client documents it (agent-memory never sends
a provider; the real 2.0.0 refuses the parameter itself).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ops.fleet.embedder import hashing, minilm
from agent_memory.outbox.contract import UNKNOWN_MODEL

PROVIDER = "local"
UNKNOWN_PROVIDER = "UNKNOWN_PROVIDER"
INVALID_PARAMS_CODE = -32602


INTERNAL_ERROR_CODE = -32603


class ModelRefusal(Exception):
    """A request the embedder refuses, with its stable code (None: a bare -32603 error)."""

    def __init__(self, code: str | None, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class UnknownModel(Exception):
    """A model the service does not offer: answered as a per-text error, not a refusal."""

    def __init__(self, name: object) -> None:
        super().__init__(f"Model {name} is not supported")
        self.message = str(self)


def dimension_refusal(requested: object, dimension: int) -> ModelRefusal:
    return ModelRefusal(None, f"Embedding generation failed: Requested dimension {requested} "
                              f"does not match model dimension {dimension}")


@dataclass(frozen=True)
class Model:
    name: str
    dimension: int
    backend: str
    encode: Callable[[list[str]], "object"]  # -> numpy array (n, dimension)


_minilm: minilm.MiniLM | None = None  # loaded once, on first use


def _minilm_model() -> Model:
    global _minilm
    reason = minilm.unavailable_reason()
    if reason:
        raise ModelRefusal(UNKNOWN_MODEL, reason)
    if _minilm is None:
        _minilm = minilm.MiniLM()
    return Model(minilm.NAME, minilm.DIMENSION, "numpy", _minilm.encode)


def default_dimension(name: str) -> int:
    """The dimension a model name stands for (used for the default and the config document)."""
    if name == minilm.NAME:
        return minilm.DIMENSION
    dim = hashing.parse_name(name)
    if dim is None or not 1 <= dim <= hashing.MAX_DIMENSION:
        raise ModelRefusal(UNKNOWN_MODEL, f"Unknown model: {name}")
    return dim


def check_default(name: str) -> None:
    """Refuse at start a default model that cannot serve (e.g. MiniLM not installed)."""
    if name == minilm.NAME:
        reason = minilm.unavailable_reason()
        if reason:
            raise ModelRefusal(UNKNOWN_MODEL, reason)
    else:
        default_dimension(name)


def resolve(default: str, model: str | None, dimension: object, provider: object) -> Model:
    """The model a request names; ModelRefusal, or UnknownModel for a name not offered."""
    if provider not in (None, PROVIDER):
        raise ModelRefusal(UNKNOWN_PROVIDER, f"Unknown provider: {provider}")
    name = default if model is None else model
    if name == minilm.NAME:
        found = _minilm_model()
    else:
        dim = hashing.parse_name(name) if isinstance(name, str) else None
        if dim is None or not 1 <= dim <= hashing.MAX_DIMENSION:
            default_dim = default_dimension(default)
            if dimension is not None and dimension != default_dim:
                raise dimension_refusal(dimension, default_dim)
            raise UnknownModel(name)
        found = Model(name, dim, "hash", lambda texts, d=dim: hashing.embed(texts, d))
    if dimension is not None and (isinstance(dimension, bool) or dimension != found.dimension):
        raise dimension_refusal(dimension, found.dimension)
    return found


def listing(default: str) -> list[dict]:
    """The `models` entries: the default, the hash family, MiniLM when installed."""
    entries = [{"name": default, "provider": PROVIDER, "dimension": default_dimension(default),
                "supported_dimensions": [default_dimension(default)], "max_tokens": None,
                "backend": "numpy" if default == minilm.NAME else "hash", "residency": "ram"}]
    if default != "hash-1024":
        entries.append({"name": "hash-1024", "provider": PROVIDER, "dimension": 1024,
                        "supported_dimensions": [1024], "max_tokens": None, "backend": "hash",
                        "residency": "ram"})
    entries.append({"name": "hash-<dimension>", "provider": PROVIDER, "dimension": None,
                    "supported_dimensions": f"1..{hashing.MAX_DIMENSION}", "max_tokens": None,
                    "backend": "hash", "residency": "ram"})
    if default != minilm.NAME and minilm.unavailable_reason() is None:
        entries.append({"name": minilm.NAME, "provider": PROVIDER, "dimension": minilm.DIMENSION,
                        "supported_dimensions": [minilm.DIMENSION], "max_tokens": 256,
                        "backend": "numpy", "residency": "ram"})
    return entries
