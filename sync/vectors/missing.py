"""Is any message without its vector? Told from the ledger (outbox.ledger), without numpy.

The agent's backfill (sync.agent.backfill) looks here before every backfill: the derived index
(sync.vectors.index) would tell too, but opening it imports numpy and loads the index's arrays,
about 16 MB the agent would then hold for its whole life, although in a store where every write
got its vector there is nothing to backfill. Only SOME opens the index (sync.vectors.backfill),
which then finds exactly which messages to embed.

A message lacks its vector when its `.msg` lies in the pending or imported area and no `.emb`
of the same name lies in either (the index's own rule, sync.vectors.listing, so both agree);
the ledger keeps that for each message, so a look costs what lacks a vector, not what the
sessions hold.
When a look is prompted by new messages, one written less than FRESH_NS ago may still get its
vector from its writer (a write embeds within its budget, inline or through the agent): that is
FRESH, looked at again later rather than embedded twice. A session listed complete is
remembered with its directories' mtimes, so a later look asks only about the sessions whose
directories changed since; a directory changed less than RACY_NS before the look is not
remembered (a file landing within the same mtime tick would not change it).
"""

from __future__ import annotations

import time
from typing import Any

from agent_memory.outbox.store import IMPORTED, PENDING, StoredFile
from agent_memory.sync.vectors import statefile
from agent_memory.sync.vectors.listing import RACY_NS

NONE, FRESH, SOME = "none", "fresh", "some"
FRESH_NS = 2_000_000_000  # the write path's default embedding budget


class MissingVectors:
    """The look, with what it learnt about complete sessions, for one store."""

    def __init__(self, store) -> None:
        self.store = store
        self._complete: dict[str, dict[str, int]] = {}  # session -> its dirs' mtimes, listed

    def look(self, grace: bool = False) -> str:
        """SOME when a pending or imported message has no `.emb`, else NONE; with `grace`,
        FRESH when only messages written within FRESH_NS lack one."""
        now_ns = time.time_ns()
        dirs = self.store.session_mtimes((PENDING, IMPORTED))
        by_session: dict[str, dict[str, int]] = {}
        for key, mtime in dirs.items():
            by_session.setdefault(key.split("/", 1)[1], {})[key] = mtime
        for gone in set(self._complete) - set(by_session):
            del self._complete[gone]
        found = NONE
        for session_id, mtimes in sorted(by_session.items()):
            if self._complete.get(session_id) == mtimes:
                continue
            self._complete.pop(session_id, None)
            lacking = self.store.lacking_vectors(session_id)  # the ledger: no listing
            for message in lacking:
                if not grace or not self._fresh(message, now_ns):
                    return SOME
                found = FRESH
            if not lacking and all(m < now_ns - RACY_NS for m in mtimes.values()):
                self._complete[session_id] = mtimes
        return found

    def _fresh(self, message: StoredFile, now_ns: int) -> bool:
        try:
            return self.store.stat(message).st_mtime_ns > now_ns - FRESH_NS
        except FileNotFoundError:
            return True  # moved or purged meanwhile: the next look sees where it went


def nothing_to_do(store, model: str, dimension: int, started: float) -> dict[str, Any]:
    """The backfill's report (sync.vectors.backfill) when no vector is missing. Its warnings
    (`.emb` of another model, unreadable messages) are those the index recorded when last
    saved: files that came since are described once the index is opened again (by a search,
    `embed`, or a backfill with work)."""
    state = statefile.read(store, model, dimension)
    return {"written": 0, "remaining": 0, "missing": 0,
            "mismatched": statefile.mismatched(state) if state else [],
            "unreadable": statefile.unreadable(state) if state else [],
            "unembeddable": [], "model": model, "dimension": dimension,
            "seconds": round(time.perf_counter() - started, 3)}
