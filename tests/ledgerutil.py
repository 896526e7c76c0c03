"""What the ledger tests share: a file-store project for the Python API, and reads compared
with the oracle, outbox.views.journal_window over every message the session's files hold (a
listing and a decode of each: what `read` answered before the ledger existed)."""

from __future__ import annotations

import os

from agent_memory.api.errors import AgentMemoryError
from agent_memory.api.memory import Memory
from agent_memory.outbox import views
from agent_memory.outbox.ledger import LEDGER_DIR, LEDGER_FILE
from agent_memory.outbox.store import Store

SESSION = "s1"
MOMENT = "2026-01-02T03:04:05.678Z"  # a shared --occurred-at (a replayed transcript)


def _project(root) -> Memory:
    os.makedirs(os.path.join(root, ".agent-memory"), exist_ok=True)  # outside git: no rule needed
    return Memory(root, store="file", no_agent=True)


def _write(memory: Memory, text: str, **extra) -> str:
    return memory.write(SESSION, text, sender_kind="human", sender_identity="alice",
                        receiver_kind="model", receiver_identity="claude", **extra).message_id


def _oracle(root: str, start: int, block_size: int, mode: str, show_deleted: bool) -> dict:
    """The window as the files alone say (no ledger involved)."""
    with Store(root) as store:
        messages, unreadable = store.messages(SESSION)
        events = store._listed_events(SESSION)[0]
        if views.deleted_session(events) or not store.files(SESSION, None, ("pending",
                                                                           "imported",
                                                                           "quarantined")):
            return {"unknown": True}
        window = views.journal_window(messages, start=start, block_size=block_size, mode=mode,
                                      forgotten=views.forgotten(events),
                                      show_deleted=show_deleted)
    data = {"session_id": SESSION, **window}
    if unreadable:
        data["warnings"] = [u.warning() for u in unreadable]
    return data


def _read(memory: Memory, start: int, block_size: int, mode: str, show_deleted: bool) -> dict:
    try:
        return memory.command("read", "--session-id", SESSION, "--start", str(start),
                              "--block-size", str(block_size), "--mode", mode,
                              *(["--show-deleted"] if show_deleted else []),
                              "--max-chars", "0").data
    except AgentMemoryError as exc:
        assert exc.code == "SESSION_UNKNOWN", exc
        return {"unknown": True}


def _whole(memory_or_root, mode: str, show_deleted: bool, block_size: int, read) -> list:
    """Every block of the journal, following the continuations."""
    out, start = [], 0
    for _ in range(500):
        data = read(memory_or_root, start, block_size, mode, show_deleted)
        out.append(data)
        if data.get("unknown") or not data.get("more"):
            return out
        start = int(data["continuation"].split(":")[-1]) if ":" in data["continuation"] else \
            _decode(data["continuation"])
    raise AssertionError("the continuations never ended")


def _decode(token: str) -> int:
    from agent_memory.outbox.contract import decode_continuation
    return decode_continuation(token)


def _assert_reads_agree(memory: Memory, root: str, why: str, sizes=(1, 3, 50)) -> None:
    """Every block of both modes, with and without the soft-deleted, at each block size."""
    for mode, shown, size in [(mode, shown, size) for mode in ("resolved", "full")
                              for shown in (False, True) for size in sizes]:
        ours = _whole(memory, mode, shown, size, _read)
        oracle = _whole(root, mode, shown, size, _oracle)
        assert ours == oracle, (why, mode, shown, size)
    for start in (2, 5):
        assert _read(memory, start, 2, "resolved", False) == \
            _oracle(root, start, 2, "resolved", False), (why, start)


def _ledger_path(root: str) -> str:
    return os.path.join(root, ".agent-memory", LEDGER_DIR, LEDGER_FILE)


def _oracle_get(root: str, message_id: str) -> dict:
    """`get` as the files alone say: the message found by listing, the session's events
    decoded from a listing (no ledger involved)."""
    with Store(root) as store:
        file = store._listed_locate(message_id, None, True)
        if file is None:
            return {"unknown": True}
        found = store.load(file, "message")
        forgotten = views.forgotten(store._listed_events(file.session_id)[0])
        if message_id in forgotten.purged:
            return {"unknown": True}
        from agent_memory.outbox.store import StoredMessage
        entry = forgotten.apply([views.message_entry(StoredMessage(file, found))])[0]
        vectors = {f.item_id for f in store.files(file.session_id, ".emb", (file.area,))}
        entry["vectorization_state"] = "vectorized" if message_id in vectors else "pending"
        return entry


def _get(memory: Memory, message_id: str) -> dict:
    try:
        return memory.command("get", message_id, "--max-chars", "0").data
    except AgentMemoryError as exc:
        assert exc.code == "MESSAGE_UNKNOWN", exc
        return {"unknown": True}


def _assert_gets_agree(memory: Memory, root: str, message_ids, why: str) -> None:
    for message_id in message_ids:
        assert _get(memory, message_id) == _oracle_get(root, message_id), (why, message_id)
