"""Helpers for the reference-fleet contract tests: run coroutines, build items, import fast."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import ailogger_client
from ailogger_client import queued_methods

KINDS = ("human", "model")


def run(coro):
    return asyncio.run(coro)


def new_id() -> str:
    return str(uuid.uuid4())


def item(session_id: str, text: str = "a plain message", **extra: Any) -> dict[str, Any]:
    """One import item (message_id and occurred_at filled in)."""
    out = {"session_id": session_id, "text": text, "sender_kind": "human",
           "sender_identity": "alice", "receiver_kind": "model", "receiver_identity": "gpt",
           "message_id": new_id(), "occurred_at": "2026-01-02T03:04:05.678Z"}
    out.update(extra)
    return out


async def open_session(client, session_id: str, project: str = "proj", **extra: Any) -> dict:
    return await client.open_session(session_id, project, KINDS, ["alice", "gpt"], **extra)


async def append(client, session_id: str, text: str = "a plain message", **extra: Any) -> dict:
    return await client.append_message(session_id, text, "human", "alice", "model", "gpt",
                                       **extra)


async def refused(awaitable) -> ailogger_client.ServiceRefusalError:
    """The ServiceRefusalError the call raises (fails the test when it does not)."""
    try:
        answer = await awaitable
    except ailogger_client.ServiceRefusalError as exc:
        return exc
    raise AssertionError(f"expected a refusal, got {answer!r}")


async def job_raw(client, job_id: str, timeout: float = 30.0) -> Any:
    """Poll the job every 20 ms (the client's own wait polls every 1 s) until it ends."""
    deadline = time.monotonic() + timeout
    while True:
        snapshot = await client.get_job_status(job_id, sync_from_queue=True)
        if snapshot.is_terminal:
            return snapshot.summary.get("last_queue_poll", snapshot.summary)
        assert time.monotonic() < deadline, f"job {job_id} did not finish"
        await asyncio.sleep(0.02)


async def import_fast(client, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """messages_import through the client's own submit and result extraction, polled quickly."""
    job_id = await client.messages_import_submit(items)
    raw = await job_raw(client, job_id)
    refusal = queued_methods._find_refusal(raw, "messages_import")
    if refusal is not None:
        raise refusal
    result = queued_methods._find_result_array(raw)
    assert result is not None, raw
    return [dict(entry) for entry in result]
