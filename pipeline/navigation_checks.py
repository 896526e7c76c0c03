"""The live checks of the navigation reads and of forgetting: each new command against the
logger the configuration names, compared with the same read answered from the files alone
(the logger's own answer must take the shape agent-memory decided for its offline answers)."""

from __future__ import annotations

import os

from . import logger
from .checks import _config, _unreachable_config
from .registry import CheckFailed, check, expect
from .scratch import Run


def _comparable(value):
    """An answer without what only one side knows: the outbox area, the receive time."""
    if isinstance(value, dict):
        return {k: _comparable(v) for k, v in value.items() if k not in ("outbox", "received_at")}
    if isinstance(value, list):
        return [_comparable(v) for v in value]
    return value


def _tree(run: Run, name: str):
    """A small dialogue in the logger: a question, two answers (a branch), a follow-up, and a
    correction of the first answer."""
    scratch = run.project(name)
    session_id, opened = scratch.open_session()
    expect(opened.rc == 0, "session open", 0, opened.brief())
    ids = {}
    for key, text, extra in (("q", "what is the plan", ()),
                             ("a1", "the plan has three steps", ("--relation", "reply:{q}")),
                             ("a2", "another plan", ("--relation", "reply:{q}")),
                             ("f", "why three", ("--relation", "reply:{a1}")),
                             ("c", "the plan has four steps", ("--corrects", "{a1}"))):
        answer = scratch.write(session_id, text, *(e.format(**ids) for e in extra))
        expect(answer.rc == 0 and answer.store == "logger", f"write {key} reaches the logger",
               "logger", answer.brief())
        ids[key] = answer.data["message_id"]
    return scratch, session_id, ids


def _agree(scratch, what: str, *argv: str) -> dict:
    """The read from the logger and from the files: equal, but for the outbox area."""
    remote = scratch.am("--store", "logger", *argv)
    local = scratch.am("--store", "file", *argv)
    expect(remote.rc == 0 and remote.store == "logger", f"{what} from the logger", "exit 0",
           remote.brief())
    expect(local.rc == 0 and local.store == "file", f"{what} from the files", "exit 0",
           local.brief())
    expect(_comparable(remote.data) == _comparable(local.data), f"{what}: logger and files agree",
           _comparable(remote.data), _comparable(local.data))
    return remote.data


@check("relations-agree", "relations: the logger and the files list the same relations")
def relations_agree(run: Run) -> None:
    scratch, session_id, ids = _tree(run, "relations")
    data = _agree(scratch, "relations", "relations", "--session-id", session_id)
    kinds = sorted(r["kind"] for r in data["relations"])
    expect(kinds == ["correction", "reply", "reply", "reply"], "the four relations", kinds,
           data["relations"])


@check("path-agrees", "path: the line from a message to its root, resolved and full")
def path_agrees(run: Run) -> None:
    scratch, session_id, ids = _tree(run, "path")
    for mode in ("resolved", "full"):
        data = _agree(scratch, f"path ({mode})", "path", "--session-id", session_id,
                      "--node-id", ids["f"], "--mode", mode)
        line = [e["message_id"] for e in data["path"]]
        expect(line == [ids["f"], ids["a1"], ids["q"]], f"path {mode}: f, a1, q",
               [ids["f"], ids["a1"], ids["q"]], line)
    resolved = scratch.am("--store", "logger", "path", "--session-id", session_id,
                          "--node-id", ids["f"]).data["path"]
    expect(resolved[1]["text"] == "the plan has four steps", "resolved shows the correction",
           "the plan has four steps", resolved[1]["text"])


@check("leaves-agree", "leaves: leaves and branching points with their counts")
def leaves_agree(run: Run) -> None:
    scratch, session_id, ids = _tree(run, "leaves")
    data = _agree(scratch, "leaves", "leaves", "--session-id", session_id)
    roles = {n["message_id"]: (n["role"], n["continuations"]) for n in data["nodes"]}
    expect(roles.get(ids["q"]) == ("branching", 2) and roles.get(ids["a2"]) == ("leaf", 0),
           "q branches in two, a2 is a leaf", {"q": ("branching", 2), "a2": ("leaf", 0)}, roles)


@check("graph-agrees", "graph: the nodes under a message, depth-bounded and paged")
def graph_agrees(run: Run) -> None:
    scratch, session_id, ids = _tree(run, "graph")
    data = _agree(scratch, "graph", "graph", "--session-id", session_id, "--anchor", ids["q"],
                  "--depth", "1")
    level = sorted(n["message_id"] for n in data["nodes"])
    expect(level == sorted([ids["q"], ids["a1"], ids["a2"]]), "depth 1: q and its answers",
           3, level)
    first = scratch.am("--store", "logger", "graph", "--session-id", session_id, "--anchor",
                       ids["q"], "--block-size", "1")
    other = scratch.am("--store", "logger", "graph", "--session-id", session_id, "--anchor",
                       ids["a1"], "--continuation", first.data["continuation"] or "")
    expect(other.rc == 1 and other.code == "CONTINUATION_MISMATCH",
           "a continuation resumed with another anchor is refused", "CONTINUATION_MISMATCH",
           other.brief())


@check("preview-agrees", "read --preview: the paged listing of text prefixes")
def preview_agrees(run: Run) -> None:
    scratch, session_id, ids = _tree(run, "preview")
    data = _agree(scratch, "preview", "read", "--preview", "--session-id", session_id,
                  "--page-size", "2", "--preview-size", "8")
    expect(data["total_messages"] == 5 and data["total_pages"] == 3
           and [len(e["preview"]) <= 8 for e in data["entries"]] == [True, True],
           "5 messages in 3 pages of 2, 8 characters each", 5, data)


@check("info-answers", "info: the logger's contents and a section; an unknown one is refused")
def info_answers(run: Run) -> None:
    scratch = run.project("info")
    contents = scratch.am("--store", "logger", "info")
    expect(contents.rc == 0 and contents.data.get("sections"), "info lists sections",
           "sections", contents.brief())
    unknown = scratch.am("--store", "logger", "info", "--section", "no-such-section")
    expect(unknown.rc == 5 and unknown.code == "INFO_SECTION_UNKNOWN", "an unknown section",
           "exit 5 INFO_SECTION_UNKNOWN", unknown.brief())


@check("delete-soft-hides", "delete --mode soft hides at once; get still shows it; the logger "
                            "agrees")
def delete_soft(run: Run) -> None:
    scratch, session_id, ids = _tree(run, "soft")
    deleted = scratch.am("delete", ids["a2"], "--mode", "soft")
    expect(deleted.rc == 0 and deleted.store == "logger", "the delete reaches the logger",
           "logger", deleted.brief())
    entry = logger.call(_config(run), "message_get", message_id=ids["a2"])
    expect(entry.get("soft_deleted") is True, "the logger marks it", True, entry)
    read = scratch.am("read", "--session-id", session_id)
    shown = [m["message_id"] for m in read.data["messages"]]
    expect(ids["a2"] not in shown, "reads hide it", "hidden", shown)


@check("mark-all-or-nothing", "mark: all or nothing; unmark restores")
def mark_check(run: Run) -> None:
    scratch, session_id, ids = _tree(run, "mark")
    unknown = "00000000-0000-4000-8000-000000000000"
    refused = scratch.am("mark", ids["a2"], unknown)
    expect(refused.rc == 5 and refused.code == "MESSAGE_UNKNOWN", "an unknown id refuses all",
           "exit 5", refused.brief())
    marked = scratch.am("mark", ids["a2"], ids["f"])
    expect(marked.rc == 0 and marked.store == "logger", "mark reaches the logger", "logger",
           marked.brief())
    restored = scratch.am("mark", ids["a2"], ids["f"], "--unmark")
    expect(restored.rc == 0, "unmark", 0, restored.brief())
    entry = logger.call(_config(run), "message_get", message_id=ids["f"])
    expect(entry.get("soft_deleted") is False, "the logger restored it", False, entry)


def _holding(folder: str, needle: bytes) -> list[str]:
    found = []
    for where, _dirs, files in os.walk(folder):
        for name in files:
            with open(os.path.join(where, name), "rb") as handle:
                if needle in handle.read():
                    found.append(os.path.join(where, name))
    return found


@check("delete-hard-purges", "delete --mode hard: the text leaves every file and the logger; "
                             "one purged while the logger is down is never sent")
def delete_hard(run: Run) -> None:
    scratch, session_id, ids = _tree(run, "hard")
    deleted = scratch.am("delete", ids["a2"], "--mode", "hard")
    expect(deleted.rc == 0 and deleted.store == "logger", "the delete reaches the logger",
           "logger", deleted.brief())
    expect(_holding(scratch.store, b"another plan") == [], "no file holds the text", [],
           _holding(scratch.store, b"another plan"))
    gone = scratch.am("--store", "logger", "get", ids["a2"])
    expect(gone.rc == 5, "the logger no longer has it", "exit 5", gone.brief())
    down = _unreachable_config(run)
    secret = scratch.write(session_id, "pipeline secret never to be sent", config=down)
    purged = scratch.am("delete", secret.data["message_id"], "--mode", "hard", config=down)
    expect(purged.rc == 0 and purged.store == "file", "purged offline", "file", purged.brief())
    synced = scratch.am("sync")
    expect(synced.rc == 0 and synced.data["totals"]["imported"] == 0, "nothing sent", 0,
           synced.brief())
    never = scratch.am("--store", "logger", "get", secret.data["message_id"])
    expect(never.rc == 5, "the logger never heard of it", "exit 5", never.brief())


@check("session-delete-purges", "session delete --confirm: the session leaves the files and the "
                                "logger")
def session_delete(run: Run) -> None:
    scratch, session_id, ids = _tree(run, "session-delete")
    slip = scratch.am("session", "delete", "--session-id", session_id, "--confirm", "other")
    expect(slip.rc == 2, "a mismatched --confirm deletes nothing", 2, slip.brief())
    deleted = scratch.am("session", "delete", "--session-id", session_id, "--confirm",
                         session_id)
    expect(deleted.rc == 0 and deleted.store == "logger", "the delete reaches the logger",
           "logger", deleted.brief())
    expect(_holding(scratch.store, b"the plan") == [], "no file holds its texts", [],
           _holding(scratch.store, b"the plan"))
    try:
        logger.call(_config(run), "messages_read", session_id=session_id,
                    start_sequence_number=0)
    except Exception as exc:
        expect("SESSION_UNKNOWN" in str(exc) or getattr(exc, "code", "") == "SESSION_UNKNOWN",
               "the logger no longer knows it", "SESSION_UNKNOWN", str(exc))
    else:
        raise CheckFailed("the logger no longer knows it", "SESSION_UNKNOWN", "it answers")
