"""Forgetting on the reference logger (message_delete, messages_mark_for_deletion), what soft
deletion hides and shows, and the info command; through the real client over loopback HTTP."""

from __future__ import annotations

import itertools

from fleet_helpers import append, import_fast, item, new_id, open_session, refused, run

from agent_memory.outbox import contract

TEXTS = ["the cat sleeps on the warm mat", "my cat chases a red ball",
         "a dog and a cat share the garden", "rain is expected tomorrow morning"]


def _ids(page: dict, key: str = "messages") -> list[str]:
    return [m["message_id"] for m in page["data"][key]]


def test_soft_delete_hides_from_ordinary_reads_and_shows_where_decided(fleet,
                                                                       unique_session_id):
    sid = unique_session_id

    async def go():
        async with fleet.logger_client() as c:
            await open_session(c, sid)
            ids = [(await append(c, sid, t))["data"]["message_id"] for t in TEXTS]
            gone = ids[1]
            reply = (await append(c, sid, "a reply to the ball", relations=[
                {"to_message_id": gone, "kind": "reply"}]))["data"]["message_id"]
            answers = [await c.message_delete(gone, "soft"), await c.message_delete(gone, "soft")]
            out = {
                "answers": answers,
                "journal": await c.messages_read(sid, 0),
                "full": await c.messages_read(sid, 0, mode="full"),
                "shown": await c.messages_read(sid, 0, show_deleted=True),
                "preview": await c.messages_read(session_id=sid, mode="preview"),
                "preview_all": await c.messages_read(session_id=sid, mode="preview",
                                                     show_deleted=True),
                "search": await c.message_search("cat", "session", sid),
                "working_set": await c.working_set(sid, anchor_text="cat ball",
                                                   similarity_count=10),
                "from_anchor": await c.working_set(sid, anchor_message_id=ids[0]),
                "get": await c.message_get(gone),
                "relations": await c.relations_read(sid),
                "graph": await c.graph_read(sid, ids[1]),
                "refusals": [
                    await refused(c.working_set(sid, anchor_message_id=gone)),
                    await refused(append(c, sid, "x", relations=[{"to_message_id": gone,
                                                                  "kind": "influence"}])),
                    await refused(append(c, sid, "x", corrects_message_id=gone)),
                ],
                "imported": await import_fast(c, [item(sid, "imported", corrects_message_id=gone)]),
            }
            return ids, gone, reply, out

    ids, gone, reply, out = run(go())
    assert out["answers"] == [{"success": True, "data": {"message_id": gone, "mode": "soft",
                                                         "deleted": True}}] * 2
    visible = [ids[0], ids[2], ids[3], reply]
    assert _ids(out["journal"]) == visible == _ids(out["full"])
    shown = out["shown"]["data"]["messages"]
    assert [m["message_id"] for m in shown] == ids + [reply]
    assert [m["soft_deleted"] for m in shown] == [False, True, False, False, False]
    assert _ids(out["preview"], "entries") == visible
    flags = {e["message_id"]: e["soft_deleted"] for e in out["preview_all"]["data"]["entries"]}
    assert flags[gone] is True and len(flags) == 5
    found = [m["message"]["message_id"] for m in out["search"]["data"]["matches"]]
    assert ids[0] in found and gone not in found
    ws = out["working_set"]["data"]
    assert gone not in [e["message"]["message_id"] for e in ws["recent"] + ws["closest"]]
    assert ws["recent"][0]["message"]["message_id"] == reply and len(ws["recent"]) == 4
    anchored = out["from_anchor"]["data"]
    assert gone not in [e["message"]["message_id"] for e in anchored["closest"]]
    assert out["get"]["data"]["soft_deleted"] is True and out["get"]["data"]["text"] == TEXTS[1]
    # the structural reads keep the whole structure, each entry with its flag
    assert out["relations"]["data"]["relations"] == [
        {"from_message_id": reply, "to_message_id": gone, "kind": "reply"}]
    assert [(n["message_id"], n["soft_deleted"]) for n in out["graph"]["data"]["nodes"]] == [
        (gone, True), (reply, False)]
    assert [e.code for e in out["refusals"]] == ["ANCHOR_INADMISSIBLE", "MESSAGE_DELETED",
                                                 "MESSAGE_DELETED"]
    assert out["imported"][0]["success"] is False
    assert out["imported"][0]["code"] == "MESSAGE_DELETED"


def test_resolved_mode_ignores_soft_deleted_chain_members(fleet, unique_session_id):
    """For every choice of hidden messages, the resolved journal is exactly
    contract.resolve_corrections over the visible entries (all of them with show_deleted)."""
    sid = unique_session_id

    async def go():
        async with fleet.logger_client() as c:
            await open_session(c, sid)
            root = (await append(c, sid, "teh first"))["data"]["message_id"]
            other = (await append(c, sid, "unrelated"))["data"]["message_id"]
            fix1 = (await append(c, sid, "the first", corrects_message_id=root))["data"]
            fix2 = (await append(c, sid, "the first one", corrects_message_id=fix1["message_id"],
                                 attributes={"v": 3}))["data"]
            ids = [root, other, fix1["message_id"], fix2["message_id"]]
            checks = []
            for size in range(len(ids) + 1):
                for hidden in itertools.combinations(ids, size):
                    if hidden:
                        assert await c.mark_messages_for_deletion(list(hidden), True) == {
                            "success": True, "data": True}
                    everything = (await c.messages_read(sid, 0, mode="full",
                                                        show_deleted=True))["data"]["messages"]
                    resolved = (await c.messages_read(sid, 0))["data"]["messages"]
                    revealed = (await c.messages_read(sid, 0, show_deleted=True)
                                )["data"]["messages"]
                    path = (await c.path_read(sid, fix2["message_id"]))["data"]["path"]
                    checks.append((hidden, everything, resolved, revealed, path))
                    if hidden:
                        await c.mark_messages_for_deletion(list(hidden), False)
            return ids, checks

    ids, checks = run(go())
    assert len(checks) == 16
    for hidden, everything, resolved, revealed, path in checks:
        visible = [e for e in everything if not e["soft_deleted"]]
        assert resolved == contract.resolve_corrections(visible), hidden
        assert revealed == contract.resolve_corrections(everything), hidden
        assert {e["message_id"] for e in everything if e["soft_deleted"]} == set(hidden)
        if not hidden:  # the path shows the chain's final version at its root
            assert path[0]["message_id"] == ids[0] and path[0]["text"] == "the first one"
    # two cases spelled out: a hidden final version, and a hidden middle member
    by_hidden = {h: r for h, _e, r, _v, _p in checks}
    final_hidden = by_hidden[(ids[3],)]
    assert [(m["message_id"], m["text"]) for m in final_hidden] == [
        (ids[0], "the first"), (ids[1], "unrelated")]
    middle_hidden = by_hidden[(ids[2],)]
    assert [(m["message_id"], m["text"]) for m in middle_hidden] == [
        (ids[0], "teh first"), (ids[1], "unrelated"), (ids[3], "the first one")]


def test_mark_is_all_or_nothing_and_answers_a_boolean(fleet, unique_session_id):
    sid = unique_session_id

    async def go():
        async with fleet.logger_client() as c:
            await open_session(c, sid)
            a, b = [(await append(c, sid, t))["data"]["message_id"] for t in TEXTS[:2]]
            mark = c.mark_messages_for_deletion
            failed = [await mark([a, b, new_id()], True), await mark([], True),
                      await mark([a, a], True), await mark([a, "not-a-uuid"], True),
                      await mark([a, 7], True)]
            after_failed = (await c.messages_read(sid, 0))["data"]["messages"]
            marked = [await mark([a, b], True), await mark([b, a], True)]
            after_mark = (await c.messages_read(sid, 0))["data"]["messages"]
            flags = [(await c.message_get(m))["data"]["soft_deleted"] for m in (a, b)]
            partly = await mark([a, new_id()], False)
            still = (await c.messages_read(sid, 0))["data"]["messages"]
            unmarked = await mark([a, b], False)
            restored = (await c.messages_read(sid, 0))["data"]["messages"]
            refusals = [
                await refused(c.call("messages_mark_for_deletion", {"message_ids": [a]})),
                await refused(c.call("messages_mark_for_deletion", {
                    "message_ids": [a], "marked_for_deletion": True, "why": "x"})),
                await refused(c.call("messages_mark_for_deletion", {
                    "message_ids": a, "marked_for_deletion": True})),
                await refused(c.call("messages_mark_for_deletion", {
                    "message_ids": [a], "marked_for_deletion": "yes"})),
            ]
            return (a, b, failed, after_failed, marked, after_mark, flags, partly, still,
                    unmarked, restored, refusals)

    (a, b, failed, after_failed, marked, after_mark, flags, partly, still, unmarked, restored,
     refusals) = run(go())
    assert failed == [{"success": False, "data": False}] * 5
    assert [m["message_id"] for m in after_failed] == [a, b]
    assert marked == [{"success": True, "data": True}] * 2  # a repeat is a success
    assert after_mark == [] and flags == [True, True]
    assert partly == {"success": False, "data": False} and still == []
    assert unmarked == {"success": True, "data": True}
    assert [m["message_id"] for m in restored] == [a, b]
    assert [m["soft_deleted"] for m in restored] == [False, False]
    assert [e.code for e in refusals] == ["REQUEST_PARAMETER_MISSING",
                                          "REQUEST_PARAMETER_UNKNOWN",
                                          "REQUEST_PARAMETER_TYPE", "REQUEST_PARAMETER_TYPE"]


def test_hard_delete_removes_only_unreferenced_messages(fleet, unique_session_id):
    sid = unique_session_id

    async def go():
        async with fleet.logger_client() as c:
            await open_session(c, sid)
            q = (await append(c, sid, "the cat question"))["data"]["message_id"]
            a = (await append(c, sid, "the cat answer", relations=[
                {"to_message_id": q, "kind": "reply"}]))["data"]["message_id"]
            fix = (await append(c, sid, "the cat answer, fixed",
                                corrects_message_id=a))["data"]["message_id"]
            await c.message_delete(fix, "soft")  # a soft-deleted referrer still refers
            refusals = [await refused(c.message_delete(q, "hard")),
                        await refused(c.message_delete(a, "hard"))]
            deleted = [await c.message_delete(fix, "hard"), await c.message_delete(a, "hard")]
            gone = [await refused(c.message_get(fix)), await refused(c.message_get(a)),
                    await refused(c.message_delete(a, "hard")),
                    await refused(c.message_delete(a, "soft"))]
            relations = (await c.relations_read(sid))["data"]["relations"]
            later = (await append(c, sid, "after the deletes"))["data"]
            journal = (await c.messages_read(sid, 0, mode="full", show_deleted=True)
                       )["data"]["messages"]
            search = (await c.message_search("cat answer", "session", sid))["data"]
            q_deleted = await c.message_delete(q, "hard")
            bad = [await refused(c.message_delete(new_id(), "soft")),
                   await refused(c.message_delete(q, "sideways")),
                   await refused(c.message_delete("not-a-uuid", "soft")),
                   await refused(c.call("message_delete", {"message_id": q})),
                   await refused(c.call("message_delete", {"message_id": q, "mode": "soft",
                                                           "why": "x"}))]
            return (q, a, fix, refusals, deleted, gone, relations, later, journal, search,
                    q_deleted, bad)

    (q, a, fix, refusals, deleted, gone, relations, later, journal, search, q_deleted,
     bad) = run(go())
    assert [e.code for e in refusals] == ["MESSAGE_REFERENCED", "MESSAGE_REFERENCED"]
    assert [d["data"] for d in deleted] == [{"message_id": fix, "mode": "hard", "deleted": True},
                                           {"message_id": a, "mode": "hard", "deleted": True}]
    assert [e.code for e in gone] == ["MESSAGE_UNKNOWN"] * 4
    assert relations == []  # a's reply and fix's correction went with them
    assert later["sequence_number"] == 3  # nothing renumbered, no number reused
    assert [(m["message_id"], m["sequence_number"]) for m in journal] == [
        (q, 0), (later["message_id"], 3)]
    found = [m["message"]["message_id"] for m in search["matches"]]
    assert q in found and a not in found and fix not in found
    assert q_deleted["data"] == {"message_id": q, "mode": "hard", "deleted": True}
    assert [e.code for e in bad] == ["MESSAGE_UNKNOWN", "REQUEST_PARAMETER_VALUE",
                                     "REQUEST_PARAMETER_VALUE", "REQUEST_PARAMETER_MISSING",
                                     "REQUEST_PARAMETER_UNKNOWN"]


def test_info_table_of_contents_sections_and_refusals(fleet):
    async def go():
        async with fleet.logger_client() as c:
            return (await c.info(), await c.info("limits"), await c.info("service"),
                    await c.info("codes"), await refused(c.info("nope")),
                    await refused(c.call("info", {"section": "limits", "why": "x"})),
                    await refused(c.call("info", {"section": 3})))

    toc, limits, service, codes, unknown, extra, typed = run(go())
    assert toc == {"success": True, "data": {"sections": list(contract.INFO_SECTIONS)}}
    assert limits["data"] == contract.info("limits", "reference-logger")
    assert limits["data"]["content"]["max_graph_depth"] == contract.MAX_GRAPH_DEPTH
    assert service["data"] == {"section": "service", "content": {"name": "reference-logger"}}
    assert "MESSAGE_REFERENCED" in codes["data"]["content"]
    assert unknown.code == "INFO_SECTION_UNKNOWN" and unknown.command == "info"
    assert (extra.code, typed.code) == ("REQUEST_PARAMETER_UNKNOWN", "REQUEST_PARAMETER_TYPE")
