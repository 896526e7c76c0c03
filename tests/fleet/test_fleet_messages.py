"""append_message rules of the reference logger through the real ailogger-client."""

from __future__ import annotations

import uuid

import pytest

from fleet_helpers import append, new_id, open_session, refused, run


def test_append_answers_the_five_facts_and_sequence_from_zero(fleet, unique_session_id):
    sid = unique_session_id
    text = "one two three four five six seven eight nine ten eleven"

    async def go():
        async with fleet.logger_client() as c:
            await open_session(c, sid)
            return await append(c, sid, text), await append(c, sid, "short one"), \
                await append(c, sid, "   ")

    first, second, blank = run(go())
    data = first["data"]
    assert first["success"] is True
    assert set(data) == {"message_id", "sequence_number", "audience", "text_head", "text_tail"}
    assert uuid.UUID(data["message_id"]).version == 4 and data["sequence_number"] == 0
    assert data["text_head"] == "one two three four five"
    assert data["text_tail"] == "seven eight nine ten eleven"
    assert data["audience"] == {"receiver_kind": "model", "receiver_identity": "gpt"}
    assert second["data"]["sequence_number"] == 1
    assert second["data"]["text_head"] == second["data"]["text_tail"] == "short one"
    assert blank["data"]["text_head"] == blank["data"]["text_tail"] == ""


def test_identical_repeat_answers_as_the_first_and_adds_no_row(fleet, unique_session_id):
    sid, mid = unique_session_id, new_id()

    async def go():
        async with fleet.logger_client() as c:
            await open_session(c, sid)
            first = await append(c, sid, "hello", message_id=mid,
                                 occurred_at="2026-03-01T10:00:00+02:00", attributes={"a": 1})
            await append(c, sid, "in between")
            # same moment written differently is the same content
            again = await append(c, sid, "hello", message_id=mid,
                                 occurred_at="2026-03-01T08:00:00Z", attributes={"a": 1})
            await c.close_session(sid)
            after_close = await append(c, sid, "hello", message_id=mid,
                                       occurred_at="2026-03-01T08:00:00.000Z",
                                       attributes={"a": 1})
            window = await c.messages_read(sid, 0)
            return first, again, after_close, window

    first, again, after_close, window = run(go())
    assert again == first == after_close
    assert [m["message_id"] for m in window["data"]["messages"]].count(mid) == 1
    assert len(window["data"]["messages"]) == 2


@pytest.mark.parametrize("change", [
    {"text": "hello!"}, {"sender_identity": "bob"}, {"priority": 3},
    {"attributes": {"a": 2}}, {"occurred_at": "2026-03-01T08:00:01Z"},
    {"relations": "first"}, {"corrects_message_id": "first"},
])
def test_different_content_is_a_conflict_unless_force_overwrite(fleet, unique_session_id,
                                                                 change):
    sid, mid = unique_session_id, new_id()
    base = {"text": "hello", "sender_identity": "alice", "priority": 0, "attributes": {"a": 1},
            "occurred_at": "2026-03-01T08:00:00Z"}

    async def go():
        async with fleet.logger_client() as c:
            await open_session(c, sid)
            first = (await append(c, sid, "first"))["data"]["message_id"]
            changed = dict(base, **change)
            if changed.get("relations") == "first":
                changed["relations"] = [{"to_message_id": first, "kind": "reply"}]
            if changed.get("corrects_message_id") == "first":
                changed["corrects_message_id"] = first

            def send(params, **extra):
                p = dict(params)
                return c.append_message(sid, p.pop("text"), "human", p.pop("sender_identity"),
                                        "model", "gpt", message_id=mid, **p, **extra)

            original = await send(base)
            conflict = await refused(send(changed))
            forced = await send(changed, force_overwrite=True)
            stored = await c.message_get(mid)
            return original, conflict, forced, stored

    original, conflict, forced, stored = run(go())
    assert conflict.code == "MESSAGE_CONFLICT" and conflict.command == "append_message"
    assert forced["data"]["message_id"] == mid
    assert forced["data"]["sequence_number"] == original["data"]["sequence_number"] == 1
    key = next(iter(change))
    if key not in ("relations", "corrects_message_id"):
        want = change[key]
        if key == "occurred_at":
            want = "2026-03-01T08:00:01.000000Z"
        assert stored["data"][key] == want


def test_force_overwrite_never_moves_a_message_between_sessions(fleet, unique_session_id):
    sid, other, mid = unique_session_id, unique_session_id + "-b", new_id()

    async def go():
        async with fleet.logger_client() as c:
            await open_session(c, sid)
            await open_session(c, other)
            await append(c, sid, "x", message_id=mid)
            return await refused(append(c, other, "x", message_id=mid, force_overwrite=True))

    assert run(go()).code == "MESSAGE_CONFLICT"


def test_unknown_session_is_refused(fleet):
    refusal = run(_with_client(fleet, lambda c: refused(append(c, "t-never-opened", "x"))))
    assert refusal.code == "SESSION_UNKNOWN" and refusal.statement


async def _with_client(fleet, fn):
    async with fleet.logger_client() as c:
        return await fn(c)


def test_relations_must_point_to_earlier_messages_of_the_same_session(fleet,
                                                                      unique_session_id):
    sid, other = unique_session_id, unique_session_id + "-other"

    async def go():
        async with fleet.logger_client() as c:
            await open_session(c, sid)
            await open_session(c, other)
            a = (await append(c, sid, "a"))["data"]["message_id"]
            foreign = (await append(c, other, "f"))["data"]["message_id"]
            later_id = new_id()
            ok = await append(c, sid, "b", message_id=later_id,
                              relations=[{"to_message_id": a, "kind": "reply"},
                                         {"to_message_id": a, "kind": "influence"}],
                              corrects_message_id=a)
            refusals = [
                await refused(append(c, sid, "c", relations=[{"to_message_id": foreign,
                                                              "kind": "reply"}])),
                await refused(append(c, sid, "c", relations=[{"to_message_id": new_id(),
                                                              "kind": "reply"}])),
                await refused(append(c, sid, "c", relations=[{"to_message_id": a,
                                                              "kind": "correction"}])),
                await refused(append(c, sid, "c", relations=[{"to_message_id": a,
                                                              "kind": "sideways"}])),
                await refused(append(c, sid, "c", relations=[{"to_message_id": a,
                                                              "kind": "reply"}] * 2)),
                await refused(append(c, sid, "c", corrects_message_id=foreign)),
                # overwriting `a` may not point at the later message
                await refused(append(c, sid, "a", message_id=a, force_overwrite=True,
                                     relations=[{"to_message_id": later_id, "kind": "reply"}])),
            ]
            count = len((await c.messages_read(sid, 0, mode="full"))["data"]["messages"])
            relations = (await c.relations_read(sid))["data"]["relations"]
            return ok, refusals, count, relations, a, later_id

    ok, refusals, count, relations, a, later = run(go())
    assert ok["success"]
    assert {r.code for r in refusals} == {"RELATION_INADMISSIBLE"}
    assert count == 2  # nothing of the refused appends was stored
    assert relations == [{"from_message_id": later, "to_message_id": a, "kind": "reply"},
                         {"from_message_id": later, "to_message_id": a, "kind": "influence"},
                         {"from_message_id": later, "to_message_id": a, "kind": "correction"}]


def test_parameter_refusals_name_the_violation(fleet, unique_session_id):
    sid = unique_session_id

    async def go():
        async with fleet.logger_client() as c:
            await open_session(c, sid)
            base = {"session_id": sid, "text": "x", "sender_kind": "human",
                    "sender_identity": "a", "receiver_kind": "model", "receiver_identity": "b"}
            out = []
            for params in (dict(base, colour="blue"),
                           {k: v for k, v in base.items() if k != "text"},
                           dict(base, priority="high"),
                           dict(base, priority=-1),
                           dict(base, sender_kind="alien"),
                           dict(base, message_id="not-a-uuid"),
                           dict(base, message_id=str(uuid.uuid1())),
                           dict(base, occurred_at="2026-01-01T00:00:00"),
                           dict(base, attributes=[1])):
                out.append(await refused(c.call("append_message", params)))
            return out

    got = [(e.code, e.violation) for e in run(go())]
    assert got == [("REQUEST_PARAMETER_UNKNOWN", "unknown"), ("REQUEST_PARAMETER_MISSING", "missing"),
                   ("REQUEST_PARAMETER_TYPE", "type"), ("REQUEST_PARAMETER_VALUE", "value"),
                   ("REQUEST_PARAMETER_VALUE", "value"), ("REQUEST_PARAMETER_VALUE", "value"),
                   ("REQUEST_PARAMETER_VALUE", "value"), ("OCCURRED_AT_INVALID", "value"),
                   ("REQUEST_PARAMETER_TYPE", "type")]


def test_health_reports_the_service_and_its_dependencies(fleet):
    answer = run(_with_client(fleet, lambda c: c.health()))
    assert answer["success"] and answer["data"]["status"] == "ok"
    assert answer["data"]["dependencies"]["storage"] == "ok"
