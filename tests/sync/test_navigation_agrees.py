"""For random dialogue trees (hypothesis), some messages soft-deleted, the structural reads, the
preview and the journal (correction chains with deleted members included) answer the same from
the local files, merged with the logger while part is still pending, and from the reference
logger after import.

Commands run in-process (cli.main.run, the CLI's own code end to end) against the reference
logger over loopback HTTP, so a hypothesis run stays within seconds per example."""

from __future__ import annotations

import json
import os
import time
import uuid

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from agent_memory.outbox.store import Store

pytestmark = pytest.mark.slow

KINDS = ("reply", "influence", "tool-result")


@st.composite
def dialogues(draw):
    """Messages as (relations [(earlier index, kind)], corrected earlier index or None)."""
    count = draw(st.integers(1, 9))
    out = []
    for i in range(count):
        targets = draw(st.lists(st.integers(0, i - 1), max_size=2, unique=True)) if i else []
        relations = [(t, draw(st.sampled_from(KINDS))) for t in targets]
        corrects = draw(st.one_of(st.none(), st.integers(0, i - 1))) if i else None
        out.append((relations, corrects))
    synced = draw(st.integers(0, count))  # how many reach the logger before the reads
    hidden = draw(st.sets(st.integers(0, count - 1), max_size=2))  # soft-deleted afterwards
    return out, synced, hidden


def _cli(project_root: str, config: str, *argv: str) -> dict:
    from agent_memory.cli.main import run
    lines: list[str] = []
    rc = run(["--project-root", project_root, "--config", config, "--no-agent", *argv],
             lines.append)
    assert len(lines) == 1
    answer = json.loads(lines[0])
    answer["rc"] = rc
    return answer


def _comparable(value):
    """An answer without what only one side knows: the outbox area, the receive time."""
    if isinstance(value, dict):
        return {k: _comparable(v) for k, v in value.items()
                if k not in ("outbox", "received_at", "store", "rc")}
    if isinstance(value, list):
        return [_comparable(v) for v in value]
    return value


def _all_pages(root, config, store, *argv):
    """Every block of a paged read, following continuations (block size 2)."""
    pages, continuation = [], None
    while True:
        extra = ("--continuation", continuation) if continuation else ()
        answer = _cli(root, config, "--store", store, *argv, "--block-size", "2", *extra)
        assert answer["success"], answer
        pages.append(answer)
        continuation = answer["data"]["continuation"]
        if not continuation:
            return pages


def _reads(root, config, store, session_id, ids, rng_nodes):
    out = {"relations": _all_pages(root, config, store, "relations", "--session-id", session_id),
           "leaves": _all_pages(root, config, store, "leaves", "--session-id", session_id)}
    for node in rng_nodes:
        for mode in ("resolved", "full"):
            out[f"path {node} {mode}"] = _all_pages(root, config, store, "path", "--session-id",
                                                    session_id, "--node-id", ids[node],
                                                    "--mode", mode)
        for depth in ("0", "1", "5"):
            out[f"graph {node} {depth}"] = _all_pages(root, config, store, "graph",
                                                      "--session-id", session_id, "--anchor",
                                                      ids[node], "--depth", depth)
    out["preview"] = [_cli(root, config, "--store", store, "read", "--preview", "--session-id",
                           session_id, "--page-size", "3", "--page-offset", str(page),
                           "--preview-size", "7") for page in range(3)]
    for mode in ("resolved", "full"):  # the journal, correction chains with deleted members
        for shown in ((), ("--show-deleted",)):
            # the whole journal (a merged read pages the pending part after the logger's, so
            # its blocks are cut elsewhere: the messages, in order, are what must agree)
            pages = _all_pages(root, config, store, "read", "--session-id", session_id,
                               "--mode", mode, *shown)
            out[f"read {mode} {shown}"] = [m for p in pages for m in p["data"]["messages"]]
    return out


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(dialogue=dialogues(), data=st.data())
def test_local_and_logger_answers_agree(tmp_path_factory, fleet, dialogue, data):
    messages, synced, hidden = dialogue
    _agree(tmp_path_factory, fleet, messages, synced, hidden,
           lambda count: data.draw(st.lists(st.integers(0, count - 1), min_size=1, max_size=2,
                                            unique=True)))


def test_a_pending_delete_of_a_chains_root_the_logger_holds(tmp_path_factory, fleet):
    """Found by the test above: message 6 corrects message 0, both at the logger, and a soft
    delete of 0 is pending. The logger shows the chain as 0 with 6's wording; hiding 0 from
    that answer hid 6 too, where the files show 6 (a chain reads without its deleted
    members)."""
    messages = [([], None), ([], None), ([(0, "reply"), (1, "reply")], None), ([], None),
                ([(0, "reply"), (1, "reply")], None), ([], None), ([(0, "reply")], 0),
                ([], None), ([(0, "reply"), (1, "reply")], None)]
    _agree(tmp_path_factory, fleet, messages, 8, {0, 4}, lambda count: [0, 6])


def _agree(tmp_path_factory, fleet, messages, synced, hidden, draw_nodes):
    root = str(tmp_path_factory.mktemp("tree"))
    os.mkdir(os.path.join(root, ".agent-memory"), 0o700)
    with open(os.path.join(root, ".gitignore"), "w") as handle:
        handle.write(".agent-memory/\n")
    config = str(fleet.config_path)
    session_id = f"tree-{uuid.uuid4().hex[:12]}"
    store = Store(root)
    store.append_event(session_id, "open", project_id="p", dialogue_kind=["human", "model"],
                       participants=["alice", "claude"], title=None, metadata=None)
    ids: list[str] = []
    for i, (relations, corrects) in enumerate(messages):
        if i == synced:  # the rest stays pending: the logger answers merged with it
            assert _cli(root, config, "sync")["success"]
        new = store.append_message({
            "session_id": session_id, "text": f"message number {i} " + "word " * (i % 4),
            "sender_kind": "human" if i % 2 == 0 else "model",
            "sender_identity": "alice" if i % 2 == 0 else "claude",
            "receiver_kind": "model" if i % 2 == 0 else "human",
            "receiver_identity": "claude" if i % 2 == 0 else "alice",
            "relations": [{"to_message_id": ids[t], "kind": k} for t, k in relations],
            "corrects_message_id": ids[corrects] if corrects is not None else None})
        ids.append(new.record["message_id"])
        # file names (the import order) carry milliseconds: keep one message per millisecond,
        # as writers a process start apart always are, so the logger's arrival order is the
        # local one
        time.sleep(0.002)
    for i in sorted(hidden):  # soft deletes, still pending: they take effect at once anyway
        store.append_event(session_id, "delete", message_id=ids[i], mode="soft")
    store.close()
    nodes = draw_nodes(len(ids))

    local = _reads(root, config, "file", session_id, ids, nodes)
    merged = _reads(root, config, "auto", session_id, ids, nodes)
    if synced < len(messages):
        assert all(p["store"] in ("both", "file") for p in merged["relations"])
    assert _comparable(merged) == _comparable(local)

    assert _cli(root, config, "sync")["success"]
    from_logger = _reads(root, config, "logger", session_id, ids, nodes)
    assert all(p["store"] == "logger" for p in from_logger["relations"])
    assert _comparable(from_logger) == _comparable(local)
