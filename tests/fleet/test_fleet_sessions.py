"""Session commands of the reference logger through the real ailogger-client."""

from __future__ import annotations

from fleet_helpers import KINDS, append, open_session, refused, run


def test_open_close_reopen_answer_identity_and_lifecycle(fleet, unique_session_id):
    sid = unique_session_id

    async def go():
        async with fleet.logger_client() as c:
            opened = await open_session(c, sid, title="t", metadata={"k": [1]})
            again = await open_session(c, sid, title="t", metadata={"k": [1]})
            closed = await c.close_session(sid)
            closed_again = await c.close_session(sid)
            reopened = await c.reopen_session(sid)
            return opened, again, closed, closed_again, reopened

    opened, again, closed, closed_again, reopened = run(go())
    assert opened == {"success": True, "data": {"session_id": sid, "lifecycle": "open"}}
    assert again == opened
    assert closed["data"] == {"session_id": sid, "lifecycle": "closed"} == closed_again["data"]
    assert reopened["data"] == {"session_id": sid, "lifecycle": "open"}


def test_session_refusals_have_stable_codes(fleet, unique_session_id):
    sid = unique_session_id

    async def go():
        async with fleet.logger_client() as c:
            await open_session(c, sid)
            return [
                await refused(c.open_session(sid, "other-project", KINDS, ["alice", "gpt"])),
                await refused(c.close_session("t-never-opened")),
                await refused(c.reopen_session("t-never-opened")),
                await refused(c.delete_session("t-never-opened")),
                await refused(c.open_session("bad id/with slash", "p", KINDS, ["a"])),
                await refused(c.open_session(sid + "x", "p", ("human", "alien"), ["a"])),
                await refused(c.open_session(sid + "y", "p", KINDS, [])),
            ]

    codes = [(e.code, e.command) for e in run(go())]
    assert codes == [("SESSION_CONFLICT", "open_session"), ("SESSION_UNKNOWN", "close_session"),
                     ("SESSION_UNKNOWN", "reopen_session"), ("SESSION_UNKNOWN", "delete_session"),
                     ("REQUEST_PARAMETER_VALUE", "open_session"),
                     ("REQUEST_PARAMETER_VALUE", "open_session"),
                     ("REQUEST_PARAMETER_VALUE", "open_session")]


def test_closed_session_refuses_messages_until_reopened(fleet, unique_session_id):
    sid = unique_session_id

    async def go():
        async with fleet.logger_client() as c:
            await open_session(c, sid)
            await c.close_session(sid)
            refusal = await refused(append(c, sid, "while closed"))
            await c.reopen_session(sid)
            accepted = await append(c, sid, "after reopening")
            return refusal, accepted

    refusal, accepted = run(go())
    assert refusal.code == "SESSION_CLOSED" and refusal.command == "append_message"
    assert accepted["data"]["sequence_number"] == 0


def test_delete_session_removes_messages_relations_and_vectors(fleet, unique_session_id):
    sid = unique_session_id

    async def go():
        async with fleet.logger_client() as c:
            await open_session(c, sid)
            first = (await append(c, sid, "first words"))["data"]["message_id"]
            await append(c, sid, "second words", relations=[{"to_message_id": first,
                                                             "kind": "reply"}])
            await c.working_set(sid, anchor_text="words")  # makes sure vectors exist
            deleted = await c.delete_session(sid)
            gone = await refused(c.message_get(first))
            unknown = await refused(c.messages_read(sid, 0))
            reopen = await open_session(c, sid)  # the id is free again
            return deleted, gone, unknown, reopen

    deleted, gone, unknown, reopen = run(go())
    assert deleted["data"] == {"session_id": sid, "deleted": True, "messages_removed": 2,
                               "relations_removed": 1, "vectors_removed": 2}
    assert gone.code == "MESSAGE_UNKNOWN" and unknown.code == "SESSION_UNKNOWN"
    assert reopen["data"]["lifecycle"] == "open"


def test_sessions_list_filters_and_pages_each_session_exactly_once(fleet, unique_session_id):
    project = "proj-" + unique_session_id
    ids = [f"{unique_session_id}-{i}" for i in range(5)]

    async def go():
        async with fleet.logger_client() as c:
            for i, sid in enumerate(ids):
                kinds = ("model", "model") if i == 4 else KINDS
                await c.open_session(sid, project, kinds, ["alice", f"bot{i}"])
            await c.close_session(ids[0])
            pages, token = [], None
            while True:
                page = await c.sessions_list(project_id=project, block_size=2,
                                             continuation=token)
                pages.append(page["data"])
                token = page["data"]["continuation"]
                if not page["data"]["more"]:
                    break
            closed = await c.sessions_list(project_id=project, lifecycle="closed")
            m2m = await c.sessions_list(project_id=project, dialogue_kind="model-to-model")
            bot3 = await c.sessions_list(participant="bot3", project_id=project)
            none = await c.sessions_list(project_id=project + "-nothing")
            ranged = await c.sessions_list(project_id=project,
                                           created_at_range={"from": "2000-01-01T00:00:00Z"})
            empty_range = await c.sessions_list(project_id=project,
                                                created_at_range={"to": "2000-01-01T00:00:00Z"})
            return pages, closed, m2m, bot3, none, ranged, empty_range

    pages, closed, m2m, bot3, none, ranged, empty_range = run(go())
    listed = [s["session_id"] for p in pages for s in p["sessions"]]
    assert listed == ids and [len(p["sessions"]) for p in pages] == [2, 2, 1]
    entry = pages[0]["sessions"][1]
    assert set(entry) == {"session_id", "project_id", "lifecycle", "dialogue_kind",
                          "participants", "created_at"}
    assert entry["dialogue_kind"] == "human-to-model" and entry["project_id"] == project
    assert [s["session_id"] for s in closed["data"]["sessions"]] == [ids[0]]
    assert [s["session_id"] for s in m2m["data"]["sessions"]] == [ids[4]]
    assert [s["session_id"] for s in bot3["data"]["sessions"]] == [ids[3]]
    assert none["data"] == {"sessions": [], "more": False, "continuation": None}
    assert len(ranged["data"]["sessions"]) == 5 and empty_range["data"]["sessions"] == []
