"""agent_memory.Memory: each method answers what its command prints (the CLI run as a process
beside it), fails as it fails (an exception with the same code, message, details and exit
code), passes options it does not name through to the command, and `import agent_memory`
stays cheap."""

from __future__ import annotations

import subprocess
import sys

import pytest

import agent_memory
from amtest import message_args, wait_for


def _memory(project) -> agent_memory.Memory:
    return agent_memory.Memory(project.root, project.config)


def test_methods_answer_as_their_commands(agent_running, unique_session_id):
    project, sid = agent_running, unique_session_id
    memory = _memory(project)
    opened = memory.open_session(sid, "proj", ["alice", "claude"], ["human", "model"],
                                 title="T", metadata={"origin": "test"})
    assert opened.store == "logger" and opened.data["lifecycle"] == "open"
    first = memory.write(sid, "the first message", sender_kind="human", sender_identity="alice",
                         receiver_kind="model", receiver_identity="claude")
    second = memory.write(sid, "a reply to it", sender_kind="model", sender_identity="claude",
                          receiver_kind="human", receiver_identity="alice",
                          relations=[("reply", first.message_id)], attributes={"k": [1]})
    assert first.store == "logger" and first.sequence_number == 0 and first.forwarded
    # the logger embeds what it stores in its own time, and `get` says so: the answers compared
    # below are taken once both vectors are there, not across the change
    wait_for(lambda: all(memory.get(m).data["vectorization_state"] == "vectorized"
                         for m in (first.message_id, second.message_id)),
             "the logger's vectors of both messages")
    replay = project.cli("write", "--session-id", sid, "--sender-kind", "model",
                         "--sender-identity", "claude", "--receiver-kind", "human",
                         "--receiver-identity", "alice", "--text", "a reply to it",
                         "--message-id", second.message_id,
                         "--relation", f"reply:{first.message_id}", "--attributes", '{"k": [1]}')
    # a replay answers the first write's facts (and where the file lies now)
    assert {k: replay.data[k] for k in second.data} == second.data

    def same(answer, *argv):
        done = project.cli(*argv)
        assert done.rc == 0, done.stdout
        assert (answer.store, answer.data) == (done.out["store"], done.data), argv

    page = memory.read(sid)
    same(page, "read", "--session-id", sid)
    assert [m.text for m in page.messages] == ["the first message", "a reply to it"]
    assert page.messages[1].attributes == {"k": [1]} and not page.more
    same(memory.get(second.message_id), "get", second.message_id)
    same(memory.sessions(project_id="proj"), "sessions", "--project-id", "proj")
    same(memory.relations(sid), "relations", "--session-id", sid)
    same(memory.path(sid, second.message_id), "path", "--session-id", sid,
         "--node-id", second.message_id)
    same(memory.leaves(sid), "leaves", "--session-id", sid)
    same(memory.graph(sid, first.message_id, depth=2), "graph", "--session-id", sid,
         "--anchor", first.message_id, "--depth", "2")
    same(memory.info(), "info")
    same(memory.info("limits"), "info", "--section", "limits")
    same(memory.preview(session_id=sid, page_size=5), "read", "--preview", "--session-id", sid,
         "--page-size", "5")
    same(memory.search("first message", "session", sid), "search", "--query",
         "first message", "--scope", "session", "--target", sid)
    same(memory.working_set(sid, anchor_text="reply"), "working-set", "--session-id", sid,
         "--anchor-text", "reply")
    # the typed views of those answers: each its answer's fields, as attributes
    assert memory.relations(sid).relations == [{"from_message_id": second.message_id,
                                                "to_message_id": first.message_id,
                                                "kind": "reply"}]
    assert {n["message_id"] for n in memory.leaves(sid).nodes} == {second.message_id}
    assert memory.info().sections == memory.info().data["sections"]
    assert memory.info("limits").content["max_block_size"] == 1000
    assert len(memory.preview(session_id=sid).entries) == 2
    assert memory.status().totals["pending_messages"] == 0
    assert opened.session_id == sid and opened.lifecycle == "open"
    found = memory.search("first message", "session", sid)
    assert found.total == len(found.matches) == len(found.data["matches"]) >= 1
    assert found.matches[0].session_id == sid and found.matches[0].project_id == "proj"
    assert found.matches[0].message.message_id == first.message_id
    assert found.matches[0].score == found.data["matches"][0]["score"]
    assert [m.message.text for m in memory.working_set(sid, anchor_text="reply").recent] == \
        ["a reply to it", "the first message"]  # newest first
    assert [m.message_id for m in memory.path(sid, second.message_id).messages] == \
        [second.message_id, first.message_id]
    assert [(m.message_id, m.level) for m in memory.graph(sid, first.message_id).messages] \
        == [(first.message_id, 0), (second.message_id, 1)]
    assert [m.message_id for m in memory.messages(sid, block_size=1)] == \
        [first.message_id, second.message_id]  # page after page
    # forgetting, and its effect as the CLI sees it
    marking = memory.mark(second.message_id)
    assert marking.marked is True and marking.message_ids == [second.message_id]
    marked = marking.data
    repeated = project.cli("mark", second.message_id).data  # a repeat: the same effect
    assert {k: repeated[k] for k in marked} == marked
    assert [m["message_id"] for m in project.cli("read", "--session-id", sid).data["messages"]] \
        == [first.message_id]
    memory.mark(second.message_id, unmark=True)
    assert len(memory.read(sid).messages) == 2
    synced = memory.sync()
    assert synced.data == project.cli("sync").data and synced.totals["failed"] == 0
    closed = memory.close_session(sid)
    assert closed.data["lifecycle"] == "closed" and closed.lifecycle == "closed"
    with pytest.raises(agent_memory.RefusedError) as caught:
        memory.write(sid, "late", sender_kind="human", sender_identity="alice",
                     receiver_kind="model", receiver_identity="claude")
    assert caught.value.code == "SESSION_CLOSED"
    assert memory.reopen_session(sid).data["lifecycle"] == "open"


FAILURES = [
    # (method call, the same command's argv)
    (lambda m, sid: m.write(sid, "", sender_kind="human", sender_identity="a",
                            receiver_kind="model", receiver_identity="b"),
     lambda sid: message_args(sid, "", sender_identity="a", receiver_identity="b")),
    (lambda m, sid: m.write(sid, "x", sender_kind="robot", sender_identity="a",
                            receiver_kind="model", receiver_identity="b"),
     lambda sid: message_args(sid, "x", sender_kind="robot")),
    (lambda m, sid: m.get("6f1c8f0e-4b8e-4d53-9d5e-8a3c1f2e7b10"),
     lambda sid: ["get", "6f1c8f0e-4b8e-4d53-9d5e-8a3c1f2e7b10"]),
    (lambda m, sid: m.info("nonexistent"), lambda sid: ["info", "--section", "nonexistent"]),
    (lambda m, sid: m.delete_session(sid, confirm="other"),
     lambda sid: ["session", "delete", "--session-id", sid, "--confirm", "other"]),
    (lambda m, sid: m.read("../escape"), lambda sid: ["read", "--session-id", "../escape"]),
    (lambda m, sid: m.read(sid, bogus_option=1), lambda sid: ["read", "--session-id", sid,
                                                               "--bogus-option=1"]),
    # the values are checked as the command line checks them, without a command line
    (lambda m, sid: m.read(sid, block_size="12x"), lambda sid: ["read", "--session-id", sid,
                                                                 "--block-size", "12x"]),
    (lambda m, sid: m.write(sid, "caf\udce9", sender_kind="human", sender_identity="a",
                            receiver_kind="model", receiver_identity="b"),
     lambda sid: message_args(sid, "caf\udce9", sender_identity="a", receiver_identity="b")),
    (lambda m, sid: m.mark(), lambda sid: ["mark"]),
    (lambda m, sid: m.delete(sid, mode="gone"), lambda sid: ["delete", sid, "--mode", "gone"]),
    (lambda m, sid: m.agent("bogus"), lambda sid: ["agent", "bogus"]),
    (lambda m, sid: agent_memory.Memory(m.project_root, m.config, store="bogus").status(),
     lambda sid: ["--store", "bogus", "status"]),
]


@pytest.mark.parametrize("index", range(len(FAILURES)))
def test_failures_raise_what_the_command_answers(file_project, unique_session_id, index):
    call, argv = FAILURES[index]
    with pytest.raises(agent_memory.AgentMemoryError) as caught:
        call(_memory(file_project), unique_session_id)
    done = file_project.cli(*argv(unique_session_id))
    error = caught.value
    assert done.rc == error.exit_code != 0
    expected = {"code": done.out["error"]["code"], "message": done.out["error"]["message"],
                **({"details": done.out["error"]["details"]} if "details" in done.out["error"]
                   else {})}
    assert {k: v for k, v in error.as_dict().items() if k in expected} == expected
    assert error.meaning == agent_memory.api.errors.MEANINGS[done.rc]
    assert type(error) is agent_memory.api.errors._BY_EXIT_CODE[done.rc]


def test_exceptions_by_exit_code(tmp_path, monkeypatch, file_project):
    monkeypatch.chdir(tmp_path)
    missing = tmp_path / "no-store"
    missing.mkdir()
    with pytest.raises(agent_memory.StoreUnavailableError) as caught:
        agent_memory.Memory(missing).write("S", "x", sender_kind="human", sender_identity="a",
                                           receiver_kind="model", receiver_identity="b")
    assert caught.value.exit_code == 3 and "store" in caught.value.meaning
    with pytest.raises(agent_memory.NotFoundError) as caught:
        _memory(file_project).get("6f1c8f0e-4b8e-4d53-9d5e-8a3c1f2e7b10")
    assert caught.value.code == "MESSAGE_UNKNOWN" and isinstance(caught.value, LookupError)
    with pytest.raises(agent_memory.UsageError):
        _memory(file_project).read("S", block_size=0)
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(agent_memory.ConfigInvalidError) as caught:
        agent_memory.Memory(file_project.root, str(bad)).read("S")
    assert caught.value.exit_code == 6 and caught.value.details.get("problems")


def test_options_it_does_not_name_reach_the_command(file_project, unique_session_id):
    """A keyword the method does not declare is the command's option: the same check, the
    same effect (here `write --priority` by name and `--embed-budget` passed through)."""
    memory = _memory(file_project)
    written = memory.write(unique_session_id, "-starts with a dash", sender_kind="human",
                           sender_identity="a", receiver_kind="model", receiver_identity="b",
                           priority=3, wait=0, embed_budget=0)
    stored = memory.get(written.message_id)
    assert stored.text == "-starts with a dash" and stored.priority == 3
    assert len(memory.read(unique_session_id, start=1).messages) == 0
    with pytest.raises(agent_memory.UsageError) as caught:
        memory.read(unique_session_id, no_such_option=True)
    assert "--no-such-option" in caught.value.message


def test_import_is_cheap():
    """`import agent_memory` and reaching its API import neither the command line, the fleet
    clients nor a framework (until a call needs them)."""
    code = ("import sys, agent_memory; agent_memory.Memory; agent_memory.AsyncMemory; "
            "agent_memory.NotFoundError; agent_memory.MessagePage; "
            "print('\\n'.join(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    loaded = set(done.stdout.split())
    heavy = {"ailogger_client", "embed_client", "mcp_proxy_adapter", "agents", "langchain_core",
             "langchain", "langgraph",
             "pydantic", "msgspec", "numpy", "mcp", "agent_memory.cli.main",
             "agent_memory.cli.parser", "agent_memory.sync.engine", "argparse"}
    assert not heavy & loaded, heavy & loaded
    bare = subprocess.run([sys.executable, "-c", "import sys, agent_memory; "
                           "print(len([m for m in sys.modules if m.startswith('agent_memory')]))"],
                          capture_output=True, text=True, check=True)
    assert bare.stdout.strip() == "1"  # the package alone: its API is lazy


def test_the_same_budgets(file_project, unique_session_id):
    """The limits are the command's: 1 MiB of text is taken whole (more than one argument of a
    process may carry), one byte more is refused as the CLI refuses it (text on stdin); a read
    answers within the CLI's budget unless asked for more (`max_chars`, 0: everything)."""
    memory = _memory(file_project)
    limit = 1 << 20
    text = "é" * (limit // 2)  # 1 MiB of UTF-8 in two-byte characters
    written = memory.write(unique_session_id, text, sender_kind="human", sender_identity="a",
                           receiver_kind="model", receiver_identity="b")
    assert memory.get(written.message_id, max_chars=0).text == text
    budgeted = memory.get(written.message_id)
    cli = file_project.cli("get", written.message_id)
    assert budgeted.data == cli.data and len(cli.stdout) <= 25_000
    assert budgeted.text != text and budgeted.data["text_cut"]["length"] == len(text)
    with pytest.raises(agent_memory.UsageError) as caught:
        memory.write(unique_session_id, text + "x", sender_kind="human", sender_identity="a",
                     receiver_kind="model", receiver_identity="b")
    done = file_project.cli(*message_args(unique_session_id, None),
                            stdin=(text + "x").encode())
    assert done.rc == caught.value.exit_code == 2
    assert (caught.value.code, caught.value.message) == (done.code, done.out["error"]["message"])
    assert len(memory.read(unique_session_id).messages) == 1
