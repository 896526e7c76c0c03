"""The embedding service's commands on mcp-proxy-adapter: embed, embed_execute, default_model,
models (the framework adds GET /health).

embed-client calls `embed` over plain JSON-RPC when `wait=False` and `embed_execute` through the
adapter's execute_async + /ws delivery when `wait=True`; both answer the same payload, the one
`embedding-service` 2.0.0 answers: {"embeddings", "results": [{"body", "embedding", "tokens",
"bm25_tokens", "error"}], "model", "dimension", "device"}.

Texts are checked as 2.0.0 checks them. With `error_policy` "fail_fast" (the default) an empty
or whitespace-only text refuses the call (-32602, no stable code), and a text without any letter
or digit fails the whole batch: every text gets `embedding` null and the same `error`
{"code": "encode_error"}. With "continue" only the bad texts get an error
("only_special_chars"). A model the service does not offer is answered the same way
(`encode_error`, "Model X is not supported"), naming the default model at the top level.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from mcp_proxy_adapter.commands.base import Command
from mcp_proxy_adapter.commands.result import ErrorResult, SuccessResult

from ops.fleet.embedder import hashing, models

MODEL_ENV = "AGENT_MEMORY_FLEET_EMBED_MODEL"
DEFAULT_MODEL = "hash-1024"


def default_model_name() -> str:
    return os.environ.get(MODEL_ENV) or DEFAULT_MODEL


def _refusal(code: str | None, message: str) -> ErrorResult:
    if code is None:  # answered as 2.0.0 does: a bare error, the message its only content
        return ErrorResult(message=message, code=models.INTERNAL_ERROR_CODE,
                           details={"original_error": message})
    return ErrorResult(message=message, code=models.INVALID_PARAMS_CODE,
                       details={"code": code, "kind": code})


def has_letter_or_digit(text: str) -> bool:
    """2.0.0 embeds only texts with a Unicode letter or number (its regex [\p{L}\p{N}])."""
    return any(ch.isalnum() for ch in text)


def _answer(texts: list[str], vectors: list, errors: list, name: str, dimension: int) -> Any:
    results = []
    for text, vector, error in zip(texts, vectors, errors):
        toks = hashing.tokens(text)
        results.append({"body": text, "embedding": vector, "tokens": toks,
                        "bm25_tokens": toks, "error": error})
    return SuccessResult(data={"embeddings": list(vectors), "results": results, "model": name,
                               "dimension": dimension, "device": "cpu"})


async def embed_payload(texts: Any, model: Any, dimension: Any, provider: Any,
                        error_policy: Any = None) -> Any:
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        return _refusal("INVALID_PARAMS", "texts must be a list of strings")
    policy = error_policy or "fail_fast"
    if policy not in ("fail_fast", "continue"):
        return ErrorResult(message="Parameter 'error_policy' must be 'fail_fast' or 'continue'",
                           code=models.INVALID_PARAMS_CODE)
    if policy == "fail_fast":
        for i, text in enumerate(texts):
            if not text.strip():
                return ErrorResult(message=f"Text at index {i} cannot be empty or whitespace",
                                   code=models.INVALID_PARAMS_CODE,
                                   details={"original_error": f"Text at index {i} cannot be "
                                                              "empty or whitespace"})
    default = default_model_name()
    try:
        chosen = models.resolve(default, model, dimension, provider)
    except models.ModelRefusal as refusal:
        return _refusal(refusal.code, refusal.message)
    except models.UnknownModel as unknown:
        error = {"code": "encode_error", "message": unknown.message}
        return _answer(texts, [None] * len(texts), [error] * len(texts), default,
                       models.default_dimension(default))
    bad = {i for i, text in enumerate(texts) if not has_letter_or_digit(text)}
    if bad and policy == "fail_fast":
        error = {"code": "encode_error",
                 "message": f"Text at index {min(bad)} contains only special characters"}
        return _answer(texts, [None] * len(texts), [error] * len(texts), chosen.name,
                       chosen.dimension)
    good = [t for i, t in enumerate(texts) if i not in bad]
    if not good:
        encoded = []
    elif len(good) > 64 or chosen.backend != "hash":
        encoded = await asyncio.to_thread(chosen.encode, good)  # keep the loop answering
    else:
        encoded = chosen.encode(good)
    rows = iter(encoded)
    vectors, errors = [], []
    for i in range(len(texts)):
        if i in bad:
            vectors.append(None)
            errors.append({"code": "only_special_chars",
                           "message": "Text at index 0 contains only special characters"})
        else:
            vectors.append(next(rows).tolist())
            errors.append(None)
    return _answer(texts, vectors, errors, chosen.name, chosen.dimension)


_EMBED_SCHEMA = {
    "type": "object",
    "properties": {
        "texts": {"type": "array", "items": {"type": "string"}},
        "model": {"type": "string"},
        "dimension": {"type": "integer"},
        "provider": {"type": "string"},
        "error_policy": {"type": "string"},
        "device": {"type": "string"},
        "job_id": {"type": "string"},
        "aggregation_method": {"type": "string"},
        "parts": {"type": "array"},
    },
    "required": ["texts"],
    "additionalProperties": True,
}


class EmbedCommand(Command):
    name = "embed"
    descr = "Embed texts with a local deterministic model"
    result_class = SuccessResult

    @classmethod
    def get_schema(cls) -> dict[str, Any]:
        return _EMBED_SCHEMA

    async def execute(self, texts: Any = None, model: Any = None, dimension: Any = None,
                      provider: Any = None, error_policy: Any = None, **_: Any) -> Any:
        return await embed_payload(texts, model, dimension, provider, error_policy)


class EmbedExecuteCommand(EmbedCommand):
    """The same work, reached through execute_async (embed-client's wait=True route)."""

    name = "embed_execute"


class DefaultModelCommand(Command):
    name = "default_model"
    descr = "The default provider, model and dimension"
    result_class = SuccessResult

    @classmethod
    def get_schema(cls) -> dict[str, Any]:
        return {"type": "object", "properties": {}, "additionalProperties": False}

    async def execute(self, **_: Any) -> Any:
        name = default_model_name()
        return SuccessResult(data={"model": name, "dimension": models.default_dimension(name),
                                   "provider": models.PROVIDER})


class ModelsCommand(DefaultModelCommand):
    name = "models"
    descr = "The models this embedder offers"

    async def execute(self, **_: Any) -> Any:
        name = default_model_name()
        return SuccessResult(data={
            "use_own_model": "ram",
            "default": {"provider": models.PROVIDER, "model": name},
            "external": {"configured": False, "service": None},
            "models": models.listing(name),
        })


COMMANDS = (EmbedCommand, EmbedExecuteCommand, DefaultModelCommand, ModelsCommand)
