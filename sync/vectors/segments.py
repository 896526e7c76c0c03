"""The index's on-disk format under `.agent-memory/.index/` (see sync.vectors.index): its
`state.json` and its segments (`seg-<id>.rows.npy`, one row per message; `seg-<id>.vec.npy`,
its float32 vectors), loaded with every check a truncated or foreign file fails (IndexCorrupt:
the index is rebuilt, never trusted), saved by replacing files atomically, and compacted into
one segment when segments or dead rows pile up."""

from __future__ import annotations

import json
import os
import time
from typing import Any

import numpy as np

from agent_memory.outbox import contract
from agent_memory.sync.vectors.statefile import FORMAT, INDEX_DIR, index_dir  # noqa: F401
EMB_NONE, EMB_OK, EMB_OTHER_MODEL, EMB_UNREADABLE = 0, 1, 2, 3
KINDS = contract.PARTICIPANT_KINDS

ROW_DTYPE = np.dtype([
    ("session", "<i4"), ("stem", "S60"), ("message_id", "S36"), ("sequence", "<i8"),
    ("sender", "i1"), ("priority", "<i8"), ("occurred_at", "S32"), ("corrects", "S36"),
    ("emb", "i1"), ("vrow", "<i4"),
])


class IndexCorrupt(Exception):
    """The index on disk cannot be used; it is rebuilt."""


class Segment:
    def __init__(self, seg_id: str, rows: np.ndarray, vectors: np.ndarray) -> None:
        self.id = seg_id
        self.rows = rows
        self.vectors = vectors


def empty_state(model: str, dimension: int) -> dict[str, Any]:
    return {"format": FORMAT, "model": model, "dimension": dimension, "sessions": [],
            "projects": {}, "dirs": {}, "scanned_at_ns": 0, "segments": [], "dead": {},
            "mismatched": {}, "bad": {}}


def load_state(path: str, model: str, dimension: int) -> tuple[dict[str, Any], list[Segment]]:
    try:
        with open(os.path.join(path, "state.json"), "rb") as handle:
            state = json.loads(handle.read())
    except FileNotFoundError:
        return empty_state(model, dimension), []
    except (OSError, ValueError) as exc:
        raise IndexCorrupt(f"state.json: {exc}") from exc
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise IndexCorrupt("state.json: unknown format")
    if state.get("model") != model or state.get("dimension") != dimension:
        return empty_state(model, dimension), []  # another model configured: start over
    for key, kind in (("sessions", list), ("projects", dict), ("dirs", dict),
                      ("segments", list), ("dead", dict), ("mismatched", dict), ("bad", dict)):
        if not isinstance(state.get(key), kind):
            raise IndexCorrupt(f"state.json: {key} missing")
    segments = []
    for entry in state["segments"]:
        try:
            seg_id = entry["id"]
            rows = np.load(os.path.join(path, f"seg-{seg_id}.rows.npy"), allow_pickle=False)
            vectors = np.load(os.path.join(path, f"seg-{seg_id}.vec.npy"), mmap_mode="r",
                              allow_pickle=False)
        except (OSError, ValueError, KeyError, TypeError, EOFError) as exc:
            raise IndexCorrupt(f"segment {entry}: {exc}") from exc
        if rows.dtype != ROW_DTYPE or rows.ndim != 1 or len(rows) != entry.get("rows") or \
                vectors.dtype != np.float32 or vectors.ndim != 2 or \
                vectors.shape != (entry.get("vectors"), dimension):
            raise IndexCorrupt(f"segment {seg_id}: shape or type does not match state.json")
        if len(rows) and (int(rows["vrow"].max()) >= len(vectors) or
                          int(rows["session"].max()) >= len(state["sessions"])):
            raise IndexCorrupt(f"segment {seg_id}: rows point outside the segment")
        dead = state["dead"].get(seg_id) or []
        if not isinstance(dead, list) or not all(isinstance(r, int) and 0 <= r < len(rows)
                                                 for r in dead):
            raise IndexCorrupt(f"segment {seg_id}: dead rows out of range")
        segments.append(Segment(seg_id, rows, vectors))
    return state, segments


def save(path: str, state: dict[str, Any], new: list[Segment], keep: set[str]) -> None:
    os.makedirs(path, mode=0o700, exist_ok=True)
    for seg in new:
        for suffix, array in (("rows", seg.rows), ("vec", np.ascontiguousarray(seg.vectors))):
            final = os.path.join(path, f"seg-{seg.id}.{suffix}.npy")
            temp = final + f".tmp-{os.getpid()}"
            with open(temp, "wb") as handle:
                np.save(handle, array, allow_pickle=False)
            os.replace(temp, final)
    temp = os.path.join(path, f"state.json.tmp-{os.getpid()}")
    with open(temp, "w", encoding="utf-8") as handle:
        json.dump(state, handle, separators=(",", ":"))
    os.replace(temp, os.path.join(path, "state.json"))
    # Segments no longer referenced (compacted, or left by a concurrent builder) go away once
    # they are old enough that no reader can still be opening them.
    now = time.time()
    for name in os.listdir(path):
        if name.startswith("seg-") and name.split(".")[0][4:] not in keep:
            full = os.path.join(path, name)
            try:
                if now - os.stat(full).st_mtime > 30:
                    os.unlink(full)
            except FileNotFoundError:
                pass


def compact(state: dict[str, Any], segments: list[Segment]) -> Segment | None:
    """One segment holding the live rows of all (vectors copied from the matrices)."""
    rows_out, vec_out = [], []
    next_vrow = 0
    for seg in segments:
        keep = np.ones(len(seg.rows), bool)
        dead = state["dead"].get(seg.id) or []
        if dead:
            keep[np.asarray(dead, np.int64)] = False
        rows = seg.rows[keep].copy()
        has = rows["vrow"] >= 0
        if has.any():
            vec_out.append(np.asarray(seg.vectors[rows["vrow"][has]], np.float32))
            rows["vrow"][has] = np.arange(next_vrow, next_vrow + int(has.sum()), dtype=np.int32)
            next_vrow += int(has.sum())
        rows_out.append(rows)
    rows = np.concatenate(rows_out) if rows_out else np.zeros(0, ROW_DTYPE)
    vectors = np.concatenate(vec_out) if vec_out else np.zeros((0, state["dimension"]),
                                                                np.float32)
    seg = Segment(os.urandom(6).hex(), rows, vectors)
    state["segments"] = [{"id": seg.id, "rows": len(rows), "vectors": len(vectors)}]
    state["dead"] = {}
    return seg
