"""The reference logger's SQLite file: schema, connections and row conversions.

One file (WAL) in the data directory is the whole state, shared by the server process and the
queue worker that runs `messages_import`; each process opens its own connection (a connection
must not cross a fork, hence one per pid). Writers take `BEGIN IMMEDIATE` so the two processes
serialise cleanly; `busy_timeout` makes the other wait instead of failing.

A hard delete must leave no byte of the text in any file: every connection has `secure_delete`
(freed cells and pages are zeroed), and after a delete the WAL, whose older frames still hold
the pages as they were, is checkpointed into the file and truncated (`forget_frames`).
"""

from __future__ import annotations

import json
import os
import sqlite3
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator
from contextlib import contextmanager

from ops.fleet import layout
from agent_memory.outbox.contract import dialogue_kind_label, format_utc

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions(
  session_id    TEXT PRIMARY KEY,
  project_id    TEXT NOT NULL,
  dialogue_kind TEXT NOT NULL,          -- JSON [sender_kind, receiver_kind]
  participants  TEXT NOT NULL,          -- JSON list
  title         TEXT,
  metadata      TEXT,                   -- JSON object or NULL
  lifecycle     TEXT NOT NULL,
  created_at    TEXT NOT NULL,
  next_sequence INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS sessions_created ON sessions(created_at, session_id);
CREATE TABLE IF NOT EXISTS messages(
  message_id        TEXT PRIMARY KEY,
  session_id        TEXT NOT NULL,
  sequence_number   INTEGER NOT NULL,
  text              TEXT NOT NULL,
  sender_kind       TEXT NOT NULL,
  sender_identity   TEXT NOT NULL,
  receiver_kind     TEXT NOT NULL,
  receiver_identity TEXT NOT NULL,
  priority          INTEGER NOT NULL,
  relations         TEXT NOT NULL,      -- JSON list as declared
  corrects_message_id TEXT,
  attributes        TEXT NOT NULL,      -- JSON object
  occurred_at       TEXT NOT NULL,      -- normalised UTC
  received_at       TEXT NOT NULL,
  content_key       TEXT NOT NULL,      -- canonical content, for the retry/conflict test
  soft_deleted      INTEGER NOT NULL DEFAULT 0,
  vector            BLOB,               -- float32, NULL = not vectorized yet
  vector_model      TEXT,
  UNIQUE(session_id, sequence_number));
-- Pending vectors (vector IS NULL) are found through these partial indexes only: the
-- Vectorizer, health and the scoped fills of working_set cost O(pending), not O(messages).
-- IF NOT EXISTS: every connection applies them, so existing data dirs get them too.
CREATE INDEX IF NOT EXISTS messages_pending ON messages(received_at) WHERE vector IS NULL;
CREATE INDEX IF NOT EXISTS messages_pending_session ON messages(session_id, received_at)
  WHERE vector IS NULL;
CREATE TABLE IF NOT EXISTS relations(
  relation_id     INTEGER PRIMARY KEY AUTOINCREMENT,
  session_id      TEXT NOT NULL,
  from_message_id TEXT NOT NULL,
  to_message_id   TEXT NOT NULL,
  kind            TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS relations_session ON relations(session_id, relation_id);
CREATE INDEX IF NOT EXISTS relations_from ON relations(from_message_id);
"""

MESSAGE_COLUMNS = ("message_id, session_id, sequence_number, text, sender_kind, sender_identity, "
                   "receiver_kind, receiver_identity, priority, relations, corrects_message_id, "
                   "attributes, occurred_at, received_at, soft_deleted, vector IS NOT NULL")

_connections: dict[int, sqlite3.Connection] = {}


def now_utc() -> str:
    return format_utc(datetime.now(timezone.utc))


def connect(path: Path | None = None) -> sqlite3.Connection:
    """This process's connection to the fleet's database (created with its schema on first use)."""
    pid = os.getpid()
    conn = _connections.get(pid)
    if conn is None:
        path = path or layout.db_path(layout.data_dir_from_env())
        conn = sqlite3.connect(str(path), timeout=30, isolation_level=None,
                               check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA busy_timeout=30000")
        conn.execute("PRAGMA secure_delete=ON")
        conn.executescript(SCHEMA)
        # A connection inherited through fork stays referenced and unused: closing it in the
        # child could checkpoint or unlink the parent's WAL.
        _connections[pid] = conn
    return conn


@contextmanager
def write(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction, taken up front so the server and the worker never deadlock."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


_unforgotten = False  # a delete whose WAL frames could not be dropped yet (a reader held them)


def forget_frames(conn: sqlite3.Connection) -> bool:
    """After a delete: copy the WAL into the file and truncate it, so the frames that still
    hold the deleted text are gone. False (retried by `forget_pending`) while a reader of the
    other process holds an older snapshot past the busy timeout."""
    global _unforgotten
    busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
    _unforgotten = bool(busy)
    return not busy


def forget_pending(conn: sqlite3.Connection) -> None:
    """Retry a `forget_frames` that found the WAL busy (the Vectorizer's loop calls this)."""
    if _unforgotten:
        forget_frames(conn)


def message_entry(row: tuple) -> dict[str, Any]:
    """A MESSAGE_ENTRY (outbox.contract) from a row selected with MESSAGE_COLUMNS."""
    return {
        "message_id": row[0],
        "session_id": row[1],
        "sequence_number": row[2],
        "text": row[3],
        "sender_kind": row[4],
        "sender_identity": row[5],
        "receiver_kind": row[6],
        "receiver_identity": row[7],
        "priority": row[8],
        "relations": json.loads(row[9]),
        "corrects_message_id": row[10],
        "attributes": json.loads(row[11]),
        "occurred_at": row[12],
        "received_at": row[13],
        "soft_deleted": bool(row[14]),
    }


def vectorized(row: tuple) -> bool:
    return bool(row[15])


def session_entry(row: tuple) -> dict[str, Any]:
    """A SESSION_ENTRY from (session_id, project_id, lifecycle, dialogue_kind, participants,
    created_at)."""
    return {
        "session_id": row[0],
        "project_id": row[1],
        "lifecycle": row[2],
        "dialogue_kind": dialogue_kind_label(json.loads(row[3])),
        "participants": json.loads(row[4]),
        "created_at": row[5],
    }


SESSION_COLUMNS = "session_id, project_id, lifecycle, dialogue_kind, participants, created_at"


def session_row(conn: sqlite3.Connection, session_id: str) -> tuple | None:
    """(session_id, project_id, lifecycle, next_sequence) or None."""
    return conn.execute(
        "SELECT session_id, project_id, lifecycle, next_sequence FROM sessions "
        "WHERE session_id=?", (session_id,)).fetchone()
