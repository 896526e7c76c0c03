"""Structural reads (relations, path, leaves, graph) and the preview of the reference logger,
through the real client over loopback HTTP.

The dialogue used throughout (arrival order; "->" is what a message continues from):

    q  "what is the plan"
    a  reply -> q              b  reply -> q            (q branches)
    t  tool-result -> a
    d  reply -> t, influence -> b
    e  corrects a              f  corrects e            (a branches: t, e)
"""

from __future__ import annotations

from fleet_helpers import append, import_fast, item, open_session, refused, run

from agent_memory.outbox import contract


async def _dialogue(c, sid: str) -> dict[str, str]:
    await open_session(c, sid)
    ids: dict[str, str] = {}

    async def say(name: str, text: str, **extra) -> None:
        ids[name] = (await append(c, sid, text, **extra))["data"]["message_id"]

    def rel(name: str, kind: str = "reply") -> dict[str, str]:
        return {"to_message_id": ids[name], "kind": kind}

    await say("q", "what is the plan")
    await say("a", "plan A", relations=[rel("q")])
    await say("b", "plan B", relations=[rel("q")])
    await say("t", "tool says A works", relations=[rel("a", "tool-result")])
    await say("d", "so A, as B suggested", relations=[rel("t"), rel("b", "influence")])
    await say("e", "plan A prime", corrects_message_id=ids["a"])
    await say("f", "plan A double prime", corrects_message_id=ids["e"])
    return ids


async def _entries(c, sid: str) -> dict[str, dict]:
    page = await c.messages_read(sid, 0, mode="full", show_deleted=True)
    return {m["message_id"]: m for m in page["data"]["messages"]}


async def _collect(read, key: str) -> tuple[list, list]:
    """Every item of a paged read, following its continuations; and the pages."""
    pages = [(await read(None))["data"]]
    while pages[-1]["more"]:
        pages.append((await read(pages[-1]["continuation"]))["data"])
    return [x for p in pages for x in p[key]], pages


def test_relations_path_and_leaves_of_a_branching_dialogue(fleet, unique_session_id):
    sid = unique_session_id

    async def go():
        async with fleet.logger_client() as c:
            ids = await _dialogue(c, sid)
            entries = await _entries(c, sid)
            relations, rel_pages = await _collect(
                lambda token: c.relations_read(sid, block_size=3, continuation=token),
                "relations")
            paths = {
                "d_full": (await c.path_read(sid, ids["d"], mode="full"))["data"],
                "d_resolved": (await c.path_read(sid, ids["d"]))["data"],
                "f_full": (await c.path_read(sid, ids["f"], mode="full"))["data"],
                "f_resolved": (await c.path_read(sid, ids["f"], mode="resolved"))["data"],
            }
            d_paged, _ = await _collect(
                lambda token: c.path_read(sid, ids["d"], block_size=1, continuation=token,
                                          mode="full"), "path")
            leaves = (await c.leaves_read(sid))["data"]
            leaves_paged, _ = await _collect(
                lambda token: c.leaves_read(sid, block_size=1, continuation=token), "nodes")
            return ids, entries, relations, rel_pages, paths, d_paged, leaves, leaves_paged

    ids, entries, relations, rel_pages, paths, d_paged, leaves, leaves_paged = run(go())
    link = lambda f, t, k: {"from_message_id": ids[f], "to_message_id": ids[t],  # noqa: E731
                            "kind": k}
    assert relations == [link("a", "q", "reply"), link("b", "q", "reply"),
                         link("t", "a", "tool-result"), link("d", "t", "reply"),
                         link("d", "b", "influence"), link("e", "a", "correction"),
                         link("f", "e", "correction")]
    assert [len(p["relations"]) for p in rel_pages] == [3, 3, 1]
    assert rel_pages[0]["continuation"] == "rel:3" and rel_pages[-1]["continuation"] is None

    full = lambda *names: [entries[ids[n]] for n in names]  # noqa: E731
    assert paths["d_full"] == {"session_id": sid, "node_id": ids["d"],
                               "path": full("d", "t", "a", "q"), "more": False,
                               "continuation": None}
    assert paths["f_full"]["path"] == full("f", "e", "a", "q")
    resolved_a = {**entries[ids["a"]], "text": "plan A double prime",
                  "resolved_from": ids["f"]}
    assert paths["d_resolved"]["path"] == full("d", "t") + [resolved_a] + full("q")
    # a correcting node stands for its chain: the walk starts at the chain's root
    assert paths["f_resolved"]["path"] == [resolved_a] + full("q")
    assert d_paged == full("d", "t", "a", "q")

    assert leaves == {"session_id": sid, "more": False, "continuation": None, "nodes": [
        {"message_id": ids["q"], "role": "branching", "continuations": 2},
        {"message_id": ids["a"], "role": "branching", "continuations": 2},
        {"message_id": ids["d"], "role": "leaf", "continuations": 0},
        {"message_id": ids["f"], "role": "leaf", "continuations": 0}]}
    assert leaves_paged == leaves["nodes"]


def test_graph_levels_depths_and_paging(fleet, unique_session_id):
    sid = unique_session_id

    async def go():
        async with fleet.logger_client() as c:
            ids = await _dialogue(c, sid)
            entries = await _entries(c, sid)
            q = ids["q"]
            depths = {d: (await c.graph_read(sid, q, drilldown_depth=d))["data"]
                      for d in (0, 1, 2, 50)}
            default = (await c.graph_read(sid, q))["data"]
            from_b = (await c.graph_read(sid, ids["b"], drilldown_depth=5))["data"]
            nodes, pages = await _collect(
                lambda token: c.graph_read(sid, q, drilldown_depth=50, block_size=1,
                                           continuation=token), "nodes")
            token = pages[1]["continuation"]
            mismatch = [
                await refused(c.graph_read(sid, ids["a"], drilldown_depth=50, block_size=1,
                                           continuation=token)),
                await refused(c.graph_read(sid, q, drilldown_depth=2, block_size=1,
                                           continuation=token)),
                await refused(c.graph_read(sid, q, continuation="garbage")),
            ]
            return ids, entries, depths, default, from_b, nodes, pages, mismatch

    ids, entries, depths, default, from_b, nodes, pages, mismatch = run(go())
    name = {v: k for k, v in ids.items()}
    level = lambda data: [(name[n["message_id"]], n["level"]) for n in data["nodes"]]  # noqa
    assert level(depths[0]) == [("q", 0)] and depths[0]["relations"] == []
    assert level(depths[1]) == [("q", 0), ("a", 1), ("b", 1)]
    assert level(depths[2]) == [("q", 0), ("a", 1), ("b", 1), ("t", 2), ("d", 2), ("e", 2)]
    everything = [("q", 0), ("a", 1), ("b", 1), ("t", 2), ("d", 2), ("e", 2), ("f", 3)]
    assert level(depths[50]) == everything and depths[50]["more"] is False
    assert default["depth"] == contract.DEFAULT_GRAPH_DEPTH and level(default) == everything
    assert depths[1] == {
        "session_id": sid, "anchor_node_id": ids["q"], "depth": 1, "more": False,
        "continuation": None,
        "nodes": [{**entries[ids[n]], "level": lv} for n, lv in level(depths[1])],
        "relations": [{"from_message_id": ids[f], "to_message_id": ids["q"], "kind": "reply"}
                      for f in ("a", "b")]}
    # a relation is carried only when both ends are in the graph: d -> t is outside b's
    assert level(from_b) == [("b", 0), ("d", 1)]
    assert from_b["relations"] == [{"from_message_id": ids["d"], "to_message_id": ids["b"],
                                    "kind": "influence"}]
    # block_size 1: every node once, in the same order, with its own relations
    assert [(name[n["message_id"]], n["level"]) for n in nodes] == everything
    assert len(pages) == 7 and all(len(p["nodes"]) == 1 for p in pages)
    assert [len(p["relations"]) for p in pages] == [0, 1, 1, 1, 2, 1, 1]
    assert [e.code for e in mismatch] == ["CONTINUATION_MISMATCH", "CONTINUATION_MISMATCH",
                                          "CONTINUATION_INVALID"]


def test_structural_read_refusals(fleet, unique_session_id):
    sid, other = unique_session_id, unique_session_id + "-other"

    async def go():
        async with fleet.logger_client() as c:
            ids = await _dialogue(c, sid)
            await open_session(c, other)
            foreign = (await append(c, other, "elsewhere"))["data"]["message_id"]
            q = ids["q"]
            return [
                await refused(c.path_read(sid, foreign)),
                await refused(c.graph_read(sid, foreign)),
                await refused(c.path_read("t-never-opened", q)),
                await refused(c.leaves_read("t-never-opened")),
                await refused(c.graph_read("t-never-opened", q)),
                await refused(c.relations_read("t-never-opened")),
                await refused(c.call("graph_read", {"session_id": sid})),
                await refused(c.call("path_read", {"session_id": sid})),
                await refused(c.call("graph_read", {"session_id": sid, "anchor_node_id": q,
                                                    "mode": "full"})),
                await refused(c.call("leaves_read", {"session_id": sid, "mode": "full"})),
                await refused(c.call("relations_read", {"session_id": sid, "mode": "full"})),
                await refused(c.path_read(sid, q, mode="sideways")),
                await refused(c.path_read(sid, "not-a-uuid")),
                await refused(c.graph_read(sid, q, drilldown_depth=True)),
                await refused(c.graph_read(sid, q, drilldown_depth=-1)),
                await refused(c.graph_read(sid, q, drilldown_depth=contract.MAX_GRAPH_DEPTH + 1)),
                await refused(c.leaves_read(sid, block_size=0)),
                await refused(c.relations_read(sid, block_size=contract.MAX_BLOCK_SIZE + 1)),
                await refused(c.path_read(sid, q, continuation=f"path:{ids['a']}:1")),
                await refused(c.leaves_read(sid, continuation="rel:1")),
            ]

    assert [e.code for e in run(go())] == [
        "MESSAGE_UNKNOWN", "MESSAGE_UNKNOWN",
        "SESSION_UNKNOWN", "SESSION_UNKNOWN", "SESSION_UNKNOWN", "SESSION_UNKNOWN",
        "REQUEST_PARAMETER_MISSING", "REQUEST_PARAMETER_MISSING",
        "REQUEST_PARAMETER_UNKNOWN", "REQUEST_PARAMETER_UNKNOWN", "REQUEST_PARAMETER_UNKNOWN",
        "REQUEST_PARAMETER_VALUE", "REQUEST_PARAMETER_VALUE",
        "REQUEST_PARAMETER_TYPE", "REQUEST_PARAMETER_VALUE", "CEILING_EXCEEDED",
        "REQUEST_PARAMETER_VALUE", "CEILING_EXCEEDED",
        "CONTINUATION_MISMATCH", "CONTINUATION_INVALID"]


def test_preview_filters_order_and_paging(fleet, unique_session_id):
    sid, other = unique_session_id, unique_session_id + "-other"
    carol, dave = f"carol-{sid}", f"dave-{sid}"
    at = lambda day: f"2026-03-{day:02d}T12:00:00+02:00"  # noqa: E731
    items = [item(sid, f"message number {day} " + "x" * 300, occurred_at=at(day),
                  sender_identity=carol if day % 2 else dave,
                  receiver_identity=dave if day % 2 else carol)
             for day in (5, 1, 4, 2, 3)]
    items.append(item(other, "another session, same caller", occurred_at=at(3),
                      sender_identity=carol))

    async def go():
        async with fleet.logger_client() as c:
            await open_session(c, sid)
            await open_session(c, other)
            await import_fast(c, items)
            read = lambda **kw: c.messages_read(mode="preview", **kw)  # noqa: E731
            return {
                "all": (await read(session_id=sid))["data"],
                "carol": (await read(session_id=sid, caller_id=carol))["data"],
                "to_carol": (await read(recipient_id=carol))["data"],
                "carol_anywhere": (await read(caller_id=carol))["data"],
                "period": (await read(session_id=sid, period_start="2026-03-02T10:00:00Z",
                                      period_end=at(4)))["data"],
                "empty_filters": (await read(session_id=sid, caller_id="",
                                             period_start=""))["data"],
                "page": (await read(session_id=sid, page_size=2, page_offset=1,
                                    preview_size=9))["data"],
                "past": (await read(session_id=sid, page_size=2, page_offset=3))["data"],
                "bad_period": await refused(read(session_id=sid, period_end="yesterday")),
                "bad_size": await refused(read(session_id=sid,
                                               page_size=contract.MAX_PAGE_SIZE + 1)),
            }

    got = run(go())
    by_id = {i["message_id"]: i for i in items}
    day = lambda e: int(by_id[e["message_id"]]["text"].split()[2])  # noqa: E731
    entries = got["all"]["entries"]
    assert [day(e) for e in entries] == [1, 2, 3, 4, 5]
    assert set(entries[0]) == {"message_id", "session_id", "sequence_number", "sender_kind",
                               "sender_identity", "receiver_kind", "receiver_identity",
                               "occurred_at", "soft_deleted", "preview"}
    assert entries[0]["preview"] == by_id[entries[0]["message_id"]]["text"][:200]
    assert entries[0]["occurred_at"] == "2026-03-01T10:00:00.000000Z"
    assert entries[0]["soft_deleted"] is False
    assert (got["all"]["total_messages"], got["all"]["total_pages"]) == (5, 1)
    assert [day(e) for e in got["carol"]["entries"]] == [1, 3, 5]
    assert [day(e) for e in got["to_carol"]["entries"]] == [2, 4]
    assert len(got["carol_anywhere"]["entries"]) == 4  # three here, one in the other session
    assert [day(e) for e in got["period"]["entries"]] == [2, 3, 4]
    assert got["empty_filters"] == got["all"]
    page = got["page"]
    assert [day(e) for e in page["entries"]] == [3, 4]
    assert [e["preview"] for e in page["entries"]] == ["message n", "message n"]
    assert (page["total_messages"], page["total_pages"], page["page_offset"],
            page["page_size"]) == (5, 3, 1, 2)
    assert got["past"]["entries"] == [] and got["past"]["total_messages"] == 5
    assert got["bad_period"].code == "REQUEST_PARAMETER_VALUE"
    assert got["bad_size"].code == "CEILING_EXCEEDED"
