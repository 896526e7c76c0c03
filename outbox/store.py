"""The append-only file store under `<project>/.agent-memory/`.

Writers never lock: each record is a new file with a unique name, created atomically. The
sequence number of a new message is the count of messages already in its session, pending and
imported; concurrent writers may share one, which is why references go by message_id.
"""

from __future__ import annotations

import os
from collections import namedtuple  # not typing.NamedTuple: typing costs the write path
from datetime import datetime, timedelta, timezone

TYPE_CHECKING = False  # typing costs the write path 3 ms: annotations only
if TYPE_CHECKING:
    from typing import Any

from agent_memory.outbox import atomic, encoding, names
from agent_memory.outbox.availability import StoreUnavailable, check_available
from agent_memory.outbox.entries import may_open
from agent_memory.outbox.contract import format_utc, is_valid_session_id, new_uuid4, normalise_occurred_at

PENDING = "pending"
IMPORTED = "imported"
QUARANTINED = "quarantined"
_AREA_DIRS = {IMPORTED: names.IMPORTED_DIR, QUARANTINED: names.QUARANTINE_DIR}


class MessageExists(Exception):
    """A message with this message_id is already in the store (see `.existing`)."""

    def __init__(self, existing: "StoredMessage") -> None:
        super().__init__(existing.record.message_id)
        self.existing = existing


class StoredFile(namedtuple("StoredFile", "session_id area name")):
    """A final-named file found by a scan: its session, where it lies (`area`: PENDING,
    IMPORTED or QUARANTINED) and its name."""

    __slots__ = ()

    @property
    def item_id(self) -> str:
        return names.parse_final_name(self.name)[1]

    @property
    def relpath(self) -> str:
        """Path relative to the project root, for answers and warnings."""
        area = "" if self.area == PENDING else _AREA_DIRS[self.area] + "/"
        return f"{names.STORE_DIR}/{area}{self.session_id}/{self.name}"


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
    """One project's store. Opening it checks availability; nothing is created implicitly."""

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

    def close(self) -> None:
        os.close(self._fd)

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- directories ---------------------------------------------------------------------------
    @property
    def fd(self) -> int:
        """The store directory's descriptor (open for the store's life)."""
        return self._fd

    def area_fd(self, area: str, create: bool) -> int | None:
        if area == PENDING:
            return os.dup(self._fd)
        name = _AREA_DIRS[area]
        if create:
            return atomic.ensure_dir(self._fd, name)
        try:
            return atomic.open_dir(name, dir_fd=self._fd)
        except FileNotFoundError:
            return None

    def session_fd(self, session_id: str, area: str = PENDING, create: bool = False) -> int | None:
        """A descriptor of a session's directory in `area`, or None when it does not exist."""
        if not is_valid_session_id(session_id):
            raise ValueError(f"invalid session id: {session_id!r}")
        area_fd = self.area_fd(area, create)
        if area_fd is None:
            return None
        try:
            if create:
                return atomic.ensure_dir(area_fd, session_id)
            try:
                return atomic.open_dir(session_id, dir_fd=area_fd)
            except FileNotFoundError:
                return None
        finally:
            os.close(area_fd)

    def session_ids(self) -> list[str]:
        """Every session with a directory in any area, sorted."""
        found: set[str] = set()
        for area in (PENDING, IMPORTED, QUARANTINED):
            fd = self.area_fd(area, create=False)
            if fd is None:
                continue
            try:
                for entry in os.scandir(fd):
                    if (is_valid_session_id(entry.name) and entry.is_dir(follow_symlinks=False)
                            and may_open(entry.name, fd)):
                        found.add(entry.name)
            finally:
                os.close(fd)
        return sorted(found)

    # --- scans ---------------------------------------------------------------------------------
    def files(self, session_id: str, ext: str | None = None,
              areas: tuple[str, ...] = (PENDING, IMPORTED)) -> list[StoredFile]:
        """Final-named files of a session, by area then name (time order)."""
        out: list[StoredFile] = []
        for area in areas:
            fd = self.session_fd(session_id, area)
            if fd is None:
                continue
            try:
                listed = sorted(n for n in os.listdir(fd) if names.is_final(n, ext))
            finally:
                os.close(fd)
            out.extend(StoredFile(session_id, area, n) for n in listed)
        return out

    def area_of(self, session_id: str, name: str,
                areas: tuple[str, ...] = (PENDING, IMPORTED, QUARANTINED)) -> str | None:
        """Where a file of a session lies now (a concurrent syncer may have moved it), or None."""
        for area in areas:
            fd = self.session_fd(session_id, area)
            if fd is None:
                continue
            try:
                os.stat(name, dir_fd=fd, follow_symlinks=False)
                return area
            except FileNotFoundError:
                continue
            finally:
                os.close(fd)
        return None

    def read_bytes(self, file: StoredFile) -> bytes:
        fd = self.session_fd(file.session_id, file.area)
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
        """The session's events, pending and imported, in time order."""
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
        """Look a message up by id (names carry it); None when the store does not hold it."""
        sessions = [session_id] if session_id is not None else self.session_ids()
        suffix = f"-{message_id}{names.MESSAGE_EXT}"
        for sid in sessions:
            for file in self.files(sid, names.MESSAGE_EXT, (PENDING, IMPORTED, QUARANTINED)):
                if file.name.endswith(suffix):
                    try:
                        return StoredMessage(file, self.load(file, "message"))
                    except FileNotFoundError:
                        continue  # moved meanwhile; the rescan below finds it
        return None

    # --- writes --------------------------------------------------------------------------------
    def append_message(self, fields: dict[str, Any]) -> NewMessage:
        """Create the `.msg` of a new message. `fields` are already validated.

        Raises MessageExists when the message_id is already stored in the session (the caller
        decides whether that is an identical retry or a conflict).
        """
        session_id = fields["session_id"]
        message_id = fields.get("message_id") or new_uuid4()
        now = utc_now()
        held = self.files(session_id, None, (PENDING, IMPORTED, QUARANTINED))
        existing = [f for f in held if f.name.endswith(names.MESSAGE_EXT)]
        for file in existing:
            if file.item_id == message_id:
                raise MessageExists(StoredMessage(file, self.load(file, "message")))
        if fields.get("occurred_at"):
            occurred_at = normalise_occurred_at(fields["occurred_at"])
        else:  # "now", made to follow every file the session holds (_next_moment)
            occurred_at = format_utc(_next_moment([f for f in held if f.area != QUARANTINED],
                                                  now))
        record = encoding.message(
            session_id=session_id,
            message_id=message_id,
            text=fields["text"],
            sender_kind=fields["sender_kind"],
            sender_identity=fields["sender_identity"],
            receiver_kind=fields["receiver_kind"],
            receiver_identity=fields["receiver_identity"],
            occurred_at=occurred_at,
            sequence_number=sum(1 for f in existing if f.area != QUARANTINED),
            written_at=format_utc(now),
            priority=fields.get("priority"),
            relations=[{"to_message_id": r["to_message_id"], "kind": r["kind"]}
                       for r in fields.get("relations") or []],
            corrects_message_id=fields.get("corrects_message_id"),
            attributes=fields.get("attributes"),
        )
        name = names.final_name(_parse(occurred_at), message_id, names.MESSAGE_EXT)
        file = StoredFile(session_id, PENDING, name)
        try:
            self._create(session_id, name, encoding.encode(record))
        except FileExistsError:  # a concurrent replay of the same message won the race
            raise MessageExists(StoredMessage(file, self.load(file, "message"))) from None
        return NewMessage(file, record)

    def append_event(self, session_id: str, event: str, **attributes: Any) -> tuple[StoredFile, dict[str, Any]]:
        """Record a session event (open with its attributes, close, reopen, and the forgetting
        events). Its name sorts after every file the session holds (_event_moment)."""
        now = utc_now()
        record = encoding.event(event=event, event_id=new_uuid4(), session_id=session_id,
                                occurred_at=format_utc(now), **attributes)
        name = names.final_name(self._event_moment(session_id, now), record["event_id"],
                                names.EVENT_EXT)
        self._create(session_id, name, encoding.encode(record))
        return StoredFile(session_id, PENDING, name), record

    def _event_moment(self, session_id: str, now: datetime) -> datetime:
        """When an event is named: now, or 1 ms after the latest file the session holds, when
        that one is not earlier. The engine forwards a session in name order, and a message is
        named by its `occurred_at`, which may lie ahead (`--occurred-at`): an event named by the
        clock alone would reach the logger before a message written before it (a soft delete
        or mark refused as unknown, a close ahead of its session's last message)."""
        return _next_moment(self.files(session_id), now)

    def add_record(self, session_id: str, name: str, data: bytes) -> StoredFile:
        """Create a pending record under its final name `name` (a record recovered by `verify
        --repair`, outbox.repair); FileExistsError when that name is taken."""
        if not names.is_final(name):
            raise ValueError(f"not a final name: {name!r}")
        self._create(session_id, name, data)
        return StoredFile(session_id, PENDING, name)

    def append_vector(self, session_id: str, message_name: str, record: dict[str, Any]) -> StoredFile:
        """Write the `.emb` (an outbox.encoding.vector record) beside a pending message."""
        name = names.sibling(message_name, names.VECTOR_EXT)
        self._create(session_id, name, encoding.encode(record))
        return StoredFile(session_id, PENDING, name)

    def append_imported_vector(self, session_id: str, message_name: str,
                               record: dict[str, Any]) -> StoredFile:
        """Write the `.emb` beside an imported message, in `.imported/` (atomic create, never
        overwrite: FileExistsError when it is already there)."""
        name = names.sibling(message_name, names.VECTOR_EXT)
        fd = self.session_fd(session_id, IMPORTED, create=True)
        try:
            atomic.create_exclusive(fd, name, encoding.encode(record))
        finally:
            os.close(fd)
        return StoredFile(session_id, IMPORTED, name)

    def last_event(self, session_id: str) -> str | None:
        """The kind of the session's latest event ("open", "close", "reopen"), or None.

        A cheap peek at one file for the write path; full reads decode every event.
        """
        files = self.files(session_id, names.EVENT_EXT)
        for file in sorted(files, key=lambda f: f.name, reverse=True):
            try:
                kind = encoding.event_kind(self.read_bytes(file))
            except FileNotFoundError:
                continue
            if kind is not None:
                return kind
        return None

    def event_dicts(self, session_id: str) -> list[dict[str, Any]]:
        """The session's events as plain dicts, in time order, unvalidated: the write path's
        cheap look (no msgspec) at what was deleted; full reads use events()."""
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

    def move(self, files: list[StoredFile], area: str) -> int:
        """Move pending files of one session to `.imported/` or `.quarantine/` (renames, then
        one fsync of each directory). Files already moved by someone else are skipped; returns
        how many this call moved."""
        if not files:
            return 0
        session_id = files[0].session_id
        if any(f.session_id != session_id or f.area != PENDING for f in files):
            raise ValueError("move() takes pending files of one session")
        src = self.session_fd(session_id, PENDING)
        if src is None:
            return 0
        try:
            dst = self.session_fd(session_id, area, create=True)
            try:
                return atomic.move_many(src, dst, [f.name for f in files])
            finally:
                os.close(dst)
        finally:
            os.close(src)

    def write_reason(self, file: StoredFile, reason: dict[str, Any]) -> str:
        """The reason file beside a quarantined file: `<name>.reason.json` (never overwritten:
        a second quarantine of the same name keeps the first reason)."""
        fd = self.session_fd(file.session_id, QUARANTINED, create=True)
        name = file.name + ".reason.json"
        try:
            atomic.create_exclusive(fd, name, encoding.encode(reason))
        except FileExistsError:
            pass
        finally:
            os.close(fd)
        return f"{names.STORE_DIR}/{names.QUARANTINE_DIR}/{file.session_id}/{name}"

    def reason_of(self, file: StoredFile) -> dict[str, Any]:
        """What the reason file of a quarantined file says ({} when it has none or it does not
        read as a JSON object)."""
        import json
        fd = self.session_fd(file.session_id, QUARANTINED)
        if fd is None:
            return {}
        try:
            reason = json.loads(atomic.read_file(fd, file.name + ".reason.json"))
        except (OSError, ValueError):
            return {}
        finally:
            os.close(fd)
        return reason if isinstance(reason, dict) else {}

    def has_pending(self) -> bool:
        """Is any final-named file waiting in any session? (cheap: stops at the first)"""
        for entry in os.scandir(self._fd):
            if not is_valid_session_id(entry.name) or not entry.is_dir(follow_symlinks=False):
                continue
            try:
                fd = self.session_fd(entry.name)
            except PermissionError:
                return True  # unknown content: the sync that follows reports it as skipped
            if fd is None:
                continue
            try:
                if any(names.is_final(n) for n in os.listdir(fd)):
                    return True
            finally:
                os.close(fd)
        return False

    def remove_empty_session_dir(self, session_id: str, area: str) -> bool:
        """Remove a session's directory in `area` if it is empty (rmdir never takes a file)."""
        area_fd = self.area_fd(area, create=False)
        if area_fd is None:
            return False
        try:
            os.rmdir(session_id, dir_fd=area_fd)
            os.fsync(area_fd)
            return True
        except OSError:
            return False
        finally:
            os.close(area_fd)

    def pending_usage(self) -> tuple[int, int]:
        """(pending messages, bytes of the pending records): names and one stat per file, no
        decoding (outbox.survey.backlog, the figures the watcher publishes)."""
        from agent_memory.outbox.survey import backlog
        measured = backlog(self.path)
        return measured["pending_messages"], measured["pending_bytes"]

    def pending_session_ids(self) -> list[str]:
        """Sessions with a directory in the pending area, sorted."""
        return sorted(e.name for e in os.scandir(self._fd)
                      if is_valid_session_id(e.name) and e.is_dir(follow_symlinks=False)
                      and may_open(e.name, self._fd))

    def _create(self, session_id: str, name: str, data: bytes) -> None:
        fd = self.session_fd(session_id, PENDING, create=True)
        try:
            atomic.create_exclusive(fd, name, data)
        finally:
            os.close(fd)


def _next_moment(held: list[StoredFile], now: datetime) -> datetime:
    """The moment of a file written now that must sort after every file of `held` (a
    session's pending and imported files): now, or 1 ms after the latest of them when that one
    is not earlier (names carry milliseconds). So files written one after another, within one
    millisecond or behind a message dated ahead, are named, forwarded and numbered by the
    logger in the order they were acknowledged."""
    latest = max((f.name for f in held), default=None)
    if latest is None:
        return now
    stamp = latest[:len(names.time_stamp(now))]
    if names.time_stamp(now) > stamp:
        return now
    return names.moment_of(stamp) + timedelta(milliseconds=1)


def _parse(stored: str) -> datetime:
    """Inverse of contract.format_utc (fromisoformat: strptime's import is slow)."""
    return datetime.fromisoformat(stored[:-1] + "+00:00")
