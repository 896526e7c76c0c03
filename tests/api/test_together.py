"""A framework's batch of items (integrations/dialogue.py, Dialogue.append) is written with
each file fsynced before the next and the session's directory fsynced once at the end, before
the ids are handed back; a write outside a batch syncs its directory itself. Observed by
recording every fsync the process makes (the real fsync still runs)."""

from __future__ import annotations

import os

from agent_memory.integrations.dialogue import Dialogue, Entry


def _recording(monkeypatch) -> list[tuple[int, int]]:
    """(device, inode) of everything fsynced, in order."""
    synced: list[tuple[int, int]] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        info = os.fstat(fd)
        real(fd)
        synced.append((info.st_dev, info.st_ino))
    monkeypatch.setattr(os, "fsync", fsync)
    return synced


def _entry(text: str) -> Entry:
    return Entry("human", "alice", "model", "claude", text, {"role": "user", "content": text})


def test_a_batch_syncs_its_directory_once_before_answering(file_project, monkeypatch):
    dialogue = Dialogue("batch", "test_item", project_root=file_project.root)
    dialogue.append([_entry("first")])  # opens the session, makes its directory
    directory = os.stat(os.path.join(file_project.store, "batch"))
    here = (directory.st_dev, directory.st_ino)
    synced = _recording(monkeypatch)
    ids = dialogue.append([_entry("second"), _entry("third"), _entry("fourth")])
    assert len(ids) == 3
    assert synced.count(here) == 1 and synced[-1] == here  # once, last, before the answer
    files = [(s, i) for s, i in synced if (s, i) != here]
    assert len(files) == 3  # each file fsynced whole
    names = set(os.listdir(os.path.join(file_project.store, "batch")))
    assert all(any(n.endswith(f"-{i}.msg") for n in names) for i in ids)


def test_a_single_write_syncs_its_directory_itself(file_project, monkeypatch):
    from agent_memory.api.memory import Memory
    memory = Memory(file_project.root)
    memory.write("single", "one", sender_kind="human", sender_identity="alice",
                 receiver_kind="model", receiver_identity="claude")
    directory = os.stat(os.path.join(file_project.store, "single"))
    synced = _recording(monkeypatch)
    for text in ("two", "three"):
        memory.write("single", text, sender_kind="human", sender_identity="alice",
                     receiver_kind="model", receiver_identity="claude")
    assert synced.count((directory.st_dev, directory.st_ino)) == 2
