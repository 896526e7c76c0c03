"""Helpers of the vector tests."""

from __future__ import annotations

import json
import os

TEXTS = ["the cat sleeps on the warm mat", "stock prices fell sharply today",
         "my cat chases a red ball", "rain is expected tomorrow morning",
         "a dog and a cat share the garden", "the dog sleeps all day",
         "prices of cat food rose today", "a red sky in the morning",
         "the garden needs rain", "nothing in common here"]


def write_texts(project, sid, texts, *extra, embed=False):
    """`--store file` writes; with `embed` the write embeds (budget 5 s, by the environment),
    without it the vector is left to `agent-memory embed` (no embed-client import)."""
    ids = []
    saved = dict(project.env)
    project.env["AGENT_MEMORY_EMBED_BUDGET"] = "5" if embed else "0"
    try:
        for text in texts:
            result = project.cli("--store", "file", "write", f"--session-id={sid}",
                                 "--sender-kind", "human", "--sender-identity", "alice",
                                 "--receiver-kind", "model", "--receiver-identity", "claude",
                                 "--text", text, *extra)
            assert result.rc == 0, result.stdout
            ids.append(result.data["message_id"])
    finally:
        project.env.clear()
        project.env.update(saved)
    return ids


def ids_of(group):
    return [e["message"]["message_id"] for e in group]


def scores_of(group):
    return [e["score"] for e in group]


def emb_files(project, sid, area=""):
    return [n for n in project.final_files(sid, area) if n.endswith(".emb")]


def read_emb(project, sid, name, area=""):
    with open(os.path.join(project.store, area, sid, name)) as handle:
        return json.load(handle)


def with_config(project, path):
    from amtest import Project
    return Project(project.root, project.home, str(path))
