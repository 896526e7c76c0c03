"""Which models the reference embedder offers and how a request resolves to one.

Resolution follows what embed-client documents for the real service: provider omitted or
"local"; model omitted -> the default model; dimension omitted -> the model's own; a named
model the service does not offer is UNKNOWN_MODEL, a dimension the model cannot give is
UNSUPPORTED_DIMENSION, another provider is UNKNOWN_PROVIDER (each a -32602 error whose data
carries `code` and `kind`, which embed-client hands back as EmbedClientError.data).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ops.fleet.embedder import hashing, minilm
from outbox.contract import UNKNOWN_MODEL, UNSUPPORTED_DIMENSION

PROVIDER = "local"
UNKNOWN_PROVIDER = "UNKNOWN_PROVIDER"
INVALID_PARAMS_CODE = -32602


class ModelRefusal(Exception):
    """A request the embedder refuses, with its stable code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


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
    """The model a request names, or ModelRefusal."""
    if provider not in (None, PROVIDER):
        raise ModelRefusal(UNKNOWN_PROVIDER, f"Unknown provider: {provider}")
    name = default if model is None else model
    if name == minilm.NAME:
        found = _minilm_model()
    else:
        dim = hashing.parse_name(name) if isinstance(name, str) else None
        if dim is None or not 1 <= dim <= hashing.MAX_DIMENSION:
            raise ModelRefusal(UNKNOWN_MODEL, f"Unknown model: {name}")
        found = Model(name, dim, "hash", lambda texts, d=dim: hashing.embed(texts, d))
    if dimension is not None and (isinstance(dimension, bool) or dimension != found.dimension):
        raise ModelRefusal(UNSUPPORTED_DIMENSION,
                           f"Unsupported dimension: {dimension} (model {found.name} gives "
                           f"{found.dimension})")
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
