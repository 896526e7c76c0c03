"""The `hash-<dimension>` model: deterministic feature hashing of words.

Fast, dependency-free and stable across processes and machines (blake2b, never Python's
randomised hash()), so tests can predict closeness: texts sharing words point the same way.
Tokens are the lower-cased `\\w+` words; each adds +1 or -1 (a hash bit) at a hashed position;
the vector is L2-normalised (a text without words gives the zero vector).
"""

from __future__ import annotations

import hashlib
import re

import numpy as np

PREFIX = "hash-"
MAX_DIMENSION = 8192
TOKEN_RE = re.compile(r"\w+", re.UNICODE)


def tokens(text: str) -> list[str]:
    return TOKEN_RE.findall(text.lower())


def parse_name(model: str) -> int | None:
    """The dimension a `hash-<dimension>` name asks for, or None when it is not one."""
    if not model.startswith(PREFIX):
        return None
    digits = model[len(PREFIX):]
    if not digits.isdigit() or digits != str(int(digits)):
        return None
    return int(digits)


def _slot(token: str, dimension: int) -> tuple[int, float]:
    digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest[:4], "little") % dimension, (1.0 if digest[4] & 1 else -1.0)


def embed(texts: list[str], dimension: int) -> np.ndarray:
    """One L2-normalised row per text."""
    out = np.zeros((len(texts), dimension), dtype=np.float64)
    cache: dict[str, tuple[int, float]] = {}
    for row, text in enumerate(texts):
        for tok in tokens(text):
            slot = cache.get(tok)
            if slot is None:
                slot = cache[tok] = _slot(tok, dimension)
            out[row, slot[0]] += slot[1]
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    np.divide(out, norms, out=out, where=norms > 0)
    return out
