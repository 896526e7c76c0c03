"""The `.emb` of one message: made within a budget when the embedder answers (`vector_for`),
and written beside its message wherever that lies by then, pending or imported
(`write_vector`). The write path, the agent's served writes and the backfill all go through
here. Light at import time: this module is on the write path."""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs the write path 3 ms: annotations only
if TYPE_CHECKING:
    from typing import Any

from agent_memory.outbox import encoding
from agent_memory.outbox.store import IMPORTED, PENDING


def vector_for(route, config, budget: float, record: dict[str, Any],
               where: str) -> dict[str, Any] | None:
    """The `.emb` record of a new message (`record`, as written) when the embedder answers
    within `budget` seconds through `route` (sync.links.route.Route), else None, with a line on
    stderr saying why: the message stands alone and `embed` or the agent's backfill fills its
    vector later. A vector of another model or dimension is never returned."""
    if budget <= 0:
        return None
    from agent_memory.sync.links.logger import RetryPolicy
    try:
        vector = route.embed(config, [record["text"]], budget=budget,
                             policy=RetryPolicy(attempts=2, initial=0.05, maximum=0.2))[0]
    except Exception as exc:  # embedder down, slow, refusing or mismatched: .msg stands alone
        import sys
        sys.stderr.write(f"agent-memory: no vector for {where} yet: "
                         f"{type(exc).__name__}: {exc}\n")
        return None
    model = config.embedding_model
    return encoding.vector(message_id=record["message_id"], model=model["model"],
                           dimension=int(model["dimension"]), embedding=vector)


def write_vector(store, session_id: str, msg_name: str, record: dict[str, Any]) -> bool:
    """Write the `.emb` record beside the message `msg_name` wherever it lies now; False when
    one is there already (another writer was quicker) or the message is gone (quarantined).

    A purge (sync.forgetting) may take the `.msg` between the look and the write: the `.emb` is
    then taken back when the `.msg` is nowhere after it. With the purge's order (every `.msg`
    first, then a fresh listing for the rest) no `.emb` outlives its deleted message."""
    area = store.area_of(session_id, msg_name, (PENDING, IMPORTED))
    if area is None:
        return False
    try:
        written = store.append_vector(session_id, msg_name, record, area)
    except FileExistsError:
        return False
    if store.area_of(session_id, msg_name) is None:
        _take_back(store, written)
        return False
    return True


def _take_back(store, written) -> None:
    """Remove an `.emb` whose message was purged while it was written."""
    store.remove(written.session_id, written.area, [written.name])
    if written.area != PENDING:
        store.remove_empty_session_dir(written.session_id, written.area)
