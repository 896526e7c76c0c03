"""What a long-lived process keeps (cli.warm.Warm): the same configuration and open store from
one command to the next while nothing changed, a fresh one as soon as something did; a
command's Context never closes the warm store; the Python API runs its calls on one holder."""

from __future__ import annotations

import argparse
import json
import os
import shutil

import pytest

import agent_memory
from agent_memory.cli.context import Context
from agent_memory.cli.warm import Warm
from agent_memory.outbox.availability import StoreUnavailable
from agent_memory.sync import config as config_mod, identity


def _dump(path: str, document: dict) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(document, handle)


def _replace(path: str, document: dict) -> None:
    """As an editor saves: a new file renamed over the old one."""
    _dump(path + ".new", document)
    os.replace(path + ".new", path)


def test_the_configuration_is_kept_until_its_file_changes(tmp_path):
    warm = Warm()
    path = str(tmp_path / "config.json")
    _dump(path, {"outbox": {"max_pending_messages": 10}})
    first = warm.config(path)
    assert warm.config(path) is first
    digest = identity.digest(first)
    assert warm.config(path)._identity_digest == digest  # computed once, kept with it
    _replace(path, {"outbox": {"max_pending_messages": 20}})  # same size, another inode
    second = warm.config(path)
    assert second is not first and second.outbox["max_pending_messages"] == 20
    assert identity.digest(second) != digest
    _dump(path, {"outbox": {"max_pending_messages": 300}})  # in place, another size
    assert warm.config(path).outbox["max_pending_messages"] == 300
    third = warm.config(path)
    os.chmod(path, 0o600)  # a mode change (the token warning depends on it) is a change too
    assert warm.config(path) is not third
    os.unlink(path)
    with pytest.raises(config_mod.ConfigInvalid):  # named but missing: as config.load says
        warm.config(path)
    warm.close()


def test_a_certificate_the_configuration_names_is_watched(tmp_path):
    """A CA file renewed in place is a new identity; removed, the configuration is invalid."""
    warm = Warm()
    ca = tmp_path / "ca.pem"
    ca.write_text("one")
    path = str(tmp_path / "config.json")
    _dump(path, {"ailogger_client": {"server": {"host": "localhost", "port": 1},
                                     "ssl": {"ca": str(ca)}}})
    first = warm.config(path)
    digest = identity.digest(first)
    ca.write_text("the renewed one")
    assert identity.digest(warm.config(path)) != digest
    ca.unlink()
    with pytest.raises(config_mod.ConfigInvalid):
        warm.config(path)
    warm.close()


def _context(root: str, warm: Warm) -> Context:
    args = argparse.Namespace(project_root=root, config=None, store="auto")
    return Context(args, warm=warm)


def test_the_store_stays_open_across_commands(file_project):
    warm = Warm()
    ctx = _context(file_project.root, warm)
    store = ctx.store()
    ctx.close()
    # the store keeps its directory descriptor private; a test looks at it to tell open from closed
    os.fstat(store._fd)  # still open: a command's Context does not close a warm store
    again = _context(file_project.root, warm)
    assert again.store() is store
    again.close()
    shutil.rmtree(file_project.store)
    with pytest.raises(StoreUnavailable):
        warm.store(file_project.root)
    with pytest.raises(OSError):
        os.fstat(store._fd)  # the stale one was closed
    assert file_project.cli("store", "init").rc == 0
    fresh = warm.store(file_project.root)
    assert fresh is not store and os.path.samestat(os.fstat(fresh._fd),
                                                   os.stat(file_project.store))
    warm.close()
    with pytest.raises(OSError):
        os.fstat(fresh._fd)  # the holder closes its stores at the end


def test_an_ignore_rule_changed_is_checked_again(file_project):
    warm = Warm()
    store = warm.store(file_project.root)
    exclude = os.path.join(file_project.root, ".git", "info", "exclude")
    with open(exclude, "a", encoding="utf-8") as handle:  # a rule that changes nothing
        handle.write("*.bak\n")
    assert warm.store(file_project.root) is not store  # checked again, still available
    ignore = os.path.join(file_project.root, ".gitignore")
    os.unlink(ignore)
    with pytest.raises(StoreUnavailable, match="not ignored"):
        warm.store(file_project.root)
    with open(exclude, "a", encoding="utf-8") as handle:  # the rule, elsewhere git reads
        handle.write("/.agent-memory/\n")
    warm.store(file_project.root)
    warm.close()


def test_a_pinned_store_is_checked_once_for_its_span_in_its_thread(file_project):
    """Inside `pinned` this thread's commands take the store checked as the span began, and
    the configuration as first loaded in it (a change meanwhile is seen after it); another
    thread checks as ever."""
    import threading
    warm = Warm()
    store = warm.store(file_project.root)
    exclude = os.path.join(file_project.root, ".git", "info", "exclude")
    with warm.pinned(file_project.root) as pinned:
        assert pinned is store
        with open(exclude, "a", encoding="utf-8") as handle:
            handle.write("*.bak\n")
        assert warm.store(file_project.root) is store  # not checked again inside the span
        assert warm.store(os.path.join(file_project.root, ".")) is store  # the same root
        with warm.pinned(file_project.root) as inner:  # a nested pin keeps the outer one
            assert inner is store
        assert warm.store(file_project.root) is store
        config = str(file_project.root) + "/pinned-config.json"
        _dump(config, {"outbox": {"max_pending_messages": 10}})
        first = warm.config(config)
        _replace(config, {"outbox": {"max_pending_messages": 20}})
        assert warm.config(config) is first  # the configuration too, once in the span
        other: list = []
        thread = threading.Thread(target=lambda: other.append(warm.store(file_project.root)))
        thread.start()
        thread.join()
        assert other[0] is not store  # another thread is not in the span: it checked
    assert warm.store(file_project.root) is other[0]  # after it, checks resume
    assert warm.config(config).outbox["max_pending_messages"] == 20
    warm.close()


def test_the_api_sees_a_configuration_edited_between_calls(file_project, tmp_path):
    config = str(tmp_path / "api-config.json")
    _dump(config, {"outbox": {"max_pending_messages": 1}})
    memory = agent_memory.Memory(file_project.root, config)
    memory.write("warm-api", "first", sender_kind="human", sender_identity="alice",
                 receiver_kind="model", receiver_identity="claude")
    with pytest.raises(agent_memory.AgentMemoryError) as refused:
        memory.write("warm-api", "over the cap", sender_kind="human", sender_identity="alice",
                     receiver_kind="model", receiver_identity="claude")
    assert refused.value.code == "OUTBOX_FULL"
    _dump(config, {"outbox": {"max_pending_messages": 10}})
    written = memory.write("warm-api", "under the raised cap", sender_kind="human",
                           sender_identity="alice", receiver_kind="model",
                           receiver_identity="claude")
    assert written.sequence_number == 1


def test_a_linked_work_tree_watches_the_common_exclude_file(tmp_path):
    """In a linked work tree (`.git` is a file), the rule may live in the repository's common
    info/exclude: taken out there, the next look refuses the store."""
    import subprocess

    main = tmp_path / "main"
    subprocess.run(["git", "init", "-q", str(main)], check=True)
    subprocess.run(["git", "-C", str(main), "-c", "user.name=t", "-c", "user.email=t@t",
                    "commit", "-q", "--allow-empty", "-m", "first"], check=True)
    linked = tmp_path / "linked"
    subprocess.run(["git", "-C", str(main), "worktree", "add", "-q", str(linked)], check=True)
    assert (linked / ".git").is_file()
    exclude = main / ".git" / "info" / "exclude"
    exclude.write_text("/.agent-memory/\n")
    (linked / ".agent-memory").mkdir(mode=0o700)
    warm = Warm()
    store = warm.store(str(linked))
    assert warm.store(str(linked)) is store
    exclude.write_text("# nothing ignored\n")
    with pytest.raises(StoreUnavailable, match="not ignored"):
        warm.store(str(linked))
    warm.close()


def test_a_store_is_checked_by_git_again_after_a_while(file_project, monkeypatch):
    """Rules git reads from places not watched (a core.excludesFile set in a configuration not
    looked at, say) are seen within RECHECK_SECONDS."""
    from agent_memory.cli import warm as warm_mod

    warm = Warm()
    store = warm.store(file_project.root)
    assert warm.store(file_project.root) is store
    monkeypatch.setattr(warm_mod, "RECHECK_SECONDS", 0.0)
    assert warm.store(file_project.root) is not store
    warm.close()
