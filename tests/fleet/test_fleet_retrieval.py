"""message_search and working_set of the reference logger: closeness through the embedder."""

from __future__ import annotations

import pytest

from fleet_helpers import append, import_fast, item, open_session, refused, run

TEXTS = ["the cat sleeps on the warm mat", "stock prices fell sharply today",
         "my cat chases a red ball", "rain is expected tomorrow morning",
         "a dog and a cat share the garden"]


async def _session_with_texts(c, sid, project="proj"):
    await open_session(c, sid, project=project)
    return [(await append(c, sid, t))["data"]["message_id"] for t in TEXTS]


def test_working_set_gives_recent_by_arrival_and_closest_by_meaning(fleet, unique_session_id):
    sid = unique_session_id

    async def go():
        async with fleet.logger_client() as c:
            ids = await _session_with_texts(c, sid)
            by_text = await c.working_set(sid, anchor_text="cat", recency_count=2,
                                          similarity_count=3)
            by_message = await c.working_set(sid, anchor_message_id=ids[0], recency_count=0,
                                             similarity_count=2)
            return ids, by_text["data"], by_message["data"]

    ids, by_text, by_message = run(go())
    assert by_text["session_id"] == sid and by_text["anchor_text"] == "cat"
    assert [e["message"]["message_id"] for e in by_text["recent"]] == [ids[4], ids[3]]
    assert {e["criterion"] for e in by_text["recent"]} == {"recency"}
    closest = by_text["closest"]
    assert {e["message"]["message_id"] for e in closest} == {ids[0], ids[2], ids[4]}
    assert all(e["criterion"] == "similarity" for e in closest)
    scores = [e["score"] for e in closest]
    assert scores == sorted(scores, reverse=True) and scores[-1] > 0
    assert by_message["anchor_text"] == TEXTS[0] and by_message["recent"] == []
    assert ids[0] not in [e["message"]["message_id"] for e in by_message["closest"]]
    assert by_message["closest"][0]["message"]["message_id"] in (ids[2], ids[4])


def test_working_set_refusals(fleet, unique_session_id):
    sid, other = unique_session_id, unique_session_id + "-o"

    async def go():
        async with fleet.logger_client() as c:
            await open_session(c, sid)
            await open_session(c, other)
            foreign = (await append(c, other, "elsewhere"))["data"]["message_id"]
            return [
                await refused(c.working_set("t-never-opened", anchor_text="x")),
                await refused(c.working_set(sid)),
                await refused(c.working_set(sid, anchor_text="x", anchor_message_id=foreign)),
                await refused(c.working_set(sid, anchor_message_id=foreign)),
                await refused(c.working_set(sid, anchor_text="x", recency_count=10**6)),
                await refused(c.working_set(sid, anchor_text="x", similarity_count=10**6)),
            ]

    assert [e.code for e in run(go())] == [
        "SESSION_UNKNOWN", "REQUEST_PARAMETER_MISSING", "ANCHOR_INADMISSIBLE",
        "ANCHOR_INADMISSIBLE", "CEILING_EXCEEDED", "CEILING_EXCEEDED"]


def test_search_scopes_paging_and_filters(fleet, unique_session_id):
    sid, sid2 = unique_session_id, unique_session_id + "-2"
    project = "proj-" + unique_session_id

    async def go():
        async with fleet.logger_client() as c:
            ids = await _session_with_texts(c, sid, project)
            await open_session(c, sid2, project=project)
            other = (await import_fast(c, [item(sid2, "the cat of the other session",
                                                sender_kind="model", priority=2)]))[0]
            session = await c.message_search("cat", "session", sid)
            project_wide = await c.message_search("cat", "project", project)
            page1 = await c.message_search("cat", "project", project, page_size=2)
            page2 = await c.message_search("cat", "project", project, page_size=2,
                                           page_offset=page1["data"]["next_offset"])
            beyond = await c.message_search("cat", "project", project, page_offset=100)
            filtered = await c.message_search("cat", "project", project,
                                              filters={"sender_kind": "model", "priority": 2})
            everywhere = await c.message_search("cat garden", "all_projects", page_size=500)
            return ids, other, session, project_wide, page1, page2, beyond, filtered, everywhere

    ids, other, session, project_wide, page1, page2, beyond, filtered, everywhere = run(go())
    hits = session["data"]["matches"]
    assert {h["message"]["message_id"] for h in hits} == {ids[0], ids[2], ids[4]}
    assert set(hits[0]) == {"message", "session_id", "project_id", "score"}
    assert hits[0]["session_id"] == sid and hits[0]["project_id"] == project
    order = [(-h["score"], h["message"]["message_id"]) for h in hits]
    assert order == sorted(order)
    assert project_wide["data"]["total"] == 4 and project_wide["data"]["more"] is False
    assert project_wide["data"]["next_offset"] is None
    assert page1["data"]["more"] is True and page1["data"]["next_offset"] == 2
    assert page1["data"]["matches"] + page2["data"]["matches"] == project_wide["data"]["matches"]
    assert beyond["data"]["matches"] == [] and beyond["data"]["total"] == 4
    assert [h["message"]["message_id"] for h in filtered["data"]["matches"]] == [
        other["message_id"]]
    assert ids[4] in [h["message"]["message_id"] for h in everywhere["data"]["matches"]]


def test_search_resolved_mode_delivers_the_final_version_once(fleet, unique_session_id):
    sid = unique_session_id

    async def go():
        async with fleet.logger_client() as c:
            await open_session(c, sid)
            root = (await append(c, sid, "zebra crossing"))["data"]["message_id"]
            await append(c, sid, "zebra crossing corrected", corrects_message_id=root)
            resolved = await c.message_search("zebra", "session", sid)
            full = await c.message_search("zebra", "session", sid, mode="full")
            return root, resolved["data"], full["data"]

    root, resolved, full = run(go())
    assert resolved["total"] == 1 and full["total"] == 2
    hit = resolved["matches"][0]["message"]
    assert hit["message_id"] == root and hit["text"] == "zebra crossing corrected"


@pytest.mark.parametrize("kwargs, code", [
    ({"scope": "session", "scope_target": "t-never-opened"}, "SCOPE_SESSION_UNKNOWN"),
    ({"scope": "project", "scope_target": "no-such-project"}, "SCOPE_PROJECT_UNKNOWN"),
    ({"scope": "all_projects", "scope_target": "x"}, "REQUEST_PARAMETER_VALUE"),
    ({"scope": "session"}, "REQUEST_PARAMETER_MISSING"),
    ({"scope": "galaxy"}, "REQUEST_PARAMETER_VALUE"),
    ({"scope": "all_projects", "filters": {"colour": "red"}}, "FILTER_AXIS_REFUSED"),
    ({"scope": "all_projects", "page_size": 10**6}, "CEILING_EXCEEDED"),
    ({"scope": "all_projects", "query_text": ""}, "REQUEST_PARAMETER_VALUE"),
])
def test_search_refusals(fleet, kwargs, code):
    kwargs = dict(kwargs)
    query = kwargs.pop("query_text", "cat")

    async def go():
        async with fleet.logger_client() as c:
            return await refused(c.message_search(query, **kwargs))

    refusal = run(go())
    assert refusal.code == code and refusal.command == "message_search"


@pytest.mark.slow
def test_a_fleet_on_minilm_finds_meaning_without_shared_words(fleet_factory, unique_session_id):
    from ops.fleet.embedder import minilm

    if minilm.unavailable_reason() is not None:
        pytest.skip(minilm.unavailable_reason())
    fleet = fleet_factory(embed_model="all-MiniLM-L6-v2")
    sid = unique_session_id

    async def go():
        async with fleet.logger_client() as c:
            await open_session(c, sid)
            kitten = (await append(c, sid, "A kitten is lying on a rug."))["data"]["message_id"]
            await append(c, sid, "Stock markets fell sharply today.")
            return kitten, (await c.message_search("The cat sits on the mat.", "session",
                                                   sid))["data"]

    kitten, found = run(go())
    assert found["matches"][0]["message"]["message_id"] == kitten
    assert found["matches"][0]["score"] > 0.5
