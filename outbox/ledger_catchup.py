"""Catching the ledger up with a session's files (outbox.ledger): list its three directories,
decode only the names the ledger has no row for (and those it found unreadable: a file's mode
may have been mended since), drop the rows of names gone, re-area those moved, and count again.

It runs when a session's directories are not as the ledger recorded them: its first use, a
writer killed between its file and its row, files written by an older release or by hand, a
boot the ledger did not see end. Decoding uses the msgspec schema (outbox.records), as every
read does, so the ledger calls readable exactly what a read of the files would.
"""

from __future__ import annotations

import json
import os

from agent_memory.outbox import atomic, encoding, layout, names
from agent_memory.outbox.ledger import (AREA_CODES, EVENT, LEDGER_DIR, LEDGER_FILE, MESSAGE,
                                        UNREADABLE)

LEDGER_SHOWN = f"{LEDGER_DIR}/{LEDGER_FILE}"


def listing(store_fd: int, session_id: str) -> tuple[dict[str, str], dict[str, set[str]]]:
    """({name: area} of the session's `.msg` and `.ses`, the first area in the order pending,
    imported, quarantined when a name lies in two; {stem: areas} of its `.emb`)."""
    records: dict[str, str] = {}
    vectors: dict[str, set[str]] = {}
    dirs = layout.open_session_dirs(store_fd, session_id, layout.AREAS)
    try:
        for area, fd in dirs.items():
            if fd is None:
                continue
            for name in names.finals(os.listdir(fd)):
                if name.endswith(names.VECTOR_EXT):
                    vectors.setdefault(name[:-len(names.VECTOR_EXT)], set()).add(area)
                else:
                    records.setdefault(name, area)
    finally:
        for fd in dirs.values():
            if fd is not None:
                os.close(fd)
    return records, vectors


def live_vectors(vectors: dict[str, set[str]]) -> set[str]:
    """The stems whose `.emb` lies in pending or imported (a `.msg` of such a stem has its
    vector: the ledger's `vec`)."""
    return {stem for stem, areas in vectors.items()
            if layout.PENDING in areas or layout.IMPORTED in areas}


def vec_of(name: str, live: set[str]) -> int | None:
    """A row's `vec`: 1 or 0 for a `.msg`, None for a `.ses`."""
    if not name.endswith(names.MESSAGE_EXT):
        return None
    return 1 if name[:-len(names.MESSAGE_EXT)] in live else 0


def counts(records: dict[str, str], vectors: dict[str, set[str]],
           live: set[str]) -> tuple[int, int, int, int]:
    """A session's counters as its listing says: (messages in pending and imported, `.emb`
    there, files in quarantine, messages there without a vector)."""
    kept = [name for name, area in records.items()
            if name.endswith(names.MESSAGE_EXT) and area != layout.QUARANTINED]
    return (len(kept),
            sum(len(areas - {layout.QUARANTINED}) for areas in vectors.values()),
            sum(1 for area in records.values() if area == layout.QUARANTINED)
            + sum(1 for areas in vectors.values() if layout.QUARANTINED in areas),
            sum(1 for name in kept if name[:-len(names.MESSAGE_EXT)] not in live))


def describe(store_fd: int, session_id: str, name: str, area: str) -> dict | None:
    """The row of one record file as the ledger keeps it ({"kind", "seq", "corrects",
    "event", "body", "reason"}), or None when it is not there any more (moved meanwhile)."""
    from agent_memory.outbox import records
    fd = layout.open_session(store_fd, session_id, area)
    if fd is None:
        return None
    try:
        data = atomic.read_file(fd, name)
    except FileNotFoundError:
        return None
    except OSError as exc:  # a symbolic link, a FIFO, a huge file, no permission
        return _unreadable(name, str(exc), None)
    finally:
        os.close(fd)
    if name.endswith(names.MESSAGE_EXT):
        try:
            record = records.decode(data, records.MessageRecord)
        except records.RecordError as exc:
            return _unreadable(name, str(exc), data)
        if record.message_id != name[names.ITEM_ID] or record.session_id != session_id:
            return _unreadable(name, "record does not match its file name", data)
        return {"kind": MESSAGE, "seq": record.sequence_number,
                "corrects": record.corrects_message_id}
    try:
        event = records.decode(data, records.SessionEvent)
    except records.RecordError as exc:
        return _unreadable(name, str(exc), data)
    return {"kind": EVENT, "event": event.event, "body": data.decode("utf-8")}


def _unreadable(name: str, reason: str, data: bytes | None) -> dict:
    row: dict = {"kind": UNREADABLE, "reason": reason}
    if name.endswith(names.EVENT_EXT):  # the write path's loose look still reads its kind
        row["event"] = (encoding.event_kind(data) or "") if data is not None else ""
        if data is not None:
            try:
                value = json.loads(data)
            except ValueError:
                value = None
            if isinstance(value, dict):
                row["body"] = data.decode("utf-8")
    return row


def catch_up(ledger, session) -> None:
    """Make the session's rows and counters say what its directories hold now; its `seen`
    becomes the directories as they were when the listing began (a change made meanwhile
    leaves them unequal: listed again at the next use)."""
    conn = ledger._conn
    sid = session.sid
    before = ledger.seen_now(session.session_id)
    records, vectors = listing(ledger.store_fd, session.session_id)
    rows = {name: (area, kind, vec) for name, area, kind, vec in conn.execute(
        "SELECT name, area, kind, vec FROM files WHERE sid = ?", (sid,))}
    changed = False
    gone = [name for name in rows if name not in records]
    if gone:
        conn.executemany("DELETE FROM files WHERE sid = ? AND name = ?",
                         [(sid, name) for name in gone])
        changed = True
    live = live_vectors(vectors)
    for name, area in records.items():
        code = AREA_CODES[area]
        vec = vec_of(name, live)
        held = rows.get(name)
        if held is not None and held[1] != UNREADABLE:
            if held[0] != code or held[2] != vec:
                conn.execute("UPDATE files SET area = ?, vec = ? WHERE sid = ? AND name = ?",
                             (code, vec, sid, name))
                changed = True
            continue
        row = describe(ledger.store_fd, session.session_id, name, area)
        if row is None:
            continue  # moved meanwhile: `before` no longer matches, so listed again next use
        if held is not None and held[1] == UNREADABLE and row["kind"] == UNREADABLE \
                and held[0] == code and held[2] == vec:
            continue
        event = row.get("event")
        if name.endswith(names.EVENT_EXT) and event is None:
            event = ""
        conn.execute("INSERT OR REPLACE INTO files VALUES (?,?,?,?,?,?,?,?,?,?)",
                     (sid, name, code, row["kind"], row.get("seq"), row.get("corrects"), vec,
                      event, row.get("body"), row.get("reason")))
        changed = True
    counted = counts(records, vectors, live)
    if counted != (session.messages, session.vectors, session.set_aside, session.lacking):
        changed = True
    session.messages, session.vectors, session.set_aside, session.lacking = counted
    if changed:
        session.epoch += 1
    session.seen = before


def disagreements(ledger, session_id: str) -> list[dict[str, str]]:
    """Where the ledger, claiming to be caught up with the session, says otherwise than its
    files (`verify`): [{"file", "problem"}]. A session the ledger knows to be behind (its
    directories changed since it recorded them) is caught up at its next use: not a
    disagreement. Decodes every file of the session."""
    def rows_now(led):
        session = led._conn.execute("SELECT sid, seen, messages, lacking FROM sessions "
                                    "WHERE session = ?", (session_id,)).fetchone()
        if session is None or session[1] is None or session[1] != led.seen_now(session_id):
            return None
        rows = {name: (area, kind, seq, corrects, vec, event)
                for name, area, kind, seq, corrects, vec, event in led._conn.execute(
                    "SELECT name, area, kind, seq, corrects, vec, event FROM files "
                    "WHERE sid = ?", (session[0],))}
        return session[1], session[2], session[3], rows

    with ledger.transaction():
        recorded = rows_now(ledger)
    if recorded is None:
        return []
    seen, messages, lacking, rows = recorded
    records, vectors = listing(ledger.store_fd, session_id)
    live = live_vectors(vectors)
    expected = {}
    for name, area in records.items():
        row = describe(ledger.store_fd, session_id, name, area)
        if row is None:
            continue
        vec = vec_of(name, live)
        event = row.get("event")
        if name.endswith(names.EVENT_EXT) and event is None:
            event = ""
        expected[name] = (AREA_CODES[area], row["kind"], row.get("seq"), row.get("corrects"),
                          vec, event)
    with ledger.transaction():
        if ledger.seen_now(session_id) != seen:
            return []  # changed meanwhile: the ledger follows at its next use
    shown = f"{names.STORE_DIR}/{LEDGER_SHOWN}"
    found = []
    for name in sorted(set(rows) | set(expected)):
        if name not in expected:
            found.append({"file": shown, "problem": f"lists {session_id}/{name}, which the "
                                                    "session does not hold"})
        elif name not in rows:
            found.append({"file": shown, "problem": f"lacks {session_id}/{name}"})
        elif rows[name] != expected[name]:
            found.append({"file": shown, "problem": f"says otherwise than "
                                                    f"{session_id}/{name}"})
    counted, _vectors, _set_aside, without = counts(records, vectors, live)
    if counted != messages:
        found.append({"file": shown, "problem": f"counts {messages} messages in {session_id}, "
                                                f"which holds {counted}"})
    if without != lacking:
        found.append({"file": shown, "problem": f"counts {lacking} messages without a vector "
                                                f"in {session_id}, which holds {without}"})
    return found
