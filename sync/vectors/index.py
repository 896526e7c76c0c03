"""The derived index of the local store, for local closeness and filters: never the source of
truth, safe to delete, rebuilt from the files whenever they change.

Under `.agent-memory/.index/`:
  state.json            what the index was built from: the configured model and dimension, the
                        mtime of every session directory (pending and imported areas), the
                        segments, dead rows, the `.emb` of another model, unreadable files
  seg-<id>.rows.npy     one row per message (structured array: session, file stem, message id,
                        sequence number, sender kind, priority, occurred_at, corrected id, the
                        state of its `.emb` and its row in the vector matrix)
  seg-<id>.vec.npy      float32 vectors (L2-normalised as the embedder gave them), memory-mapped

Freshness: every open stats the session directories; a directory whose mtime changed (or is too
recent to trust, the "racy" window) is listed again and only the difference is read: new
messages and new `.emb` go into a new segment, vanished ones (quarantined) become dead rows.
Files are immutable, so a name identifies its content. When the segments or dead rows grow, the
live rows are compacted into one segment (from the matrices, no file re-read). Anything
unreadable or inconsistent in the index (missing, truncated, wrong shape, another model) makes
it rebuild from scratch, never fail the command.
"""

from __future__ import annotations

import os
import time
from typing import Any, Callable

import numpy as np

from agent_memory.outbox import contract, names
from agent_memory.outbox.store import IMPORTED, PENDING, Store, StoredFile
from agent_memory.sync.vectors.segments import (EMB_NONE, EMB_OK, EMB_OTHER_MODEL,  # noqa: F401
                                                EMB_UNREADABLE, KINDS, ROW_DTYPE, IndexCorrupt,
                                                Segment, compact, empty_state, index_dir,
                                                load_state)
from agent_memory.sync.vectors.segments import save as save_index
from agent_memory.sync.vectors import statefile
from agent_memory.sync.vectors.listing import RACY_NS, session_listing

MAX_SEGMENTS = 12

class Index:
    """The live view: `rows` (all segments concatenated), `live` mask, and scoring."""

    def __init__(self, state: dict[str, Any], segments: list[Segment],
                 report: dict[str, Any]) -> None:
        self.state = state
        self.model: str = state["model"]
        self.dimension: int = state["dimension"]
        self.sessions: list[str] = state["sessions"]
        self.session_pos = {s: i for i, s in enumerate(self.sessions)}
        self.segments = segments
        self.report = report  # what the last refresh did: rebuilt, added, removed, seconds
        parts = [s.rows for s in segments]
        self.rows = np.concatenate(parts) if parts else np.zeros(0, ROW_DTYPE)
        self.seg_of = np.concatenate([np.full(len(s.rows), i, np.int32)
                                      for i, s in enumerate(segments)]) if parts else \
            np.zeros(0, np.int32)
        self.live = np.ones(len(self.rows), bool)
        offset = 0
        for seg in segments:
            dead = state["dead"].get(seg.id) or []
            if dead:
                self.live[offset + np.asarray(dead, np.int64)] = False
            offset += len(seg.rows)

    # --- descriptions ------------------------------------------------------------------------
    @property
    def mismatched(self) -> list[dict[str, Any]]:
        """`.emb` of another model or dimension (never scored), as warnings."""
        return statefile.mismatched(self.state)

    @property
    def unreadable(self) -> list[dict[str, str]]:
        return statefile.unreadable(self.state)

    def project_of(self, session_id: str) -> str | None:
        return self.state["projects"].get(session_id)

    def session_mask(self, session_ids) -> np.ndarray:
        wanted = [self.session_pos[s] for s in session_ids if s in self.session_pos]
        return self.live & np.isin(self.rows["session"], np.asarray(wanted, np.int32))

    # --- scoring -------------------------------------------------------------------------------
    def scores(self, query: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(row positions, float32 cosine scores) of the masked rows that have a usable vector.

        Computed as the reference logger computes them (float32 matrix times float32 query)."""
        query = np.asarray(query, dtype=np.float32)
        positions, scores = [], []
        offset = 0
        for seg in self.segments:
            n = len(seg.rows)
            sel = mask[offset:offset + n] & (seg.rows["emb"] == EMB_OK)
            idx = np.nonzero(sel)[0]
            if len(idx):
                vrows = seg.rows["vrow"][idx]
                if len(idx) * 2 >= len(seg.vectors):
                    s = (seg.vectors @ query)[vrows]
                else:
                    s = seg.vectors[vrows] @ query
                positions.append(idx + offset)
                scores.append(s.astype(np.float32, copy=False))
            offset += n
        if not positions:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        return np.concatenate(positions), np.concatenate(scores)

    def vector_of(self, position: int) -> np.ndarray | None:
        row = self.rows[position]
        if row["emb"] != EMB_OK:
            return None
        seg = self.segments[int(self.seg_of[position])]
        return np.array(seg.vectors[int(row["vrow"])], dtype=np.float32)

    def find(self, message_id: str) -> int | None:
        hits = np.nonzero(self.live & (self.rows["message_id"] == message_id.encode()))[0]
        return int(hits[0]) if len(hits) else None

    def file_name(self, position: int) -> tuple[str, str]:
        """(session_id, `.msg` name) of a row."""
        row = self.rows[position]
        return self.sessions[int(row["session"])], row["stem"].decode() + names.MESSAGE_EXT


class _Builder:
    """Rows and vectors of one new segment."""

    def __init__(self, dimension: int) -> None:
        self.rows: list[tuple] = []
        self.vectors: list[np.ndarray] = []
        self.dimension = dimension

    def add(self, session_pos: int, stem: str, record: Any, emb_state: int,
            vector: np.ndarray | None) -> None:
        vrow = -1
        if vector is not None:
            vrow = len(self.vectors)
            self.vectors.append(vector)
        sender = KINDS.index(record.sender_kind) if record.sender_kind in KINDS else -1
        priority = contract.DEFAULT_PRIORITY if record.priority is None else record.priority
        self.rows.append((session_pos, stem.encode(), record.message_id.encode(),
                          record.sequence_number, sender, priority,
                          record.occurred_at.encode(), (record.corrects_message_id or "").encode(),
                          emb_state, vrow))

    def segment(self) -> Segment | None:
        if not self.rows:
            return None
        rows = np.array(self.rows, dtype=ROW_DTYPE)
        vectors = np.stack(self.vectors).astype(np.float32) if self.vectors else \
            np.zeros((0, self.dimension), np.float32)
        return Segment(os.urandom(6).hex(), rows, vectors)


def _project(store: Store, session_id: str) -> str | None:
    events, _bad = store.events(session_id)
    for _file, event in events:
        if event.event == "open" and event.project_id is not None:
            return event.project_id
    return None


def _refresh(store: Store, state: dict[str, Any], segments: list[Segment],
             progress: Callable[[str], None] | None) -> tuple[list[Segment], bool, dict]:
    """Bring `state`/`segments` up to date with the files; returns (new segments, changed,
    counts)."""
    scan_start = time.time_ns()
    dirs = store.session_mtimes((PENDING, IMPORTED))
    changed_sessions = _changed_sessions(state, dirs)
    counts = {"added": 0, "removed": 0, "sessions_listed": len(changed_sessions)}
    if not changed_sessions:
        state["dirs"], state["scanned_at_ns"] = dirs, scan_start
        return [], False, counts
    session_pos = {s: i for i, s in enumerate(state["sessions"])}
    live = _live_rows(state, segments, {session_pos[s] for s in changed_sessions
                                        if s in session_pos})
    builder = _Builder(state["dimension"])
    changed = False
    for session_id in sorted(changed_sessions):
        listing = session_listing(store, session_id, dirs)
        if session_id not in session_pos:
            session_pos[session_id] = len(state["sessions"])
            state["sessions"].append(session_id)
        pos = session_pos[session_id]
        state["projects"][session_id] = _project(store, session_id)
        existing = live.get(pos, {})
        changed |= _forget_changed(state, segments, session_id, existing, listing, counts)
        for stem, entry in sorted(listing.items()):
            if names.MESSAGE_EXT not in entry:
                continue  # a `.emb` without its message (orphan): not indexed
            prior = existing.get(stem.encode())
            if prior is not None and (names.VECTOR_EXT in entry) == (prior[2] != EMB_NONE):
                continue  # unchanged
            read = _read_entry(store, state, session_id, stem, entry)
            if read is None:
                continue
            if read is _BAD:
                changed = True
                continue
            builder.add(pos, stem, *read)
            counts["added"] += 1
            changed = True
            if progress is not None and counts["added"] % 5000 == 0:
                progress(f"index: {counts['added']} messages read")
    state["dirs"], state["scanned_at_ns"] = dirs, scan_start
    new = builder.segment()
    if new is not None:
        segments.append(new)
        state["segments"].append({"id": new.id, "rows": len(new.rows),
                                  "vectors": len(new.vectors)})
    return ([new] if new is not None else []), changed, counts


def _changed_sessions(state: dict[str, Any], dirs: dict[str, int]) -> set[str]:
    """Sessions whose directory changed since the last scan, or changed too close to it to
    trust its mtime (the racy window)."""
    old_dirs = state["dirs"]
    threshold = state["scanned_at_ns"] - RACY_NS
    return {key.split("/", 1)[1] for key in set(dirs) | set(old_dirs)
            if dirs.get(key) != old_dirs.get(key) or old_dirs.get(key, 0) >= threshold}


def _live_rows(state: dict[str, Any], segments: list[Segment],
               wanted: set[int]) -> dict[int, dict[bytes, tuple[int, int, int]]]:
    """The live rows of the sessions at `wanted` positions: session -> stem -> (segment
    index, row index, emb state)."""
    live: dict[int, dict[bytes, tuple[int, int, int]]] = {}
    if not wanted:
        return live
    positions = np.asarray(sorted(wanted), np.int32)
    for si, seg in enumerate(segments):
        dead = set(state["dead"].get(seg.id) or [])
        for r in np.nonzero(np.isin(seg.rows["session"], positions))[0]:
            if int(r) in dead:
                continue
            row = seg.rows[r]
            live.setdefault(int(row["session"]), {})[bytes(row["stem"])] = \
                (si, int(r), int(row["emb"]))
    return live


def _forget_changed(state: dict[str, Any], segments: list[Segment], session_id: str,
                    existing: dict[bytes, tuple[int, int, int]],
                    listing: dict[str, dict[str, str]], counts: dict[str, int]) -> bool:
    """Rows whose message vanished (quarantined) or whose `.emb` came or went become dead
    (the latter are read again); whether any did."""
    changed = False
    for stem_bytes, (si, r, emb_state) in existing.items():
        entry = listing.get(stem_bytes.decode())
        msg_there = entry is not None and names.MESSAGE_EXT in entry
        emb_there = entry is not None and names.VECTOR_EXT in entry
        if not msg_there or emb_there != (emb_state != EMB_NONE):
            state["dead"].setdefault(segments[si].id, []).append(r)
            counts["removed"] += 1
            changed = True
            state["mismatched"].pop(f"{session_id}/{stem_bytes.decode()}", None)
    return changed


_BAD = object()  # an unreadable message, noted in the state


def _read_entry(store: Store, state: dict[str, Any], session_id: str, stem: str,
                entry: dict[str, str]):
    """(record, emb state, vector or None) of one message and its `.emb`; None when it moved
    meanwhile (the next open sees it), _BAD when the message is unreadable (noted in
    `state["bad"]`). A `.emb` unreadable or of another model is noted in `state["mismatched"]`
    and never scored."""
    key = f"{session_id}/{stem}"
    if key in state["bad"] and state["bad"][key].get("emb") == (names.VECTOR_EXT in entry):
        return None  # known unreadable message
    message = StoredFile(session_id, entry[names.MESSAGE_EXT], stem + names.MESSAGE_EXT)
    try:
        record = store.load(message, "message")
        if record.message_id != message.item_id or record.session_id != session_id:
            raise ValueError("record does not match its file name")
    except FileNotFoundError:
        return None  # moved meanwhile; the directory's mtime changed, next open sees it
    except (OSError, ValueError) as exc:
        state["bad"][key] = {"file": message.relpath, "reason": str(exc),
                             "emb": names.VECTOR_EXT in entry}
        return _BAD
    state["bad"].pop(key, None)
    if names.VECTOR_EXT not in entry:
        return record, EMB_NONE, None
    vector = StoredFile(session_id, entry[names.VECTOR_EXT], stem + names.VECTOR_EXT)
    where = vector.relpath
    try:
        vrec = store.load(vector, "vector")
        if vrec.message_id != record.message_id:
            raise ValueError("vector of another message")
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        state["mismatched"][key] = {"file": where, "message_id": record.message_id,
                                    "reason": f"unreadable: {exc}"}
        return record, EMB_UNREADABLE, None
    model, dimension = state["model"], state["dimension"]
    if vrec.model != model or vrec.dimension != dimension or len(vrec.embedding) != dimension:
        state["mismatched"][key] = {"file": where, "message_id": record.message_id,
                                    "model": vrec.model, "dimension": vrec.dimension,
                                    "reason": "another model or dimension than the "
                                              "configuration"}
        return record, EMB_OTHER_MODEL, None
    state["mismatched"].pop(key, None)
    return record, EMB_OK, np.asarray(vrec.embedding, dtype=np.float32)


def open_index(store: Store, model: str, dimension: int, *, save: bool = True,
               progress: Callable[[str], None] | None = None) -> Index:
    """The index of `store` for the configured model, brought up to date with the files."""
    path = index_dir(store)
    started = time.perf_counter()
    rebuilt = False
    try:
        state, segments = load_state(path, model, dimension)
    except IndexCorrupt as exc:
        if progress is not None:
            progress(f"index unusable ({exc}); rebuilding")
        state, segments = empty_state(model, dimension), []
        rebuilt = True
    if not state["segments"]:
        rebuilt = True
    new, changed, counts = _refresh(store, state, segments, progress)
    dead_rows = sum(len(v) for v in state["dead"].values())
    total_rows = sum(len(s.rows) for s in segments)
    if len(segments) > MAX_SEGMENTS or (dead_rows and dead_rows * 4 > total_rows):
        compacted = compact(state, segments)
        segments = [compacted]
        new = [compacted]
        changed = True
    if save:
        try:
            if changed or new or counts["sessions_listed"]:
                # also when only re-listed: the new scan time ends their racy window
                save_index(path, state, new, {s.id for s in segments})
        except OSError as exc:  # a read-only or full disk: the answer is still right
            if progress is not None:
                progress(f"index not saved: {exc}")
    report = {"rebuilt": rebuilt, **counts, "seconds": round(time.perf_counter() - started, 3)}
    return Index(state, segments, report)


def drop(store: Store) -> None:
    """Delete the index (it is rebuilt on next use)."""
    import shutil
    shutil.rmtree(index_dir(store), ignore_errors=True)


