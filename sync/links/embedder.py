"""The connection to the embedding service: built from the `embedding_client` section with
embed-client's constructor keywords, and the configured `embedding_model`.

`from_config_dict` is deliberately not used: it silently drops `protocol`, the certificates and
the token. `embed_client` costs about 0.9 s to import (it pulls in the
adapter), so it is imported when a link is opened, never at module import.

Failures come out in sync.links.failures' vocabulary: Unreachable (the adapter's transport errors,
`wait_timeout` exceeded, a transport failure twice in a row), Refused (the embedder answered the
request with an error: a JSON-RPC error, with a stable code in `.data` where the service gives
one, or an answer whose every text carries an `error` and no vector), Failed (anything else,
including an answer whose model, dimension or count is not what was asked: such a vector is
never handed out, so it can never be written).

Two dialects of refusal exist and both are understood. embed-client documents a service that
refuses an unknown model or dimension with `data.code` UNKNOWN_MODEL / UNSUPPORTED_DIMENSION.
`embedding-service` 2.0.0 (PyPI) instead answers an unknown model with success, a null vector
and `results[i].error` {"code": "encode_error", "message": "Model X is not supported"} (its
top-level `model` names the model it has loaded), and a wrong dimension with a bare -32603
"Requested dimension N does not match model dimension M". It also refuses some texts outright:
empty or whitespace-only, or without any letter or digit ("???", an emoji), and one bad text
fails the whole batch. `embed_each` isolates such texts so they never block the others.
"""

from __future__ import annotations

import math
from typing import Any

from agent_memory.outbox import contract
from agent_memory.sync.config import Config
from agent_memory.sync.links.failures import Failed, Refused, Unreachable, _chain, translate
from agent_memory.sync.links.logger import INTERACTIVE, RetryPolicy

# The code of a refusal the embedder answered without a stable code of its own.
EMBEDDING_REFUSED = "EMBEDDING_REFUSED"
# A text any embedding service accepts: tells "this text is refused" from "nothing is embedded".
PROBE_TEXT = "agent-memory probe"


class TextRefused:
    """One text the embedder would not embed (while it embeds others): its code and reason."""

    __slots__ = ("code", "reason")

    def __init__(self, code: str, reason: str) -> None:
        self.code = code
        self.reason = reason

    @classmethod
    def of(cls, exc: Exception) -> "TextRefused":
        if isinstance(exc, Refused):
            return cls(exc.code, exc.statement)
        return cls("EMBEDDER_FAILED", str(exc) or type(exc).__name__)


class VectorMismatch(Failed):
    """The embedder answered with another model or dimension than the configuration names."""

    def __init__(self, message: str, model: Any, dimension: Any) -> None:
        super().__init__(message)
        self.model = model
        self.dimension = dimension


def client_kwargs(config: Config, timeout: float | None = None) -> dict[str, Any]:
    """EmbeddingClient constructor keywords from the `embedding_client` section (the fleet shape:
    protocol, server.host/port, client.timeout, ssl or client.ssl cert/key/ca/check_hostname,
    auth.token/token_header); relative certificate paths resolve against the document."""
    section = config.embedder
    if section is None:
        raise ValueError("no embedding_client section in the configuration")
    server = section.get("server") or {}
    client = section.get("client") or {}
    ssl = dict(section.get("ssl") or {})
    ssl.update({k: v for k, v in (client.get("ssl") or {}).items() if v is not None})
    auth = section.get("auth") or {}
    kwargs: dict[str, Any] = {"protocol": section.get("protocol", "http"),
                              "host": server["host"], "port": server["port"]}
    for key in ("cert", "key", "ca"):
        if ssl.get(key):
            kwargs[key] = config.resolve_path(ssl[key])
    top = section.get("ssl") or {}
    if "check_hostname" in top:  # read where ailogger-client reads it: the top-level ssl
        kwargs["check_hostname"] = bool(top["check_hostname"])
    if auth.get("token"):
        kwargs["token"] = auth["token"]
    if auth.get("token_header"):
        kwargs["token_header"] = auth["token_header"]
    wanted = timeout if timeout is not None else client.get("timeout")
    if wanted is not None:
        kwargs["timeout"] = float(wanted)
    return kwargs


def check_answer(answer: Any, model: str, dimension: int, count: int) -> list[list[float]]:
    """The vectors of an embed answer, or VectorMismatch / Failed when it is not exactly what
    was asked: the configured model and dimension, one finite vector of that length per text."""
    if not isinstance(answer, dict) or not isinstance(answer.get("results"), list):
        raise Failed(f"the embedder answered without a results list: {str(answer)[:200]}")
    refusal = _item_refusal(answer["results"])
    if refusal is not None:  # before the model check: such answers name the loaded model
        raise refusal
    got_model, got_dim = answer.get("model"), answer.get("dimension")
    if got_model is not None and got_model != model:
        raise VectorMismatch(f"the embedder answered model {got_model!r}, the configuration "
                             f"names {model!r}", got_model, got_dim)
    if got_dim is not None and got_dim != dimension:
        raise VectorMismatch(f"the embedder answered dimension {got_dim}, the configuration "
                             f"names {dimension}", got_model, got_dim)
    results = answer["results"]
    if len(results) != count:
        raise Failed(f"the embedder answered {len(results)} vectors for {count} texts")
    out = []
    for i, entry in enumerate(results):
        vector = entry.get("embedding") if isinstance(entry, dict) else None
        if not isinstance(vector, list):
            error = entry.get("error") if isinstance(entry, dict) else None
            raise Failed(f"text {i} has no vector" + (f": {error}" if error else ""))
        if len(vector) != dimension:
            raise VectorMismatch(f"text {i}: a vector of {len(vector)} values, the "
                                 f"configuration names dimension {dimension}",
                                 got_model, len(vector))
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
                   for x in vector):
            raise Failed(f"text {i}: the vector holds a value that is not a finite number")
        out.append([float(x) for x in vector])
    return out


def _item_refusal(results: list) -> Refused | None:
    """A Refused when some text came back with an `error` and no vector (the first one's code
    and message: embedding-service 2.0.0 gives every text of a failed batch the same error)."""
    for entry in results:
        if isinstance(entry, dict) and entry.get("embedding") is None and entry.get("error"):
            error = entry["error"]
            if isinstance(error, dict):
                return Refused(str(error.get("code") or EMBEDDING_REFUSED),
                               str(error.get("message") or error))
            return Refused(EMBEDDING_REFUSED, str(error))
    return None


def _translate(exc: BaseException) -> Exception:
    """Our vocabulary for an embed-client failure (refusals carry `.data["code"]`)."""
    for link in _chain(exc):
        data = getattr(link, "data", None)
        if type(link).__name__ in ("EmbedClientError", "EmbedHTTPError") and \
                isinstance(data, dict) and isinstance(data.get("code"), str):
            return Refused(data["code"], getattr(link, "message", None) or str(link))
        error = getattr(link, "error", None)
        if type(link).__name__ == "EmbedClientError" and isinstance(error, dict) and \
                isinstance(error.get("data"), dict) and error["data"].get("code"):
            return Refused(error["data"]["code"], str(error.get("message") or link))
        if type(link).__name__ == "EmbedClientError" and isinstance(error, dict) and \
                isinstance(error.get("code"), int):
            # A JSON-RPC error the service answered without a stable code (embedding-service
            # 2.0.0 answers a wrong dimension so): still a refusal of this request.
            return Refused(EMBEDDING_REFUSED, str(error.get("message") or link))
    return translate(exc)


class EmbedderLink:
    """An open connection to the embedder; `async with EmbedderLink(config) as link`.

    `timeout` bounds each call (HTTP timeout and `wait_timeout`); `policy` decides how many
    transport failures in a row make the embedder unreachable.
    """

    def __init__(self, config: Config, *, timeout: float | None = None,
                 policy: RetryPolicy = INTERACTIVE) -> None:
        if config.embedder is None:
            raise ValueError("no embedding_client section in the configuration")
        self.model: str = config.embedding_model["model"]
        self.dimension: int = int(config.embedding_model["dimension"])
        self._kwargs = client_kwargs(config, timeout)
        self._config = config
        self._timeout = float(self._kwargs.get("timeout", 30.0))
        self._policy = policy
        self._client = None

    async def __aenter__(self) -> "EmbedderLink":
        from embed_client import EmbeddingClient
        self._client = EmbeddingClient(**self._kwargs)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                await client.close()
            except Exception:  # closing a broken connection must not hide the real outcome
                pass

    async def _once(self, texts: list[str]) -> Any:
        try:
            return await self._client.embed(texts, model=self.model, dimension=self.dimension,
                                            wait=True, wait_timeout=max(1, math.ceil(self._timeout)))
        except Exception as exc:  # EmbedError, the adapter's ClientError, TimeoutError...
            raise _translate(exc) from exc

    async def embed(self, texts: list[str],
                    policy: RetryPolicy | None = None) -> list[list[float]]:
        """One vector per text, of the configured model and dimension (`policy`: this call's
        retries, else the link's).

        Each text is embedded by its first characters (outbox.contract.embedding_text), in as
        many calls as keep each answer within what embed-client can receive
        (contract.embed_batches).

        Raises Unreachable, Refused, Failed (VectorMismatch when the answer names another model
        or dimension: such vectors are never returned)."""
        texts = [contract.embedding_text(text) for text in texts]
        out: list[list[float]] = []
        for start, end in contract.embed_batches(texts, self.dimension):
            out.extend(await self._embed_batch(texts[start:end], policy))
        return out

    async def _embed_batch(self, texts: list[str],
                           policy: RetryPolicy | None) -> list[list[float]]:
        try:
            async for attempt in (policy or self._policy).retrying():
                with attempt:
                    answer = await self._once(texts)
        except Unreachable as exc:
            from agent_memory.sync.links.credentials import confirm
            found = await confirm(exc, self._config.embedder, self._config.resolve_path)
            if found is exc:
                raise
            raise found from exc
        return check_answer(answer, self.model, self.dimension, len(texts))

    async def embed_each(self, texts: list[str]) -> list[list[float] | TextRefused]:
        """Like `embed`, but a text the embedder will not embed comes back as TextRefused in
        its place instead of failing the others.

        A batch that is refused or fails (Unreachable is raised at once) is told apart by one
        embedding of PROBE_TEXT: refused too, the service or the model is the problem and the
        original failure is raised (VectorMismatch included); answered, the batch is halved
        until each refused text stands alone. Cost: one call for a clean batch, about
        2 log2(n) more for each refused text."""
        try:
            return list(await self.embed(texts))
        except Unreachable:
            raise
        except (Refused, Failed) as exc:
            first = exc
        try:
            await self.embed([PROBE_TEXT])
        except (Refused, Failed):
            raise first from None
        return await self._isolate(texts, first)

    async def _isolate(self, texts: list[str],
                       failure: Exception) -> list[list[float] | TextRefused]:
        if len(texts) == 1:
            return [TextRefused.of(failure)]
        out: list[list[float] | TextRefused] = []
        middle = len(texts) // 2
        for part in (texts[:middle], texts[middle:]):
            try:
                out.extend(await self.embed(part))
            except Unreachable:
                raise
            except (Refused, Failed) as exc:
                out.extend(await self._isolate(part, exc))
        return out


def port_open(config: Config, timeout: float = 0.5) -> bool:
    """Does anything accept a TCP connection at the embedder's address? A refused or
    unroutable port answers in about a millisecond, before the 0.9 s embed-client import: the
    write path and the query fallback use it to give up at once when the embedder is down. A
    True says nothing about health: the real call decides."""
    import socket
    section = config.embedder or {}
    server = section.get("server") or {}
    try:
        with socket.create_connection((server["host"], int(server["port"])), timeout=timeout):
            return True
    except (OSError, KeyError, TypeError, ValueError):
        return False


async def embed_texts(config: Config, texts: list[str], *, timeout: float | None = None,
                      policy: RetryPolicy = INTERACTIVE) -> list[list[float]]:
    """Open a link, embed `texts`, close it."""
    async with EmbedderLink(config, timeout=timeout, policy=policy) as link:
        return await link.embed(texts)


async def embed_within(link: "EmbedderLink", texts: list[str], budget: float | None,
                       policy: RetryPolicy) -> list[list[float]]:
    """`link.embed(texts)`, within `budget` seconds when one is given (then a slow embedder
    counts as unreachable): the one place the embed budget is kept."""
    import asyncio
    if budget is None:
        return await link.embed(texts, policy=policy)
    try:
        return await asyncio.wait_for(link.embed(texts, policy=policy), budget)
    except asyncio.TimeoutError:
        raise Unreachable(f"the embedder did not answer within {budget} s") from None
