"""The append-only file store under `<project>/.agent-memory/`.

Each record is a new file with a unique name, created atomically. Every change to a session's
files is made inside the ledger's write transaction (outbox.ledger), which knows what each file
says: so a write takes its sequence number (the count of messages already in its session,
pending and imported), its duplicate check, its closed-session check and the moment of its name
from the ledger, not from a listing of the session, and costs the same at any length. Writers
one after another in the ledger's transaction never share a sequence number; a writer that
cannot use the ledger (outbox.ledger.LedgerUnavailable) lists the session as before and may
share one with a concurrent writer, which is why references go by message_id.
"""

from __future__ import annotations

import os
from collections import namedtuple  # not typing.NamedTuple: typing costs the write path
from datetime import datetime, timezone

TYPE_CHECKING = False  # typing costs the write path 3 ms: annotations only
if TYPE_CHECKING:
    from typing import Any, Callable

from agent_memory.outbox import atomic, encoding, layout, names
from agent_memory.outbox.availability import StoreUnavailable, check_available
from agent_memory.outbox.ledger import EVENT, MESSAGE, Ledger, LedgerUnavailable
from agent_memory.outbox.contract import (format_utc, new_uuid4, normalise_occurred_at,
                                           session_ids_among)
from agent_memory.outbox.layout import IMPORTED, PENDING, QUARANTINED

__all__ = ["Store", "StoredFile", "StoredMessage", "NewMessage", "Unreadable", "MessageExists",
           "SessionShut", "PENDING", "IMPORTED", "QUARANTINED", "utc_now"]

# The lifecycle events after which a session takes no message until it is opened again.
SHUTTING_EVENTS = frozenset({"close", "delete_session"})


class MessageExists(Exception):
    """A message with this message_id is already in the store (see `.existing`)."""

    def __init__(self, existing: "StoredMessage") -> None:
        super().__init__(existing.record.message_id)
        self.existing = existing


class SessionShut(Exception):
    """The session's latest lifecycle event shuts it to new messages: `kind` is "close" (it
    must be reopened) or "delete_session" (it must be opened again, anew)."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


class StoredFile(namedtuple("StoredFile", "session_id area name")):
    """A final-named file found by a scan: its session, where it lies (`area`: PENDING,
    IMPORTED or QUARANTINED) and its name."""

    __slots__ = ()

    @property
    def item_id(self) -> str:
        """The uuid its final name carries (the message_id or event_id)."""
        return self.name[names.ITEM_ID]

    @property
    def relpath(self) -> str:
        """Path relative to the project root, for answers and warnings."""
        return f"{layout.SHOWN_DIRS[self.area]}{self.session_id}/{self.name}"


class StoredMessage(namedtuple("StoredMessage", "file record")):
    """A decoded message: its StoredFile and its outbox.records.MessageRecord."""

    __slots__ = ()


class NewMessage(namedtuple("NewMessage", "file record")):
    """A message just written: its StoredFile and the record dict it holds (outbox.encoding)."""

    __slots__ = ()


class Unreadable(namedtuple("Unreadable", "file reason")):
    """A final-named file (`file`, a StoredFile) whose content is not a valid record (`reason`
    says why): reported, never fatal."""

    __slots__ = ()

    def warning(self) -> dict[str, str]:
        return {"file": self.file.relpath, "reason": self.reason}


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


class Store:
    """One project's store. Opening it checks availability; nothing is created implicitly.

    Callers say what they want (list a session's records, read one, append, move, remove) and
    never where it lies: which directory an area is, and every descriptor, stay in here and in
    outbox.layout."""

    def __init__(self, project_root: str) -> None:
        # One resolution of the project's path, used by everything that names the store (its
        # agent's socket and identity, the lock, answers): a project reached through a
        # symbolic link is the same store as the real path.
        self.project_root = os.path.realpath(project_root)
        self.path = check_available(self.project_root)
        try:
            self._fd = atomic.open_dir(self.path)
        except OSError as exc:
            raise StoreUnavailable(f"cannot open {self.path}: {exc.strerror or exc}") from exc
        self.ledger = Ledger(self.path, self._fd)
        self._without_ledger = 0  # inside a change made without it: reads list the files too
        self._unsynced: list[int] | None = None  # directories to fsync at the end (together)
        self._appended: list[tuple[StoredFile, bytes]] | None = None  # its new messages

    def close(self) -> None:
        self.ledger.close()
        os.close(self._fd)

    def together(self) -> "_Together":
        """`with store.together():` records created inside have their directories fsynced
        once, as it ends (an error inside too), not once each: for writes acknowledged
        together (a framework's batch of items), which the caller answers only after it. A
        file is whole (fsynced) before its name appears either way; only the name's
        durability waits for the end. Its `appended` lists the messages appended inside,
        each as (its file, its bytes)."""
        return _Together(self)

    # --- the ledger ----------------------------------------------------------------------------
    def _changing(self, session_id: str, change: Callable[[Any, list], None]) -> Any:
        """`change(session)` inside the ledger's write transaction, `session` the ledger's
        (outbox.ledger.Session) caught up; when the ledger cannot be used, `change(None)`
        without it, marked (Ledger.without) so the ledger lists the session again. A change
        made whose recording fails is made: the ledger catches up with it at its next use.
        `change(session, done)` appends its answer to `done` as soon as its files are changed,
        then records the change in `session`."""
        done: list[Any] = []
        if not self._without_ledger:
            try:
                with self.ledger.transaction(write=True):
                    change(self.ledger.session(session_id), done)
                return done[-1] if done else None
            except LedgerUnavailable as exc:
                if done:
                    return done[-1]
                _note_without_ledger(exc)
        self._without_ledger += 1
        try:
            with self.ledger.without(session_id):
                change(None, done)
            return done[-1] if done else None
        finally:
            self._without_ledger -= 1

    def _reading(self, read: Callable[[Any], Any], fallback: Callable[[], Any]) -> Any:
        """`read(ledger)` in a ledger transaction, else `fallback()` from the files alone."""
        if not self._without_ledger:
            try:
                return self.ledger.query(read)
            except LedgerUnavailable as exc:
                _note_without_ledger(exc)
        return fallback()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _session_dir(self, session_id: str, area: str = PENDING,
                     create: bool = False) -> int | None:
        return layout.open_session(self._fd, session_id, area, create)

    def _session_dirs(self, session_id: str, areas: tuple[str, ...]) -> dict[str, int | None]:
        """The session's directories of `areas`, opened once for one operation (close them
        with _close): its listing, reads and create then need no other open."""
        return layout.open_session_dirs(self._fd, session_id, areas)

    def _finals(self, session_id: str, dirs: dict[str, int | None],
                ext: str | None = None) -> list[StoredFile]:
        """Final-named files in `dirs` (_session_dirs), by area (in the order opened) then
        name. Pending is listed before imported: a file a concurrent syncer moves between the
        two listings is seen (in both), never missed."""
        out: list[StoredFile] = []
        for area, fd in dirs.items():
            listing = os.listdir(fd) if fd is not None else None
            if listing:
                out.extend(StoredFile(session_id, area, n) for n in names.finals(listing, ext))
        return out

    # --- listing -------------------------------------------------------------------------------
    def session_ids(self) -> list[str]:
        """Every session with a directory in any area, sorted."""
        found: set[str] = set()
        for area in layout.AREAS:
            fd = layout.open_area(self._fd, area)
            if fd is None:
                continue
            try:
                found.update(e.name for e in layout.session_entries(fd))
            finally:
                os.close(fd)
        return sorted(found)

    def pending_session_ids(self) -> list[str]:
        """Sessions with a directory in the pending area, sorted."""
        return sorted(e.name for e in layout.session_entries(self._fd))

    def files(self, session_id: str, ext: str | None = None,
              areas: tuple[str, ...] = (PENDING, IMPORTED)) -> list[StoredFile]:
        """Final-named files of a session, by area then name (time order)."""
        dirs = self._session_dirs(session_id, areas)
        try:
            return self._finals(session_id, dirs, ext)
        finally:
            _close(dirs)

    def entries(self, session_id: str, area: str) -> list[str]:
        """Every name in a session's directory of `area`, sorted: records, reason files,
        temporaries and whatever else lies there ([] when there is no such directory)."""
        fd = self._session_dir(session_id, area)
        if fd is None:
            return []
        try:
            return sorted(os.listdir(fd))
        finally:
            os.close(fd)

    def has_pending(self) -> bool:
        """Is any final-named file waiting in any session? (cheap: stops at the first)"""
        entries = list(os.scandir(self._fd))
        valid = session_ids_among([e.name for e in entries])
        for entry in entries:
            if entry.name not in valid or not entry.is_dir(follow_symlinks=False):
                continue
            try:
                fd = self._session_dir(entry.name)
            except PermissionError:
                return True  # unknown content: the sync that follows reports it as skipped
            if fd is None:
                continue
            try:
                if names.finals(os.listdir(fd)):
                    return True
            finally:
                os.close(fd)
        return False

    def session_mtimes(self, areas: tuple[str, ...] = (PENDING, IMPORTED)) -> dict[str, int]:
        """{"<area>/<session>": mtime_ns} of every session directory of `areas` this user may
        open: a directory changes when a file comes or goes (the derived index's freshness)."""
        out: dict[str, int] = {}
        for area in areas:
            fd = layout.open_area(self._fd, area)
            if fd is None:
                continue
            try:
                for entry in layout.session_entries(fd):
                    try:
                        out[f"{area}/{entry.name}"] = entry.stat(follow_symlinks=False).st_mtime_ns
                    except FileNotFoundError:
                        continue
            finally:
                os.close(fd)
        return out

    def pending_usage(self) -> tuple[int, int]:
        """(pending messages, bytes of the pending records): names and one stat per file, no
        decoding (outbox.survey.backlog, the figures the watcher publishes)."""
        from agent_memory.outbox.survey import backlog
        measured = backlog(self.path)
        return measured["pending_messages"], measured["pending_bytes"]

    # --- locating and reading ------------------------------------------------------------------
    def area_of(self, session_id: str, name: str,
                areas: tuple[str, ...] = layout.AREAS) -> str | None:
        """Where a file of a session lies now (a concurrent syncer may have moved it), or None.
        The areas are asked in order (pending before imported: a file moved meanwhile is found
        where it went)."""
        dirs = self._session_dirs(session_id, areas)
        try:
            for area, fd in dirs.items():
                if fd is None:
                    continue
                try:
                    os.stat(name, dir_fd=fd, follow_symlinks=False)
                    return area
                except FileNotFoundError:
                    continue
            return None
        finally:
            _close(dirs)

    def stat(self, file: StoredFile) -> os.stat_result:
        """The file's own status (a symbolic link is not followed); FileNotFoundError when it
        is not there."""
        fd = self._session_dir(file.session_id, file.area)
        if fd is None:
            raise FileNotFoundError(file.name)
        try:
            return os.stat(file.name, dir_fd=fd, follow_symlinks=False)
        finally:
            os.close(fd)

    def read_bytes(self, file: StoredFile) -> bytes:
        """The file's bytes, read safely (outbox.atomic.read_file: UnsafeFile for a symbolic
        link, a FIFO or a huge file); FileNotFoundError when it is not there."""
        fd = self._session_dir(file.session_id, file.area)
        if fd is None:
            raise FileNotFoundError(file.name)
        try:
            return atomic.read_file(fd, file.name)
        finally:
            os.close(fd)

    def load(self, file: StoredFile, kind: str) -> Any:
        """Decode one file as `kind` ("message", "event", "vector") with the msgspec schema.

        Raises records.RecordError or OSError. msgspec is imported here, not at module level:
        the write path never decodes.
        """
        from agent_memory.outbox import records
        return records.decode(self.read_bytes(file), records.KINDS[kind])

    def messages(self, session_id: str, areas: tuple[str, ...] = (PENDING, IMPORTED)
                 ) -> tuple[list[StoredMessage], list[Unreadable]]:
        """The session's messages (pending and imported) and the files that did not parse."""
        good: list[StoredMessage] = []
        bad: list[Unreadable] = []
        for file in self.files(session_id, names.MESSAGE_EXT, areas):
            try:
                record = self.load(file, "message")
            except FileNotFoundError:
                continue  # moved by a concurrent syncer between listing and reading
            except (OSError, ValueError) as exc:  # records.RecordError is a ValueError
                bad.append(Unreadable(file, str(exc)))
                continue
            if record.message_id != file.item_id or record.session_id != session_id:
                bad.append(Unreadable(file, "record does not match its file name"))
                continue
            good.append(StoredMessage(file, record))
        return good, bad

    def events(self, session_id: str) -> tuple[list[tuple[StoredFile, Any]], list[Unreadable]]:
        """The session's events, pending and imported, in time order, and those that do not
        decode (by area, then name). From the ledger: no listing of the session."""
        def read(ledger) -> tuple[list[tuple[StoredFile, Any]], list[Unreadable]]:
            from agent_memory.outbox import records
            good, bad = [], []
            for name, area, kind, body, reason in ledger.session(session_id).events():
                file = StoredFile(session_id, area, name)
                if kind == EVENT:
                    good.append((file, records.decode(body.encode("utf-8"),
                                                      records.SessionEvent)))
                else:
                    bad.append(Unreadable(file, reason))
            bad.sort(key=lambda u: (layout.AREAS.index(u.file.area), u.file.name))
            return good, bad
        return self._reading(read, lambda: self._listed_events(session_id))

    def _listed_events(self, session_id: str
                       ) -> tuple[list[tuple[StoredFile, Any]], list[Unreadable]]:
        good, bad = [], []
        for file in self.files(session_id, names.EVENT_EXT):
            try:
                good.append((file, self.load(file, "event")))
            except FileNotFoundError:
                continue
            except (OSError, ValueError) as exc:  # records.RecordError is a ValueError
                bad.append(Unreadable(file, str(exc)))
        good.sort(key=lambda pair: pair[0].name)
        return good, bad

    def find_message(self, message_id: str, session_id: str | None = None) -> StoredMessage | None:
        """Look a message up by id (in the session given, else in any), first in the area
        order pending, imported, quarantined; None when the store does not hold it."""
        for _attempt in range(3):
            file = self.locate(message_id, session_id)
            if file is None:
                return None
            try:
                return StoredMessage(file, self.load(file, "message"))
            except FileNotFoundError:
                continue  # moved meanwhile: located again
        return None

    def locate(self, item_id: str, session_id: str | None = None,
               message: bool = True) -> StoredFile | None:
        """Where the `.msg` (else `.ses`) with this id lies, in the session given or in any
        (sessions in name order), from the ledger: each session asked is caught up first."""
        def read(ledger) -> StoredFile | None:
            if session_id is not None:
                found = ledger.session(session_id).find(item_id, message)
                return StoredFile(session_id, found[1], found[0]) if found else None
            for sid, _name, _area in ledger.find_any(item_id, message):
                found = ledger.session(sid).find(item_id, message)  # caught up, then asked
                if found:
                    return StoredFile(sid, found[1], found[0])
            # Not known: a session the ledger has not caught up may hold it.
            for sid in self.session_ids():
                found = ledger.session(sid).find(item_id, message)
                if found:
                    return StoredFile(sid, found[1], found[0])
            return None
        return self._reading(read, lambda: self._listed_locate(item_id, session_id, message))

    def _listed_locate(self, item_id: str, session_id: str | None,
                       message: bool) -> StoredFile | None:
        sessions = [session_id] if session_id is not None else self.session_ids()
        ext = names.MESSAGE_EXT if message else names.EVENT_EXT
        suffix = f"-{item_id}{ext}"
        for sid in sessions:
            for file in self.files(sid, ext, layout.AREAS):
                if file.name.endswith(suffix):
                    return file
        return None

    def event_dicts(self, session_id: str) -> list[dict[str, Any]]:
        """The session's events as plain dicts, in time order, unvalidated: the write path's
        cheap look (no msgspec) at what was deleted; full reads use events()."""
        import json

        def read(ledger) -> list[dict[str, Any]]:
            return [json.loads(body) for _name, _area, _kind, body, _reason
                    in ledger.session(session_id).events() if body is not None]
        return self._reading(read, lambda: self._listed_event_dicts(session_id))

    def _listed_event_dicts(self, session_id: str) -> list[dict[str, Any]]:
        import json
        out = []
        for file in sorted(self.files(session_id, names.EVENT_EXT), key=lambda f: f.name):
            try:
                value = json.loads(self.read_bytes(file))
            except (OSError, ValueError):
                continue
            if isinstance(value, dict):
                out.append(value)
        return out

    def revision(self, session_id: str) -> str | None:
        """A token that changes whenever what a read of the session answers from the files may
        have changed (a new message changes its part after the dot); None without the ledger.
        Readers keeping a copy of a session (the framework sessions) compare it."""
        try:
            return self.ledger.query(lambda ledger: ledger.session(session_id).revision)
        except LedgerUnavailable:
            return None

    def shut(self, session_id: str) -> bool:
        """Was the session deleted here and not opened again since (its latest lifecycle event,
        of those that decode, a delete_session)?"""
        def read(ledger) -> bool:
            return ledger.session(session_id).lifecycle(loose=False) == "delete_session"
        from agent_memory.outbox.views import deleted_session
        return self._reading(read, lambda: deleted_session(self._listed_events(session_id)[0]))

    def lacking_vectors(self, session_id: str) -> list[StoredFile]:
        """The session's `.msg` in pending or imported with no `.emb` of the same name in
        either, in name order (from the ledger: no listing of the session)."""
        def read(ledger) -> list[StoredFile]:
            return [StoredFile(session_id, area, name)
                    for name, area in ledger.session(session_id).lacking_vectors()]

        def listing() -> list[StoredFile]:
            held = self.files(session_id, None)
            vectors = {f.name[:-len(names.VECTOR_EXT)] for f in held
                       if f.name.endswith(names.VECTOR_EXT)}
            seen: dict[str, StoredFile] = {}
            for f in held:
                if f.name.endswith(names.MESSAGE_EXT) and \
                        f.name[:-len(names.MESSAGE_EXT)] not in vectors:
                    seen.setdefault(f.name, f)
            return sorted(seen.values(), key=lambda f: f.name)
        return self._reading(read, listing)

    def vector_gaps(self, session_id: str) -> tuple[int, Callable[[str], bool]] | None:
        """(how many of the session's messages lack their vector, whether the `.msg` of a name
        does) from the ledger, or None without it: `status` counts without listing."""
        def read(ledger) -> tuple[int, Callable[[str], bool]]:
            session = ledger.session(session_id)
            lacking = set()

            def lacks(name: str) -> bool:
                return name in lacking
            count = session.count_lacking_vectors()
            if count <= 64:  # few: named at once, so `lacks` needs no transaction later
                lacking.update(name for name, _area in session.lacking_vectors())
                return count, lacks
            return count, lambda name: self.ledger.query(
                lambda led: led.session(session_id).lacks_vector(name))
        return self._reading(read, lambda: None)

    def knows(self, session_id: str) -> bool:
        """Does the store hold any file of the session (any area, a vector too)?"""
        return self._reading(lambda ledger: ledger.session(session_id).known(),
                             lambda: bool(self.files(session_id, None, layout.AREAS)))

    def reason_of(self, file: StoredFile) -> dict[str, Any]:
        """What the reason file of a quarantined file says ({} when it has none or it does not
        read as a JSON object)."""
        import json
        try:
            reason = json.loads(self.read_bytes(StoredFile(file.session_id, QUARANTINED,
                                                           file.name + ".reason.json")))
        except (OSError, ValueError):
            return {}
        return reason if isinstance(reason, dict) else {}

    # --- appending -----------------------------------------------------------------------------
    def append_message(self, fields: dict[str, Any],
                       admit: Callable[[], None] | None = None) -> NewMessage:
        """Create the `.msg` of a new message. `fields` are already validated.

        Raises SessionShut when the session's latest lifecycle event closed or deleted it (even
        for a retry of a message it holds); then `admit()`, when given, may refuse the message
        by raising (nothing is written: the caller's own rules, such as relations to deleted
        messages); else MessageExists when the message_id is already stored in the session
        (the caller decides whether that is an identical retry or a conflict).
        """
        session_id = fields["session_id"]
        given = fields.get("message_id")
        message_id = given or new_uuid4()
        now = utc_now()

        def change(session, done: list) -> None:
            # From the ledger (session), else from one listing of the session (its one open).
            dirs = self._session_dirs(session_id, (PENDING,) if session else layout.AREAS)
            try:
                held = _Held(self, session_id, session, dirs)
                shut = held.lifecycle()
                if shut in SHUTTING_EVENTS:
                    raise SessionShut(shut)
                if admit is not None:
                    admit()
                if given:  # a new id cannot be stored yet
                    existing = held.find(message_id)
                    if existing is not None:
                        raise MessageExists(StoredMessage(existing, self.load(existing,
                                                                              "message")))
                if fields.get("occurred_at"):
                    occurred_at = normalise_occurred_at(fields["occurred_at"])
                    name = names.final_name(_parse(occurred_at), message_id, names.MESSAGE_EXT)
                else:  # "now", made to follow every file the session holds (names.moment_after)
                    moment, name = names.name_after(held.latest(), now, message_id,
                                                    names.MESSAGE_EXT)
                    occurred_at = format_utc(moment)
                record, data = encoding.encoded_message(
                    session_id=session_id,
                    message_id=message_id,
                    text=fields["text"],
                    sender_kind=fields["sender_kind"],
                    sender_identity=fields["sender_identity"],
                    receiver_kind=fields["receiver_kind"],
                    receiver_identity=fields["receiver_identity"],
                    occurred_at=occurred_at,
                    sequence_number=held.messages(),
                    written_at=format_utc(now),
                    priority=fields.get("priority"),
                    relations=[{"to_message_id": r["to_message_id"], "kind": r["kind"]}
                               for r in fields.get("relations") or []],
                    corrects_message_id=fields.get("corrects_message_id"),
                    attributes=fields.get("attributes"),
                )
                file = StoredFile(session_id, PENDING, name)
                try:
                    self._create_in(dirs, file, data)
                except FileExistsError:  # a concurrent replay of the same message won the race
                    raise MessageExists(StoredMessage(file, self.load(file, "message"))) from None
            finally:
                _close(dirs)
            if self._appended is not None:
                self._appended.append((file, data))
            done.append(NewMessage(file, record))
            if session is not None:
                session.added(name, PENDING, MESSAGE, seq=record["sequence_number"],
                              corrects=record["corrects_message_id"],
                              vec=1 if given and session._vector_lies(name) else 0)
                session.changed()
        return self._changing(session_id, change)

    def append_event(self, session_id: str, event: str,
                     **attributes: Any) -> tuple[StoredFile, dict[str, Any]]:
        """Record a session event (open with its attributes, close, reopen, and the forgetting
        events) written now; its file and record."""
        now = utc_now()
        record = encoding.event(event=event, event_id=new_uuid4(), session_id=session_id,
                                occurred_at=format_utc(now), **attributes)
        return self._file_event(record, now), record

    def add_event(self, record: dict[str, Any], file: StoredFile | None = None) -> StoredFile:
        """File an event record made earlier (outbox.encoding.event): under `file`, a name
        next_event_file gave before (a purge journals it before it runs), else named now;
        FileExistsError when `file` is there already."""
        if file is None:
            return self._file_event(record, utc_now())
        return self._file_event(record, utc_now(), file)

    def next_event_file(self, record: dict[str, Any]) -> StoredFile:
        """Where an event filed now goes: the one naming rule of events (_event_file)."""
        session_id = record["session_id"]
        return self._reading(
            lambda ledger: self._event_file(record, utc_now(),
                                            _Held(self, session_id, ledger.session(session_id))),
            lambda: self._event_file(record, utc_now(), _Held(self, session_id, None)))

    def _file_event(self, record: dict[str, Any], now: datetime,
                    file: StoredFile | None = None) -> StoredFile:
        session_id = record["session_id"]
        data = encoding.encode(record)

        def change(session, done: list) -> None:
            dirs = self._session_dirs(session_id, (PENDING,) if session else (PENDING, IMPORTED))
            try:
                target = file or self._event_file(record, now, _Held(self, session_id, session,
                                                                     dirs))
                self._create_in(dirs, target, data)
            finally:
                _close(dirs)
            done.append(target)
            if session is not None:
                session.added(target.name, target.area, EVENT, event=record["event"],
                              body=data.decode("utf-8"))
                session.changed()
        return self._changing(session_id, change)

    def _event_file(self, record: dict[str, Any], now: datetime, held: "_Held") -> StoredFile:
        """The one naming rule of events: named now, or 1 ms after the latest file the session
        holds when that one is not earlier (names.moment_after). The engine forwards a session
        in name order, and a message is named by its `occurred_at`, which may lie ahead
        (`--occurred-at`): an event named by the clock alone would reach the logger before a
        message written before it (a soft delete or mark refused as unknown, a close ahead of
        its session's last message)."""
        _moment, name = names.name_after(held.latest(), now, record["event_id"],
                                         names.EVENT_EXT)
        return StoredFile(record["session_id"], PENDING, name)

    def add_record(self, session_id: str, name: str, data: bytes) -> StoredFile:
        """Create a pending record under its final name `name` (a record recovered by `verify
        --repair`, outbox.repair); FileExistsError when that name is taken."""
        if not names.is_final(name):
            raise ValueError(f"not a final name: {name!r}")
        file = StoredFile(session_id, PENDING, name)

        def change(session, done: list) -> None:
            self._create(file, data)
            done.append(file)
            if session is not None:
                from agent_memory.outbox.ledger_catchup import describe
                row = describe(self._fd, session_id, name, PENDING)
                if row is not None:
                    session.added(name, PENDING, row.pop("kind"), **row)
                session.changed()
        return self._changing(session_id, change)

    def append_vector(self, session_id: str, message_name: str, record: dict[str, Any],
                      area: str = PENDING) -> StoredFile:
        """Write the `.emb` (an outbox.encoding.vector record) beside its message in `area`
        (pending or imported); FileExistsError when it is already there."""
        file = StoredFile(session_id, area, names.sibling(message_name, names.VECTOR_EXT))
        data = encoding.encode(record)

        def change(session, done: list) -> None:
            self._create(file, data)
            done.append(file)
            if session is not None:
                session.vector_added(file.name, area)
                session.changed()
        return self._changing(session_id, change)

    def _create(self, file: StoredFile, data: bytes) -> None:
        """Atomic create, never overwriting (outbox.atomic.create_exclusive)."""
        fd = self._session_dir(file.session_id, file.area, create=True)
        try:
            self._create_at(fd, file.name, data)
        finally:
            os.close(fd)

    def _create_at(self, fd: int, name: str, data: bytes) -> None:
        if self._unsynced is None:
            atomic.create_exclusive(fd, name, data)
            return
        atomic.create_exclusive(fd, name, data, sync_dir=False)
        self._unsynced.append(os.dup(fd))  # synced as `together` ends

    def _create_in(self, dirs: dict[str, int | None], file: StoredFile, data: bytes) -> None:
        """_create in the directory `dirs` (_session_dirs) holds open already; one not there
        is made (_create), as is one removed since it was opened (an empty session directory
        a purge or a vector's cleanup took away: nothing can be created in it, and the failed
        create left no file)."""
        fd = dirs.get(file.area)
        if fd is not None:
            try:
                self._create_at(fd, file.name, data)
                return
            except FileNotFoundError:
                pass
        self._create(file, data)

    # --- moving and removing -------------------------------------------------------------------
    def move(self, files: list[StoredFile], area: str) -> int:
        """Move pending files of one session to `.imported/` or `.quarantine/` (renames, then
        one fsync of each directory). Files already moved by someone else are skipped; returns
        how many this call moved."""
        if not files:
            return 0
        session_id = files[0].session_id
        if any(f.session_id != session_id or f.area != PENDING for f in files):
            raise ValueError("move() takes pending files of one session")

        def change(session, done: list) -> None:
            dirs = self._session_dirs(session_id, (PENDING, area))
            try:
                if dirs[PENDING] is None:
                    done.append(0)
                    return
                if dirs[area] is None:  # the session's first move there
                    dirs[area] = self._session_dir(session_id, area, create=True)
                moved = atomic.move_many(dirs[PENDING], dirs[area], [f.name for f in files])
            finally:
                _close(dirs)
            done.append(len(moved))
            if session is not None:
                session.moved(moved, PENDING, area)
                session.changed()
        return self._changing(session_id, change)

    def write_reason(self, file: StoredFile, reason: dict[str, Any]) -> str:
        """The reason file beside a quarantined file: `<name>.reason.json` (never overwritten:
        a second quarantine of the same name keeps the first reason)."""
        written = StoredFile(file.session_id, QUARANTINED, file.name + ".reason.json")
        data = encoding.encode(reason)

        def change(session, done: list) -> None:
            try:
                self._create(written, data)
            except FileExistsError:
                pass
            done.append(written.relpath)
            if session is not None:
                session.changed()
        return self._changing(file.session_id, change)

    def remove(self, session_id: str, area: str, doomed: list[str]) -> list[str]:
        """Remove the entries `doomed` of a session's directory in `area` (a directory among
        them with its tree), then fsync the directory once; the names removed (one already
        gone is skipped)."""
        def change(session, done: list) -> None:
            fd = self._session_dir(session_id, area)
            if fd is None:
                done.append([])
                return
            removed = []
            try:
                for name in doomed:
                    try:
                        os.unlink(name, dir_fd=fd)
                    except FileNotFoundError:
                        continue
                    except IsADirectoryError:
                        import shutil
                        shutil.rmtree(name, ignore_errors=True, dir_fd=fd)
                    removed.append(name)
                if removed:
                    os.fsync(fd)
            finally:
                os.close(fd)
            done.append(removed)
            if session is not None:
                session.removed(removed, area)
                session.changed()
        return self._changing(session_id, change)

    def remove_empty_session_dir(self, session_id: str, area: str) -> bool:
        """Remove a session's directory in `area` if it is empty (rmdir never takes a file)."""
        def change(session, done: list) -> None:
            area_fd = layout.open_area(self._fd, area)
            if area_fd is None:
                done.append(False)
                return
            try:
                os.rmdir(session_id, dir_fd=area_fd)
                os.fsync(area_fd)
                done.append(True)
            except OSError:
                done.append(False)
                return
            finally:
                os.close(area_fd)
            if session is not None:
                session.changed()
        return self._changing(session_id, change)


class _Together:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.outer = False
        self.appended: list[tuple[StoredFile, bytes]] = []

    def __enter__(self) -> Store:
        if self.store._unsynced is None:
            self.store._unsynced = []
            self.store._appended = self.appended
            self.outer = True
        else:
            self.appended = self.store._appended
        return self.store

    def __exit__(self, *exc: object) -> None:
        if not self.outer:
            return
        self.store._appended = None
        fds, self.store._unsynced = self.store._unsynced, None
        synced = set()
        try:
            for fd in fds:
                info = os.fstat(fd)
                if (info.st_dev, info.st_ino) not in synced:
                    os.fsync(fd)
                    synced.add((info.st_dev, info.st_ino))
        finally:
            for fd in fds:
                os.close(fd)


class _Held:
    """What a new file's name and number come from: the ledger's session when there is one,
    else a listing of the session's directories (`dirs`: all three areas, or pending and
    imported; listed once, on first need)."""

    def __init__(self, store: Store, session_id: str, session: Any,
                 dirs: dict[str, int | None] | None = None) -> None:
        self.store = store
        self.session_id = session_id
        self.session = session
        self.dirs = dirs
        self._listed: list[StoredFile] | None = None

    def _files(self) -> list[StoredFile]:
        if self._listed is None:
            if self.dirs is None:
                self._listed = self.store.files(self.session_id)
            else:
                self._listed = self.store._finals(self.session_id, self.dirs)
        return self._listed

    def lifecycle(self) -> str | None:
        if self.session is not None:
            return self.session.lifecycle()
        return _latest_lifecycle(self.dirs, self._files())

    def find(self, message_id: str) -> StoredFile | None:
        if self.session is not None:
            found = self.session.find(message_id)
            return StoredFile(self.session_id, found[1], found[0]) if found else None
        for file in self._files():
            if file.item_id == message_id and file.name.endswith(names.MESSAGE_EXT):
                return file
        return None

    def latest(self) -> list[str]:
        """The latest name in pending and imported, as a list of zero or one name."""
        if self.session is not None:
            latest = self.session.latest_name()
            return [latest] if latest else []
        return [f.name for f in self._files() if f.area != QUARANTINED]

    def messages(self) -> int:
        if self.session is not None:
            return self.session.messages
        return sum(1 for f in self._files()
                   if f.area != QUARANTINED and f.name.endswith(names.MESSAGE_EXT))


def _note_without_ledger(exc: Exception) -> None:
    """Say once per process that the store works without its ledger (slower, never wrong)."""
    global _NOTED
    if not _NOTED:
        import sys
        sys.stderr.write(f"agent-memory: working from the files alone: {exc}\n")
        _NOTED = True


_NOTED = False


def _latest_lifecycle(dirs: dict[str, int | None], held: list[StoredFile]) -> str | None:
    """The kind of the session's latest lifecycle event ("open", "close", "reopen",
    "delete_session") among `held`, the files listed in `dirs`, or None. Pending and imported
    only: a quarantined event says nothing. Newest first, one gone meanwhile and any other
    event skipped: a peek at one file, usually (full reads decode every event)."""
    events = [f for f in held if f.area != QUARANTINED and f.name.endswith(names.EVENT_EXT)]
    for file in sorted(events, key=lambda f: f.name, reverse=True):
        try:
            kind = encoding.event_kind(atomic.read_file(dirs[file.area], file.name))
        except FileNotFoundError:
            continue
        if kind is not None:
            return kind
    return None


def _close(dirs: dict[str, int | None]) -> None:
    """Close what Store._session_dirs opened."""
    for fd in dirs.values():
        if fd is not None:
            os.close(fd)


def _parse(stored: str) -> datetime:
    """Inverse of contract.format_utc (fromisoformat: strptime's import is slow)."""
    return datetime.fromisoformat(stored[:-1] + "+00:00")
