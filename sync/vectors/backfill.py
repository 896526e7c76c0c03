"""Backfill of message vectors: every `.msg` without a `.emb`, pending and imported, gets one
from the embedder with the configured model, in batches.

`backfill(store, config, *, progress=None, batch=64) -> dict` is what `agent-memory embed` and
the watcher call. The missing ones are found through the derived index (sync.vectors.index), so a
call with nothing to do only stats the session directories and never contacts the embedder. A
vector whose model or dimension differs from the configuration is never written; `.emb` of
another model already in the store are reported (their message cannot get a second `.emb`: the
name is taken and files are never replaced), never mixed into scores. A text the embedder will
not embed (embedding-service refuses blank texts and texts without a letter or digit) is
reported under `unembeddable` and never holds back the others of its batch.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Callable

from agent_memory.outbox import encoding
from agent_memory.outbox.store import Store
from agent_memory.sync.config import Config
from agent_memory.sync.links.failures import Refused, Unreachable
from agent_memory.sync.links.logger import BATCH, RetryPolicy
from agent_memory.sync.vectors.emb import write_vector


def backfill(store: Store, config: Config, *,
             progress: Callable[[int, int], None] | None = None, batch: int = 64,
             policy: RetryPolicy = BATCH, skip: set[str] | None = None) -> dict[str, Any]:
    """Fill every missing `.emb` (pending and imported messages; quarantined ones are left).

    Returns {"written": int, "remaining": int, "missing": int (before this call),
    "mismatched": [{"file"?, "message_id", "model", "dimension", "reason"}...],
    "unreadable": [{"file", "reason"}...], "unembeddable": [{"file", "message_id", "code",
    "reason"}...], "model": str, "dimension": int, "seconds": float}.
    `progress(written, missing)` is called after each batch. Message ids in `skip` (texts the
    embedder already refused, remembered by a long-lived caller) are not sent again; they count
    as remaining.

    Raises sync.links.failures.Unreachable when the embedder is not configured or cannot be reached
    (and Refused when it refuses the configured model or dimension); either carries `.report`,
    the same dict for what was done before the failure.
    """
    from agent_memory.sync.links.embedder import EmbedderLink, TextRefused, VectorMismatch
    from agent_memory.sync.vectors.search import load_stored
    from agent_memory.sync.vectors.index import EMB_NONE, open_index

    started = time.perf_counter()
    model = config.embedding_model["model"]
    dimension = int(config.embedding_model["dimension"])
    index = open_index(store, model, dimension)
    rows = index.rows
    positions = [int(p) for p in (index.live & (rows["emb"] == EMB_NONE)).nonzero()[0]]
    report: dict[str, Any] = {"written": 0, "remaining": len(positions),
                              "missing": len(positions), "mismatched": index.mismatched,
                              "unreadable": index.unreadable, "unembeddable": [],
                              "model": model, "dimension": dimension, "seconds": 0.0}
    skip = skip or set()

    def done() -> dict[str, Any]:
        report["seconds"] = round(time.perf_counter() - started, 3)
        return report

    if not positions:
        return done()
    if config.embedder is None:
        exc = Unreachable("no embedder is configured (embedding_client section)")
        exc.report = done()
        raise exc
    batch = max(1, batch)
    from agent_memory.sync.links.embedder import port_open
    if not port_open(config):
        exc = Unreachable("the embedder does not accept connections at "
                          f"{config.embedder.get('server')}")
        exc.report = done()
        raise exc

    async def run() -> None:
        async with EmbedderLink(config, policy=policy) as link:
            for start in range(0, len(positions), batch):
                part = []
                for p in positions[start:start + batch]:
                    session_id, msg_name = index.file_name(p)
                    stored = load_stored(store, session_id, msg_name)
                    if stored is not None and stored.record.message_id not in skip:
                        part.append((session_id, msg_name, stored.record))
                if not part:
                    continue
                try:
                    vectors = await link.embed_each([r.text for _s, _n, r in part])
                except VectorMismatch as exc:
                    report["mismatched"].append({
                        "message_id": part[0][2].message_id, "model": exc.model,
                        "dimension": exc.dimension, "reason": f"not written: {exc}"})
                    return  # every later batch would get the same answer
                for (session_id, msg_name, record), vector in zip(part, vectors):
                    if isinstance(vector, TextRefused):
                        report["unembeddable"].append({
                            "file": f"{session_id}/{msg_name}", "message_id": record.message_id,
                            "code": vector.code, "reason": vector.reason})
                        continue
                    if write_vector(store, session_id, msg_name, encoding.vector(
                            message_id=record.message_id, model=model, dimension=dimension,
                            embedding=vector)):
                        report["written"] += 1
                    report["remaining"] -= 1
                if progress is not None:
                    progress(report["written"], report["missing"])

    try:
        asyncio.run(run())
    except (Unreachable, Refused) as exc:
        exc.report = done()
        raise
    return done()

