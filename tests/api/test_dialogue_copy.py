"""The copy a framework session keeps (integrations.dialogue): read incrementally, it answers
exactly what a whole read of the session answers, after each kind of change, whoever made it:
its own writes, another writer of the project (in this process and in another), a correction,
a soft delete, a mark, a hard delete, a session closed and reopened, the ledger deleted. And
in the common case it did read incrementally (its list kept, not read again), its own batch
added as written."""

from __future__ import annotations

import shutil
import subprocess
import sys

from agent_memory.api.memory import Memory
from agent_memory.integrations.dialogue import Dialogue, Entry
from agent_memory.outbox.ledger import LEDGER_DIR

KEY = "test_item"


def _entry(text: str) -> Entry:
    return Entry("human", "alice", "model", "claude", text, {"text": text})


def _fresh(project, sid: str) -> list[tuple]:
    """A whole read: a new dialogue holds no copy."""
    return _shown(Dialogue(sid, KEY, project_root=project.root).messages())


def _shown(messages) -> list[tuple]:
    return [(m.message_id, m.text, (m.attributes or {}).get(KEY)) for m in messages]


def _write(memory: Memory, sid: str, text: str, **extra) -> str:
    return memory.write(sid, text, sender_kind="human", sender_identity="bob",
                        receiver_kind="model", receiver_identity="claude", **extra).message_id


def test_the_copy_answers_as_a_whole_read_after_every_change(file_project, unique_session_id):
    sid = unique_session_id
    dialogue = Dialogue(sid, KEY, project_root=file_project.root,
                        participants=["alice", "claude"])
    other = Memory(file_project.root)

    def check(why: str) -> list:
        copy = dialogue.messages()
        assert _shown(copy) == _fresh(file_project, sid), why
        assert copy == Dialogue(sid, KEY, project_root=file_project.root).messages(), why
        assert _shown(dialogue.messages(2)) == _shown(copy)[-2:], why
        return copy

    dialogue.append([_entry("one"), _entry("two")])
    check("its own writes")
    kept = dialogue._copy
    dialogue.append([_entry("three")])
    # its own batch, alone in the session's change, is added to the copy as it is written
    assert dialogue._copy_revision == other.revision(sid)
    check("one more of its own")
    _write(other, sid, "from another writer here")
    check("another writer in this process")
    _write(other, sid, "another, before its next batch")
    dialogue.append([_entry("four")])
    assert dialogue._copy_revision != other.revision(sid)  # not all the batch's own
    check("another writer, then its own batch")
    subprocess.run([sys.executable, "-c",
                    "import sys; from agent_memory.api.memory import Memory; "
                    "Memory(sys.argv[1]).write(sys.argv[2], 'from another process', "
                    "sender_kind='human', sender_identity='carol', receiver_kind='model', "
                    "receiver_identity='claude')", file_project.root, sid],
                   env=file_project.env, check=True)
    check("another process")
    assert dialogue._copy is kept  # every change so far was read incrementally
    ids = [m.message_id for m in dialogue.messages()]
    other.delete(ids[0], "soft", session_id=sid)
    check("a soft delete")
    other.mark(ids[1])
    check("a mark")
    other.delete(ids[2], "hard", session_id=sid)
    check("a hard delete")
    _write(other, sid, "three, corrected", corrects=ids[3])
    check("a correction")
    kept = dialogue._copy
    dialogue.append([_entry("after the correction")])
    check("a write after a correction")
    assert dialogue._copy is kept  # the correction, read whole once, is not read again
    other.close_session(sid)
    other.reopen_session(sid)
    dialogue.append([_entry("after the reopen")])
    check("closed and reopened")
    shutil.rmtree(f"{file_project.root}/.agent-memory/{LEDGER_DIR}")
    dialogue.append([_entry("the ledger was deleted")])
    check("the ledger deleted")
    _write(other, sid, "and one more")
    assert [m.text for m in check("after a rebuild")][-2:] == ["the ledger was deleted",
                                                             "and one more"]
