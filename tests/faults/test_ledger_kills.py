"""Writers at once in one session, some killed with SIGKILL midway (inside the ledger's
transaction, between their file and its row, as often as not: the write's fsyncs are in it):
every acknowledged message is there, the sequence numbers are unique (each writer's rising),
every read answers as the files alone say, and verify finds the ledger agreeing with them."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time

from agent_memory.outbox.store import Store
from agent_memory.outbox.verify import verify
from ledgerutil import SESSION, _assert_reads_agree, _project

WRITER = """
import json, sys
from agent_memory.api.memory import Memory
memory = Memory(sys.argv[1], store="file", no_agent=True)
for i in range(int(sys.argv[3])):
    written = memory.write(sys.argv[2], f"{sys.argv[4]} {i}", sender_kind="human",
                           sender_identity=sys.argv[4], receiver_kind="model",
                           receiver_identity="claude")
    print(json.dumps([written.message_id, written.sequence_number]), flush=True)
"""

WRITERS, EACH = 4, 40


def test_writers_killed_midway_lose_nothing_and_the_ledger_follows(tmp_path):
    root = str(tmp_path)
    memory = _project(root)
    memory.open_session(SESSION, "proj", ["alice", "claude"])
    env = {**os.environ, "AGENT_MEMORY_AGENT": "off", "HOME": root}
    env.pop("AGENT_MEMORY_CONFIG", None)
    rng = random.Random(7)
    acknowledged: dict[str, list[tuple[str, int]]] = {}
    for round_ in range(2):
        names = [f"w{round_}-{k}" for k in range(WRITERS)]
        doomed = rng.sample(names, 2)  # they write until they are killed
        procs = {name: subprocess.Popen(
            [sys.executable, "-c", WRITER, root, SESSION,
             str(100_000 if name in doomed else EACH), name],
            stdout=subprocess.PIPE, env=env) for name in names}
        time.sleep(rng.uniform(0.2, 0.5))
        for name in doomed:
            procs[name].send_signal(signal.SIGKILL)
        for name, proc in procs.items():
            out, _err = proc.communicate(timeout=120)
            assert proc.returncode == (-signal.SIGKILL if name in doomed else 0), name
            acknowledged[name] = [tuple(json.loads(line)) for line in out.decode().splitlines()
                                  if line.strip()]
    with Store(root) as store:
        held = {m.record.message_id: m.record.sequence_number
                for m in store.messages(SESSION)[0]}
    for name, writes in acknowledged.items():
        for message_id, seq in writes:
            assert held.get(message_id) == seq, (name, message_id)  # acknowledged: there
        numbers = [seq for _id, seq in writes]
        assert numbers == sorted(set(numbers)), name  # each writer's numbers rise
    assert len(set(held.values())) == len(held)  # no two messages share a number
    assert sorted(held.values()) == list(range(len(held)))
    _assert_reads_agree(memory, root, "after writers killed midway", sizes=(7, 1000))
    with Store(root) as store:
        report = verify(store)
    assert report["ok"] and report["ledger"]["usable"], report


def _unrecorded(root: str, timeout: float = 30) -> set[str]:
    """Names of the session's `.msg` that the ledger has no row for (sqlite3's
    OperationalError when the ledger cannot be read within `timeout`: a writer stopped in its
    commit holds it exclusively)."""
    import sqlite3
    from ledgerutil import _ledger_path
    held = {n for n in os.listdir(os.path.join(root, ".agent-memory", SESSION))
            if n.endswith(".msg")}
    conn = sqlite3.connect(_ledger_path(root), timeout=timeout)
    try:
        rows = {r[0] for r in conn.execute("SELECT name FROM files")}
    finally:
        conn.close()
    return held - rows


def test_a_writer_killed_between_its_file_and_its_row(tmp_path):
    """A writer stopped (SIGSTOP) while it holds the ledger's write transaction, again and
    again, until it is caught with its file made and its row not; then killed (SIGKILL): the
    next command sees the message and numbers after it."""
    import sqlite3
    from ledgerutil import _ledger_path, _write
    root = str(tmp_path)
    memory = _project(root)
    memory.open_session(SESSION, "proj", ["alice", "claude"])
    _write(memory, "before")
    env = {**os.environ, "AGENT_MEMORY_AGENT": "off", "HOME": root}
    env.pop("AGENT_MEMORY_CONFIG", None)
    proc = subprocess.Popen([sys.executable, "-c", WRITER, root, SESSION, "100000", "w"],
                            stdout=subprocess.DEVNULL, env=env)
    probe = sqlite3.connect(_ledger_path(root), timeout=0)
    hit: set[str] = set()
    try:
        deadline = time.monotonic() + 60
        while not hit and time.monotonic() < deadline:
            try:
                probe.execute("BEGIN IMMEDIATE")
                probe.execute("ROLLBACK")
                continue
            except sqlite3.OperationalError:  # the writer holds it: inside its write
                pass
            proc.send_signal(signal.SIGSTOP)
            try:
                hit = _unrecorded(root, timeout=0.05)
            except sqlite3.OperationalError:  # stopped in its commit: not the moment sought
                hit = set()
            if hit:
                proc.send_signal(signal.SIGKILL)
            else:
                proc.send_signal(signal.SIGCONT)
    finally:
        probe.close()
        proc.kill()
        proc.wait()
    assert hit, "the writer was never caught between its file and its row"
    (name,) = hit
    message_id = name[24:60]
    assert memory.get(message_id).message_id == message_id
    with Store(root) as store:
        held = [m.record.sequence_number for m in store.messages(SESSION)[0]]
    assert len(set(held)) == len(held)
    after = memory.write(SESSION, "after", sender_kind="human", sender_identity="alice",
                         receiver_kind="model", receiver_identity="claude")
    assert after.sequence_number == len(held)
    assert not _unrecorded(root)
    _assert_reads_agree(memory, root, "after a writer killed between file and row",
                        sizes=(5, 1000))
