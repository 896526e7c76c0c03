"""agent_memory.AsyncMemory from several threads, each with its own event loop, and the
project's agent started in auto mode as a command starts it, then collected once it exits."""

from __future__ import annotations

import asyncio
import os
import threading
import time

import pytest

import agent_memory


def test_threads_with_their_own_loops(file_project, unique_session_id):
    """One AsyncMemory shared by 4 threads, each running its own event loop: every write
    lands, each thread's in the order it made them, and the store verifies clean."""
    memory = agent_memory.AsyncMemory(file_project.root)
    failures: list[BaseException] = []

    async def writer(n: int) -> None:
        await memory.open_session(f"{unique_session_id}-{n}", "proj", [f"t{n}", "m"])
        for i in range(10):
            await memory.write(f"{unique_session_id}-{n}", f"t{n} m{i}", sender_kind="human",
                               sender_identity=f"t{n}", receiver_kind="model",
                               receiver_identity="m")
            await memory.write(unique_session_id, f"t{n} m{i}", sender_kind="human",
                               sender_identity=f"t{n}", receiver_kind="model",
                               receiver_identity="m")

    def thread(n: int) -> None:
        try:
            asyncio.run(writer(n))
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    threads = [threading.Thread(target=thread, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not failures, failures

    async def check() -> None:
        for n in range(4):
            page = await memory.read(f"{unique_session_id}-{n}")
            assert [m.text for m in page.messages] == [f"t{n} m{i}" for i in range(10)]
        shared = [m.text for m in await memory.messages(unique_session_id)]
        assert len(shared) == 40
        for n in range(4):
            assert [t for t in shared if t.startswith(f"t{n} ")] == \
                [f"t{n} m{i}" for i in range(10)]
        assert (await memory.command("verify")).data is not None
    asyncio.run(check())


@pytest.mark.slow
def test_auto_mode_starts_the_agent_and_collects_it(api_project, monkeypatch,
                                                     unique_session_id):
    """In auto mode a call that found no agent starts one after answering, as a command
    does; once it exits, the next call collects its exit status (no zombie is left in the
    caller's process)."""
    from agent_memory.cli import agent_client
    monkeypatch.delenv("AGENT_MEMORY_AGENT")
    memory = agent_memory.Memory(api_project.root, api_project.config)
    try:
        memory.open_session(unique_session_id, "proj", ["a", "b"])
        written = memory.write(unique_session_id, "hello", sender_kind="human",
                               sender_identity="a", receiver_kind="model",
                               receiver_identity="b")
        # left to the agent it started, which forwards it once it is up
        assert written.store == "file" and "starting" in written.reason, written
        deadline = time.monotonic() + 30
        status = memory.agent("status").data
        while not status.get("running") and time.monotonic() < deadline:
            time.sleep(0.1)
            status = memory.agent("status").data
        assert status["running"], status
        pid = status["pid"]
        assert pid in agent_client.STARTED  # started by this process
        assert memory.read(unique_session_id).messages[0].text == "hello"
    finally:
        assert memory.agent("stop").data is not None
    deadline = time.monotonic() + 10
    while pid in agent_client.STARTED and time.monotonic() < deadline:
        time.sleep(0.1)
        memory.status()  # any call collects what exited
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
