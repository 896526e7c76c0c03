"""The reference fleet's costs stay flat with volume (no timing assertions).

- pending-vector lookups go through the partial indexes (EXPLAIN QUERY PLAN), also in a data
  dir created before those indexes existed;
- a process forked by the logger's queue does not re-register inherited manager proxies (the
  O(retained jobs) INCREF storm that made a long import drain quadratic);
- the embedder forgets a delivered `embed` result (LeanDeliveryManager) and its RSS stays flat
  over many wait=True calls.
"""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fleet_helpers import import_fast, item, open_session, run
from ops.fleet import layout
from ops.fleet.handle import Fleet
from ops.fleet.logger import store
from ops.fleet.logger.vectors import PENDING_QUERY

REPO = Path(__file__).resolve().parents[2]


def _plan(conn: sqlite3.Connection, sql: str, args: tuple) -> str:
    return " | ".join(row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql, args))


def _assert_pending_lookups_indexed(conn: sqlite3.Connection) -> None:
    everywhere = _plan(conn, PENDING_QUERY.format(where="1=1"), (256,))
    assert "USING INDEX messages_pending" in everywhere, everywhere
    assert "TEMP B-TREE" not in everywhere, everywhere
    in_session = _plan(conn, PENDING_QUERY.format(where="session_id=?"), ("s", 256))
    assert "USING INDEX messages_pending_session" in in_session, in_session
    count = _plan(conn, "SELECT COUNT(*) FROM messages WHERE vector IS NULL", ())
    assert "USING INDEX messages_pending" in count, count


def test_pending_vector_lookups_use_the_partial_indexes(fleet, unique_session_id):
    sid = unique_session_id

    async def go():
        async with fleet.logger_client() as c:
            await open_session(c, sid)
            await import_fast(c, [item(sid, f"indexed {i}") for i in range(20)])

    run(go())
    conn = sqlite3.connect(f"file:{layout.db_path(fleet.data_dir)}?mode=ro", uri=True)
    try:
        _assert_pending_lookups_indexed(conn)
    finally:
        conn.close()


def test_a_data_dir_from_before_the_indexes_gets_them_and_keeps_its_rows(tmp_path):
    data = tmp_path / "old-fleet"
    data.mkdir()
    old_schema = "\n".join(line for line in store.SCHEMA.splitlines()
                           if "messages_pending" not in line and "WHERE vector IS NULL;" not in line)
    conn = sqlite3.connect(layout.db_path(data))
    conn.executescript(old_schema)
    conn.execute("INSERT INTO sessions VALUES('s-old','p','[\"human\",\"model\"]','[]',NULL,NULL,"
                 "'open','2026-01-01T00:00:00.000Z',1)")
    conn.execute("INSERT INTO messages(message_id, session_id, sequence_number, text, sender_kind,"
                 " sender_identity, receiver_kind, receiver_identity, priority, relations,"
                 " attributes, occurred_at, received_at, content_key) VALUES('m-old','s-old',0,"
                 "'old words','human','alice','model','gpt',0,'[]','{}',"
                 "'2026-01-01T00:00:00.000Z','2026-01-01T00:00:00.000Z','k')")
    conn.commit()
    assert not conn.execute("SELECT name FROM sqlite_master WHERE name LIKE "
                            "'messages_pending%'").fetchall()
    conn.close()

    fleet = Fleet(data).start()
    try:
        conn = sqlite3.connect(f"file:{layout.db_path(data)}?mode=ro", uri=True)
        try:
            names = {r[0] for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE name LIKE 'messages_pending%'")}
            assert names == {"messages_pending", "messages_pending_session"}
            assert conn.execute("SELECT text FROM messages WHERE message_id='m-old'"
                                ).fetchone() == ("old words",)
            _assert_pending_lookups_indexed(conn)
        finally:
            conn.close()
    finally:
        fleet.stop()


_FORK_PROBE = textwrap.dedent("""
    import json, multiprocessing, sys
    from multiprocessing import util
    install = sys.argv[1] == "1"
    if install:
        from ops.fleet.logger import forking
        forking.install()
    ctx = multiprocessing.get_context("fork")
    manager = ctx.Manager()
    proxies = [manager.Value("i", n) for n in range(40)]

    def child(queue):
        # What the after-fork hooks left behind: one DECREF finalizer per INCREF they sent.
        increfs = sum(1 for key in util._finalizer_registry
                      if getattr(util._finalizer_registry[key], "_callback", None)
                      is multiprocessing.managers.BaseProxy._decref)
        queue.put({"increfs": increfs, "value": proxies[7].value,
                   "owned": sum(p._owned_by_manager for p in proxies)})

    queue = ctx.Queue()
    process = ctx.Process(target=child, args=(queue,))
    process.start()
    answer = queue.get(timeout=30)
    process.join(30)
    manager.shutdown()
    print(json.dumps(answer))
""")


def _fork_probe(install: bool) -> dict:
    import json

    done = subprocess.run([sys.executable, "-c", _FORK_PROBE, "1" if install else "0"],
                          cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_forked_queue_job_does_not_reregister_inherited_manager_proxies():
    without = _fork_probe(install=False)
    assert without["increfs"] >= 40  # the behaviour the hook removes (one round trip each)
    with_hook = _fork_probe(install=True)
    assert with_hook["increfs"] == 0
    assert with_hook["owned"] == 40
    assert with_hook["value"] == 7  # inherited proxies still work in the child


def test_lean_delivery_keeps_a_result_only_until_it_is_received():
    from mcp_proxy_adapter.core.job_push.subscriptions import (Subscriber, SubscriberRegistry,
                                                               SubscriptionCategory)

    from ops.fleet.delivery import manager_class

    class Inbox(Subscriber):
        def __init__(self) -> None:
            self.got: list[dict] = []

        async def send(self, payload: dict) -> None:
            self.got.append(payload)

    async def go():
        registry = SubscriberRegistry()
        manager = manager_class()(registry, max_parked=4)
        # Subscriber first: delivered live, nothing kept.
        live = Inbox()
        await registry.subscribe("w1", SubscriptionCategory.WS_DELIVERY, live)
        await manager.notify_terminal_delivery("w1", {"n": 1})
        assert live.got == [{"n": 1}] and manager.parked_count() == 0
        # Result first: parked, handed to the late subscriber once, then forgotten.
        await manager.notify_terminal_delivery("w2", {"n": 2})
        assert manager.parked_count() == 1
        late = Inbox()
        await registry.subscribe("w2", SubscriptionCategory.WS_DELIVERY, late)
        await manager.flush_replay_to_subscriber("w2", late)
        assert late.got == [{"n": 2}] and manager.parked_count() == 0
        await manager.flush_replay_to_subscriber("w2", late)
        assert late.got == [{"n": 2}]
        # Results nobody comes for: bounded.
        for n in range(10):
            await manager.notify_terminal_delivery(f"gone-{n}", {"n": n})
        assert manager.parked_count() == 4

    asyncio.run(go())


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError(f"no RSS for {pid}")


@pytest.mark.slow
def test_embedder_memory_stays_flat_over_many_wait_true_calls(fleet_factory):
    """Before the fix each 256-text call kept ~10 MB (its delivered result) for an hour."""
    own = fleet_factory()
    texts = [f"memory probe text number {i} with a few more words" for i in range(256)]

    async def calls(n: int) -> None:
        async with own.embedding_client(timeout=30) as client:
            for _ in range(n):
                answer = await client.embed(texts, model=own.embedding_model,
                                            dimension=own.dimension, wait=True,
                                            wait_timeout=30)
                assert len(answer["results"]) == 256

    run(calls(10))  # warm: allocator pools, imports, first connections
    before = _rss_mb(own.embedder_pid)
    run(calls(60))  # before the fix: some 600 MB more
    grown = _rss_mb(own.embedder_pid) - before
    assert grown < 80, f"embedder RSS grew {grown:.0f} MB over 60 calls of 256 texts"
