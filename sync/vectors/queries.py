"""Query vectors the embedder gave earlier, kept beside the index (`.index/queries/`): derived
data, so a query repeated while the embedder is slow or away costs no embedder call; losing it
costs one."""

from __future__ import annotations

import os

import numpy as np

from agent_memory.outbox.store import Store
from agent_memory.sync.vectors.segments import index_dir

QUERY_CACHE_MAX = 2000


def _query_path(store: Store, model: str, dimension: int, text: str) -> str:
    import hashlib
    digest = hashlib.blake2b(f"{model}\0{dimension}\0{text}".encode("utf-8"),
                             digest_size=20).hexdigest()
    return os.path.join(index_dir(store), "queries", digest + ".npy")


def cached_query(store: Store, model: str, dimension: int, text: str) -> np.ndarray | None:
    """The vector the embedder gave earlier for exactly this text and model (derived data: a
    query repeated while the embedder is slow or away costs no embedder call)."""
    try:
        vector = np.load(_query_path(store, model, dimension, text), allow_pickle=False)
    except (OSError, ValueError, EOFError):
        return None
    if vector.dtype != np.float32 or vector.shape != (dimension,):
        return None
    return vector


def cache_query(store: Store, model: str, dimension: int, text: str, vector) -> None:
    path = _query_path(store, model, dimension, text)
    folder = os.path.dirname(path)
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        temp = f"{path}.tmp-{os.getpid()}"
        with open(temp, "wb") as handle:
            np.save(handle, np.asarray(vector, dtype=np.float32), allow_pickle=False)
        os.replace(temp, path)
        entries = os.listdir(folder)
        if len(entries) > QUERY_CACHE_MAX:  # keep the newest half
            aged = sorted(entries, key=lambda n: os.stat(os.path.join(folder, n)).st_mtime)
            for name in aged[: len(aged) // 2]:
                os.unlink(os.path.join(folder, name))
    except OSError:
        pass  # a cache: losing it costs an embedder call, nothing else
