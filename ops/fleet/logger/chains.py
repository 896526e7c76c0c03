"""Correction chains and the `resolved` mode (our decision, see outbox.contract).

A message with `corrects_message_id` continues the chain of the message it corrects; the chain's
root is the message that corrects nothing, and its final version is the member that arrived last.
In resolved mode a chain appears once, at its root's place, as the root's entry carrying the
final version's content plus `resolved_from` (the final version's id); the correcting messages
themselves do not appear separately. Full mode shows every message as recorded.
"""

from __future__ import annotations

import sqlite3
from typing import Any, Iterable

from agent_memory.outbox.contract import CorrectionChains, resolve_corrections


class Chains(CorrectionChains):
    """The correction structure of some sessions (outbox.contract.CorrectionChains over the
    logger's rows: the order key is the sequence number)."""

    def __init__(self, conn: sqlite3.Connection, session_ids: Iterable[str] | None) -> None:
        if session_ids is None:
            rows = conn.execute("SELECT message_id, corrects_message_id, sequence_number FROM "
                                "messages WHERE corrects_message_id IS NOT NULL").fetchall()
        else:
            ids = list(session_ids)
            marks = ",".join("?" * len(ids))
            rows = conn.execute("SELECT message_id, corrects_message_id, sequence_number FROM "
                                f"messages WHERE corrects_message_id IS NOT NULL AND session_id "
                                f"IN ({marks})", ids).fetchall() if ids else []
        super().__init__((r[0], r[1], r[2]) for r in rows)


def resolved(root_entry: dict[str, Any], final_entry: dict[str, Any] | None) -> dict[str, Any]:
    """The root's entry as the resolved mode shows it.

    Delegates to outbox.contract.resolve_corrections (the rule offline reads use) over the pair
    root + final version, so both substitute exactly the same fields.
    """
    if final_entry is None:
        return root_entry
    direct = dict(final_entry, corrects_message_id=root_entry["message_id"])
    return resolve_corrections([root_entry, direct])[0]
