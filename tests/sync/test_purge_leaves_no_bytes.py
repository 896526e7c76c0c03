"""A purge leaves no byte of the text anywhere we can look: secrets that reached the reference
logger (and were vectorized there) are hard-deleted or deleted with their session, with the
logger up, down and flapping, and with an `embed` backfill racing the purges; then every file
under the project and under the fleet's data directory is searched for each secret, in UTF-8 and
UTF-16. Kept messages are found the same way (the search works), and no `.emb` is left for a
deleted message."""

from __future__ import annotations

import asyncio
import os
import threading
import uuid

import pytest

from amtest import make_project, message_args, open_args, wait_for

pytestmark = pytest.mark.slow

ENCODINGS = ("utf-8", "utf-16-le", "utf-16-be")


def _secret(kind: str) -> tuple[str, str]:
    """(token, text): the token is what is searched for, in every encoding."""
    token = f"sekret{uuid.uuid4().hex[:16]}"
    return token, f"{kind}: the vault code is {token}, пароль ключ"


def _write(project, session_id: str, text: str) -> str:
    result = project.cli("--store", "file", *message_args(session_id, text))
    assert result.rc == 0, result.stdout
    return result.data["message_id"]


def _files_under(folder) -> dict[str, bytes]:
    out = {}
    for where, _dirs, files in os.walk(folder):
        for name in files:
            path = os.path.join(where, name)
            try:
                with open(path, "rb") as handle:
                    out[path] = handle.read()
            except OSError:
                continue
    return out


def _found(folder, tokens) -> dict[str, list[str]]:
    """token -> the files holding it in any encoding."""
    files = _files_under(folder)
    hits = {}
    for token in tokens:
        needles = [token.encode(e) for e in ENCODINGS]
        paths = [p for p, data in files.items() if any(n in data for n in needles)]
        if paths:
            hits[token] = paths
    return hits


def _names_with(folder, message_ids) -> list[str]:
    return [os.path.join(w, n) for w, _d, files in os.walk(folder) for n in files
            if any(m in n for m in message_ids)]


def _vectorized(fleet, message_ids) -> bool:
    async def go() -> bool:
        async with fleet.logger_client() as client:
            for message_id in message_ids:
                entry = (await client.message_get(message_id=message_id))["data"]
                if entry["vectorization_state"] != "vectorized":
                    return False
        return True
    return asyncio.run(go())


def _everything_forwarded(project, sessions) -> bool:
    result = project.cli("sync")
    return result.rc == 0 and all(project.final_files(s) == [] for s in sessions)


class Flapper:
    """Switches the logger's `drop` on and off every `period` seconds until stopped."""

    def __init__(self, control, period: float = 0.25) -> None:
        self.control, self.period = control, period
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        drop = True
        while not self.stop.is_set():
            self.control.set_faults("logger", drop=drop)
            drop = not drop
            self.stop.wait(self.period)
        self.control.set_faults("logger", drop=False)

    def __enter__(self) -> "Flapper":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join()


def test_a_purge_leaves_no_byte_of_the_text_in_the_project_nor_the_reference_fleet(
        tmp_path, fleet_factory):
    fleet = fleet_factory()
    control = fleet.control
    project = make_project(tmp_path, config=str(fleet.config_path))
    sessions = ["s-keep", "s-up", "s-down", "s-flap", "s-race", "g-down", "g-flap"]
    for session_id in sessions:
        assert project.cli(*open_args(session_id)).rc == 0
    written: dict[str, dict[str, str]] = {}  # session -> token -> message id
    for session_id in sessions:
        if session_id == "s-race":
            continue
        written[session_id] = {}
        for _ in range(2):
            token, text = _secret(session_id)
            written[session_id][token] = _write(project, session_id, text)
    assert project.cli("embed").data["written"] == 12, "each gets its .emb"
    kept = written.pop("s-keep")
    doomed = {t: m for tokens in written.values() for t, m in tokens.items()}
    race = {}  # no `.emb` yet: the backfill below makes them while they are purged
    for _ in range(6):
        token, text = _secret("s-race")
        race[token] = _write(project, "s-race", text)
    doomed.update(race)
    assert _everything_forwarded(project, sessions)

    wait_for(lambda: _vectorized(fleet, list(kept.values()) + list(doomed.values())),
             "the logger vectorized every message", timeout=30)
    assert set(_found(fleet.data_dir, doomed)) == set(doomed), "the search finds what is there"

    for message_id in written["s-up"].values():  # the logger up: deleted there at once
        assert project.cli("delete", message_id, "--mode", "hard").rc == 0

    control.go_down("logger")
    for message_id in written["s-down"].values():
        assert project.cli("delete", message_id, "--mode", "hard").rc == 0
    assert project.cli("session", "delete", "--session-id", "g-down", "--confirm",
                       "g-down").rc == 0
    control.come_up("logger")
    assert project.cli("sync").rc == 0

    with Flapper(control):
        for message_id in written["s-flap"].values():
            assert project.cli("delete", message_id, "--mode", "hard").rc == 0
        assert project.cli("session", "delete", "--session-id", "g-flap", "--confirm",
                           "g-flap").rc == 0
        for _ in range(2):
            project.cli("sync")  # a transport failure here and there: exit 0 or 3

    control.set_faults("embedder", delay=0.4)  # one text per call: the backfill runs long
    started = [project.popen("embed", "--batch", "1")]
    try:
        wait_for(lambda: any(n.endswith(".emb") for n in
                             _names_with(project.store, race.values())),
                 "the backfill wrote its first vector", timeout=20)
        started += [project.popen("delete", race[token], "--mode", "hard")  # all at once:
                    for token in reversed(list(race))]  # purged before, while or after embedded
        for delete in started[1:]:
            delete_out, delete_err = delete.communicate(timeout=60)
            assert delete.returncode == 0, (delete_out, delete_err)
        backfill = started[0]
        out, err = backfill.communicate(timeout=60)
    finally:
        for process in started:
            if process.poll() is None:
                process.kill()
                process.wait()
    assert backfill.returncode == 0, (out, err)
    control.clear_faults()
    wait_for(lambda: _everything_forwarded(project, sessions), "every event forwarded",
             timeout=30)

    assert [s for s in sessions if not s.startswith("g-") and
            any(e["message_id"] in doomed.values() for e in fleet.read_session(s))] == []
    assert _names_with(tmp_path, doomed.values()) == [], "no .msg or .emb of a deleted message"
    assert _found(tmp_path, doomed) == {}, "the project"
    assert _found(fleet.data_dir, doomed) == {}, "the reference fleet's data directory"
    assert set(_found(fleet.data_dir, kept)) == set(kept), "what is kept is still found"
    assert set(_found(project.store, kept)) == set(kept)

