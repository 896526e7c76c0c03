"""messages_import (always queued) of the reference logger through the real ailogger-client."""

from __future__ import annotations

import pytest
from mcp_proxy_adapter.client.jsonrpc_client.exceptions import ClientError

from fleet_helpers import import_fast, item, job_raw, new_id, open_session, refused, run


def test_client_messages_import_returns_per_item_outcomes_in_input_order(fleet,
                                                                         unique_session_id):
    """The client's own waiting form (polls every 1 s) end to end."""
    sid = unique_session_id
    items = [item(sid, f"number {i} of the batch here") for i in range(3)]

    async def go():
        async with fleet.logger_client() as c:
            await open_session(c, sid)
            return await c.messages_import(items, timeout=30)

    outcomes = run(go())
    assert [o["message_id"] for o in outcomes] == [i["message_id"] for i in items]
    assert all(o["success"] for o in outcomes)
    assert outcomes[1]["text_head"] == "number 1 of the batch"
    assert outcomes[1]["text_tail"] == "1 of the batch here"


def test_job_status_has_the_documented_shape_and_embed_job_status_is_not_answered(
        fleet, unique_session_id):
    sid = unique_session_id

    async def go():
        async with fleet.logger_client() as c:
            await open_session(c, sid)
            job_id = await c.messages_import_submit([item(sid)])
            raw = await job_raw(c, job_id)
            try:
                await c.call("embed_job_status", {"job_id": job_id})
                embed_status = "answered"
            except Exception as exc:  # noqa: BLE001 - any failure is what we want
                embed_status = exc
            return raw, embed_status

    raw, embed_status = run(go())
    assert raw["success"] is True
    assert raw["data"]["status"] == "completed"
    result = raw["data"]["result"]["result"]
    assert result["success"] is True and isinstance(result["data"], list)
    assert embed_status != "answered"


def test_identical_reimport_succeeds_and_adds_nothing(fleet, unique_session_id):
    sid = unique_session_id
    items = [item(sid, f"m {i}") for i in range(5)]

    async def go():
        async with fleet.logger_client() as c:
            await open_session(c, sid)
            first = await import_fast(c, items)
            second = await import_fast(c, items)
            window = await c.messages_read(sid, 0)
            return first, second, window

    first, second, window = run(go())
    assert first == second and all(o["success"] for o in second)
    assert [m["sequence_number"] for m in window["data"]["messages"]] == [0, 1, 2, 3, 4]


def test_items_are_independent_and_failures_carry_a_code_not_a_data_dict(fleet,
                                                                         unique_session_id):
    sid = unique_session_id
    stored = item(sid, "stored first")
    no_time = item(sid, "no time")
    del no_time["occurred_at"]
    no_id = item(sid, "no id")
    del no_id["message_id"]
    batch = [
        item(sid, "good one"),
        no_time,
        no_id,
        item("t-never-opened", "unknown session"),
        dict(stored, text="changed text"),
        item(sid, "bad time", occurred_at="yesterday"),
        item(sid, "relation to nothing", relations=[{"to_message_id": new_id(),
                                                     "kind": "reply"}]),
        item(sid, "good two", relations=[{"to_message_id": stored["message_id"],
                                          "kind": "reply"}]),
        item(sid, "extra key", colour="blue"),
    ]

    async def go():
        async with fleet.logger_client() as c:
            await open_session(c, sid)
            await import_fast(c, [stored])
            outcomes = await import_fast(c, batch)
            window = await c.messages_read(sid, 0)
            return outcomes, window

    outcomes, window = run(go())
    assert [o["message_id"] for o in outcomes] == [b.get("message_id") for b in batch]
    assert [o["success"] for o in outcomes] == [True, False, False, False, False, False, False,
                                                True, False]
    codes = [o.get("code") for o in outcomes if not o["success"]]
    assert codes == ["REQUEST_PARAMETER_MISSING", "REQUEST_PARAMETER_MISSING", "SESSION_UNKNOWN",
                     "MESSAGE_CONFLICT", "OCCURRED_AT_INVALID", "RELATION_INADMISSIBLE",
                     "REQUEST_PARAMETER_UNKNOWN"]
    for outcome in outcomes:
        assert "data" not in outcome
        if not outcome["success"]:
            assert set(outcome) == {"message_id", "success", "code", "statement"}
    texts = [m["text"] for m in window["data"]["messages"]]
    assert texts == ["stored first", "good one", "good two"]


def test_occurred_at_becomes_the_message_time_normalised_to_utc(fleet, unique_session_id):
    sid = unique_session_id
    it = item(sid, "timed", occurred_at="2025-06-30T23:30:00.5-01:30")

    async def go():
        async with fleet.logger_client() as c:
            await open_session(c, sid)
            await import_fast(c, [it])
            return await c.message_get(it["message_id"])

    got = run(go())["data"]
    assert got["occurred_at"] == "2025-07-01T01:00:00.500000Z"
    assert got["received_at"] != got["occurred_at"]


def test_import_into_a_closed_session_is_refused_per_item_but_repeats_still_succeed(
        fleet, unique_session_id):
    sid = unique_session_id
    before = item(sid, "before closing")

    async def go():
        async with fleet.logger_client() as c:
            await open_session(c, sid)
            await import_fast(c, [before])
            await c.close_session(sid)
            return await import_fast(c, [before, item(sid, "after closing")])

    repeat, new = run(go())
    assert repeat["success"] is True
    assert new["success"] is False and new["code"] == "SESSION_CLOSED"


@pytest.mark.parametrize("params, code", [
    ({"messages": []}, "IMPORT_EMPTY"),
    ({}, "REQUEST_PARAMETER_MISSING"),
    ({"messages": "nope"}, "REQUEST_PARAMETER_TYPE"),
    ({"messages": [1]}, "REQUEST_PARAMETER_TYPE"),
    ({"messages": [{"message_id": "x"}, {"message_id": "x"}]}, "IMPORT_DUPLICATE_ID"),
    ({"messages": [{}], "colour": "blue"}, "REQUEST_PARAMETER_UNKNOWN"),
])
def test_whole_call_refusals_arrive_in_band_at_submit(fleet, params, code):
    async def go():
        async with fleet.logger_client() as c:
            return await refused(c.call("messages_import", params, wait_for_result=False))

    refusal = run(go())
    assert refusal.code == code
    assert refusal.command is None  # the in-band route (C) carries no command
    assert "JSON-RPC error" in refusal.statement


def test_an_import_above_the_maximum_is_refused_whole(fleet, unique_session_id):
    from agent_memory.outbox.contract import MAX_IMPORT_ITEMS

    items = [{"message_id": str(i)} for i in range(MAX_IMPORT_ITEMS + 1)]

    async def go():
        async with fleet.logger_client() as c:
            return await refused(c.messages_import_submit(items))

    assert run(go()).code == "IMPORT_TOO_LARGE"


def test_unknown_command_is_not_a_refusal(fleet):
    import ailogger_client

    async def go():
        async with fleet.logger_client() as c:
            await c.call("no_such_command", {})

    with pytest.raises(ailogger_client.AiLoggerClientError) as caught:
        run(go())
    assert not isinstance(caught.value, ailogger_client.ServiceRefusalError)
    assert isinstance(caught.value.__cause__, ClientError)
