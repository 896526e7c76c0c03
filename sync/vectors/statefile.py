"""The derived index's `state.json` read with json alone (no numpy): where it lies, its format,
and what it records about files it cannot score (`.emb` of another model or dimension,
unreadable messages). The index (sync.vectors.index) words its warnings with these functions;
the agent reports the same warnings after a check that found no vector missing
(sync.vectors.missing), without loading the index's arrays."""

from __future__ import annotations

import json
import os
from typing import Any

INDEX_DIR = ".index"
FORMAT = 1


def index_dir(store) -> str:
    return os.path.join(store.path, INDEX_DIR)


def read(store, model: str, dimension: int) -> dict[str, Any] | None:
    """The state as last saved, when it describes `model` and `dimension` and its warnings are
    well-formed; None otherwise (no index yet, another model, a damaged file: the index would
    rebuild, and only opening it tells what it finds)."""
    try:
        with open(os.path.join(index_dir(store), "state.json"), "rb") as handle:
            state = json.loads(handle.read())
    except (OSError, ValueError):
        return None
    if not isinstance(state, dict) or state.get("format") != FORMAT or \
            state.get("model") != model or state.get("dimension") != dimension or \
            not isinstance(state.get("mismatched"), dict) or not isinstance(state.get("bad"), dict):
        return None
    return state


def mismatched(state: dict[str, Any]) -> list[dict[str, Any]]:
    """`.emb` of another model or dimension (never scored), as warnings."""
    return [dict(v, key=k) for k, v in sorted(state["mismatched"].items())]


def unreadable(state: dict[str, Any]) -> list[dict[str, str]]:
    """Messages the index could not read, as warnings."""
    return [{"file": v["file"], "reason": v["reason"]} for _k, v in sorted(state["bad"].items())]
