"""messages_read, message_get and relations_read of the reference logger (real client)."""

from __future__ import annotations

import time

from fleet_helpers import append, import_fast, item, new_id, open_session, refused, run


def test_journal_window_by_sequence_number_with_continuation(fleet, unique_session_id):
    sid = unique_session_id

    async def go():
        async with fleet.logger_client() as c:
            await open_session(c, sid)
            for i in range(7):
                await append(c, sid, f"message {i}")
            first = await c.messages_read(sid, 0, block_size=3)
            second = await c.messages_read(sid, 0, block_size=3,
                                           continuation=first["data"]["continuation"])
            third = await c.messages_read(sid, 99, block_size=3,  # start ignored when resuming
                                          continuation=second["data"]["continuation"])
            middle = await c.messages_read(sid, 4, block_size=2)
            past_end = await c.messages_read(sid, 50)
            default = await c.messages_read(sid, 0)
            bad = await refused(c.messages_read(sid, 0, continuation="garbage"))
            over = await refused(c.messages_read(sid, 0, block_size=10**6))
            unknown = await refused(c.messages_read("t-never-opened", 0))
            return first, second, third, middle, past_end, default, bad, over, unknown

    first, second, third, middle, past_end, default, bad, over, unknown = run(go())
    seqs = lambda page: [m["sequence_number"] for m in page["data"]["messages"]]  # noqa: E731
    assert seqs(first) == [0, 1, 2] and first["data"]["more"] is True
    assert seqs(second) == [3, 4, 5] and seqs(third) == [6]
    assert third["data"]["more"] is False and third["data"]["continuation"] is None
    assert seqs(middle) == [4, 5]
    assert past_end["data"] == {"session_id": sid, "messages": [], "more": False,
                                "continuation": None}
    assert len(default["data"]["messages"]) == 7
    entry = first["data"]["messages"][1]
    assert set(entry) == {"message_id", "session_id", "sequence_number", "text", "sender_kind",
                          "sender_identity", "receiver_kind", "receiver_identity", "priority",
                          "relations", "corrects_message_id", "attributes", "occurred_at",
                          "received_at", "soft_deleted"}
    assert entry["text"] == "message 1" and entry["soft_deleted"] is False
    assert (bad.code, over.code, unknown.code) == ("CONTINUATION_INVALID", "CEILING_EXCEEDED",
                                                   "SESSION_UNKNOWN")


def test_window_is_arrival_order_even_when_occurred_at_is_older(fleet, unique_session_id):
    sid = unique_session_id
    late = item(sid, "arrived second, happened first", occurred_at="2020-01-01T00:00:00Z")

    async def go():
        async with fleet.logger_client() as c:
            await open_session(c, sid)
            await append(c, sid, "arrived first")
            await import_fast(c, [late])
            return await c.messages_read(sid, 0)

    texts = [m["text"] for m in run(go())["data"]["messages"]]
    assert texts == ["arrived first", "arrived second, happened first"]


def test_resolved_and_full_modes_over_a_correction_chain(fleet, unique_session_id):
    sid = unique_session_id

    async def go():
        async with fleet.logger_client() as c:
            await open_session(c, sid)
            root = (await append(c, sid, "teh original"))["data"]["message_id"]
            await append(c, sid, "unrelated")
            fix1 = (await append(c, sid, "the original", corrects_message_id=root))["data"]
            fix2 = (await append(c, sid, "the original text", corrects_message_id=fix1[
                "message_id"], attributes={"v": 3}))["data"]
            resolved = await c.messages_read(sid, 0)
            full = await c.messages_read(sid, 0, mode="full")
            bad_mode = await refused(c.messages_read(sid, 0, mode="sideways"))
            return root, fix2, resolved, full, bad_mode

    root, fix2, resolved, full, bad_mode = run(go())
    shown = resolved["data"]["messages"]
    assert [m["message_id"] for m in shown][0] == root and len(shown) == 2
    assert shown[0]["text"] == "the original text" and shown[0]["attributes"] == {"v": 3}
    assert shown[0]["resolved_from"] == fix2["message_id"]
    assert [m["text"] for m in full["data"]["messages"]] == [
        "teh original", "unrelated", "the original", "the original text"]
    assert "resolved_from" not in full["data"]["messages"][0]
    assert bad_mode.code == "REQUEST_PARAMETER_VALUE"


def test_message_get_reports_the_vectorization_state(fleet, unique_session_id):
    sid = unique_session_id

    async def go():
        async with fleet.logger_client() as c:
            await open_session(c, sid)
            mid = (await append(c, sid, "to be vectorized"))["data"]["message_id"]
            states = [(await c.message_get(mid))["data"]]
            deadline = time.monotonic() + 10
            while states[-1]["vectorization_state"] != "vectorized" and \
                    time.monotonic() < deadline:
                states.append((await c.message_get(mid))["data"])
            unknown = await refused(c.message_get(new_id()))
            malformed = await refused(c.message_get("nope"))
            return mid, states, unknown, malformed

    mid, states, unknown, malformed = run(go())
    assert states[0]["message_id"] == mid and states[0]["text"] == "to be vectorized"
    assert states[0]["vectorization_state"] in ("pending", "vectorized")
    assert states[-1]["vectorization_state"] == "vectorized"
    assert unknown.code == "MESSAGE_UNKNOWN" and unknown.statement == "no such message"
    assert malformed.code == "REQUEST_PARAMETER_VALUE"


def test_relations_read_lists_declared_links_and_corrections_with_continuation(
        fleet, unique_session_id):
    sid = unique_session_id

    async def go():
        async with fleet.logger_client() as c:
            await open_session(c, sid)
            a = (await append(c, sid, "question"))["data"]["message_id"]
            b = (await append(c, sid, "answer", relations=[{"to_message_id": a,
                                                            "kind": "reply"}]))["data"]
            d = (await append(c, sid, "tool output", relations=[
                {"to_message_id": b["message_id"], "kind": "tool-result"},
                {"to_message_id": a, "kind": "influence"}], corrects_message_id=b["message_id"]
            ))["data"]
            first = await c.relations_read(sid, block_size=2)
            rest = await c.relations_read(sid, block_size=2,
                                          continuation=first["data"]["continuation"])
            return a, b["message_id"], d["message_id"], first, rest

    a, b, d, first, rest = run(go())
    links = first["data"]["relations"] + rest["data"]["relations"]
    assert first["data"]["more"] is True and rest["data"]["more"] is False
    assert links == [
        {"from_message_id": b, "to_message_id": a, "kind": "reply"},
        {"from_message_id": d, "to_message_id": b, "kind": "tool-result"},
        {"from_message_id": d, "to_message_id": a, "kind": "influence"},
        {"from_message_id": d, "to_message_id": b, "kind": "correction"},
    ]


def test_preview_mode_lists_prefixes_page_by_page(fleet, unique_session_id):
    sid = unique_session_id

    async def go():
        async with fleet.logger_client() as c:
            await open_session(c, sid)
            await import_fast(c, [item(sid, f"preview text number {i}",
                                       occurred_at=f"2026-01-0{i + 1}T00:00:00Z")
                                  for i in range(5)])
            page = await c.messages_read(session_id=sid, mode="preview", page_size=2,
                                         page_offset=1, preview_size=7,
                                         period_start="2026-01-02T00:00:00Z")
            return page["data"]

    page = run(go())
    assert page["total_messages"] == 4 and page["total_pages"] == 2
    assert [e["preview"] for e in page["entries"]] == ["preview", "preview"]
    assert page["entries"][0]["occurred_at"] == "2026-01-04T00:00:00.000000Z"
