"""Offline write then local working-set and search; the same messages imported into the
reference logger answer the same closest group, same order (same hash model both sides)."""

from __future__ import annotations

import pytest

from amtest import open_args
from vtest import TEXTS, emb_files, ids_of, read_emb, scores_of, write_texts


def test_write_adds_the_vector_beside_the_message(synced_project, unique_session_id):
    p, sid = synced_project, unique_session_id
    [mid] = write_texts(p, sid, ["the cat sleeps"], embed=True)
    [emb] = emb_files(p, sid)
    record = read_emb(p, sid, emb)
    assert record["message_id"] == mid and emb.endswith(f"{mid}.emb")
    assert record["model"] == "hash-1024" and record["dimension"] == 1024
    assert len(record["embedding"]) == 1024
    assert abs(sum(x * x for x in record["embedding"]) - 1.0) < 1e-9
    assert oct(__import__("os").stat(f"{p.store}/{sid}/{emb}").st_mode & 0o777) == "0o600"
    got = p.cli("--store", "file", "get", mid)
    assert got.data["vectorization_state"] == "vectorized"


def test_local_working_set_and_search_offline(synced_project, unique_session_id):
    p, sid = synced_project, unique_session_id
    assert p.cli("--store", "file", *open_args(sid, project_id="vproj")).rc == 0
    ids = write_texts(p, sid, TEXTS[:5])
    assert emb_files(p, sid) == []
    embedded = p.cli("embed")
    assert embedded.rc == 0 and embedded.data["written"] == 5, embedded.stdout
    assert embedded.data["remaining"] == 0 and len(emb_files(p, sid)) == 5
    ws = p.cli("--store", "file", "working-set", "--session-id", sid, "--anchor-text", "cat",
               "--recency-count", "2", "--similarity-count", "3")
    assert ws.rc == 0 and ws.out["store"] == "file", ws.stdout
    data = ws.data
    assert data["session_id"] == sid and data["anchor_text"] == "cat"
    assert ids_of(data["recent"]) == [ids[4], ids[3]]
    assert {e["criterion"] for e in data["recent"]} == {"recency"}
    assert set(ids_of(data["closest"])) == {ids[0], ids[2], ids[4]}
    assert scores_of(data["closest"]) == sorted(scores_of(data["closest"]), reverse=True)
    by_msg = p.cli("--store", "file", "working-set", "--session-id", sid,
                   "--anchor-message-id", ids[0], "--recency-count", "0").data
    assert by_msg["anchor_text"] == TEXTS[0] and by_msg["recent"] == []
    assert ids[0] not in ids_of(by_msg["closest"])
    found = p.cli("--store", "file", "search", "--query", "cat", "--scope", "project",
                  "--target", "vproj", "--page-size", "2")
    assert found.rc == 0 and found.out["store"] == "file"
    assert found.data["total"] == 3 and found.data["more"] is True
    assert found.data["next_offset"] == 2 and len(found.data["matches"]) == 2
    first = found.data["matches"][0]
    assert set(first) == {"message", "session_id", "project_id", "score"}
    assert first["session_id"] == sid and first["project_id"] == "vproj"
    assert "ranking" not in found.data
    rest = p.cli("--store", "file", "search", "--query", "cat", "--scope", "session",
                 "--target", sid, "--offset", "2").data
    assert rest["more"] is False and rest["next_offset"] is None and len(rest["matches"]) == 1
    unknown = p.cli("--store", "file", "search", "--query", "cat", "--scope", "session",
                    "--target", "t-nowhere")
    assert unknown.rc == 1 and unknown.code == "SCOPE_SESSION_UNKNOWN"
    unknown = p.cli("--store", "file", "search", "--query", "cat", "--scope", "project",
                    "--target", "nowhere")
    assert unknown.rc == 1 and unknown.code == "SCOPE_PROJECT_UNKNOWN"
    usage = p.cli("--store", "file", "search", "--query", "cat", "--scope", "all_projects",
                  "--target", "x")
    assert usage.rc == 2
    usage = p.cli("--store", "file", "working-set", "--session-id", sid)
    assert usage.rc == 2
    ceiling = p.cli("--store", "file", "working-set", "--session-id", sid, "--anchor-text", "x",
                    "--similarity-count", "100000")
    assert ceiling.rc == 2 and ceiling.code == "CEILING_EXCEEDED"


def _compare(p, args):
    local = p.cli("--store", "file", *args)
    remote = p.cli("--store", "logger", *args)
    assert local.rc == 0 and remote.rc == 0, (local.stdout, remote.stdout)
    assert local.out["store"] == "file" and remote.out["store"] == "logger"
    return local.data, remote.data


@pytest.mark.slow
def test_closest_group_agrees_with_the_logger_after_import(synced_project, unique_session_id):
    p, sid = synced_project, unique_session_id
    assert p.cli("--store", "file", *open_args(sid, project_id=f"agree-{sid}")).rc == 0
    ids = write_texts(p, sid, TEXTS)
    # duplicates tie exactly: the tiebreak on message id decides on both sides
    ids += write_texts(p, sid, [TEXTS[0], TEXTS[2]])
    ids += write_texts(p, sid, ["the tool answered about cat toys"], "--sender-kind", "tool")
    # a correction chain: resolved mode keeps one hit per chain
    ids += write_texts(p, sid, ["correction: the cat sleeps on the sofa"], "--corrects", ids[0])
    assert p.cli("embed").data["written"] == len(ids)
    sync = p.cli("sync")
    assert sync.rc == 0 and sync.data["totals"]["imported"] == len(ids), sync.stdout
    assert p.final_files(sid) == []  # .msg and .emb moved to .imported/
    assert len(emb_files(p, sid, ".imported")) == len(ids)

    anchors = (["--anchor-text", "cat garden rain"], ["--anchor-message-id", ids[2]],
               ["--anchor-message-id", ids[0]])
    searches = ([], ["--sender-kind", "tool"], ["--page-size", "3", "--offset", "2"])
    for mode in ("resolved", "full"):
        for anchor in (anchors if mode == "resolved" else anchors[2:]):
            local, remote = _compare(p, ["working-set", "--session-id", sid, *anchor,
                                         "--recency-count", "4", "--similarity-count", "8",
                                         "--mode", mode])
            assert ids_of(local["closest"]) == ids_of(remote["closest"]), (mode, anchor)
            assert scores_of(local["closest"]) == pytest.approx(scores_of(remote["closest"]),
                                                                abs=1e-6)
            assert ids_of(local["recent"]) == ids_of(remote["recent"]), (mode, anchor)
            assert local["anchor_text"] == remote["anchor_text"]
            for mine, theirs in zip(local["closest"], remote["closest"]):
                assert mine["message"]["text"] == theirs["message"]["text"]
        for extra in (searches if mode == "resolved" else searches[:1]):
            local, remote = _compare(p, ["search", "--query", "the cat", "--scope", "session",
                                         "--target", sid, "--mode", mode, *extra])
            assert [m["message"]["message_id"] for m in local["matches"]] == \
                [m["message"]["message_id"] for m in remote["matches"]], (mode, extra)
            assert [m["score"] for m in local["matches"]] == \
                pytest.approx([m["score"] for m in remote["matches"]], abs=1e-6)
            assert (local["total"], local["more"], local["next_offset"]) == \
                (remote["total"], remote["more"], remote["next_offset"])
    local, remote = _compare(p, ["search", "--query", "prices today", "--scope", "project",
                                 "--target", f"agree-{sid}"])
    assert [m["message"]["message_id"] for m in local["matches"]] == \
        [m["message"]["message_id"] for m in remote["matches"]]
    assert [m["project_id"] for m in local["matches"]] == \
        [m["project_id"] for m in remote["matches"]]
