"""Forgetting on disk: a hard delete or a session delete PURGES, so that when the command
returns no file under `.agent-memory/` holds the message's text any more, pending or imported.

A purge is a small journal of its own, so that `kill -9` at any point is completed by the next
command that opens the store (or the next sync round):
  1. an intent in the purge journal (outbox.journal: no text, the ids, and the event that
     will tell the logger, with the name it will have: named by the rule of every event,
     Store.next_event_file, so it sorts after every file the session holds);
  2. every file that held the message goes: its `.msg` and `.emb` in every area with their
     reason files (the `.msg` first: an `.emb` racing in is then seen, by the purge or by its
     writer), a whole session's directories for a session delete, the derived vector index
     (rebuilt from what is left on the next search), temporaries of killed writers;
  3. the delete event is written to the session's outbox (it holds no text either), so the
     logger forgets it too, in order with everything written before it;
  4. the intent goes.
Every step is idempotent, and `complete(store)` redoes 2-4 for any intent it finds. The sync
engine completes intents before it sends, and drops from a batch what was purged meanwhile, so a
message purged before it was forwarded is never sent (one already on the wire when the purge
began is deleted from the logger by the event that follows it).
"""

from __future__ import annotations

import os
import shutil
from typing import Any

from agent_memory.outbox import encoding, journal, names
from agent_memory.outbox.contract import format_utc, new_uuid4
from agent_memory.outbox.store import IMPORTED, PENDING, QUARANTINED, Store, StoredFile, utc_now

INDEX_DIR = ".index"  # sync.vectors.segments.INDEX_DIR (numpy is not imported for a purge)
AREAS = (PENDING, IMPORTED, QUARANTINED)


def pending_intents(store: Store) -> bool:
    """Is a purge unfinished? (one listing: every command that opens the store asks)"""
    return bool(journal.intents(store))


def reached_logger(store: Store, session_id: str, message_id: str | None = None) -> bool:
    """Did the message (or, without one, anything of the session) ever reach the logger? A
    confirmed file lies in `.imported/`."""
    for file in store.files(session_id, None, (IMPORTED,)):
        if message_id is None or file.item_id == message_id:
            return True
    return False


def purge_message(store: Store, session_id: str, message_id: str,
                  event: bool = True) -> tuple[StoredFile | None, dict[str, Any]]:
    """Hard-delete one message on disk and record its delete event (none with `event` False:
    the logger already did it); the event's file (None without one) and record."""
    record = _event(session_id, "delete", message_id=message_id, mode="hard",
                    reached_logger=reached_logger(store, session_id, message_id))
    return _run(store, {"kind": "message", "session_id": session_id, "message_id": message_id,
                        "event": record, "record_event": event})


def purge_session(store: Store, session_id: str,
                  event: bool = True) -> tuple[StoredFile | None, dict[str, Any]]:
    """Delete a whole session on disk and record its delete_session event (none with `event`
    False: the logger already did it); the event's file (None without one) and record."""
    record = _event(session_id, "delete_session",
                    reached_logger=reached_logger(store, session_id))
    return _run(store, {"kind": "session", "session_id": session_id, "message_id": None,
                        "event": record, "record_event": event})


def complete(store: Store) -> int:
    """Finish every purge a killed command left; how many."""
    done = 0
    for name in journal.intents(store):
        try:
            intent = journal.read(store, name)
        except FileNotFoundError:
            continue  # finished by a concurrent command
        except (OSError, ValueError):
            continue  # not ours to judge: verify reports what it cannot read
        _carry_out(store, intent)
        journal.drop(store, name)
        done += 1
    return done


# --- the steps ---------------------------------------------------------------------------------
def _event(session_id: str, kind: str, **attributes: Any) -> dict[str, Any]:
    return encoding.event(event=kind, event_id=new_uuid4(), session_id=session_id,
                          occurred_at=format_utc(utc_now()), **attributes)


def _run(store: Store, intent: dict[str, Any]) -> tuple[StoredFile | None, dict[str, Any]]:
    # The event is named now, by the rule of every event (Store.next_event_file: after every
    # file the session holds), and the name journalled, so a completion files it under the
    # same name however late it runs.
    intent["file"] = store.next_event_file(intent["event"]).name
    name = f"{intent['event']['event_id']}.json"
    journal.add(store, name, intent)
    file = _carry_out(store, intent)
    journal.drop(store, name)
    return file, intent["event"]


def _carry_out(store: Store, intent: dict[str, Any]) -> StoredFile | None:
    """The purge's steps 2 and 3 (idempotent); the event's file, None when none is recorded."""
    session_id, event = intent["session_id"], intent["event"]
    event_suffix = f"-{event['event_id']}{names.EVENT_EXT}"
    if intent["kind"] == "session":
        def doomed(name: str) -> bool:
            return not name.endswith(event_suffix)
    else:
        suffixes = tuple(f"-{intent['message_id']}{ext}" for ext in (names.MESSAGE_EXT,
                                                                      names.VECTOR_EXT))
        reasons = tuple(s + ".reason.json" for s in suffixes)

        def doomed(name: str) -> bool:
            return name.endswith(suffixes) or name.endswith(reasons)
    # Every `.msg` first, then the rest from a fresh listing: an `.emb` written meanwhile by a
    # writer that still saw its `.msg` is listed then (sync.vectors.emb.write_vector).
    for area in AREAS:
        _remove_where(store, session_id, area,
                      lambda name: doomed(name) and name.endswith(names.MESSAGE_EXT))
    for area in AREAS:
        _remove_where(store, session_id, area, doomed)
    shutil.rmtree(os.path.join(store.path, INDEX_DIR), ignore_errors=True)
    from agent_memory.outbox.cleanup import remove_orphan_temporaries
    remove_orphan_temporaries(store, min_age_s=0.0)
    if not intent.get("record_event", True):
        return None
    for file in store.files(session_id, names.EVENT_EXT):
        if file.name.endswith(event_suffix):
            return file  # written before a kill
    if not intent.get("file"):  # journalled by an earlier release, without a name: named now
        return store.add_event(event)
    file = StoredFile(session_id, PENDING, intent["file"])
    try:
        return store.add_event(event, file)
    except FileExistsError:
        return file  # a concurrent completion filed it


def _remove_where(store: Store, session_id: str, area: str, doomed) -> None:
    store.remove(session_id, area, [n for n in store.entries(session_id, area) if doomed(n)])
    if area != PENDING:
        store.remove_empty_session_dir(session_id, area)


# --- forwarding (the sync engine) --------------------------------------------------------------
FORGETTING = frozenset({"delete", "mark", "delete_session"})


async def forwarding_of_forgetting(link, event: Any, pending=lambda message_id: False) -> Any:
    """Send one forgetting event; its answer. Raises Refused for a refusal, and for a mark the
    logger answered false (nothing changed there: MARK_NOT_APPLIED).

    Forgetting is idempotent: an event whose effect the logger already shows is confirmed,
    not refused (a repeated command, or one that went to the logger directly meanwhile, must
    leave nothing to fail later). A session the logger does not know is deleted; so is a
    message it does not know, unless that message still waits in this outbox (`pending(id)`),
    to be sent behind the event: then a soft delete or mark waits too. A mark the logger
    answered false holds when every message reads back in the state asked (or is gone)."""
    from agent_memory.outbox import contract
    from agent_memory.sync.links.failures import Refused
    from agent_memory.sync.events import call_of
    command, params = call_of(event)
    try:
        answer = await link.call(command, **params)
        if event.event == "mark":
            if answer is not True and not await _marks_stand(link, event, pending):
                raise Refused(contract.MARK_NOT_APPLIED,
                              "the logger changed no marker: one of the messages is unknown "
                              "to it or could not be changed (all or nothing)")
            return {"message_ids": list(event.message_ids), "marked": bool(event.marked)}
        return answer
    except Refused as exc:
        if event.event == "delete_session" and exc.code == contract.SESSION_UNKNOWN:
            return {"session_id": event.session_id, "deleted": True, "already": True}
        if event.event == "delete" and exc.code == contract.MESSAGE_UNKNOWN and \
                (event.mode == "hard" or not pending(event.message_id)):
            return {"message_id": event.message_id, "mode": event.mode, "deleted": True,
                    "already": True}
        raise


async def _marks_stand(link, event: Any, pending) -> bool:
    """Does every message of a mark read back in the state it asks (or is it gone from the
    logger and from this outbox)?"""
    from agent_memory.outbox import contract
    from agent_memory.sync.links.failures import Refused
    for message_id in event.message_ids or ():
        try:
            entry = await link.call("message_get", message_id=message_id)
        except Refused as exc:
            if exc.code == contract.MESSAGE_UNKNOWN and not pending(message_id):
                continue
            return False
        data = entry.get("data", entry) if isinstance(entry, dict) else {}
        if not isinstance(data, dict) or bool(data.get("soft_deleted")) != bool(event.marked):
            return False
    return True


def purged_meanwhile(store: Store, batch: list) -> list:
    """The items of a batch about to be sent whose `.msg` is still pending: an unfinished purge
    is completed first, and what it took is left out."""
    if pending_intents(store):
        complete(store)
    listed = {session_id: {f.name for f in store.files(session_id, None, (PENDING,))}
              for session_id in {item.file.session_id for item in batch}}
    return [item for item in batch if item.file.name in listed[item.file.session_id]]
