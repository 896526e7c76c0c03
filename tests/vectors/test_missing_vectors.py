"""The agent's look for missing vectors (sync.vectors.missing) agrees with the derived index on a
real store: a message without `.emb`, pending or imported, is SOME; none is NONE; a session it
remembered as complete is listed again once its directory changes; a message just written is
FRESH only when the look grants its writer the time to embed it."""

from __future__ import annotations

import os
import time

from agent_memory.outbox.store import Store
from agent_memory.sync.vectors.index import EMB_NONE, open_index
from agent_memory.sync.vectors.missing import FRESH, NONE, SOME, MissingVectors
from amtest import make_project, open_args
from vtest import TEXTS, write_texts


def index_lacks(store: Store, fleet) -> int:
    """How many live rows of the index have no vector (what the backfill would embed)."""
    index = open_index(store, fleet.embedding_model, fleet.dimension, save=False)
    return int((index.live & (index.rows["emb"] == EMB_NONE)).sum())


def age(project, sid: str, seconds: float) -> None:
    """Set the session's directories and files `seconds` into the past (as if written then)."""
    past = time.time() - seconds
    for area in ("", ".imported"):
        folder = os.path.join(project.store, area, sid)
        if os.path.isdir(folder):
            for name in os.listdir(folder):
                os.utime(os.path.join(folder, name), (past, past))
            os.utime(folder, (past, past))


def test_the_look_agrees_with_the_index(tmp_path, fleet, unique_session_id):
    project, sid = make_project(tmp_path, config=str(fleet.config_path)), unique_session_id
    assert project.cli("--store", "file", *open_args(sid)).rc == 0
    write_texts(project, sid, TEXTS[:3])                     # no vectors
    assert project.cli("sync").rc == 0                       # all three imported
    with Store(project.root) as store:
        look = MissingVectors(store)
        assert look.look() == SOME and index_lacks(store, fleet) == 3
        assert project.cli("embed").rc == 0
        assert look.look() == NONE and index_lacks(store, fleet) == 0
        age(project, sid, 60)
        assert look.look() == NONE                            # remembered complete
        write_texts(project, sid, TEXTS[3:4])                 # pending, no vector
        assert look.look() == SOME and index_lacks(store, fleet) == 1
        assert look.look(grace=True) == FRESH                 # its writer may still embed it
        age(project, sid, 60)
        assert look.look(grace=True) == SOME                  # no longer
        assert project.cli("embed").rc == 0
        assert look.look() == NONE and index_lacks(store, fleet) == 0
