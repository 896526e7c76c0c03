"""A session's messages and vectors as the derived index sees them, how long a directory's mtime
stays too recent to trust, and which messages are still pending. Pure standard library (no
numpy). A message lacks its vector when no `.emb` of its name lies in pending or imported: the
index's rule here, and the ledger's (outbox.ledger, which the agent's check for missing vectors,
sync.vectors.missing, asks), so the two agree; and a read that merges pending messages
(sync.vectors.pending) learns that there are none without opening the index."""

from __future__ import annotations

from agent_memory.outbox import names
from agent_memory.outbox.contract import is_valid_session_id
from agent_memory.outbox.store import IMPORTED, PENDING, Store

RACY_NS = 2_000_000_000  # a directory changed less than 2 s before a scan is listed again


def session_listing(store: Store, session_id: str,
                    dirs: dict[str, int]) -> dict[str, dict[str, str]]:
    """stem -> {".msg"|".emb": area} of the session's files (the pending copy wins), from the
    directories named in `dirs` ({"<area>/<session>": mtime_ns}, Store.session_mtimes)."""
    listing: dict[str, dict[str, str]] = {}
    for area in (PENDING, IMPORTED):
        if f"{area}/{session_id}" not in dirs:
            continue
        for name in store.entries(session_id, area):
            parsed = names.parse_final_name(name)
            if parsed is None or parsed[2] == names.EVENT_EXT:
                continue
            listing.setdefault(name[: -len(parsed[2])], {}).setdefault(parsed[2], area)
    return listing


def pending_message_stems(store: Store, session_ids=None) -> set[str]:
    """Names (without `.msg`) of the messages still pending, of `session_ids` or of every
    session: what an auto-mode read scores beside the logger's answer. None pending, nothing
    to merge: the index need not be opened."""
    wanted = store.pending_session_ids() if session_ids is None else \
        [s for s in session_ids if is_valid_session_id(s)]  # no other names a directory
    return {f.name[: -len(names.MESSAGE_EXT)]
            for sid in wanted for f in store.files(sid, names.MESSAGE_EXT, (PENDING,))}
