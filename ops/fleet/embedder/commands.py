"""The embedding service's commands on mcp-proxy-adapter: embed, embed_execute, default_model,
models (the framework adds GET /health).

embed-client calls `embed` over plain JSON-RPC when `wait=False` and `embed_execute` through the
adapter's execute_async + /ws delivery when `wait=True`; both answer the same payload:
{"results": [{"body", "embedding", "tokens", "bm25_tokens", "error"}], "model", "dimension",
"provider", "device", "backend"}.
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


def _refusal(code: str, message: str) -> ErrorResult:
    return ErrorResult(message=message, code=models.INVALID_PARAMS_CODE,
                       details={"code": code, "kind": code})


async def embed_payload(texts: Any, model: Any, dimension: Any, provider: Any) -> Any:
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        return _refusal("INVALID_PARAMS", "texts must be a list of strings")
    try:
        chosen = models.resolve(default_model_name(), model, dimension, provider)
    except models.ModelRefusal as refusal:
        return _refusal(refusal.code, refusal.message)
    if len(texts) > 64 or chosen.backend != "hash":
        vectors = await asyncio.to_thread(chosen.encode, texts)  # keep the loop answering
    else:
        vectors = chosen.encode(texts)
    results = []
    for text, vector in zip(texts, vectors):
        toks = hashing.tokens(text)
        results.append({"body": text, "embedding": vector.tolist(), "tokens": toks,
                        "bm25_tokens": toks, "error": None})
    return SuccessResult(data={"results": results, "model": chosen.name,
                               "dimension": chosen.dimension, "provider": models.PROVIDER,
                               "device": "cpu", "backend": chosen.backend})


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
                      provider: Any = None, **_: Any) -> Any:
        return await embed_payload(texts, model, dimension, provider)


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
