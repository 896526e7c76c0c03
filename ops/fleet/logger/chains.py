"""Correction chains and the `resolved` mode (our decision, see outbox.contract).

A message with `corrects_message_id` continues the chain of the message it corrects; the chain's
root is the message that corrects nothing, and its final version is the member that arrived last.
In resolved mode a chain appears once, at its root's place, as the root's entry carrying the
final version's content plus `resolved_from` (the final version's id); the correcting messages
themselves do not appear separately. Full mode shows every message as recorded.

Soft-deleted members are ignored as if absent (outbox.contract): a correction whose target is
hidden is a message of its own, and the final version is the last visible member.
"""

from __future__ import annotations

import sqlite3
from typing import Any, Iterable

from agent_memory.outbox.contract import CorrectionChains, resolve_corrections


class Chains(CorrectionChains):
    """The correction structure of some sessions (outbox.contract.CorrectionChains over the
    logger's rows: the order key is the sequence number). Only links between two visible
    messages count, so a chain never reaches through a hidden member (`show_deleted`: every
    message is visible)."""

    def __init__(self, conn: sqlite3.Connection, session_ids: Iterable[str] | None,
                 show_deleted: bool = False) -> None:
        where = ["m.corrects_message_id IS NOT NULL"]
        args: list[str] = []
        if not show_deleted:
            where.append("m.soft_deleted=0 AND t.soft_deleted=0")
        if session_ids is not None:
            args = list(session_ids)
            where.append(f"m.session_id IN ({','.join('?' * len(args))})" if args else "0")
        rows = conn.execute("SELECT m.message_id, m.corrects_message_id, m.sequence_number FROM "
                            "messages m JOIN messages t ON t.message_id=m.corrects_message_id "
                            f"WHERE {' AND '.join(where)}", args).fetchall()
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
