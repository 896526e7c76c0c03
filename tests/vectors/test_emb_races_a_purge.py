"""An `.emb` written while a purge takes its message never outlives it. The two orders a real
race can take are forced here, in-process on a real store: the whole purge between the
writer's look for the `.msg` and its write, and the writer's whole write between the purge's
listing of the session directory and its unlinks. (The end-to-end race, an `embed` backfill
against hard deletes, is in tests/sync/test_purge_leaves_no_bytes.py.)"""

from __future__ import annotations

import os

import pytest

from agent_memory.outbox import encoding
from agent_memory.outbox.store import Store
from agent_memory.sync import forgetting
from agent_memory.sync.vectors.emb import write_vector
from amtest import make_project, message_args, open_args


@pytest.fixture
def written(tmp_path):
    """(project, session_id, message_id, .msg name): one message, pending, without `.emb`."""
    project = make_project(tmp_path)
    assert project.cli(*open_args("s1")).rc == 0
    result = project.cli("--store", "file", *message_args("s1", "racing words"))
    assert result.rc == 0, result.stdout
    message_id = result.data["message_id"]
    [name] = [n for n in project.files("s1") if message_id in n]
    return project, "s1", message_id, name


def _vector(message_id: str) -> dict:
    return encoding.vector(message_id=message_id, model="hash-8", dimension=8,
                           embedding=[0.5, 0.5, 0.5, 0.5, 0.0, 0.0, 0.0, 0.0])


def _left(project, message_id: str) -> list[str]:
    return [os.path.join(w, n) for w, _d, files in os.walk(project.store) for n in files
            if message_id in n]


class PurgedInTheWindow:
    """The store, whose `.emb` writes first run the whole purge of the message."""

    def __init__(self, store: Store, session_id: str, message_id: str) -> None:
        self._store, self._session_id, self._message_id = store, session_id, message_id

    def __getattr__(self, name):
        return getattr(self._store, name)

    def append_vector(self, *args):
        forgetting.purge_message(self._store, self._session_id, self._message_id)
        return self._store.append_vector(*args)


def test_a_purge_between_the_look_and_the_write_leaves_no_emb(written):
    project, session_id, message_id, name = written
    with Store(project.root) as store:
        racing = PurgedInTheWindow(store, session_id, message_id)
        assert write_vector(racing, session_id, name, _vector(message_id)) is False
    assert _left(project, message_id) == []


def test_a_write_between_the_purges_listing_and_its_unlinks_leaves_no_emb(written,
                                                                         monkeypatch):
    project, session_id, message_id, name = written
    wrote = []

    with Store(project.root) as store:
        real_remove = store.remove

        def write_then_remove(session, area, doomed):
            if not wrote and name in doomed:  # the purge has listed the `.msg`, not unlinked it
                wrote.append(write_vector(store, session_id, name, _vector(message_id)))
            return real_remove(session, area, doomed)

        monkeypatch.setattr(store, "remove", write_then_remove)
        forgetting.purge_message(store, session_id, message_id)
        monkeypatch.undo()
    assert wrote == [True], "the writer still saw its message: it keeps its .emb"
    assert _left(project, message_id) == []
