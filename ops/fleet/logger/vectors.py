"""Message vectors: computed through the reference embedder with the real embed-client.

The logger holds one vector per message, made with the fleet's configured model. A message gets
it after it is stored: a background task of the server process embeds pending messages in
batches, and search / working_set first fill what is still pending in their scope, so results
do not depend on timing. While the embedder is unreachable (or the `hold_vectors` switch is on)
messages stay "pending" and are simply absent from similarity results. A text the embedder will
not embed (asked with error_policy "continue", it answers that text with an error and no
vector: blank, or without a letter or digit) is marked `vector_model = 'unembeddable'` and never
asked for again, so it neither blocks the others nor gets a vector.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
from pathlib import Path

import numpy as np

from agent_memory.outbox import contract as c
from ops.fleet import layout
from ops.fleet.faults import FaultReader
from ops.fleet.logger import store

log = logging.getLogger(__name__)
BATCH = 256
# Pending work, oldest first: served by the partial indexes messages_pending (where="1=1") and
# messages_pending_session (where="session_id=?"), so its cost is O(pending), not O(messages).
PENDING_QUERY = ("SELECT message_id, text, content_key FROM messages WHERE vector IS NULL AND "
                 "vector_model IS NULL AND ({where}) ORDER BY received_at LIMIT ?")
UNEMBEDDABLE = "unembeddable"
# Per-text error codes of embedding-service's "continue" policy that blame the text itself.
TEXT_ERRORS = frozenset({"only_special_chars", "too_short", "too_long", "invalid_characters"})


class EmbeddingUnavailable(Exception):
    """The embedder could not give vectors now."""


class Vectorizer:
    def __init__(self, data: Path, model: str, dimension: int, embed_port: int | None) -> None:
        self.data = Path(data)
        self.model = model
        self.dimension = dimension
        self.embed_port = embed_port
        self.faults = FaultReader(layout.faults_path(self.data), "logger")
        self._client = None
        self._client_port: int | None = None
        self._users: dict = {}  # client -> calls using it now
        self.blocked = False  # the last fill could not run (held, or embedder unavailable)

    def _port(self) -> int:
        if self.embed_port:
            return self.embed_port
        try:
            return int(json.loads(layout.ready_path(self.data, "embedder").read_text())["port"])
        except (OSError, ValueError, KeyError) as exc:
            raise EmbeddingUnavailable(f"no embedder announced in {self.data}") from exc

    async def _get_client(self):
        port = self._port()
        if self._client is None or self._client_port != port:
            from embed_client import EmbeddingClient

            from ops.fleet import security
            await self._retire(self._client)
            self._client = EmbeddingClient(**security.embed_kwargs(security.read(self.data),
                                                                   port, 5.0))
            self._client_port = port
        return self._client

    async def _retire(self, client) -> None:
        """No new call takes `client`; it is closed once no call is using it. The background
        fill and a request's anchor share the client: closing it under the other call (as a
        failed call once did) made that call fail as if the embedder were down."""
        if client is None:
            return
        if self._client is client:
            self._client = None
        if self._users.get(client, 0) == 0:
            self._users.pop(client, None)
            try:
                await client.close()
            except Exception:  # noqa: BLE001 - a broken client is discarded either way
                pass

    async def _call(self, texts: list[str]) -> dict:
        client = await self._get_client()
        self._users[client] = self._users.get(client, 0) + 1
        failed = False
        try:
            return await client.embed(texts, model=self.model, dimension=self.dimension,
                                      error_policy="continue", wait=True, wait_timeout=10)
        except BaseException:
            failed = True
            raise
        finally:
            self._users[client] -= 1
            if failed or self._client is not client:
                await self._retire(client)

    async def embed(self, texts: list[str]) -> list[np.ndarray | None]:
        """One float32 row per text (None for a text the embedder refused), or
        EmbeddingUnavailable. Each text is embedded by its first characters, in calls whose
        answers embed-client can receive (outbox.contract: embedding_text, embed_batches), as
        agent-memory embeds them."""
        texts = [c.embedding_text(text) for text in texts]
        out: list[np.ndarray | None] = []
        for start, end in c.embed_batches(texts, self.dimension, most=BATCH):
            part = texts[start:end]
            try:
                answer = await self._call(part)
                results = answer["results"]
                if len(results) != len(part):
                    raise EmbeddingUnavailable(f"{len(results)} results for {len(part)} texts")
                for result in results:
                    code = (result.get("error") or {}).get("code")
                    if result["embedding"] is None and code not in TEXT_ERRORS:
                        raise EmbeddingUnavailable(f"embedder gave no vector: {result['error']}")
                rows = [r["embedding"] for r in results]
            except EmbeddingUnavailable:
                raise
            except Exception as exc:  # noqa: BLE001 - EmbedError, adapter ClientError, timeout...
                raise EmbeddingUnavailable(f"embedder failed: {type(exc).__name__}: {exc}") from exc
            out.extend(None if row is None else np.asarray(row, dtype=np.float32)
                       .reshape(self.dimension) for row in rows)
        return out

    async def fill(self, conn: sqlite3.Connection, where: str = "1=1", args: tuple = (),
                   limit: int = 5000) -> bool:
        """Vectorize pending messages matching `where`; False when some could not be."""
        self.blocked = True
        if self.faults.current().hold_vectors:
            return False
        rows = conn.execute(PENDING_QUERY.format(where=where), args + (limit,)).fetchall()
        self.blocked = False
        if not rows:
            return True
        try:
            vectors = await self.embed([r[1] for r in rows])
        except EmbeddingUnavailable as exc:
            log.warning("vectorization postponed: %s", exc)
            self.blocked = True
            return False
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany("UPDATE messages SET vector=?, vector_model=? WHERE message_id=? AND "
                             "content_key=? AND vector IS NULL",
                             [(None if v is None else v.tobytes(),
                               UNEMBEDDABLE if v is None else self.model, r[0], r[2])
                              for r, v in zip(rows, vectors)])
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return len(rows) < limit

    async def run(self, conn_factory, interval: float = 0.25) -> None:
        """Background: keep vectorizing what arrives (appends and imports alike)."""
        await asyncio.sleep(interval)
        while True:
            try:
                store.forget_pending(conn_factory())
                done = await self.fill(conn_factory(), limit=BATCH)
                if self.blocked:
                    await asyncio.sleep(max(interval, 1.0))
                else:
                    await asyncio.sleep(interval if done else 0.01)
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - the loop must survive anything
                log.exception("vectorizer")
                await asyncio.sleep(1.0)


def as_matrix(blobs: list[bytes], dimension: int) -> np.ndarray:
    if not blobs:
        return np.zeros((0, dimension), dtype=np.float32)
    return np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), dimension)
