"""The ledger (outbox.ledger), the derived state beside the files: every read answers exactly as
the files alone say, with the ledger, with it deleted, after a rebuild, and after it was
damaged; it catches up with files it did not see (a writer killed between its file and its row,
an older release, a writer that did without it); and it is never trusted over the files.

The reads are compared with the oracle: outbox.views.journal_window over every message the
session's files hold (a listing and a decode of each), which is what `read` answered before the
ledger existed. In-process (the Python API and the Store), since hundreds of generated sessions
would take minutes as processes; the processes that die midway are real."""

from __future__ import annotations

import os
import shutil
import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from agent_memory.api.errors import AgentMemoryError
from agent_memory.api.memory import Memory
from agent_memory.outbox import atomic, encoding, names
from agent_memory.outbox.contract import new_uuid4
from agent_memory.outbox.ledger import LEDGER_DIR, LEDGER_FILE, UNINDEXED_DIR
from agent_memory.outbox.store import Store
from ledgerutil import (MOMENT, SESSION, _assert_gets_agree, _assert_reads_agree,
                        _ledger_path, _project, _write)

# --- generated sessions ----------------------------------------------------------------------
operations = st.lists(st.one_of(
    st.tuples(st.just("write"), st.sampled_from(["plain", "now", "moment", "corrects",
                                                 "corrects", "reply"]), st.integers(0, 30)),
    st.tuples(st.just("write"), st.just("corrects"), st.integers(0, 30)),
    st.tuples(st.just("soft"), st.integers(0, 30)),
    st.tuples(st.just("hard"), st.integers(0, 30)),
    st.tuples(st.just("mark"), st.integers(0, 30)),
    st.tuples(st.just("unmark"), st.integers(0, 30)),
    st.tuples(st.just("behind"), st.integers(0, 30)),  # a writer doing without the ledger
    st.tuples(st.just("drop"), st.just(0)),  # the ledger deleted
    st.tuples(st.just("delete_session"), st.just(0)),
), min_size=1, max_size=25).map(lambda ops: [("write", "plain", 0), *ops])


def _numbered(root: str) -> int:
    """The next sequence number as the files alone say: the session's `.msg` in pending and
    imported."""
    with Store(root) as store:
        return sum(1 for f in store.files(SESSION, names.MESSAGE_EXT))


def _apply(memory: Memory, root: str, ops) -> list[str]:
    ids: list[str] = []
    memory.open_session(SESSION, "proj", ["alice", "claude"])
    for op in ops:
        kind, arg = op[0], op[-1]
        target = ids[arg % len(ids)] if ids else None
        try:
            if kind == "write":
                how = op[1]
                extra = {}
                if how == "moment":
                    extra["occurred_at"] = MOMENT
                elif how == "corrects" and target:
                    extra["corrects"] = target
                elif how == "reply" and target:
                    extra["relations"] = [("reply", target)]
                expected = _numbered(root)
                written = memory.write(SESSION, f"text {len(ids)} {how}", sender_kind="human",
                                       sender_identity="alice", receiver_kind="model",
                                       receiver_identity="claude", **extra)
                assert written.sequence_number == expected  # numbered as the files say
                ids.append(written.message_id)
            elif kind == "soft" and target:
                memory.delete(target, "soft", session_id=SESSION)
            elif kind == "hard" and target:
                memory.delete(target, "hard", session_id=SESSION)
            elif kind == "mark" and target:
                memory.mark(target)
            elif kind == "unmark" and target:
                memory.mark(target, unmark=True)
            elif kind == "behind":
                with Store(root) as store:
                    store._without_ledger += 1
                    ids.append(store.append_message(
                        {"session_id": SESSION, "text": f"behind {len(ids)}",
                         "sender_kind": "model", "sender_identity": "claude",
                         "receiver_kind": "human", "receiver_identity": "alice"}
                    ).record["message_id"])
            elif kind == "drop":
                shutil.rmtree(os.path.join(root, ".agent-memory", LEDGER_DIR),
                              ignore_errors=True)
            elif kind == "delete_session":
                memory.delete_session(SESSION, confirm=SESSION)
                memory.open_session(SESSION, "proj", ["alice", "claude"])
        except AgentMemoryError as exc:
            # The write path's own refusals (a correction of a deleted message, a mark of a
            # purged one...): the same with or without the ledger, nothing written.
            assert exc.code in ("MESSAGE_DELETED", "MESSAGE_UNKNOWN", "MARK_NOT_APPLIED",
                                "RELATION_INADMISSIBLE", "MESSAGE_REFERENCED"), exc
    return ids


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(ops=operations)
def test_every_read_answers_as_the_files_do(tmp_path_factory, ops):
    root = str(tmp_path_factory.mktemp("ledger"))
    memory = _project(root)
    ids = _apply(memory, root, ops)
    _assert_reads_agree(memory, root, "with the ledger")
    _assert_gets_agree(memory, root, ids, "with the ledger")
    shutil.rmtree(os.path.join(root, ".agent-memory", LEDGER_DIR))
    _assert_reads_agree(memory, root, "with the ledger deleted")
    _assert_gets_agree(memory, root, ids, "with the ledger deleted")
    with Store(root) as store:
        store.ledger.rebuild(store.session_ids())
    _assert_reads_agree(memory, root, "after a rebuild")
    with Store(root) as store:
        from agent_memory.outbox.verify import verify
        report = verify(store)
        assert report["ok"] and report["ledger"] == {"usable": True, "sessions": 1}, report


def test_get_and_the_write_checks_come_from_the_ledger(tmp_path):
    root = str(tmp_path)
    memory = _project(root)
    memory.open_session(SESSION, "proj", ["alice", "claude"])
    first = _write(memory, "one")
    second = _write(memory, "two", message_id=new_uuid4())
    assert memory.get(first).text == "one"
    # The duplicate check: an identical retry answers the message, another content conflicts.
    assert _write(memory, "two", message_id=second) == second
    with pytest.raises(AgentMemoryError) as refused:
        _write(memory, "other", message_id=second)
    assert refused.value.code == "MESSAGE_CONFLICT"
    memory.close_session(SESSION)
    with pytest.raises(AgentMemoryError) as closed:
        _write(memory, "three")
    assert closed.value.code == "SESSION_CLOSED"
    memory.reopen_session(SESSION)
    third = memory.write(SESSION, "three", sender_kind="human", sender_identity="alice",
                         receiver_kind="model", receiver_identity="claude")
    assert third.sequence_number == 2
    # A write names its file after every file the session holds, the close and reopen too.
    with Store(root) as store:
        held = sorted(f.name for f in store.files(SESSION))
    assert held[-1].endswith(third.message_id + names.MESSAGE_EXT)


# --- catching up -----------------------------------------------------------------------------
def _file_behind(root: str, text: str, seq: int) -> str:
    """A message filed as a writer killed between its file and its ledger row leaves it (or as
    an older release files it): the file, no row, no marker."""
    message_id = new_uuid4()
    from datetime import datetime, timezone
    now = datetime.now(timezone.utc)
    name = names.final_name(now, message_id, names.MESSAGE_EXT)
    record, data = encoding.encoded_message(
        session_id=SESSION, message_id=message_id, text=text, sender_kind="human",
        sender_identity="alice", receiver_kind="model", receiver_identity="claude",
        occurred_at=now.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), sequence_number=seq,
        written_at=now.strftime("%Y-%m-%dT%H:%M:%S.%fZ"))
    fd = atomic.open_dir(os.path.join(root, ".agent-memory", SESSION))
    try:
        atomic.create_exclusive(fd, name, data)
    finally:
        os.close(fd)
    return message_id


def test_a_batch_sees_its_own_changes(tmp_path):
    """A batch in one ledger transaction (api.runner.together: a framework's items) numbers
    and names each write after the one before it, refuses a write after a close made in the
    same batch, and writes again after a reopen: what the transaction itself just recorded
    counts, not what it found as it began."""
    from agent_memory.api import runner
    root = str(tmp_path)
    memory = _project(root)
    memory.open_session(SESSION, "proj", ["alice", "claude"])
    with runner.together(root, None, "file"):
        first = [memory.write(SESSION, f"m{i}", sender_kind="human", sender_identity="alice",
                              receiver_kind="model", receiver_identity="claude")
                 for i in range(12)]
        memory.close_session(SESSION)
        with pytest.raises(AgentMemoryError) as refused:
            _write(memory, "after the close")
        assert refused.value.code == "SESSION_CLOSED"
        memory.reopen_session(SESSION)
        last = memory.write(SESSION, "after the reopen", sender_kind="human",
                            sender_identity="alice", receiver_kind="model",
                            receiver_identity="claude")
    assert [w.sequence_number for w in first + [last]] == list(range(13))
    with Store(root) as store:
        listed = [f.name for f in store.files(SESSION, None)]  # in name order
    written = [w.data["file"].rsplit("/", 1)[-1] for w in first + [last]]
    assert [n for n in listed if n in written] == written  # named in the order written
    events = [n for n in listed if n.endswith(names.EVENT_EXT)]
    assert listed.index(written[-1]) > listed.index(events[-1])  # after the reopen
    _assert_reads_agree(memory, root, "a batch")


def test_its_own_changes_leave_the_ledger_fresh(tmp_path, monkeypatch):
    """The store's own changes, alone or in a batch, record the directories as they leave
    them (as the transaction commits): the commands after them answer from the ledger without
    listing the session again."""
    from agent_memory.api import runner
    from agent_memory.outbox import ledger_catchup
    root = str(tmp_path)
    memory = _project(root)
    memory.open_session(SESSION, "proj", ["alice", "claude"])
    first = _write(memory, "alone")
    with runner.together(root, None, "file"):
        for i in range(3):
            _write(memory, f"batch {i}")
    listed: list[str] = []
    real = ledger_catchup.catch_up
    monkeypatch.setattr(ledger_catchup, "catch_up", lambda ledger, session: (
        listed.append(session.session_id), real(ledger, session))[1])
    _write(memory, "after the batch")
    memory.delete(first, "soft", session_id=SESSION)
    assert [m.text for m in memory.messages(SESSION)] == [
        "batch 0", "batch 1", "batch 2", "after the batch"]
    assert listed == []


def test_a_file_the_ledger_did_not_see_is_read_and_numbered_after(tmp_path):
    root = str(tmp_path)
    memory = _project(root)
    for i in range(3):
        _write(memory, f"m{i}")
    behind = _file_behind(root, "behind", 3)
    texts = [m.text for m in memory.messages(SESSION)]
    assert texts == ["m0", "m1", "m2", "behind"]
    assert memory.get(behind).text == "behind"
    assert memory.write(SESSION, "after", sender_kind="human", sender_identity="alice",
                        receiver_kind="model", receiver_identity="claude"
                        ).sequence_number == 4
    _assert_reads_agree(memory, root, "after a file behind the ledger's back")


def test_a_writer_without_the_ledger_keeps_its_session_listed_until_it_is_gone(tmp_path):
    root = str(tmp_path)
    memory = _project(root)
    _write(memory, "m0")
    marker_dir = os.path.join(root, ".agent-memory", LEDGER_DIR, UNINDEXED_DIR)
    live = os.path.join(marker_dir, f"{SESSION}+{os.getpid()}+feed")  # this process: alive
    dead = os.path.join(marker_dir, f"{SESSION}+999999999+dead")  # no such process
    open(live, "w").close()
    open(dead, "w").close()
    _write(memory, "m1")
    seen = sqlite3.connect(_ledger_path(root)).execute(
        "SELECT seen FROM sessions WHERE session = ?", (SESSION,)).fetchone()[0]
    assert seen is None  # not recorded while a writer without the ledger may be at work
    assert not os.path.exists(dead)  # a gone writer's marker is removed, its files listed
    os.unlink(live)
    _write(memory, "m2")
    seen = sqlite3.connect(_ledger_path(root)).execute(
        "SELECT seen FROM sessions WHERE session = ?", (SESSION,)).fetchone()[0]
    assert seen is not None
    assert [m.text for m in memory.messages(SESSION)] == ["m0", "m1", "m2"]


def test_the_store_works_without_a_usable_ledger(tmp_path):
    root = str(tmp_path)
    memory = _project(root)
    _write(memory, "m0")
    ledger_dir = os.path.join(root, ".agent-memory", LEDGER_DIR)
    shutil.rmtree(ledger_dir)
    with open(ledger_dir, "w") as handle:  # a file where its directory belongs: unusable
        handle.write("not a directory")
    first = memory.write(SESSION, "m1", sender_kind="human", sender_identity="alice",
                         receiver_kind="model", receiver_identity="claude")
    assert first.sequence_number == 1
    assert [m.text for m in memory.messages(SESSION)] == ["m0", "m1"]
    _assert_reads_agree(memory, root, "without a usable ledger")
    os.unlink(ledger_dir)
    assert [m.text for m in memory.messages(SESSION)] == ["m0", "m1"]  # rebuilt
    assert os.path.isfile(_ledger_path(root))


# --- damage ----------------------------------------------------------------------------------
def _damage_truncate(path: str) -> None:
    size = os.path.getsize(path)
    with open(path, "r+b") as handle:
        handle.truncate(size // 2)


def _damage_header(path: str) -> None:
    with open(path, "r+b") as handle:
        handle.write(b"this is no database header")


def _damage_garbage(path: str) -> None:
    size = os.path.getsize(path)
    with open(path, "r+b") as handle:
        handle.seek(size // 3)
        handle.write(os.urandom(size // 3))


def _damage_empty(path: str) -> None:
    open(path, "w").close()


def _damage_rows(path: str) -> None:
    """Well-formed, and wrong: the rows claim other numbers than the files hold."""
    conn = sqlite3.connect(path)
    conn.execute("UPDATE files SET seq = seq + 7 WHERE kind = 0")
    conn.commit()
    conn.close()


@pytest.mark.parametrize("damage", [_damage_truncate, _damage_header, _damage_garbage,
                                    _damage_empty, _damage_rows])
def test_a_damaged_ledger_is_never_trusted(tmp_path, damage):
    root = str(tmp_path)
    memory = _project(root)
    for i in range(40):  # pages enough for a truncation to cut rows
        _write(memory, f"m{i} " + "x" * 200)
    memory.delete(memory.read(SESSION, start=3, block_size=1).messages[0].message_id, "soft")
    damage(_ledger_path(root))
    _assert_reads_agree(memory, root, f"after {damage.__name__}")
    assert memory.write(SESSION, "next", sender_kind="human", sender_identity="alice",
                        receiver_kind="model", receiver_identity="claude"
                        ).sequence_number == 40
    with Store(root) as store:
        from agent_memory.outbox.verify import verify
        report = verify(store)
    assert report["ok"], report["damage"]


def test_verify_reports_and_repair_mends(tmp_path):
    root = str(tmp_path)
    memory = _project(root)
    ids = [_write(memory, f"m{i}") for i in range(3)]
    conn = sqlite3.connect(_ledger_path(root))
    conn.execute("DELETE FROM files WHERE substr(name, 25, 36) = ?", (ids[1],))
    conn.commit()
    conn.close()
    with pytest.raises(AgentMemoryError) as found:
        memory.command("verify")
    assert found.value.code == "STORE_DAMAGED"
    damage = found.value.details["damage"]
    assert any(ids[1] in d["problem"] and d["file"].endswith(LEDGER_FILE) for d in damage)
    repaired = memory.command("verify", "--repair").data
    assert repaired["ok"] and repaired["repair"]["ledger"] == "rebuilt"
    assert [m.text for m in memory.messages(SESSION)] == ["m0", "m1", "m2"]


def test_a_new_boot_lists_every_session_again(tmp_path):
    """The ledger never fsyncs: a machine that went down may have lost its last rows while the
    directories kept their state. Such a ledger (a row gone, the directories as it recorded
    them) is trusted within a boot, and listed again after a new one."""
    root = str(tmp_path)
    memory = _project(root)
    _write(memory, "m0")
    lost = _write(memory, "lost with the boot")
    conn = sqlite3.connect(_ledger_path(root))
    conn.execute("DELETE FROM files WHERE substr(name, 25, 36) = ?", (lost,))
    conn.execute("UPDATE meta SET value = 'another-boot' WHERE key = 'boot'")
    conn.commit()
    conn.close()
    # A new process (the API keeps its store open; a new Store is a new connection).
    with Store(root) as store:
        from agent_memory.outbox.window import journal_window
        window, _bad = journal_window(store, SESSION, start=0, block_size=10, mode="full")
    assert [m["text"] for m in window["messages"]] == ["m0", "lost with the boot"]
    boot = sqlite3.connect(_ledger_path(root)).execute(
        "SELECT value FROM meta WHERE key = 'boot'").fetchone()[0]
    assert boot != "another-boot"


def test_the_ledger_is_the_projects_own(tmp_path):
    root = str(tmp_path)
    memory = _project(root)
    _write(memory, "m0")
    ledger_dir = os.path.join(root, ".agent-memory", LEDGER_DIR)
    assert os.stat(ledger_dir).st_mode & 0o777 == 0o700
    for name in os.listdir(ledger_dir):
        path = os.path.join(ledger_dir, name)
        if os.path.isfile(path):
            assert os.stat(path).st_mode & 0o777 == 0o600, name
    # Never a session: no command lists it as one, nor reports it as a stray.
    assert memory.sessions().sessions[0].session_id == SESSION
    assert memory.command("verify").data["ok"]
