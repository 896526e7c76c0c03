"""Forgetting is idempotent: each forgetting command repeated three times, across the logger
down, flapping and up, answers success every time and leaves nothing to fail later; a pending
forgetting event whose effect the logger already shows (done directly meanwhile) is confirmed,
not refused."""

from __future__ import annotations

import asyncio

import pytest

from amtest import make_project, message_args, open_args
from test_forgetting_sync import _logger_view

pytestmark = pytest.mark.slow


def _write(project, session_id, text):
    result = project.cli(*message_args(session_id, text))
    assert result.rc == 0 and result.out["store"] == "logger", result.stdout
    return result.data["message_id"]


def test_each_forgetting_command_repeated_across_down_flapping_and_up(tmp_path, fleet_factory):
    fleet = fleet_factory()
    project = make_project(tmp_path, config=str(fleet.config_path))
    for session_id in ("S", "T"):
        assert project.cli(*open_args(session_id)).rc == 0
    soft, hard, marked, kept = (_write(project, "S", text)
                                for text in ("soft one", "hard one", "marked one", "kept one"))
    _write(project, "T", "a whole session")
    commands = [("delete", soft, "--mode", "soft"), ("delete", hard, "--mode", "hard"),
                ("mark", marked), ("session", "delete", "--session-id", "T", "--confirm", "T")]

    def each(phase, *extra):
        answers = []
        for command in commands:
            result = project.cli(*extra, *command, "--wait", "0.2")
            assert result.rc == 0, (phase, command, result.stdout)
            answers.append(result.data)
        return answers

    fleet.control.go_down("logger")
    first = each("down")
    assert all(a["pending"] for a in first), first
    again = each("down again")
    assert [a.get("file") for a in again] == [a.get("file") for a in first]  # nothing new
    fleet.control.come_up("logger")
    fleet.control.set_faults("logger", drop=True)  # flapping: connections cut unanswered
    each("flapping")
    fleet.control.clear_faults()
    # up: the last repeats, two of them straight to the logger (`--store logger`), so the
    # pending events then find their effect done already
    assert project.cli("--store", "logger", *commands[1], "--wait", "0").rc == 0
    assert project.cli("--store", "logger", *commands[3], "--wait", "0").rc == 0
    each("up")

    synced = project.cli("sync")
    assert synced.rc == 0, synced.stdout
    totals = project.cli("status").data["totals"]
    assert (totals["pending_messages"], totals["pending_events"], totals["quarantined"]) == \
        (0, 0, 0), totals
    held = _logger_view(fleet, "S")  # (text, soft_deleted): the hard one gone, each once
    assert sorted(held) == [("kept one", False), ("marked one", True), ("soft one", True)], held
    assert _logger_view(fleet, "T") is None
    # and a fourth time, everything landed: still success, nothing written, nothing to send
    each("after")
    assert project.cli("sync").rc == 0
    totals = project.cli("status").data["totals"]
    assert (totals["pending_events"], totals["quarantined"]) == (0, 0), totals


def test_a_pending_session_delete_done_directly_meanwhile_is_confirmed(tmp_path, fleet_factory):
    """The issue's sequence: a session delete waits (logger down), is repeated (still
    pending: the same answer), then the session is deleted at the logger by another route;
    the pending event then finds it gone: confirmed, never quarantined."""
    fleet = fleet_factory()
    project = make_project(tmp_path, config=str(fleet.config_path))
    assert project.cli(*open_args("U")).rc == 0
    _write(project, "U", "to go")
    fleet.control.go_down("logger")
    first = project.cli("session", "delete", "--session-id", "U", "--confirm", "U")
    second = project.cli("session", "delete", "--session-id", "U", "--confirm", "U")
    assert first.rc == second.rc == 0 and first.data["file"] == second.data["file"], \
        (first.stdout, second.stdout)
    fleet.control.come_up("logger")

    async def delete_at_the_logger():
        async with fleet.logger_client() as client:
            await client.delete_session(session_id="U")
    asyncio.run(delete_at_the_logger())
    for _ in range(3):
        synced = project.cli("sync")
        assert synced.rc == 0, synced.stdout
    totals = project.cli("status").data["totals"]
    assert (totals["pending_events"], totals["quarantined"]) == (0, 0), totals
