"""Every value checked against a pattern is checked whole, on every surface: an id, a time or a
number followed by a newline, a carriage return, a NUL or another control character is a usage
error naming its field, and nothing is written. (An id ending in "\\n" once passed `re.match`
with `$`, named a file no scan reads, and an acknowledged message was lost in silence.)

And an entry of the outbox that follows no naming rule is never invisible: `status` counts it,
`verify` reports it, `sync` logs it once, and `verify --repair` re-files the message it holds
and sets it aside, deleting nothing."""

from __future__ import annotations

import asyncio
import json
import os

import pytest

from amtest import make_project, message_args, open_args

UUID = "0b0f6ed6-2d0e-4c5e-8f5e-6f2a3c6b9e10"
TIME = "2026-10-01T13:57:45.123Z"
SUFFIXES = ["\n", "\r", "\r\n", "\t", "\x0b", "\x1b", "\x7f", "\u2028"]
W = ["--sender-kind", "human", "--sender-identity", "a", "--receiver-kind", "model",
     "--receiver-identity", "b", "--text", "hi"]


def cases():
    """(command argv with `{}` where the value goes, the valid value, the field named)."""
    s = "--session-id=S1"
    return [
        (["session", "open", "--session-id={}", "--project-id=P", "--dialogue-kind=human,model",
          "--participant=a"], "S1", "--session-id"),
        (["session", "open", s, "--project-id=P", "--dialogue-kind={}", "--participant=a"],
         "human,model", "--dialogue-kind"),
        (["session", "close", "--session-id={}"], "S1", "--session-id"),
        (["session", "reopen", "--session-id={}"], "S1", "--session-id"),
        (["session", "delete", "--session-id={}", "--confirm={}"], "S1", "--session-id"),
        (["write", "--session-id={}", *W], "S1", "--session-id"),
        (["write", s, *W, "--message-id={}"], UUID, "--message-id"),
        (["write", s, *W, "--occurred-at={}"], TIME, "--occurred-at"),
        (["write", s, *W, "--relation={}"], f"reply:{UUID}", "--relation"),
        (["write", s, *W, "--corrects={}"], UUID, "--corrects"),
        (["write", s, *W, "--priority={}"], "1", "--priority"),
        (["write", s, *W, "--wait={}"], "1", "--wait"),
        (["write", s, *W, "--embed-budget={}"], "0", "--embed-budget"),
        (["write", s, *W[:1], "{}", *W[2:]], "human", "--sender-kind"),
        (["write", s, *W[:5], "{}", *W[6:]], "model", "--receiver-kind"),
        (["read", "--session-id={}"], "S1", "--session-id"),
        (["read", s, "--start={}"], "0", "--start"),
        (["read", s, "--block-size={}"], "5", "--block-size"),
        (["read", s, "--continuation={}"], "seq:1", "--continuation"),
        (["read", "--preview", "--session-id={}"], "S1", "--session-id"),
        (["read", "--preview", "--period-start={}"], TIME, "--period-start"),
        (["read", "--preview", "--period-end={}"], TIME, "--period-end"),
        (["read", "--preview", "--page-size={}"], "5", "--page-size"),
        (["read", "--preview", "--page-offset={}"], "0", "--page-offset"),
        (["read", "--preview", "--preview-size={}"], "5", "--preview-size"),
        (["get", "{}"], UUID, "MESSAGE_ID"),
        (["relations", "--session-id={}"], "S1", "--session-id"),
        (["leaves", "--session-id={}"], "S1", "--session-id"),
        (["path", s, "--node-id={}"], UUID, "--node-id"),
        (["graph", s, "--anchor={}"], UUID, "--anchor"),
        (["graph", s, f"--anchor={UUID}", "--depth={}"], "2", "--depth"),
        (["delete", "{}", "--mode=soft", s], UUID, "MESSAGE_ID"),
        (["delete", UUID, "--mode=soft", "--session-id={}"], "S1", "--session-id"),
        (["mark", "{}", s], UUID, "MESSAGE_ID"),
        (["mark", UUID, "--session-id={}"], "S1", "--session-id"),
        (["sessions", "--dialogue-kind={}"], "human-to-model", "--dialogue-kind"),
        (["sessions", "--continuation={}"], "seq:1", "--continuation"),
        (["sessions", "--block-size={}"], "5", "--block-size"),
        (["search", "--query=q", "--scope=session", "--target={}"], "S1", "--target"),
        (["search", "--query=q", "--scope=all_projects", "--occurred-from={}"], TIME,
         "--occurred-from"),
        (["search", "--query=q", "--scope=all_projects", "--occurred-to={}"], TIME,
         "--occurred-to"),
        (["search", "--query=q", "--scope=all_projects", "--filter-session-id={}"], "S1",
         "--filter-session-id"),
        (["search", "--query=q", "--scope=all_projects", "--sender-kind={}"], "human",
         "--sender-kind"),
        (["search", "--query=q", "--scope=all_projects", "--priority={}"], "1", "--priority"),
        (["search", "--query=q", "--scope=all_projects", "--page-size={}"], "5", "--page-size"),
        (["working-set", "--session-id={}", "--anchor-text=t"], "S1", "--session-id"),
        (["working-set", s, "--anchor-message-id={}"], UUID, "--anchor-message-id"),
        (["working-set", s, "--anchor-text=t", "--recency-count={}"], "3", "--recency-count"),
        (["gc", "--older-than={}"], "30d", "--older-than"),
        (["embed", "--batch={}"], "8", "--batch"),
    ]


def _tree(root: str) -> list[str]:
    out = []
    for folder, dirs, files in os.walk(os.path.join(root, ".agent-memory")):
        out.extend(os.path.join(folder, n) for n in dirs + files)
    return sorted(out)


def _fill(argv: list[str], value: str) -> list[str]:
    return [a.replace("{}", value) for a in argv]


def test_every_checked_field_is_checked_whole(tmp_path, monkeypatch):
    """A real CLI process per field with a trailing newline; every other suffix through the
    CLI's own code in this process (cli.main.run, as the MCP server runs it)."""
    project = make_project(tmp_path)
    for argv, valid, _field in cases():  # the valid value is not refused as usage
        result = project.cli("--store", "file", *_fill(argv, valid))
        assert result.rc != 2, (argv, result.stdout)
    before = _tree(project.root)
    for argv, valid, field in cases():
        result = project.cli("--store", "file", *_fill(argv, valid + "\n"))
        assert result.rc == 2, (argv, result.stdout)
        _assert_named(result.out["error"], field, argv)
    from agent_memory.cli.main import run
    monkeypatch.setenv("HOME", project.home)
    monkeypatch.delenv("AGENT_MEMORY_CONFIG", raising=False)
    for argv, valid, field in cases():
        for suffix in SUFFIXES:
            lines: list[str] = []
            rc = run(["--store=file", f"--project-root={project.root}",
                      *_fill(argv, valid + suffix)], lines.append)
            assert rc == 2 and len(lines) == 1, (argv, suffix, lines)
            _assert_named(json.loads(lines[0])["error"], field, (argv, suffix))
    assert _tree(project.root) == before  # nothing written


def test_a_value_that_is_not_utf8_is_refused_naming_its_option(tmp_path, monkeypatch):
    """Bytes that are not UTF-8 in a checked value (they reach Python as lone surrogates): a
    usage error that names the option, as `--opt=value` and as `--opt value`, and the same
    words a typed call (MCP, the Python API) gives; nothing is written."""
    project = make_project(tmp_path)
    before = _tree(project.root)
    from agent_memory.cli.main import run
    monkeypatch.setenv("HOME", project.home)
    monkeypatch.delenv("AGENT_MEMORY_CONFIG", raising=False)
    for argv, valid, field in cases():
        filled = _fill(argv, valid + "\udcff")
        spaced = [part for word in filled for part in (
            word.split("=", 1) if word.startswith(field + "=") else [word])]
        for form in (filled, spaced):
            lines: list[str] = []
            rc = run(["--store=file", f"--project-root={project.root}", *form], lines.append)
            assert rc == 2 and len(lines) == 1, (form, lines)
            error = json.loads(lines[0])["error"]
            assert error["details"]["field"] == field, (form, error)
            assert f"argument {field} is not valid UTF-8 (at character {len(valid)})" \
                in error["message"], (form, error)
    result = project.cli("--store", "file", "write", "--session-id=S1", *W[:-1],
                         os.fsdecode(b"caf\xe9"))  # a real process, given Latin-1 bytes
    assert result.rc == 2 and result.out["error"]["details"]["field"] == "--text", result.stdout
    assert result.out["error"]["message"] == \
        "agent-memory write: argument --text is not valid UTF-8 (at character 3)"
    assert _tree(project.root) == before  # nothing written


def _assert_named(error, field, what) -> None:
    named = error.get("details", {}).get("field") == field or \
        f"argument {field}" in error["message"]
    assert named, (what, error)


# --- strays -------------------------------------------------------------------------------------
def _stray_store(tmp_path):
    """A store as an earlier release could leave it: a message named after an id that ended
    in a newline, a session directory named after such an id, and a note, beside a real
    message."""
    project = make_project(tmp_path)
    assert project.cli("--store", "file", *open_args("S1")).rc == 0
    real = project.cli("--store", "file", *message_args("S1", "real")).data["message_id"]
    store = project.store
    template = json.loads(open(os.path.join(store, "S1", [
        n for n in os.listdir(os.path.join(store, "S1")) if n.endswith(".msg")][0])).read())
    lost = dict(template, message_id=UUID + "\n", text="acknowledged, then lost",
                sequence_number=1)
    with open(os.path.join(store, "S1", f"2026-12-05T10.00.00.000-{UUID}\n.msg"), "w") as f:
        f.write(json.dumps(lost))
    os.mkdir(os.path.join(store, "S2\n"))
    other = "1b0f6ed6-2d0e-4c5e-8f5e-6f2a3c6b9e11"
    with open(os.path.join(store, "S2\n", f"2026-12-05T10.00.00.000-{other}.msg"), "w") as f:
        f.write(json.dumps(dict(template, session_id="S2\n", message_id=other,
                                text="in a session named with a newline")))
    opened = [n for n in os.listdir(os.path.join(store, "S1")) if n.endswith(".ses")][0]
    event = json.loads(open(os.path.join(store, "S1", opened)).read())
    event_id = "2b0f6ed6-2d0e-4c5e-8f5e-6f2a3c6b9e12"
    with open(os.path.join(store, "S2\n", f"2026-12-05T09.00.00.000-{event_id}.ses"), "w") as f:
        f.write(json.dumps(dict(event, session_id="S2\n", event_id=event_id)))
    with open(os.path.join(store, "S1", "notes.txt"), "w") as f:
        f.write("a note")
    return project, real, other


STRAYS = {".agent-memory/S1/notes.txt", f".agent-memory/S1/2026-12-05T10.00.00.000-{UUID}\n.msg",
          ".agent-memory/S2\n"}


def test_strays_are_counted_reported_logged_and_repaired(tmp_path, fleet):
    project, real, other = _stray_store(tmp_path)
    status = project.cli("status").data
    assert status["totals"]["strays"] == 3
    assert {s["entry"] for s in status["strays"]} == STRAYS
    assert status["totals"]["pending_messages"] == 1  # the real one: strays are not pending
    verify = project.cli("verify")
    assert verify.rc == 1 and verify.code == "STORE_DAMAGED"
    assert STRAYS <= {d["file"] for d in verify.out["error"]["details"]["damage"]}

    project.config = str(fleet.config_path)
    synced = project.cli("sync")
    assert synced.rc == 0, synced.stdout
    logged = [json.loads(line) for line in synced.stderr.splitlines() if line.startswith("{")]
    for stray in STRAYS:  # logged once each, and said in the answer
        assert [e.get("event") for e in logged if e.get("entry") == stray] == ["stray"], \
            (stray, synced.stderr)
        assert any(stray in w for w in synced.data["warnings"])

    repaired = project.cli("verify", "--repair")
    assert repaired.rc == 0, repaired.stdout
    refiled = {r.get("message_id", r.get("event_id")): r["refiled_as"]
               for r in repaired.data["repair"]["refiled"]}
    assert set(refiled) == {UUID, other, "2b0f6ed6-2d0e-4c5e-8f5e-6f2a3c6b9e12"}
    assert all(refiled.values()), refiled
    assert {s["entry"] for s in repaired.data["repair"]["set_aside"]} == STRAYS
    quarantined = os.path.join(project.store, ".quarantine", ".stray")
    assert os.path.exists(os.path.join(quarantined, "S1", "notes.txt"))  # nothing deleted
    assert os.path.exists(os.path.join(quarantined, "S1", "notes.txt.reason.json"))
    assert project.cli("status").data["totals"]["strays"] == 0

    assert project.cli("sync").rc == 0
    assert project.cli("status").data["totals"]["pending_messages"] == 0
    got = _logger_get(fleet, UUID)
    assert got["text"] == "acknowledged, then lost" and got["session_id"] == "S1"
    assert _logger_get(fleet, other)["session_id"] == "S2"


def _logger_get(fleet, message_id):
    async def go():
        async with fleet.logger_client() as client:
            answer = await client.message_get(message_id)
            return answer["data"] if "data" in answer else answer
    return asyncio.run(go())


@pytest.mark.parametrize("value", ["S1\n", "S1\r", "S1\x00", "S1\x1b"])
def test_the_reference_logger_checks_session_ids_whole(fleet, value):
    import ailogger_client

    async def go():
        async with fleet.logger_client() as client:
            try:
                await client.open_session(value, "P", ("human", "model"), ["a"])
            except ailogger_client.ServiceRefusalError as exc:
                return exc.code
            return "accepted"
    assert asyncio.run(go()) == "REQUEST_PARAMETER_VALUE"
