"""The MCP server keeps its configuration and store warm between calls (cli.warm), and still
sees every change a fresh CLI process would: a configuration edited, created or broken between
two calls; the store removed, recreated, or no longer ignored by git (including a `git init`
made after the store was opened). One server per test, real files, the SDK's client."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import anyio

from amtest import make_project
from test_mcp import call, mcp_session, outbox_files, scratch, write_arguments  # noqa: F401

SID = "warm-session"


def _write_json(path: str, document: dict) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(document, handle)


async def _write(session, text: str):
    return await call(session, "write", **write_arguments(SID, text))


def test_an_edited_configuration_is_seen_by_the_next_call(scratch):
    """The outbox cap, edited between calls: the next write obeys it; broken, the next call
    says so (exit 6); fixed again, writes go on."""
    project = make_project(scratch)
    config = os.path.join(scratch, "config.json")
    _write_json(config, {"outbox": {"max_pending_messages": 100}})
    project.config = config

    async def scenario() -> None:
        async with mcp_session(project) as session:
            for i in range(2):
                ok, answer = await _write(session, f"message {i}")
                assert ok, answer
            _write_json(config, {"outbox": {"max_pending_messages": 2}})
            ok, error = await _write(session, "over the new cap")
            assert not ok and error["code"] == "OUTBOX_FULL", error
            with open(config, "w", encoding="utf-8") as handle:
                handle.write("{not json")
            ok, error = await _write(session, "with a broken configuration")
            assert not ok and error["exit_code"] == 6, error
            _write_json(config, {"outbox": {"max_pending_messages": 3}})
            ok, answer = await _write(session, "under the raised cap")
            assert ok, answer

    anyio.run(scenario)
    texts = sorted(json.load(open(os.path.join(project.store, SID, name)))["text"]
                   for name in os.listdir(os.path.join(project.store, SID)))
    assert texts == ["message 0", "message 1", "under the raised cap"]


def test_a_configuration_that_appears_or_goes_is_seen(scratch):
    """No --config: the default document under HOME, absent at first (file store only), then
    created with a cap, then removed again."""
    project = make_project(scratch)
    default = os.path.join(project.home, ".config", "vvz-agent-memory", "config.json")

    async def scenario() -> None:
        async with mcp_session(project) as session:
            ok, answer = await _write(session, "no configuration")
            assert ok, answer
            os.makedirs(os.path.dirname(default))
            _write_json(default, {"outbox": {"max_pending_messages": 1}})
            ok, error = await _write(session, "over the cap of the new document")
            assert not ok and error["code"] == "OUTBOX_FULL", error
            os.unlink(default)
            ok, answer = await _write(session, "no configuration again")
            assert ok, answer

    anyio.run(scenario)


def test_a_store_removed_or_recreated_under_the_server(scratch):
    """Removed: the next write is refused as a fresh process refuses it (exit 3), nothing
    written anywhere. Recreated by `store init` between two writes: the write lands in the new
    directory, not in the one the server had open."""
    project = make_project(scratch)

    async def scenario() -> None:
        async with mcp_session(project) as session:
            ok, answer = await _write(session, "before")
            assert ok, answer
            shutil.rmtree(project.store)
            ok, error = await _write(session, "with no store")
            assert not ok and error["code"] == "STORE_UNAVAILABLE", error
            assert not os.path.exists(project.store)
            assert project.cli("store", "init").rc == 0
            ok, answer = await _write(session, "in the new store")
            assert ok, answer
            assert os.path.isfile(os.path.join(project.root, answer["data"]["file"]))
            shutil.rmtree(project.store)  # recreated at once, no call in between
            assert project.cli("store", "init").rc == 0
            ok, answer = await _write(session, "in the third store")
            assert ok, answer
            assert os.path.isfile(os.path.join(project.root, answer["data"]["file"]))

    anyio.run(scenario)
    assert [f.split("/", 1)[0] for f in outbox_files(project)] == [SID]
    assert len(outbox_files(project)) == 1


def test_a_store_no_longer_ignored_is_refused(scratch):
    """`.gitignore` edited so the outbox is no longer ignored: the next write is refused and
    writes nothing; the rule restored, writes go on. A project that was not a git work tree
    and becomes one (`git init`) under the server: refused the same way."""
    project = make_project(scratch)
    ignore = os.path.join(project.root, ".gitignore")
    with open(ignore, encoding="utf-8") as handle:
        rules = handle.read()
    assert "/.agent-memory/" in rules

    async def scenario() -> None:
        async with mcp_session(project) as session:
            ok, answer = await _write(session, "ignored")
            assert ok, answer
            with open(ignore, "w", encoding="utf-8") as handle:
                handle.write("*.tmp\n")
            ok, error = await _write(session, "not ignored")
            assert not ok and error["code"] == "STORE_UNAVAILABLE", error
            assert "not ignored" in error["message"]
            with open(ignore, "w", encoding="utf-8") as handle:
                handle.write(rules)
            ok, answer = await _write(session, "ignored again")
            assert ok, answer

    anyio.run(scenario)
    texts = sorted(json.load(open(os.path.join(project.store, SID, name)))["text"]
                   for name in os.listdir(os.path.join(project.store, SID)))
    assert texts == ["ignored", "ignored again"]


def test_a_git_init_under_the_server_is_seen(scratch):
    root = scratch / "plain"
    root.mkdir()
    home = scratch / "home"
    home.mkdir()
    from amtest import Project
    project = Project(str(root), str(home))
    assert project.cli("store", "init").rc == 0  # outside git: no rule written
    assert not os.path.exists(root / ".gitignore")

    async def scenario() -> None:
        async with mcp_session(project) as session:
            ok, answer = await _write(session, "outside git")
            assert ok, answer
            subprocess.run(["git", "init", "-q", str(root)], check=True)
            ok, error = await _write(session, "inside git, not ignored")
            assert not ok and error["code"] == "STORE_UNAVAILABLE", error

    anyio.run(scenario)
    assert len(os.listdir(os.path.join(project.store, SID))) == 1
