"""The live checks: every promise of agent-memory, against the logger and embedder the
configuration names. Each drives the real CLI in a scratch project and inspects the logger
through the product's own connection code."""

from __future__ import annotations

import json
import os
import socket
import tempfile

from . import logger
from .registry import CheckFailed, check, expect
from .scratch import Run
from agent_memory.sync.config import load


def _config(run: Run):
    return load(run.config_path)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _unreachable_config(run: Run, logger_down: bool = True, embedder_down: bool = True) -> str:
    """A second configuration: the run's, with the logger and/or embedder at a closed port.

    Certificate paths are made absolute, since the copy lives in another directory.
    """
    config = _config(run)
    document = json.loads(json.dumps(config.document))
    port = _closed_port()
    for name, down in (("ailogger_client", logger_down), ("embedding_client", embedder_down)):
        section = document.get(name)
        if section is None:
            continue
        if down:
            section["server"] = {"host": "127.0.0.1", "port": port}
            section.setdefault("client", {})["timeout"] = 5
        for ssl in (section.get("ssl"), section.get("client", {}).get("ssl")):
            if isinstance(ssl, dict):
                for key in ("cert", "key", "ca"):
                    if isinstance(ssl.get(key), str):
                        ssl[key] = config.resolve_path(ssl[key])
    # one file per call: checks may run at once (--jobs), each with its own closed port
    handle, path = tempfile.mkstemp(prefix=f"unreachable-{int(logger_down)}{int(embedder_down)}-",
                                    suffix=".json", dir=run.tmp)
    with os.fdopen(handle, "w") as out:
        json.dump(document, out)
    return path


@check("config-valid", "the configuration validates and names a logger")
def config_valid(run: Run) -> None:
    answer = run.project("config").am("config", "validate")
    expect(answer.rc == 0, "config validate exits 0", 0, answer.brief())
    expect(answer.data["file_store_only"] is False, "a logger is configured",
           "ailogger_client section", answer.data)


@check("logger-answers", "the logger answers its health command")
def logger_answers(run: Run) -> None:
    try:
        report = logger.call(_config(run), "health")
    except Exception as exc:
        raise CheckFailed("health answers", "an answer", f"{type(exc).__name__}: {exc}")
    expect(report is not None, "health answers", "a report", report)


@check("embedder-answers", "the embedder answers with the configured model and dimension")
def embedder_answers(run: Run) -> None:
    from agent_memory.sync.links.route import Route
    config = _config(run)
    expect(config.embedder is not None, "an embedder is configured", "embedding_client section",
           None)
    try:
        [vector] = Route().embed(config, ["agent-memory pipeline probe"], budget=30)
    except Exception as exc:  # the link checks model and dimension of the answer itself
        raise CheckFailed("embed answers", config.embedding_model,
                          f"{type(exc).__name__}: {exc}")
    expect(len(vector) == config.embedding_model["dimension"], "vector dimension",
           config.embedding_model["dimension"], len(vector))


@check("write-auto-lands-in-logger", "a write in --store auto lands in the logger")
def write_auto(run: Run) -> None:
    scratch = run.project("auto", agent=True)
    session_id, opened = scratch.open_session()
    # the first command starts the project's agent and leaves its file to it (answered at
    # once, pending, saying so) unless one already answers; so may the next, while it starts
    expect(opened.rc == 0 and _delivered_or_left_to_agent(opened),
           "session open reaches the logger, or the agent starting", {"rc": 0, "store":
           "logger, or file with the agent starting"}, opened.brief())
    written = scratch.write(session_id, "pipeline check: a write in auto mode")
    expect(written.rc == 0 and _delivered_or_left_to_agent(written),
           "write answers from the logger, or leaves it to the agent starting",
           {"rc": 0, "store": "logger, or file with the agent starting"}, written.brief())
    _settle(lambda: (scratch.am("agent", "status").data or {}).get("running"), 30.0)
    synced = scratch.am("sync")  # the agent runs a round now and says how it went
    expect(synced.rc == 0 and synced.data["totals"]["pending"] == 0,
           "sync (the agent's round) leaves nothing pending", {"rc": 0, "pending": 0},
           synced.brief())
    entry = logger.call(_config(run), "message_get", message_id=written.data["message_id"])
    expect(entry.get("session_id") == session_id, "the logger holds the message",
           session_id, entry)
    _settle(lambda: scratch.final_files(session_id) == [])  # its move follows its confirmation
    expect(scratch.final_files(session_id) == [], "nothing left pending", [],
           scratch.final_files(session_id))


def _delivered_or_left_to_agent(answer) -> bool:
    reason = str((answer.data or {}).get("reason") or "")
    return answer.store == "logger" or (answer.store == "file" and "agent" in reason
                                        and "starting" in reason)


def _settle(done, timeout: float = 10.0) -> None:
    """Wait (up to `timeout`) until `done()`; the expectation that follows tells if not."""
    import time
    deadline = time.monotonic() + timeout
    while not done() and time.monotonic() < deadline:
        time.sleep(0.05)


@check("write-unreachable-lands-in-file", "with the logger unreachable a write exits 0 into the "
                                          "file store")
def write_unreachable(run: Run) -> None:
    scratch = run.project("unreachable")
    session_id, _ = scratch.open_session()
    written = scratch.write(session_id, "pipeline check: logger unreachable",
                            config=_unreachable_config(run))
    expect(written.rc == 0 and written.store == "file", "write falls back to the file store",
           {"rc": 0, "store": "file"}, written.brief())
    pending = [n for n in scratch.final_files(session_id) if n.endswith(".msg")]
    expect(len(pending) == 1 and written.data["message_id"] in pending[0],
           "the message waits in the outbox", "one pending .msg", pending)


def _offline_then_sync(run: Run, name: str):
    scratch = run.project(name)
    session_id, _ = scratch.open_session()
    down = _unreachable_config(run)
    written = [scratch.write(session_id, f"pipeline offline message {i}",
                             "--occurred-at", f"2026-01-0{i + 1}T10:00:00.25{i}+02:00",
                             config=down) for i in range(3)]
    for answer in written:
        expect(answer.rc == 0 and answer.store == "file", "offline write", "file", answer.brief())
    synced = scratch.am("sync")
    return scratch, session_id, written, synced


@check("import-keeps-id-and-time", "files imported keep message_id and occurred_at exactly and "
                                   "move to .imported/")
def import_keeps(run: Run) -> None:
    scratch, session_id, written, synced = _offline_then_sync(run, "import")
    expect(synced.rc == 0, "sync exits 0", 0, synced.brief())
    config = _config(run)
    for answer in written:
        entry = logger.call(config, "message_get", message_id=answer.data["message_id"])
        expect(entry.get("occurred_at") == answer.data["occurred_at"], "occurred_at kept",
               answer.data["occurred_at"], entry.get("occurred_at"))
    expect(scratch.final_files(session_id) == [], "outbox empty", [],
           scratch.final_files(session_id))
    moved = [n for n in scratch.final_files(session_id, ".imported") if n.endswith(".msg")]
    expect(len(moved) == 3, "files moved to .imported/", 3, moved)


@check("second-import-imports-nothing", "a second sync imports nothing")
def second_import(run: Run) -> None:
    scratch, session_id, _written, synced = _offline_then_sync(run, "second")
    expect(synced.rc == 0 and synced.data["totals"]["imported"] == 3, "first sync imports 3", 3,
           synced.brief())
    again = scratch.am("sync")
    expect(again.rc == 0 and again.data["totals"]["imported"] == 0, "second sync imports 0", 0,
           again.brief())


@check("store-logger-unreachable-exit-4", "--store logger with the logger unreachable exits 4 "
                                          "and leaves nothing pending")
def store_logger_unreachable(run: Run) -> None:
    scratch = run.project("logger-only")
    session_id, _ = scratch.open_session()
    answer = scratch.am("--store", "logger", "write", "--session-id", session_id,
                        "--sender-kind", "human", "--sender-identity", "pipeline",
                        "--receiver-kind", "model", "--receiver-identity", "agent",
                        "--text", "must not be kept", config=_unreachable_config(run))
    expect(answer.rc == 4, "exit 4", 4, answer.brief())
    expect(scratch.final_files(session_id) == [], "nothing pending", [],
           scratch.final_files(session_id))


@check("exit-2-usage", "a bad option value is a usage error (exit 2), nothing written")
def exit_usage(run: Run) -> None:
    scratch = run.project("usage")
    answer = scratch.write("bad/session", "text")
    expect(answer.rc == 2 and answer.one_object and answer.out["success"] is False,
           "exit 2 with one JSON error object", 2, answer.brief())
    expect(os.listdir(scratch.store) == [], "nothing written", [], os.listdir(scratch.store))


@check("exit-3-store-unavailable", "a project without .agent-memory/ is exit 3, nothing written")
def exit_store(run: Run) -> None:
    scratch = run.project("no-store")
    os.rmdir(scratch.store)
    answer = scratch.write(f"pipeline-{run.run_id}-nostore", "text", "--store", "file")
    expect(answer.rc == 3, "exit 3", 3, answer.brief())
    expect(not os.path.exists(scratch.store), "nothing created", False, True)


@check("exit-5-not-found", "get of an unknown message id is exit 5")
def exit_not_found(run: Run) -> None:
    from agent_memory.outbox.contract import new_uuid4
    answer = run.project("not-found").am("get", new_uuid4())
    expect(answer.rc == 5, "exit 5", 5, answer.brief())


@check("exit-6-config-invalid", "an invalid configuration is exit 6")
def exit_config(run: Run) -> None:
    path = os.path.join(run.tmp, "invalid.json")
    with open(path, "w") as handle:
        json.dump({"ailogger_client": {"server": {"host": "h", "port": "not a number"}}}, handle)
    answer = run.project("bad-config").am("config", "validate", config=path)
    expect(answer.rc == 6, "exit 6", 6, answer.brief())


def _vector_of(scratch, session_id: str, message_id: str) -> dict | None:
    for area in ("", ".imported"):
        for name in scratch.final_files(session_id, area):
            if name.endswith(f"{message_id}.emb"):
                with open(os.path.join(scratch.store, area, session_id, name)) as handle:
                    return json.load(handle)
    return None


@check("file-message-vector-model", "the vector of a file message has the configured model and "
                                    "dimension")
def file_vector(run: Run) -> None:
    scratch = run.project("file-vector")
    session_id, _ = scratch.open_session()
    written = scratch.write(session_id, "pipeline check: a vector beside a file message",
                            config=_unreachable_config(run, logger_down=True,
                                                       embedder_down=False))
    expect(written.rc == 0 and written.store == "file", "write lands in the file store", "file",
           written.brief())
    vector = _vector_of(scratch, session_id, written.data["message_id"])
    wanted = _config(run).embedding_model
    expect(vector is not None, "an .emb beside the .msg", "a vector file", None)
    expect({"model": vector["model"], "dimension": vector["dimension"]} == wanted
           and len(vector["embedding"]) == wanted["dimension"], "model and dimension", wanted,
           {"model": vector["model"], "dimension": vector["dimension"],
            "length": len(vector["embedding"])})


@check("embed-fills-missing-vector", "agent-memory embed fills a missing vector")
def embed_fills(run: Run) -> None:
    scratch = run.project("embed")
    session_id, _ = scratch.open_session()
    written = scratch.write(session_id, "pipeline check: written with both services down",
                            config=_unreachable_config(run))
    message_id = written.data["message_id"]
    expect(_vector_of(scratch, session_id, message_id) is None, "no vector while the embedder "
           "is down", None, "a vector")
    filled = scratch.am("embed")
    expect(filled.rc == 0 and filled.data["written"] >= 1, "embed writes the vector",
           {"rc": 0, "written": ">= 1"}, filled.brief())
    expect(_vector_of(scratch, session_id, message_id) is not None, "the .emb exists",
           "a vector file", None)


@check("exit-7-embedding-unavailable", "embed with the embedder unreachable is exit 7")
def exit_embedding(run: Run) -> None:
    scratch = run.project("exit-7")
    session_id, _ = scratch.open_session()
    down = _unreachable_config(run)
    scratch.write(session_id, "pipeline check: no vector", config=down)
    answer = scratch.am("embed", config=down)
    expect(answer.rc == 7, "exit 7", 7, answer.brief())


TEXTS = ["the deploy failed because the database migration timed out",
         "lunch options near the office on friday",
         "database migration scripts need a longer timeout",
         "the cat sat on the warm windowsill all afternoon",
         "rerun the deploy after raising the migration timeout",
         "quarterly budget review meeting notes"]


@check("closest-group-agrees", "the local closest group for an anchor equals the logger's after "
                               "import")
def closest_agrees(run: Run) -> None:
    scratch = run.project("closest")
    session_id, _ = scratch.open_session()
    offline = _unreachable_config(run, logger_down=True, embedder_down=False)
    for text in TEXTS:
        answer = scratch.write(session_id, text, config=offline)
        expect(answer.rc == 0, "offline write", 0, answer.brief())
    query = ["working-set", "--session-id", session_id, "--anchor-text",
             "why did the deploy and the database migration time out", "--similarity-count", "4"]
    local = scratch.am("--store", "file", *query)
    expect(local.rc == 0, "local working-set", 0, local.brief())
    synced = scratch.am("sync")
    expect(synced.rc == 0, "sync", 0, synced.brief())
    remote = scratch.am("--store", "logger", *query)
    expect(remote.rc == 0, "logger working-set", 0, remote.brief())
    mine = [e["message"]["message_id"] for e in local.data["closest"]]
    theirs = [e["message"]["message_id"] for e in remote.data["closest"]]
    expect(mine == theirs and len(mine) > 0, "same closest group, same order", theirs, mine)


@check("watcher-delivers-write", "a running watcher delivers a write to the logger")
def watcher_delivers(run: Run) -> None:
    import signal
    import subprocess
    import time
    scratch = run.project("watcher", agent=True)
    watcher = subprocess.Popen([run.cli, "--config", run.config_path, "sync", "--watch"],
                               cwd=scratch.root, env=scratch.env, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            status = scratch.am("status")
            if status.rc == 0 and status.data["watcher"]["alive"]:
                break
            expect(time.monotonic() < deadline and watcher.poll() is None, "watcher starts",
                   "alive", status.brief())
            time.sleep(0.2)
        session_id, _ = scratch.open_session()
        written = scratch.write(session_id, "pipeline check: through the watcher", "--wait", "10")
        expect(written.rc == 0, "write exits 0", 0, written.brief())
        message_id = written.data["message_id"]
        deadline = time.monotonic() + 30
        while True:
            try:
                entry = logger.call(_config(run), "message_get", message_id=message_id)
                break
            except Exception:
                expect(time.monotonic() < deadline, "the logger holds the message in time",
                       message_id, "not in the logger after 30 s")
                time.sleep(0.2)
        expect(entry.get("session_id") == session_id, "delivered to its session", session_id,
               entry)
    finally:
        watcher.send_signal(signal.SIGTERM)
        try:
            watcher.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            watcher.kill()
            watcher.communicate()
    expect(watcher.returncode == 0, "the watcher exits 0 on SIGTERM", 0, watcher.returncode)


@check("status-reports-backlog", "status reports a known backlog")
def status_backlog(run: Run) -> None:
    scratch = run.project("status")
    session_id, _ = scratch.open_session()
    down = _unreachable_config(run)
    for i in range(3):
        scratch.write(session_id, f"pipeline check: backlog {i}", config=down)
    status = scratch.am("status")
    expect(status.rc == 0, "status exits 0", 0, status.brief())
    totals = status.data["totals"]
    expect(totals["pending_messages"] == 3 and totals["missing_vectors"] == 3,
           "three pending messages without vectors", {"pending_messages": 3, "missing_vectors": 3},
           totals)
    expect(status.data["watcher"]["alive"] is False, "no watcher", False,
           status.data["watcher"])


@check("agent-serves-the-cli", "the first command starts one agent; it serves writes and reads "
                               "with the same answers as without it, and stops on request")
def agent_serves(run: Run) -> None:
    import time
    scratch = run.project("agent", agent=True)
    session_id, opened = scratch.open_session()
    expect(opened.rc == 0 and _delivered_or_left_to_agent(opened),
           "session open reaches the logger, or the agent it starts",
           {"rc": 0, "store": "logger, or file with the agent starting"}, opened.brief())
    deadline = time.monotonic() + 30
    while True:
        status = scratch.am("agent", "status")
        if status.rc == 0 and status.data["running"]:
            break
        expect(time.monotonic() < deadline, "an agent starts after the first command",
               "running", status.brief())
        time.sleep(0.1)
    expect(status.data["autostarted"] is True, "the agent says it was autostarted", True,
           status.data)
    written = scratch.write(session_id, "pipeline check: through the agent")
    expect(written.rc == 0 and written.store == "logger", "the write answers from the logger",
           {"rc": 0, "store": "logger"}, written.brief())
    expect(scratch.final_files(session_id) == [], "nothing left pending", [],
           scratch.final_files(session_id))
    read = ["read", "--session-id", session_id, "--block-size", "10"]
    served, inline = scratch.am(*read), scratch.am("--no-agent", *read)
    expect(served.rc == 0 and served.stdout == inline.stdout,
           "a read through the agent answers what the inline read answers", inline.brief(),
           served.brief())
    after = scratch.am("agent", "status")
    expect(after.data["pid"] == status.data["pid"] and after.data["requests"] >= 2,
           "the same agent served the write and the read", status.data["pid"], after.data)
    stopped = scratch.am("agent", "stop")
    expect(stopped.rc == 0 and stopped.data["stopped"] is True, "agent stop", True,
           stopped.brief())
