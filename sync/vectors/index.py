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

import json
import os
import time
from typing import Any, Callable

import numpy as np

from agent_memory.outbox import contract, names, records
from agent_memory.outbox.entries import may_open
from agent_memory.outbox.store import IMPORTED, PENDING, Store

INDEX_DIR = ".index"
FORMAT = 1
RACY_NS = 2_000_000_000  # a directory changed less than 2 s before a scan is listed again
MAX_SEGMENTS = 12
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
        return [dict(v, key=k) for k, v in sorted(self.state["mismatched"].items())]

    @property
    def unreadable(self) -> list[dict[str, str]]:
        return [{"file": v["file"], "reason": v["reason"]}
                for _k, v in sorted(self.state["bad"].items())]

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


# --- building --------------------------------------------------------------------------------
def _index_dir(store: Store) -> str:
    return os.path.join(store.path, INDEX_DIR)


def _empty_state(model: str, dimension: int) -> dict[str, Any]:
    return {"format": FORMAT, "model": model, "dimension": dimension, "sessions": [],
            "projects": {}, "dirs": {}, "scanned_at_ns": 0, "segments": [], "dead": {},
            "mismatched": {}, "bad": {}}


def _load_state(path: str, model: str, dimension: int) -> tuple[dict[str, Any], list[Segment]]:
    try:
        with open(os.path.join(path, "state.json"), "rb") as handle:
            state = json.loads(handle.read())
    except FileNotFoundError:
        return _empty_state(model, dimension), []
    except (OSError, ValueError) as exc:
        raise IndexCorrupt(f"state.json: {exc}") from exc
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise IndexCorrupt("state.json: unknown format")
    if state.get("model") != model or state.get("dimension") != dimension:
        return _empty_state(model, dimension), []  # another model configured: start over
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


def _save(path: str, state: dict[str, Any], new: list[Segment], keep: set[str]) -> None:
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


def _scan_dirs(store: Store) -> dict[str, int]:
    """{"<area>/<session>": mtime_ns} of every session directory in pending and imported."""
    out: dict[str, int] = {}
    for area, sub in ((PENDING, None), (IMPORTED, names.IMPORTED_DIR)):
        base = store.path if sub is None else os.path.join(store.path, sub)
        try:
            entries = list(os.scandir(base))
        except FileNotFoundError:
            continue
        for entry in entries:
            if (contract.is_valid_session_id(entry.name) and entry.is_dir(follow_symlinks=False)
                    and may_open(entry.path)):  # one this user may not open is not indexed
                try:
                    out[f"{area}/{entry.name}"] = entry.stat(follow_symlinks=False).st_mtime_ns
                except FileNotFoundError:
                    continue
    return out


def _relpath(session_id: str, area: str, name: str) -> str:
    area_dir = "" if area == PENDING else names.IMPORTED_DIR + "/"
    return f"{names.STORE_DIR}/{area_dir}{session_id}/{name}"


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


def _read(store: Store, session_id: str, area: str, name: str, kind: str) -> Any:
    fd = store.session_fd(session_id, area)
    if fd is None:
        raise FileNotFoundError(name)
    try:
        from agent_memory.outbox import atomic
        data = atomic.read_file(fd, name)
    finally:
        os.close(fd)
    return records.decode(data, records.KINDS[kind])


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
    model, dimension = state["model"], state["dimension"]
    scan_start = time.time_ns()
    dirs = _scan_dirs(store)
    old_dirs = state["dirs"]
    threshold = state["scanned_at_ns"] - RACY_NS
    changed_sessions = set()
    for key in set(dirs) | set(old_dirs):
        if dirs.get(key) != old_dirs.get(key) or old_dirs.get(key, 0) >= threshold:
            changed_sessions.add(key.split("/", 1)[1])
    counts = {"added": 0, "removed": 0, "sessions_listed": len(changed_sessions)}
    if not changed_sessions:
        state["dirs"], state["scanned_at_ns"] = dirs, scan_start
        return [], False, counts

    session_pos = {s: i for i, s in enumerate(state["sessions"])}
    # live rows of the changed sessions: stem -> (segment index, row index, emb state)
    live_by_session: dict[int, dict[bytes, tuple[int, int, int]]] = {}
    wanted = {session_pos[s] for s in changed_sessions if s in session_pos}
    for si, seg in enumerate(segments):
        dead = set(state["dead"].get(seg.id) or [])
        hit = np.nonzero(np.isin(seg.rows["session"], np.asarray(sorted(wanted), np.int32)))[0] \
            if wanted else []
        for r in hit:
            if int(r) in dead:
                continue
            row = seg.rows[r]
            live_by_session.setdefault(int(row["session"]), {})[bytes(row["stem"])] = \
                (si, int(r), int(row["emb"]))

    builder = _Builder(dimension)
    changed = False
    done = 0
    for session_id in sorted(changed_sessions):
        listing: dict[str, dict[str, str]] = {}
        for area in (PENDING, IMPORTED):
            if f"{area}/{session_id}" not in dirs:
                continue
            fd = store.session_fd(session_id, area)
            if fd is None:
                continue
            try:
                found = os.listdir(fd)
            finally:
                os.close(fd)
            for name in found:
                parsed = names.parse_final_name(name)
                if parsed is None or parsed[2] == names.EVENT_EXT:
                    continue
                stem = name[: -len(parsed[2])]
                listing.setdefault(stem, {}).setdefault(parsed[2], area)
        if session_id not in session_pos:
            session_pos[session_id] = len(state["sessions"])
            state["sessions"].append(session_id)
        pos = session_pos[session_id]
        state["projects"][session_id] = _project(store, session_id)
        existing = live_by_session.get(pos, {})
        for stem_bytes, (si, r, emb_state) in existing.items():
            entry = listing.get(stem_bytes.decode())
            msg_there = entry is not None and names.MESSAGE_EXT in entry
            emb_there = entry is not None and names.VECTOR_EXT in entry
            if not msg_there or emb_there != (emb_state != EMB_NONE):
                state["dead"].setdefault(segments[si].id, []).append(r)
                counts["removed"] += 1
                changed = True
                key = f"{session_id}/{stem_bytes.decode()}"
                state["mismatched"].pop(key, None)
        for stem, entry in sorted(listing.items()):
            if names.MESSAGE_EXT not in entry:
                continue  # a `.emb` without its message (orphan): not indexed
            key = f"{session_id}/{stem}"
            prior = existing.get(stem.encode())
            if prior is not None and (names.VECTOR_EXT in entry) == (prior[2] != EMB_NONE):
                continue  # unchanged
            if key in state["bad"] and state["bad"][key].get("emb") == (names.VECTOR_EXT in entry):
                continue  # known unreadable message
            msg_name = stem + names.MESSAGE_EXT
            try:
                record = _read(store, session_id, entry[names.MESSAGE_EXT], msg_name, "message")
                if record.message_id != names.parse_final_name(msg_name)[1] or \
                        record.session_id != session_id:
                    raise ValueError("record does not match its file name")
            except FileNotFoundError:
                continue  # moved meanwhile; the directory's mtime changed, next open sees it
            except (OSError, ValueError) as exc:
                state["bad"][key] = {"file": _relpath(session_id, entry[names.MESSAGE_EXT],
                                                      msg_name), "reason": str(exc),
                                     "emb": names.VECTOR_EXT in entry}
                changed = True
                continue
            state["bad"].pop(key, None)
            emb_state, vector = EMB_NONE, None
            if names.VECTOR_EXT in entry:
                emb_name = stem + names.VECTOR_EXT
                try:
                    vrec = _read(store, session_id, entry[names.VECTOR_EXT], emb_name, "vector")
                    if vrec.message_id != record.message_id:
                        raise ValueError("vector of another message")
                except FileNotFoundError:
                    continue
                except (OSError, ValueError) as exc:
                    emb_state = EMB_UNREADABLE
                    state["mismatched"][key] = {
                        "file": _relpath(session_id, entry[names.VECTOR_EXT], emb_name),
                        "message_id": record.message_id, "reason": f"unreadable: {exc}"}
                else:
                    if vrec.model != model or vrec.dimension != dimension or \
                            len(vrec.embedding) != dimension:
                        emb_state = EMB_OTHER_MODEL
                        state["mismatched"][key] = {
                            "file": _relpath(session_id, entry[names.VECTOR_EXT], emb_name),
                            "message_id": record.message_id, "model": vrec.model,
                            "dimension": vrec.dimension,
                            "reason": "another model or dimension than the configuration"}
                    else:
                        emb_state = EMB_OK
                        vector = np.asarray(vrec.embedding, dtype=np.float32)
                        state["mismatched"].pop(key, None)
            builder.add(pos, stem, record, emb_state, vector)
            counts["added"] += 1
            changed = True
            done += 1
            if progress is not None and done % 5000 == 0:
                progress(f"index: {done} messages read")
    state["dirs"], state["scanned_at_ns"] = dirs, scan_start
    new = builder.segment()
    if new is not None:
        segments.append(new)
        state["segments"].append({"id": new.id, "rows": len(new.rows),
                                  "vectors": len(new.vectors)})
    return ([new] if new is not None else []), changed, counts


def _compact(state: dict[str, Any], segments: list[Segment]) -> Segment | None:
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


def open_index(store: Store, model: str, dimension: int, *, save: bool = True,
               progress: Callable[[str], None] | None = None) -> Index:
    """The index of `store` for the configured model, brought up to date with the files."""
    path = _index_dir(store)
    started = time.perf_counter()
    rebuilt = False
    try:
        state, segments = _load_state(path, model, dimension)
    except IndexCorrupt as exc:
        if progress is not None:
            progress(f"index unusable ({exc}); rebuilding")
        state, segments = _empty_state(model, dimension), []
        rebuilt = True
    if not state["segments"]:
        rebuilt = True
    new, changed, counts = _refresh(store, state, segments, progress)
    dead_rows = sum(len(v) for v in state["dead"].values())
    total_rows = sum(len(s.rows) for s in segments)
    if len(segments) > MAX_SEGMENTS or (dead_rows and dead_rows * 4 > total_rows):
        compacted = _compact(state, segments)
        segments = [compacted]
        new = [compacted]
        changed = True
    if save:
        try:
            if changed or new or counts["sessions_listed"]:
                # also when only re-listed: the new scan time ends their racy window
                _save(path, state, new, {s.id for s in segments})
        except OSError as exc:  # a read-only or full disk: the answer is still right
            if progress is not None:
                progress(f"index not saved: {exc}")
    report = {"rebuilt": rebuilt, **counts, "seconds": round(time.perf_counter() - started, 3)}
    return Index(state, segments, report)


def drop(store: Store) -> None:
    """Delete the index (it is rebuilt on next use)."""
    import shutil
    shutil.rmtree(_index_dir(store), ignore_errors=True)


# --- query vectors -------------------------------------------------------------------------------
QUERY_CACHE_MAX = 2000


def _query_path(store: Store, model: str, dimension: int, text: str) -> str:
    import hashlib
    digest = hashlib.blake2b(f"{model}\0{dimension}\0{text}".encode("utf-8"),
                             digest_size=20).hexdigest()
    return os.path.join(_index_dir(store), "queries", digest + ".npy")


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
