"""The plan of a session's forward (sync.plan), on its own: no files, no logger. Each rule of
the engine's order as a test of the steps it yields for entries and the answers it is sent."""

from __future__ import annotations

from agent_memory.sync import plan


def msg(n: int, *targets: int, size: int = 10, written_at: str | None = None) -> plan.Entry:
    return plan.Entry(f"2026-01-01T00.00.00.{n:03d}-m{n}.msg", "message", f"m{n}",
                      targets=frozenset(f"m{t}" for t in targets), size=size,
                      written_at=written_at or f"2026-01-01T00:00:00.{n:03d}000Z")


def event(n: int, kind: str = "close") -> plan.Entry:
    return plan.Entry(f"2026-01-01T00.00.00.{n:03d}-e{n}.ses", "event", f"e{n}", event=kind,
                      occurred_at=f"2026-01-01T00:00:00.{n:03d}000Z", shown=f"S/e{n}.ses")


def run(entries, answers=None, **options):
    """Drive the plan: [(step kind, ids)], answering SendBatch / SendEvent from `answers`
    (keyed by the first id of the step), else with nothing refused."""
    answers = answers or {}
    options = {"batch_items": 1000, "batch_bytes": 1 << 20, **options}
    steps = plan.session_steps(entries, **options)
    out, answer = [], None
    while True:
        try:
            step = steps.send(answer)
        except StopIteration:
            return out
        if isinstance(step, plan.SendBatch):
            ids = [e.item_id for e in step.entries]
            answer = answers.get(ids[0], set())
        else:
            ids = step.entry.item_id
            answer = answers.get(ids) if isinstance(step, plan.SendEvent) else None
        out.append((type(step).__name__, ids, step))


def kinds(out):
    return [(kind, ids) for kind, ids, _step in out]


def test_batches_are_cut_by_items_and_by_bytes():
    entries = [msg(i) for i in range(5)]
    assert kinds(run(entries, batch_items=2)) == [
        ("SendBatch", ["m0", "m1"]), ("SendBatch", ["m2", "m3"]), ("SendBatch", ["m4"])]
    big = [msg(0, size=6), msg(1, size=6), msg(2, size=3), msg(3, size=20)]
    assert kinds(run(big, batch_bytes=10)) == [
        ("SendBatch", ["m0"]), ("SendBatch", ["m1", "m2"]), ("SendBatch", ["m3"])]


def test_an_event_is_a_barrier_between_batches():
    assert kinds(run([msg(0), msg(1), event(2), msg(3)])) == [
        ("SendBatch", ["m0", "m1"]), ("SendEvent", "e2"), ("SendBatch", ["m3"])]


def test_a_message_relating_to_a_refused_one_waits_and_so_do_its_own():
    out = run([msg(0), event(1), msg(2, 0), msg(3, 2), msg(4)], answers={"m0": {"m0"}})
    assert kinds(out) == [("SendBatch", ["m0"]), ("SendEvent", "e1"), ("Wait", "m2"),
                          ("Wait", "m3"), ("SendBatch", ["m4"])]
    assert out[2][2].waits_for == ["m0"] and out[3][2].waits_for == ["m2"]


def test_a_refused_open_holds_everything_written_behind_it():
    refused = plan.Refusal("S/e1.ses", "SESSION_CONFLICT", "owned by another", False)
    out = run([event(1, "open"), msg(2), event(3), msg(0, written_at="2026-01-01T00:00:01Z")],
              answers={"e1": refused})
    assert kinds(out) == [("SendEvent", "e1"), ("Hold", "m2"), ("Hold", "e3"), ("Hold", "m0")]
    barrier = out[1][2].barrier
    assert barrier.final is False and barrier.code == "SESSION_CONFLICT"
    assert "it stays pending: S/e1.ses" in barrier.reason()
    quarantined = plan.Refusal("Q/e1.ses", "SESSION_CONFLICT", "owned by another", True)
    out = run([event(1, "open"), msg(2)], answers={"e1": quarantined})
    assert out[1][2].barrier.final is True


def test_a_refused_close_is_no_barrier():
    refused = plan.Refusal("S/e1.ses", "SESSION_CLOSED", "closed", False)
    assert kinds(run([event(1), msg(2)], answers={"e1": refused})) == [
        ("SendEvent", "e1"), ("SendBatch", ["m2"])]


def test_an_open_quarantined_before_covers_what_was_written_after_it():
    prior = plan.Barrier("e0", "2026-01-01T00:00:00.500000Z", "2026-01-01T00.00.00.500-e0.ses",
                         "Q/e0.ses", "SESSION_CONFLICT", "owned", True)
    early = msg(1)  # named and written before the open: not covered
    back_dated = msg(2, written_at="2026-01-01T00:00:00.900000Z")  # named before, written after
    assert kinds(run([early, back_dated, msg(600)], prior=prior)) == [
        ("Hold", "m2"), ("Hold", "m600"), ("SendBatch", ["m1"])]


def test_items_refused_lately_are_held_back_and_their_dependants_wait():
    held = {"m0": {"code": "X", "statement": "no", "count": 1}}
    out = run([msg(0), msg(1, 0), msg(2)], held=held.get)
    assert kinds(out) == [("HeldBack", "m0"), ("Wait", "m1"), ("SendBatch", ["m2"])]
    held = {"e0": {"code": "SESSION_CONFLICT", "statement": "owned", "count": 1}}
    out = run([event(0, "open"), msg(1)], held=held.get)
    assert kinds(out) == [("HeldBack", "e0"), ("Hold", "m1")]
    assert out[1][2].barrier.final is False


def test_what_cannot_be_read_is_set_aside_at_once():
    broken = plan.Entry("x.msg", "message", "m9", broken={"reason": "unreadable"})
    broken_event = plan.Entry("y.ses", "event", "e9", broken={"reason": "unsafe"})
    assert kinds(run([msg(0), broken, broken_event, msg(1)])) == [
        ("SetAside", "m9"), ("SendBatch", ["m0"]), ("SetAside", "e9"), ("SendBatch", ["m1"])]


def test_a_message_back_dated_before_a_pending_open_goes_right_after_it():
    names = ["a-old.msg", "b-open.ses", "c.msg"]
    acked = {"a-old.msg": (1, "2026-01-01T00:00:05Z"), "c.msg": (2, "2026-01-01T00:00:06Z")}
    opened = {"b-open.ses": ("open", "2026-01-01T00:00:04Z")}
    assert plan.acknowledged_order(names, opened, acked) == ["b-open.ses", "a-old.msg", "c.msg"]
    # written before the open: it stays where its name puts it
    acked["a-old.msg"] = (0, "2026-01-01T00:00:03Z")
    assert plan.acknowledged_order(names, opened, acked) == names
    assert plan.acknowledged_order(["a-old.msg", "c.msg"], {}, acked) == ["a-old.msg", "c.msg"]


def test_messages_sharing_a_moment_go_in_the_order_the_store_numbered_them():
    # named by one --occurred-at and a random uuid: the name order is not the writing order
    names = [f"t-{uuid}.msg" for uuid in ("0a", "3f", "7c", "c1", "e9")]
    numbers = {"t-0a.msg": 3, "t-3f.msg": 0, "t-7c.msg": 4, "t-c1.msg": 1, "t-e9.msg": 2}
    acked = {n: (numbers[n], "2026-01-01T00:00:01Z") for n in names}
    assert plan.acknowledged_order(["a-open.ses"] + names,
                                   {"a-open.ses": ("open", "2026-01-01T00:00:00Z")},
                                   acked) == ["a-open.ses", "t-3f.msg", "t-c1.msg", "t-e9.msg",
                                              "t-0a.msg", "t-7c.msg"]
    # equal numbers (two writers at once) fall back on the name, as the store reads them
    acked["t-0a.msg"] = (0, "2026-01-01T00:00:01Z")
    assert plan.acknowledged_order(names, {}, acked)[:2] == ["t-0a.msg", "t-3f.msg"]


def test_events_keep_their_place_among_messages_written_around_them():
    # open, m0, m1 (soft-deleted by d), d, then m2 back-dated to before them all
    names = ["0-m2.msg", "1-open.ses", "2-m0.msg", "3-m1.msg", "4-delete.ses"]
    events = {"1-open.ses": ("open", "2026-01-01T00:00:01Z"),
              "4-delete.ses": ("delete", "2026-01-01T00:00:04Z")}
    acked = {"2-m0.msg": (0, "2026-01-01T00:00:02Z"), "3-m1.msg": (1, "2026-01-01T00:00:03Z"),
             "0-m2.msg": (2, "2026-01-01T00:00:05Z")}
    assert plan.acknowledged_order(names, events, acked) == [
        "1-open.ses", "2-m0.msg", "3-m1.msg", "4-delete.ses", "0-m2.msg"]


def test_a_message_written_after_a_reopen_never_goes_between_close_and_reopen():
    # close and reopen named ahead of the clock (behind a message dated in the future): the
    # back-dated message's write time falls between their moments, yet it was written into
    # the reopened session
    names = ["0-back.msg", "1-open.ses", "5-ahead.msg", "6-close.ses", "7-reopen.ses"]
    events = {"1-open.ses": ("open", "2026-01-01T00:00:01.000000Z"),
              "6-close.ses": ("close", "2026-01-01T00:00:06.000000Z"),
              "7-reopen.ses": ("reopen", "2026-01-01T00:00:07.000000Z")}
    acked = {"5-ahead.msg": (0, "2026-01-01T00:00:02.000000Z"),
             "0-back.msg": (1, "2026-01-01T00:00:06.500000Z")}
    assert plan.acknowledged_order(names, events, acked) == [
        "1-open.ses", "5-ahead.msg", "6-close.ses", "7-reopen.ses", "0-back.msg"]


def test_what_cannot_be_read_goes_first_and_events_stay_in_name_order():
    names = ["a.ses", "b.msg", "c.ses", "d.msg"]
    events = {"a.ses": (None, None), "c.ses": ("mark", "2026-01-01T00:00:03Z")}
    acked = {"d.msg": (0, "2026-01-01T00:00:04Z")}
    assert plan.acknowledged_order(names, events, acked) == ["b.msg", "a.ses", "c.ses", "d.msg"]
