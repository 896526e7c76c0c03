"""Fault switches of the reference fleet, seen through the real clients (private fleets)."""

from __future__ import annotations

import time

import ailogger_client
import pytest
from mcp_proxy_adapter.client.jsonrpc_client.exceptions import ClientError

from fleet_helpers import append, import_fast, item, open_session, refused, run

pytestmark = pytest.mark.slow


def _transport_failure(exc: BaseException) -> ClientError:
    """The failure is the client's bare error with the adapter's transport error as cause."""
    assert type(exc) is ailogger_client.AiLoggerClientError, type(exc)
    assert not isinstance(exc, ailogger_client.ServiceRefusalError)
    assert isinstance(exc.__cause__, ClientError), repr(exc.__cause__)
    return exc.__cause__


async def _failure(awaitable) -> ClientError:
    try:
        await awaitable
    except ailogger_client.AiLoggerClientError as exc:
        return _transport_failure(exc)
    raise AssertionError("expected a transport failure")


def test_refuse_pattern_set_at_start_and_changed_at_run_time(fleet_factory, unique_session_id):
    fleet = fleet_factory(faults={"logger": {"refuse_pattern": r"poison"}})
    sid = unique_session_id

    async def go():
        async with fleet.logger_client() as c:
            await open_session(c, sid)
            refusal = await refused(append(c, sid, "this is poison"))
            outcomes = await import_fast(c, [item(sid, "fine"), item(sid, "more poison"),
                                             item(sid, "fine too")])
            fleet.control.set_faults("logger", refuse_pattern=r"^fine")
            changed = await import_fast(c, [item(sid, "fine again"), item(sid, "poison ok")])
            fleet.control.clear_faults()
            accepted = await append(c, sid, "fine and poison")
            return refusal, outcomes, changed, accepted

    refusal, outcomes, changed, accepted = run(go())
    assert refusal.code == "INJECTED_REFUSAL" and refusal.command == "append_message"
    assert [o["success"] for o in outcomes] == [True, False, True]
    assert outcomes[1]["code"] == "INJECTED_REFUSAL" and "data" not in outcomes[1]
    assert [o["success"] for o in changed] == [False, True]
    assert accepted["success"] is True


def test_delay_holds_answers_and_a_short_timeout_sees_a_read_timeout(fleet_factory):
    fleet = fleet_factory()

    async def go():
        fleet.control.set_faults("logger", delay=0.6)
        async with fleet.logger_client(timeout=5) as c:
            start = time.monotonic()
            answer = await c.health()
            slow = time.monotonic() - start
        async with fleet.logger_client(timeout=0.3) as c:
            cause = await _failure(c.health())
        fleet.control.clear_faults()
        async with fleet.logger_client(timeout=5) as c:
            start = time.monotonic()
            await c.health()
            fast = time.monotonic() - start
        return answer, slow, cause, fast

    answer, slow, cause, fast = run(go())
    assert answer["success"] and slow >= 0.6 and fast < 0.5
    assert cause.category == "read_timeout"


def test_drop_closes_connections_without_answering(fleet_factory, unique_session_id):
    fleet = fleet_factory()
    sid = unique_session_id

    async def go():
        async with fleet.logger_client() as c:
            await open_session(c, sid)
            fleet.control.set_faults("logger", drop=True)
            causes = [await _failure(c.health()),
                      await _failure(append(c, sid, "dropped")),
                      await _failure(c.messages_import_submit([item(sid)]))]
            fleet.control.clear_faults()
            after = await append(c, sid, "after the drop")
            window = await c.messages_read(sid, 0)
            return causes, after, window

    causes, after, window = run(go())
    assert all(isinstance(cause, ClientError) for cause in causes)
    assert after["data"]["sequence_number"] == 0  # the dropped append never reached the app
    assert [m["text"] for m in window["data"]["messages"]] == ["after the drop"]


def test_go_down_refuses_connects_and_comes_back_on_the_same_port_with_the_data(
        fleet_factory, unique_session_id):
    fleet = fleet_factory()
    sid = unique_session_id
    port = fleet.logger_port

    async def go():
        async with fleet.logger_client() as c:
            await open_session(c, sid)
            mid = (await append(c, sid, "kept across the outage"))["data"]["message_id"]
            fleet.control.go_down("logger")
            cause = await _failure(c.health())
            fleet.control.come_up("logger")
            got = await c.message_get(mid)
            return cause, got

    cause, got = run(go())
    assert cause.category == "connection_refused"
    assert got["data"]["text"] == "kept across the outage"
    assert fleet.logger_port == port == fleet.control.port("logger")


def test_restart_stops_every_process_and_comes_back_on_the_same_ports(fleet_factory,
                                                                       unique_session_id):
    from ops.fleet import procs

    fleet = fleet_factory()
    sid = unique_session_id
    ports = (fleet.logger_port, fleet.embedder_port)
    old_groups = (fleet.logger_pid, fleet.embedder_pid)

    async def before():
        async with fleet.logger_client() as c:
            await open_session(c, sid)
            await import_fast(c, [item(sid, "imported before the restart")])

    run(before())
    fleet.stop()
    assert all(not procs.group_members(g) for g in old_groups)

    async def while_down():
        async with fleet.logger_client() as c:
            return await _failure(c.health())

    assert run(while_down()).category == "connection_refused"
    fleet.start()
    assert (fleet.logger_port, fleet.embedder_port) == ports

    async def after():
        async with fleet.logger_client() as c:
            return await c.messages_read(sid, 0)

    assert [m["text"] for m in run(after())["data"]["messages"]] == [
        "imported before the restart"]


def test_unvectorized_messages_are_absent_from_closest_and_embedder_outage_refuses_anchor_text(
        fleet_factory, unique_session_id):
    fleet = fleet_factory()
    sid = unique_session_id

    async def go():
        async with fleet.logger_client() as c:
            await open_session(c, sid)
            vectorized = (await append(c, sid, "apples and pears"))["data"]["message_id"]
            await c.working_set(sid, anchor_text="apples")  # vectorizes what is pending
            fleet.control.set_faults("logger", hold_vectors=True)
            pending = (await append(c, sid, "apples only"))["data"]["message_id"]
            state = (await c.message_get(pending))["data"]["vectorization_state"]
            held = (await c.working_set(sid, anchor_text="apples"))["data"]
            fleet.control.go_down("embedder")
            outage = await refused(c.working_set(sid, anchor_text="apples"))
            search_outage = await refused(c.message_search("apples", "session", sid))
            by_message = (await c.working_set(sid, anchor_message_id=vectorized))["data"]
            fleet.control.come_up("embedder")
            fleet.control.clear_faults()
            healed = (await c.working_set(sid, anchor_text="apples"))["data"]
            return vectorized, pending, state, held, outage, search_outage, by_message, healed

    vectorized, pending, state, held, outage, search_outage, by_message, healed = run(go())
    assert state == "pending"
    assert [e["message"]["message_id"] for e in held["recent"]] == [pending, vectorized]
    assert [e["message"]["message_id"] for e in held["closest"]] == [vectorized]
    assert outage.code == search_outage.code == "EMBEDDING_UNAVAILABLE"
    assert by_message["closest"] == [] and len(by_message["recent"]) == 2
    assert {e["message"]["message_id"] for e in healed["closest"]} == {vectorized, pending}


def test_embedder_faults_surface_as_adapter_transport_errors(fleet_factory):
    from embed_client.exceptions import EmbedError

    fleet = fleet_factory()

    async def go():
        fleet.control.set_faults("embedder", drop=True)
        async with fleet.embedding_client(timeout=3) as client:
            try:
                await client.embed(["x"], wait=True, wait_timeout=3)
            except (EmbedError, ClientError, TimeoutError) as exc:
                dropped = exc
        fleet.control.clear_faults()
        async with fleet.embedding_client(timeout=3) as client:
            answer = await client.embed(["x"], wait=True, wait_timeout=3)
        return dropped, answer

    dropped, answer = run(go())
    assert isinstance(dropped, ClientError)
    assert answer["dimension"] == 1024
