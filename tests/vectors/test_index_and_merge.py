"""The derived index (deleted, corrupt, stale) and auto-mode reads merging pending messages."""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest

from amtest import open_args
from vtest import TEXTS, ids_of, write_texts


def _search(p, sid, query="cat"):
    result = p.cli("--store", "file", "search", "--query", query, "--scope", "session",
                   "--target", sid, "--mode", "full")
    assert result.rc == 0, result.stdout
    return [(m["message"]["message_id"], m["score"]) for m in result.data["matches"]]


def test_index_follows_the_files_and_survives_deletion_and_corruption(synced_project,
                                                                      unique_session_id):
    p, sid = synced_project, unique_session_id
    ids = write_texts(p, sid, TEXTS[:5])
    assert p.cli("embed").data["written"] == 5
    first = _search(p, sid)
    assert [i for i, _ in first][:1] == [ids[2]] and len(first) == 3
    index_dir = os.path.join(p.store, ".index")
    assert os.path.isfile(os.path.join(index_dir, "state.json"))
    more = write_texts(p, sid, ["cat cat cat"])
    assert p.cli("embed").data["written"] == 1  # a new file: seen at once
    second = _search(p, sid)
    assert second[0][0] == more[0] and len(second) == 4
    shutil.rmtree(index_dir)
    assert _search(p, sid) == second
    with open(os.path.join(index_dir, "state.json"), "w") as handle:
        handle.write("{not json")
    assert _search(p, sid) == second
    for name in os.listdir(index_dir):
        if name.endswith(".vec.npy"):
            with open(os.path.join(index_dir, name), "r+b") as handle:
                handle.truncate(100)
    assert _search(p, sid) == second
    state = json.load(open(os.path.join(index_dir, "state.json")))
    state["segments"][0]["rows"] += 1
    json.dump(state, open(os.path.join(index_dir, "state.json"), "w"))
    assert _search(p, sid) == second
    status = p.cli("--store", "file", "sessions")  # the index directory is not a session
    assert sid in [s["session_id"] for s in status.data["sessions"]]
    assert ".index" not in [s["session_id"] for s in status.data["sessions"]]


def test_numpy_ranking_is_the_contract_rule():
    """sync.vectors.search.rank (arrays) == outbox.contract.rank_closeness (the shared rule)."""
    from agent_memory.outbox import contract
    from agent_memory.sync.vectors.search import _Scope, rank
    from agent_memory.sync.vectors.index import ROW_DTYPE, Index

    rng = np.random.default_rng(5)
    n = 300
    rows = np.zeros(n, ROW_DTYPE)
    ids = [contract.new_uuid4() for _ in range(n)]
    rows["message_id"] = [i.encode() for i in ids]
    rows["stem"] = [f"2026-01-01T00.00.00.000-{i}".encode() for i in ids]
    rows["sequence"] = np.arange(n)
    corrects = {}
    for k in range(1, n, 7):  # chains: k corrects k-1 (and some corrections of corrections)
        corrects[ids[k]] = ids[k - 1]
        rows["corrects"][k] = ids[k - 1].encode()
    state = {"model": "m", "dimension": 2, "sessions": ["s"], "projects": {}, "dead": {},
             "mismatched": {}, "bad": {}}
    index = Index(state, [], {})
    index.rows, index.live = rows, np.ones(n, bool)
    scores = np.round(rng.uniform(-0.5, 1.0, n), 2).astype(np.float32)  # many exact ties
    positions = np.arange(n)
    scope = _Scope(index, index.live)

    def root_of(mid):
        while mid in corrects:
            mid = corrects[mid]
        return mid

    hits = [(float(s), i) for s, i in zip(scores, ids) if contract.is_close(float(s))]
    for chains, exclude in ((None, None), (None, ids[3]), (scope, None), (scope, ids[8])):
        got_ids, got_scores = rank(index, positions, scores, chains, exclude)
        want = contract.rank_closeness(hits, root_of if chains is not None else None, exclude)
        assert got_ids == [i for _, i in want]
        assert got_scores == [s for s, _ in want]


@pytest.mark.slow
def test_auto_reads_merge_pending_messages_into_the_logger_answer(synced_project,
                                                                  unique_session_id):
    p, sid = synced_project, unique_session_id
    assert p.cli("--store", "file", *open_args(sid, project_id=f"m-{sid}")).rc == 0
    imported = write_texts(p, sid, TEXTS[:4])
    assert p.cli("embed").rc == 0 and p.cli("sync").rc == 0
    pending = write_texts(p, sid, ["the cat is pending", "still pending rain"])
    assert p.cli("embed").data["written"] == 2
    assert len(p.final_files(sid)) == 4  # two .msg + two .emb wait in the outbox

    read = p.cli("read", "--session-id", sid)
    assert read.out["store"] == "both", read.stdout
    assert [m["message_id"] for m in read.data["messages"]] == imported + pending
    assert [m.get("outbox") for m in read.data["messages"][-2:]] == ["pending", "pending"]
    paged = p.cli("read", "--session-id", sid, "--block-size", "5").data
    assert [m["message_id"] for m in paged["messages"]] == imported + pending[:1]
    assert paged["more"] is True
    rest = p.cli("read", "--session-id", sid, "--block-size", "5",
                 "--continuation", paged["continuation"])
    assert [m["message_id"] for m in rest.data["messages"]] == pending[1:]
    assert rest.data["more"] is False
    only_logger = p.cli("--store", "logger", "read", "--session-id", sid)
    assert only_logger.out["store"] == "logger"
    assert [m["message_id"] for m in only_logger.data["messages"]] == imported

    got = p.cli("get", pending[0])
    assert got.out["store"] == "both" and got.data["message_id"] == pending[0]
    assert p.cli("get", imported[0]).out["store"] == "logger"

    ws = p.cli("working-set", "--session-id", sid, "--anchor-text", "cat",
               "--recency-count", "3", "--similarity-count", "3")
    assert ws.out["store"] == "both", ws.stdout
    assert ids_of(ws.data["recent"]) == [pending[1], pending[0], imported[3]]
    assert ids_of(ws.data["closest"]) == [pending[0], imported[2], imported[0]]
    found = p.cli("search", "--query", "cat", "--scope", "session", "--target", sid,
                  "--page-size", "2")
    assert found.out["store"] == "both" and found.data["total"] == 3
    assert [m["message"]["message_id"] for m in found.data["matches"]] == \
        [pending[0], imported[2]]
    # after the sync, the logger alone gives the same closest group
    assert p.cli("sync").rc == 0
    after = p.cli("working-set", "--session-id", sid, "--anchor-text", "cat",
                  "--recency-count", "3", "--similarity-count", "3")
    assert after.out["store"] == "logger"
    assert ids_of(after.data["closest"]) == ids_of(ws.data["closest"])
    assert ids_of(after.data["recent"]) == ids_of(ws.data["recent"])


def test_auto_reads_fall_back_to_the_files_when_the_logger_is_unreachable(
        synced_project, offline_config, unique_session_id):
    from vtest import with_config
    p, sid = synced_project, unique_session_id
    ids = write_texts(p, sid, TEXTS[:3])
    assert p.cli("embed").data["written"] == 3
    q = with_config(p, offline_config)
    read = q.cli("read", "--session-id", sid)
    assert read.rc == 0 and read.out["store"] == "file"
    assert [m["message_id"] for m in read.data["messages"]] == ids
    ws = q.cli("working-set", "--session-id", sid, "--anchor-message-id", ids[0])
    assert ws.rc == 0 and ws.out["store"] == "file"
    found = q.cli("search", "--query", "cat", "--scope", "session", "--target", sid)
    assert found.out["store"] == "file" and found.data["ranking"] == "bm25"
    forced = q.cli("--store", "logger", "search", "--query", "cat", "--scope", "session",
                   "--target", sid)
    assert forced.rc == 4
