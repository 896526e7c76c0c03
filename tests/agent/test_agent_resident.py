"""What the agent holds in memory: numpy (the derived index's arrays) only once a round needs
vectors. With every vector present and nothing pending it serves writes, syncs, backfill looks,
searches and working sets without it; with one vector missing, its backfill opens the index and
writes the vector, and numpy is then mapped (which also shows the probe sees numpy when it is
there).

The probe reads /proc/<pid>/maps: importing numpy maps its compiled core (a shared object under
a `numpy/` directory), and nothing else in the agent would map one."""

from __future__ import annotations

import json
import os

from agent_memory.outbox.survey import iso
from agentutil import agent_pids, wait_serving
from amtest import message_args, open_args, wait_for

BUDGET = ["--embed-budget", "60"]  # the write's vector, even from a slow embedder


def numpy_mapped(pid: int) -> bool:
    with open(f"/proc/{pid}/maps") as handle:
        return any("/numpy/" in line and ".so" in line for line in handle)


def the_agent(project) -> int:
    pids = agent_pids(project)
    assert len(pids) == 1, pids
    return pids[0]


def files(project, sid: str, ext: str) -> list[str]:
    return [n for n in project.final_files(sid) + project.final_files(sid, ".imported")
            if n.endswith(ext)]


def without_vector(project, sid: str) -> set[str]:
    return {n[:-4] for n in files(project, sid, ".msg")} - {n[:-4] for n in files(project, sid,
                                                                                 ".emb")}


def last_backfill(project) -> dict | None:
    try:
        with open(os.path.join(project.store, ".watcher.json")) as handle:
            return json.load(handle)["embedder"]["last_backfill"]
    except FileNotFoundError:
        return None


RESCAN_S = 30.0  # the watcher's full rescan (`--rescan-interval`'s default), which publishes too


def backfill_after(project, moment: str) -> dict:
    """A backfill the agent finished after `moment` (a new message starts one within the
    backfill interval, 2 s), as `status` reads it: published as it ends, well before the next
    full rescan would publish it."""
    def finished() -> dict | None:
        done = last_backfill(project)
        return done if done is not None and done["at"] > moment else None
    return wait_for(finished, "a backfill after " + moment + ", published as it ended",
                    timeout=RESCAN_S / 2, pause=0.2)


def test_with_every_vector_present_the_agent_serves_without_numpy(agent_projects, fleet,
                                                                   unique_session_id):
    project = agent_projects(str(fleet.config_path))
    sid = unique_session_id
    assert project.cli("--no-agent", *open_args(sid)).rc == 0
    for i in range(3):
        written = project.cli("--no-agent", *message_args(sid, f"kept in memory {i}"), *BUDGET)
        assert written.rc == 0, written.stdout
    assert len(files(project, sid, ".msg")) == 3 and without_vector(project, sid) == set()
    assert project.cli("agent", "start").rc == 0
    pid = wait_serving(project)["pid"]
    served = project.cli(*message_args(sid, "a write the agent serves"), *BUDGET)
    assert served.rc == 0 and served.out["store"] == "logger", served.stdout
    wait_for(lambda: len(files(project, sid, ".msg")) == 4 and not without_vector(project, sid),
             "the served write's vector")
    looked = backfill_after(project, iso())
    assert looked["missing"] == 0 and looked["written"] == 0, looked
    assert the_agent(project) == pid
    assert not numpy_mapped(pid)
    # the reads it serves, with nothing pending to merge, leave the index closed too
    found = project.cli("search", "--query", "a write the agent serves", "--scope", "session",
                        "--target", sid)
    assert found.rc == 0 and found.out["store"] == "logger", found.stdout
    assert served.data["message_id"] in [m["message"]["message_id"]
                                         for m in found.data["matches"]]
    near = project.cli("working-set", "--session-id", sid, "--anchor-text", "memory")
    assert near.rc == 0 and near.out["store"] == "logger", near.stdout
    assert served.data["message_id"] in [e["message"]["message_id"]
                                         for e in near.data["recent"]]
    assert the_agent(project) == pid
    assert not numpy_mapped(pid)


def test_a_missing_vector_is_backfilled_and_numpy_is_then_mapped(agent_projects, fleet,
                                                                  unique_session_id):
    project = agent_projects(str(fleet.config_path))
    sid = unique_session_id
    assert project.cli("--no-agent", *open_args(sid)).rc == 0
    assert project.cli("--no-agent", *message_args(sid, "embedded at once"), *BUDGET).rc == 0
    assert project.cli("--store", "file", *message_args(sid, "left for the backfill")).rc == 0
    missing = without_vector(project, sid)
    assert len(missing) == 1
    assert project.cli("agent", "start").rc == 0
    pid = wait_serving(project)["pid"]
    wait_for(lambda: not without_vector(project, sid), "the agent's backfill of " + str(missing))
    assert len(files(project, sid, ".emb")) == 2
    assert the_agent(project) == pid
    assert numpy_mapped(pid)


def test_writes_back_to_back_each_get_their_vector_from_the_agent(agent_projects, fleet,
                                                                   unique_session_id,
                                                                   monkeypatch):
    # a served write's vector waits for a pause in the writes (sync.agent.handoff): a burst's
    # vectors all come after it, made by the writes' own work, not left to the backfill
    # (which would open the index, and map numpy)
    from agent_memory import Memory
    project = agent_projects(str(fleet.config_path))
    sid = unique_session_id
    assert project.cli("agent", "start").rc == 0
    pid = wait_serving(project)["pid"]
    monkeypatch.setenv("AGENT_MEMORY_AGENT", "use")
    memory = Memory(project.root, project.config)
    memory.open_session(sid, project_id="proj", participants=["alice", "claude"])
    for i in range(8):
        written = memory.write(sid, f"back to back {i}", sender_kind="human",
                               sender_identity="alice", receiver_kind="model",
                               receiver_identity="claude", embed_budget=60)
        assert written.forwarded, written
    wait_for(lambda: len(files(project, sid, ".msg")) == 8 and not without_vector(project, sid),
             "every vector of the burst")
    assert the_agent(project) == pid
    assert not numpy_mapped(pid)
