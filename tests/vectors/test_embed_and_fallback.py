"""`embed` backfill (pending and imported), model/dimension mismatch, BM25 fallback, exit 7."""

from __future__ import annotations

import json

import pytest

from amtest import make_project, open_args
from fleetutil import offline_document
from vtest import TEXTS, emb_files, ids_of, read_emb, with_config, write_texts


@pytest.mark.slow
def test_embed_backfills_pending_and_imported_after_the_embedder_comes_back(
        tmp_path, fleet_factory, unique_session_id):
    fleet = fleet_factory()
    p, sid = make_project(tmp_path, config=str(fleet.config_path)), unique_session_id
    fleet.control.go_down("embedder")
    assert p.cli("--store", "file", *open_args(sid)).rc == 0
    # the embedder is down: write still succeeds, quickly, with the .msg alone
    first = write_texts(p, sid, TEXTS[:3], embed=True)
    assert emb_files(p, sid) == [] and len(p.final_files(sid)) == 4
    assert p.cli("sync").data["totals"]["imported"] == 3  # the logger is up: imported bare
    second = write_texts(p, sid, TEXTS[3:5], embed=True)
    down = p.cli("embed")
    assert down.rc == 7 and down.code == "EMBEDDING_UNAVAILABLE", down.stdout
    assert down.out["error"]["details"]["remaining"] == 5
    ws = p.cli("--store", "file", "working-set", "--session-id", sid, "--anchor-text", "cat",
               "--ranking", "vector")
    assert ws.rc == 7 and ws.code == "EMBEDDING_UNAVAILABLE"
    fleet.control.come_up("embedder")
    done = p.cli("embed", "--batch", "2")
    assert done.rc == 0, done.stdout
    assert done.data["written"] == 5 and done.data["remaining"] == 0
    assert done.data["missing"] == 5 and done.data["mismatched"] == []
    assert len(emb_files(p, sid, ".imported")) == 3 and len(emb_files(p, sid)) == 2
    for name in emb_files(p, sid, ".imported"):
        assert read_emb(p, sid, name, ".imported")["message_id"] in first
    again = p.cli("embed")
    assert again.data["written"] == 0 and again.data["missing"] == 0
    local = p.cli("--store", "file", "working-set", "--session-id", sid, "--anchor-text", "cat",
                  "--similarity-count", "5").data
    assert set(ids_of(local["closest"])) == {first[0], first[2], second[1]}


def test_a_vector_of_another_model_is_never_written_nor_scored(synced_project, tmp_path,
                                                                unique_session_id, fleet):
    p, sid = synced_project, unique_session_id
    ids = write_texts(p, sid, TEXTS[:3])
    assert p.cli("embed").data["written"] == 3 and len(emb_files(p, sid)) == 3
    # the embedder refuses a dimension the model cannot give: nothing written, exit 7
    doc = json.loads(open(fleet.config_path).read())
    doc["embedding_model"] = {"model": "hash-1024", "dimension": 512}
    wrong_dim = tmp_path / "wrong-dim.json"
    wrong_dim.write_text(json.dumps(doc))
    q = with_config(p, wrong_dim)
    more = write_texts(q, sid, ["a cat again"], embed=True)
    assert len(emb_files(p, sid)) == 3
    refused = q.cli("embed")
    assert refused.rc == 7 and refused.out["error"]["details"]["refusal"] == \
        "EMBEDDING_REFUSED", refused.stdout
    assert "Requested dimension 512 does not match model dimension 1024" in \
        refused.out["error"]["message"]
    # another model configured: the existing hash-1024 vectors are reported, not mixed in
    doc["embedding_model"] = {"model": "hash-512", "dimension": 512}
    other = tmp_path / "other-model.json"
    other.write_text(json.dumps(doc))
    r = with_config(p, other)
    report = r.cli("embed")
    assert report.rc == 0 and report.data["written"] == 1, report.stdout
    mismatched = {m["message_id"]: m for m in report.data["mismatched"]}
    assert set(mismatched) == set(ids)
    assert {m["model"] for m in mismatched.values()} == {"hash-1024"}
    assert len(emb_files(p, sid)) == 4
    [new] = [n for n in emb_files(p, sid) if more[0] in n]
    assert read_emb(p, sid, new)["model"] == "hash-512"
    ws = r.cli("--store", "file", "working-set", "--session-id", sid, "--anchor-text", "cat")
    assert ws.rc == 0
    assert ids_of(ws.data["closest"]) == more  # only the hash-512 vector is scored
    kinds = {w["kind"] for w in ws.data["warnings"]}
    assert kinds == {"vector_mismatch"} and len(ws.data["warnings"]) == 3


def test_an_unknown_model_is_refused_with_its_real_cause(synced_project, tmp_path,
                                                         unique_session_id, fleet):
    p, sid = synced_project, unique_session_id
    doc = json.loads(open(fleet.config_path).read())
    doc["embedding_model"] = {"model": "no-such-model", "dimension": 1024}
    unknown = tmp_path / "unknown-model.json"
    unknown.write_text(json.dumps(doc))
    q = with_config(p, unknown)
    write_texts(q, sid, ["a cat"], embed=True)
    assert emb_files(p, sid) == []
    refused = q.cli("embed")
    assert refused.rc == 7 and refused.code == "EMBEDDING_UNAVAILABLE", refused.stdout
    assert refused.out["error"]["details"]["refusal"] == "encode_error"
    assert "Model no-such-model is not supported" in refused.out["error"]["message"]
    probe = q.cli("status", "--probe").data["probe"]["embedder"]
    assert probe["answers"] is True and probe["refused"] == "encode_error", probe
    assert "Model no-such-model is not supported" in probe["error"]


def test_texts_the_embedder_refuses_never_hold_back_the_others(synced_project,
                                                                unique_session_id):
    p, sid = synced_project, unique_session_id
    texts = ["a cat", "???", "the dog", "  ", "\U0001F44D", "birds sing", "...", "fish swim"]
    assert p.cli("--store", "file", *open_args(sid)).rc == 0
    ids = write_texts(p, sid, texts)
    first = p.cli("embed", "--batch", "8")
    assert first.rc == 0, first.stdout
    refused = {u["message_id"]: u for u in first.data["unembeddable"]}
    assert set(refused) == {ids[i] for i in (1, 3, 4, 6)}
    assert first.data["written"] == 4 and first.data["remaining"] == 4
    assert {read_emb(p, sid, n)["message_id"] for n in emb_files(p, sid)} == \
        {ids[i] for i in (0, 2, 5, 7)}
    assert all("special characters" in u["reason"] or "whitespace" in u["reason"]
               for u in refused.values()), refused
    sync = p.cli("sync")  # the logger takes them all, with or without a vector
    assert sync.rc == 0 and sync.data["totals"]["imported"] == len(texts), sync.stdout


@pytest.mark.slow
def test_a_text_of_the_largest_size_gets_the_vector_of_its_prefix_here_and_at_the_logger(
        synced_project, unique_session_id):
    """A tool's 1 MiB table of numbers: the embedder's answer for the whole of it echoes the
    text and its many tokens, larger than the one WebSocket message embed-client receives
    (4 MiB), so sent whole it fails like an outage, for ever, here and in the logger's own
    vectorizing. Both embed its first EMBED_TEXT_CHARS characters, and so agree."""
    from agent_memory.cli.inputs import MAX_TEXT_BYTES
    from agent_memory.outbox.contract import EMBED_TEXT_CHARS
    p, sid = synced_project, unique_session_id
    rows = "".join(f"{i},{i * 7 % 1000},{i % 2}\n" for i in range(MAX_TEXT_BYTES // 6))
    big_text = ("id,value,flag\n" + rows)[:MAX_TEXT_BYTES]
    prefix = big_text[:EMBED_TEXT_CHARS]
    assert p.cli("--store", "file", *open_args(sid)).rc == 0
    head = write_texts(p, sid, TEXTS[:2])
    ids = {}
    for name, data in (("big", big_text.encode()), ("prefix", prefix.encode())):
        written = p.cli("--store", "file", "write", f"--session-id={sid}", "--sender-kind",
                        "human", "--sender-identity", "alice", "--receiver-kind", "model",
                        "--receiver-identity", "claude", stdin=data)
        assert written.rc == 0, written.stdout
        ids[name] = written.data["message_id"]
    tail = write_texts(p, sid, ["id value flag", TEXTS[2]])
    done = p.cli("embed")
    assert done.rc == 0 and done.data["written"] == 6, done.stdout
    vectors = {read_emb(p, sid, n)["message_id"]: read_emb(p, sid, n)["embedding"]
               for n in emb_files(p, sid)}
    assert set(vectors) == set(head + tail) | set(ids.values())
    assert vectors[ids["big"]] == vectors[ids["prefix"]]
    assert p.cli("sync").data["totals"]["imported"] == 6
    query = ("working-set", "--session-id", sid, "--anchor-text", "id value flag",
             "--similarity-count", "3", "--max-chars", "0")
    at_logger = p.cli("--store", "logger", *query)
    assert at_logger.rc == 0, at_logger.stdout
    here = p.cli("--store", "file", *query)
    assert ids_of(at_logger.data["closest"]) == ids_of(here.data["closest"])
    assert set(ids_of(here.data["closest"])) == {ids["big"], ids["prefix"], tail[0]}
    got = p.cli("--store", "logger", "get", ids["big"], "--max-chars", "0")
    assert got.data["vectorization_state"] == "vectorized" and got.data["text"] == big_text


def test_embed_batches_keep_every_answer_within_the_budget_and_every_text_once():
    from agent_memory.outbox import contract as c
    texts = [c.embedding_text(t) for t in
             ["a cat", "x" * 100_000, "\u0416" * 40_000, "a dog", "\x01" * 32_768] + ["b"] * 300]
    for most in (None, 64):
        ranges = c.embed_batches(texts, 1024, most=most)
        assert [i for start, end in ranges for i in range(start, end)] == list(range(len(texts)))
        for start, end in ranges:
            size = sum(c.embed_answer_size(t, 1024) for t in texts[start:end])
            assert size <= c.EMBED_ANSWER_BUDGET or end - start == 1
            assert most is None or end - start <= most
    assert max(c.embed_answer_size(t, 1024) for t in texts) <= c.EMBED_ANSWER_BUDGET
    assert c.embed_batches([], 1024) == []


def test_answer_check_refuses_another_model_or_dimension():
    from agent_memory.sync.links.embedder import VectorMismatch, check_answer
    good = {"results": [{"embedding": [0.6, 0.8]}], "model": "m", "dimension": 2}
    assert check_answer(good, "m", 2, 1) == [[0.6, 0.8]]
    for bad in ({**good, "model": "other"}, {**good, "dimension": 3},
                {"results": [{"embedding": [1.0, 0.0, 0.0]}], "model": "m"}):
        with pytest.raises(VectorMismatch):
            check_answer(bad, "m", 2, 1)


def test_without_an_embedder_search_falls_back_to_bm25(synced_project, tmp_path,
                                                       unique_session_id):
    p, sid = synced_project, unique_session_id
    assert p.cli("--store", "file", *open_args(sid, project_id="bm")).rc == 0
    ids = write_texts(p, sid, TEXTS[:5])
    assert p.cli("embed").data["written"] == 5  # vectors made while the embedder was up
    offline = tmp_path / "offline.json"
    offline.write_text(json.dumps(offline_document()))
    q = with_config(p, offline)
    found = q.cli("search", "--query", "cat chases", "--scope", "session", "--target", sid)
    assert found.rc == 0 and found.out["store"] == "file", found.stdout
    assert found.data["ranking"] == "bm25"
    hits = [m["message"]["message_id"] for m in found.data["matches"]]
    assert hits[0] == ids[2] and set(hits) == {ids[0], ids[2], ids[4]}
    assert found.data["total"] == 3
    forced = q.cli("search", "--query", "cat", "--scope", "session", "--target", sid,
                   "--ranking", "vector")
    assert forced.rc == 7 and forced.code == "EMBEDDING_UNAVAILABLE"
    ws = q.cli("working-set", "--session-id", sid, "--anchor-text", "cat chases",
               "--recency-count", "1")
    assert ws.rc == 0 and ws.out["store"] == "file", ws.stdout
    assert ws.data["ranking"] == "bm25" and "ranking by BM25" in ws.stderr
    assert ids_of(ws.data["closest"]) == hits and ids_of(ws.data["recent"]) == [ids[4]]
    assert [m["score"] for m in ws.data["closest"]] == \
        [m["score"] for m in found.data["matches"]]
    forced = q.cli("working-set", "--session-id", sid, "--anchor-text", "cat",
                   "--ranking", "vector")
    assert forced.rc == 7 and forced.code == "EMBEDDING_UNAVAILABLE"
    # an anchor message with a stored vector needs no embedder
    by_msg = q.cli("working-set", "--session-id", sid, "--anchor-message-id", ids[0])
    assert by_msg.rc == 0 and by_msg.out["store"] == "file"
    assert set(ids_of(by_msg.data["closest"])) == {ids[2], ids[4]}
    assert "ranking" not in by_msg.data
    assert q.cli("embed").rc == 0  # nothing missing: the embedder is not needed
    write_texts(q, sid, ["one more cat"], embed=True)  # embedder down: .msg alone, exit 0
    missing = q.cli("embed")
    assert missing.rc == 7 and missing.out["error"]["details"]["remaining"] == 1
    (tmp_path / "bare").mkdir()
    none = make_project(tmp_path / "bare")  # no configuration at all
    write_texts(none, "s", ["plain cat"], embed=True)
    assert emb_files(none, "s") == []
    bare = none.cli("search", "--query", "cat", "--scope", "all_projects")
    assert bare.rc == 0 and bare.data["ranking"] == "bm25" and bare.data["total"] == 1
    assert none.cli("embed").rc == 7
