"""The ledger: what each record file of the store says, derived from the files and kept beside
them, so that a command costs what it answers and not what the session holds.

The files are the truth; the ledger is never more. It lives in `.agent-memory/.ledger/`
(`ledger.sqlite3`, 0600, in a 0700 directory: the project's own, git-ignored with the store),
may be deleted at any time (the next command rebuilds what it needs), and is never trusted over
the files:

- One row per final-named `.msg` and `.ses` of every area: its name, area, and what a command
  needs without opening it (a message's sequence number and correction target, whether its
  `.emb` lies beside it; an event's kind and record; an unreadable file's reason). Per session,
  the counters a write needs (its messages: the next sequence number) and an epoch that every
  change but a new message moves, so a reader keeping a copy knows what to read again.
- Every change the store makes to a session's files (create, move, remove) happens inside the
  ledger's write transaction, which also records the session's three directories (pending,
  imported, quarantined: inode and mtime) as the change left them. So the ledger either
  describes the directories exactly, or records a state that is no longer theirs.
- Every use compares the session's directories with what the ledger recorded: a difference
  (a writer killed between its file and its row, files written by an older release or by hand,
  a ledger restored from elsewhere) makes the session be listed and caught up
  (outbox.ledger_catchup): only new names are decoded, since a name never changes what it holds.
- A writer that cannot use the ledger (its lock held past BUSY_S, the ledger broken beyond a
  rebuild) still writes its file, and leaves a marker in `unindexed/` while it does
  (Ledger.without): a session with a marker is listed again at every use, and its directories
  are recorded only once the marker's writer is gone. Without that, a file created within the
  same tick of the directory's clock as a recorded change would go unseen.
- A database SQLite finds damaged (or not a database), or of another format, is rebuilt from
  the files; one last written under another boot (the machine went down: writes not yet on
  disk may be lost, since the ledger never fsyncs) is checked by SQLite, then every session is
  listed again at its next use.

What it cannot see: a file that an older release, or a person, creates within the same clock
tick as a change this release records. `verify` compares the ledger with the files and
`verify --repair` rebuilds it.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing costs the write path 3 ms: annotations only
if TYPE_CHECKING:
    from typing import Any, Callable, Iterator

from agent_memory.outbox import atomic, layout, names
from agent_memory.outbox.contract import is_valid_session_id

LEDGER_DIR = ".ledger"
LEDGER_FILE = "ledger.sqlite3"
UNINDEXED_DIR = "unindexed"
FORMAT = 1  # PRAGMA user_version of the schema below
BUSY_S = 10.0  # how long a command waits for another's ledger transaction before doing without
MARKER_MAX_AGE_S = 3600.0  # a marker older than this is a writer long gone (its pid reused)

AREA_CODES = {layout.PENDING: 0, layout.IMPORTED: 1, layout.QUARANTINED: 2}
AREA_NAMES = {code: area for area, code in AREA_CODES.items()}
MESSAGE, EVENT, UNREADABLE = 0, 1, 2  # files.kind
ABSENT = "-|-|-"  # Ledger.seen_now of a session with no directory in any area

# One row per `.msg` and `.ses`. `event` is set for a `.ses` only (its kind as far as it reads,
# '' when it does not), `vec` for a `.msg` only, so `event IS NULL` means a message's file.
_SCHEMA = (
    "CREATE TABLE sessions("
    " sid INTEGER PRIMARY KEY, session TEXT NOT NULL UNIQUE,"
    " seen TEXT,"  # its three directories as last recorded; NULL: list them again
    " messages INTEGER NOT NULL DEFAULT 0,"  # .msg in pending and imported: the next number
    " vectors INTEGER NOT NULL DEFAULT 0,"  # .emb in pending and imported
    " set_aside INTEGER NOT NULL DEFAULT 0,"  # .msg, .ses and .emb in quarantine
    " lacking INTEGER NOT NULL DEFAULT 0,"  # .msg in pending and imported without a .emb
    " epoch INTEGER NOT NULL DEFAULT 0)",  # bumped by every change but a new message
    "CREATE TABLE files("
    " sid INTEGER NOT NULL, name TEXT NOT NULL,"
    " area INTEGER NOT NULL,"  # 0 pending, 1 imported, 2 quarantined
    " kind INTEGER NOT NULL,"  # MESSAGE, EVENT, UNREADABLE
    " seq INTEGER, corrects TEXT,"  # a readable message's sequence number and target
    " vec INTEGER,"  # a .msg: is its .emb in pending or imported?
    " event TEXT, body TEXT,"  # a .ses: its kind, and its JSON when that is an object
    " reason TEXT,"  # why it is unreadable
    " PRIMARY KEY (sid, name)) WITHOUT ROWID",
    "CREATE INDEX files_id ON files(substr(name, 25, 36))",
    f"CREATE INDEX files_seq ON files(sid, seq, name) WHERE kind = {MESSAGE} AND area < 2",
    "CREATE INDEX files_events ON files(sid, name) WHERE event IS NOT NULL",
    "CREATE INDEX files_corrects ON files(sid, corrects) WHERE corrects IS NOT NULL",
    "CREATE INDEX files_novec ON files(sid, name) WHERE vec = 0 AND area < 2",
    f"CREATE INDEX files_unreadable ON files(sid, area, name) WHERE kind = {UNREADABLE}",
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    # Directories of the imported and quarantined areas swept of temporaries (outbox.cleanup)
    # as they were then: one unchanged since need not be listed again.
    "CREATE TABLE swept(path TEXT PRIMARY KEY, seen TEXT NOT NULL) WITHOUT ROWID",
)


class LedgerUnavailable(Exception):
    """The ledger cannot be used now (its lock held past BUSY_S, a disk or permission error,
    damaged beyond a rebuild): the caller answers from the files alone."""


class Damaged(Exception):
    """SQLite found the database damaged, or the ledger contradicts a file: rebuild it."""


class _NeedsWrite(Exception):
    """A read found a session to catch up (or a new one): the read is done again in a write
    transaction."""


def ledger_dir(store_path: str) -> str:
    return os.path.join(store_path, LEDGER_DIR)


def boot_id() -> str:
    try:
        with open("/proc/sys/kernel/random/boot_id", "rb") as handle:  # bytes: no codec import
            return handle.read().strip().decode("ascii", "replace")
    except OSError:
        return "unknown"


def writer_alive(pid: int) -> bool:
    """Is the process that left a marker (or a temporary, outbox.cleanup) still there?"""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


class Ledger:
    """The ledger of one store (its path and open descriptor: outbox.store.Store's). One
    connection, opened on first use and kept for the process's life; a long-lived process asks
    at each transaction whether the file is still the one it opened (a rebuild elsewhere
    replaces it). Transactions nest: a store operation inside another's transaction joins it.
    One thread at a time (a lock)."""

    def __init__(self, store_path: str, store_fd: int) -> None:
        import _thread  # not threading: its import costs the write path a millisecond
        self.store_path = store_path
        self.store_fd = store_fd
        self.dir = ledger_dir(store_path)
        self.path = os.path.join(self.dir, LEDGER_FILE)
        self.markers_dir = os.path.join(self.dir, UNINDEXED_DIR)
        self._conn: Any = None
        self._identity: tuple[int, int] | None = None
        self._boot_checked = False
        self._depth = 0
        self._writing = False
        self._sessions: dict[str, Session] = {}  # those of the open transaction
        self._changed: dict[str, Session] = {}  # those it changed: recorded as it commits
        self._markers: list[str] | None = None  # unindexed/ as listed in this transaction
        self._dead_markers: list[str] = []  # removed once the transaction commits
        self._lock = _thread.RLock()

    # --- the connection ------------------------------------------------------------------------
    def close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:  # noqa: BLE001 - closing a broken connection
                pass
            self._conn = None

    def _connect(self) -> None:
        import sqlite3
        try:
            for path in (self.dir, self.markers_dir):
                try:
                    os.mkdir(path, atomic.DIR_MODE)
                except FileExistsError:
                    pass
            try:  # created 0600 here: SQLite gives its journal the database's mode
                os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL
                                 | os.O_NOFOLLOW | os.O_CLOEXEC, atomic.FILE_MODE))
            except FileExistsError:
                pass
            info = os.stat(self.path, follow_symlinks=False)
        except OSError as exc:
            raise LedgerUnavailable(f"the ledger cannot be opened: {exc}") from exc
        if info.st_mode & 0o170000 != 0o100000:
            raise LedgerUnavailable(f"{self.path} is not a regular file")
        try:
            conn = sqlite3.connect(self.path, timeout=BUSY_S, isolation_level=None,
                                   check_same_thread=False)
            conn.execute("PRAGMA journal_mode=PERSIST")
            conn.execute("PRAGMA synchronous=OFF")
            conn.execute("PRAGMA journal_size_limit=1048576")
        except sqlite3.Error as exc:
            raise _classify(exc) from exc
        self._conn = conn
        self._identity = (info.st_dev, info.st_ino)
        self._boot_checked = False

    def _connection(self) -> Any:
        if self._conn is not None:
            try:
                info = os.stat(self.path, follow_symlinks=False)
                same = (info.st_dev, info.st_ino) == self._identity
            except OSError:
                same = False
            if not same:
                self.close()  # replaced or removed (a rebuild elsewhere): open the new one
        if self._conn is None:
            self._connect()
        return self._conn

    def remove_files(self) -> None:
        """Remove the database and its journal: the next transaction starts anew."""
        self.close()
        for suffix in ("", "-journal", "-wal", "-shm"):
            try:
                os.unlink(self.path + suffix)
            except FileNotFoundError:
                pass

    # --- transactions --------------------------------------------------------------------------
    def transaction(self, write: bool = False) -> "_Transaction":
        """`with ledger.transaction(write):` one transaction (a nested one joins the open
        one). SQLite's errors become LedgerUnavailable, after one rebuild when the database is
        damaged."""
        return _Transaction(self, write)

    def query(self, read: "Callable[[Ledger], Any]") -> Any:
        """`read(ledger)` in a read transaction; done again in a write transaction when it
        finds a session to catch up (`read` must only read)."""
        try:
            with self.transaction():
                return read(self)
        except _NeedsWrite:
            if self._depth:
                raise  # the outermost query starts again
        with self.transaction(write=True):
            return read(self)

    def _begin(self, write: bool) -> None:
        import sqlite3
        conn = self._connection()
        try:
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            self._writing = write
            if not self._boot_checked:  # once per connection (a file replaced reconnects)
                self._prepare(conn)
        except sqlite3.Error as exc:
            _rollback(conn)
            raise _classify(exc) from exc

    def _prepare(self, conn: Any) -> None:
        """The schema when the database is new (or of another format: then emptied), and the
        boot check (see the module's docstring). Done in a write transaction."""
        if not self._writing:
            conn.execute("ROLLBACK")
            conn.execute("BEGIN IMMEDIATE")
            self._writing = True
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        boot = boot_id()
        if version != FORMAT:
            for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                        "AND name NOT LIKE 'sqlite_%'").fetchall():
                conn.execute(f'DROP TABLE "{name}"')
            for statement in _SCHEMA:
                conn.execute(statement)
            conn.execute("INSERT INTO meta VALUES ('boot', ?)", (boot,))
            conn.execute(f"PRAGMA user_version = {FORMAT}")
        else:
            row = conn.execute("SELECT value FROM meta WHERE key = 'boot'").fetchone()
            if row is None or row[0] != boot:
                if conn.execute("PRAGMA quick_check").fetchone()[0] != "ok":
                    raise Damaged("the ledger's quick_check failed after a new boot")
                conn.execute("UPDATE sessions SET seen = NULL")
                conn.execute("INSERT OR REPLACE INTO meta VALUES ('boot', ?)", (boot,))
        self._boot_checked = True

    def _finish(self, commit: bool) -> None:
        import sqlite3
        changed, self._changed = self._changed, {}
        self._sessions.clear()
        conn = self._conn
        if conn is None:
            self._markers = None
            return
        try:
            if commit:
                for session in changed.values():
                    session.record_directories()
            conn.execute("COMMIT" if commit else "ROLLBACK")
        except sqlite3.Error as exc:
            _rollback(conn)
            raise _classify(exc) from exc
        finally:
            self._markers = None

    # --- sessions ------------------------------------------------------------------------------
    def session(self, session_id: str) -> "Session":
        """The session as its files say now, inside the open transaction: caught up first when
        its directories are not as the ledger recorded them (outbox.ledger_catchup)."""
        found = self._sessions.get(session_id)
        if found is not None:
            return found
        if not is_valid_session_id(session_id):
            raise ValueError(f"invalid session id: {session_id!r}")
        conn = self._conn
        row = conn.execute("SELECT sid, seen, messages, vectors, set_aside, lacking, epoch "
                           "FROM sessions WHERE session = ?", (session_id,)).fetchone()
        now = self.seen_now(session_id)
        marked = self._marked(session_id)
        if row is None:
            if not self._writing and now == ABSENT and not marked:
                return Session(self, session_id, None, ABSENT, 0, 0, 0, 0, 0)  # none at all
            if not self._writing:
                raise _NeedsWrite
            sid = conn.execute("INSERT INTO sessions(session) VALUES (?)",
                               (session_id,)).lastrowid
            row = (sid, None, 0, 0, 0, 0, 0)
        session = Session(self, session_id, *row)
        if marked or session.seen is None or session.seen != now:
            if not self._writing:
                raise _NeedsWrite
            from agent_memory.outbox.ledger_catchup import catch_up
            catch_up(self, session)  # sets session.seen to the directories it listed
            if marked == "live":
                session.seen = None
            session.save()
        self._sessions[session_id] = session
        return session

    def rebuild(self, session_ids: "list[str]") -> None:
        """Forget every row, then catch each of `session_ids` up from its files (one
        transaction each: others' writes wait for one session at a time)."""
        with self.transaction(write=True):
            self._conn.execute("DELETE FROM files")
            self._conn.execute("DELETE FROM sessions")
        for session_id in session_ids:
            with self.transaction(write=True):
                self.session(session_id)

    def relist(self, session_id: str) -> None:
        """Have the session listed (and its unreadable files decoded) again at its next use."""
        with self.transaction(write=True):
            changed = self._changed.pop(session_id, None)
            if changed is not None:  # its counters as changed, its directories unrecorded
                changed.seen = None
                changed.save()
            self._conn.execute("UPDATE sessions SET seen = NULL WHERE session = ?",
                               (session_id,))
            self._sessions.pop(session_id, None)

    def swept(self) -> dict[str, str]:
        """{directory: `inode:mtime` when last swept of temporaries} (outbox.cleanup)."""
        return dict(self._conn.execute("SELECT path, seen FROM swept"))

    def note_swept(self, swept: dict[str, str]) -> None:
        self._conn.executemany("INSERT OR REPLACE INTO swept VALUES (?, ?)", swept.items())

    def sessions(self) -> list[str]:
        """The sessions the ledger has a row for."""
        return [row[0] for row in self._conn.execute("SELECT session FROM sessions")]

    def find_any(self, item_id: str, message: bool = True) -> list[tuple[str, str, str]]:
        """(session, name, area) of every record with this id the ledger knows (any session;
        each session's rows as last caught up: the caller checks that session)."""
        test = "IS NULL" if message else "IS NOT NULL"
        return [(s, n, AREA_NAMES[a]) for s, n, a in self._conn.execute(
            f"SELECT session, name, area FROM files INDEXED BY files_id JOIN sessions USING (sid) "
            f"WHERE substr(name, 25, 36) = ? AND event {test} ORDER BY session, area",
            (item_id,))]

    def seen_now(self, session_id: str) -> str:
        """The session's three directories as they are: `inode:mtime` each, `-` where none."""
        parts = []
        for path in (session_id, f"{names.IMPORTED_DIR}/{session_id}",
                     f"{names.QUARANTINE_DIR}/{session_id}"):
            try:
                info = os.stat(path, dir_fd=self.store_fd, follow_symlinks=False)
            except (FileNotFoundError, NotADirectoryError):
                parts.append("-")
                continue
            parts.append(f"{info.st_ino}:{info.st_mtime_ns}")
        return "|".join(parts)

    # --- writers that do without it ------------------------------------------------------------
    def without(self, session_id: str) -> "_Marker":
        """`with ledger.without(session_id):` around a change made without the ledger: the
        marker that keeps the session listed again until its writer is gone."""
        return _Marker(self, session_id)

    def _marked(self, session_id: str) -> str | None:
        """"live" when a writer without the ledger may be working in the session now, "gone"
        when only markers of writers gone are left (listed now, removed at commit), else None."""
        if self._markers is None:
            try:
                self._markers = os.listdir(self.markers_dir)
            except FileNotFoundError:
                self._markers = []
        if not self._markers:
            return None
        prefix = session_id + "+"
        found = None
        for marker in self._markers:
            if not marker.startswith(prefix):
                continue
            parts = marker.split("+")
            pid = int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else 0
            path = os.path.join(self.markers_dir, marker)
            try:
                age = _now() - os.stat(path).st_mtime
            except FileNotFoundError:
                continue  # its writer is done
            if pid and age < MARKER_MAX_AGE_S and writer_alive(pid):
                found = "live"
            else:
                found = found or "gone"
                self._dead_markers.append(path)
        return found


def _now() -> float:
    import time
    return time.time()


class _Marker:
    def __init__(self, ledger: Ledger, session_id: str) -> None:
        self.path = os.path.join(ledger.markers_dir,
                                 f"{session_id}+{os.getpid()}+{os.urandom(6).hex()}")
        self.ledger = ledger

    def __enter__(self) -> None:
        for _attempt in range(2):
            try:
                os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL
                                 | os.O_CLOEXEC, atomic.FILE_MODE))
                return
            except FileNotFoundError:  # no ledger directory yet
                try:
                    os.makedirs(self.ledger.markers_dir, atomic.DIR_MODE, exist_ok=True)
                except OSError:
                    break
            except OSError:
                break
        # No marker can be left (no room, no permission): the files stay the truth, and the
        # change made now still moves the directory's mtime in all but the rarest case.

    def __exit__(self, *exc: object) -> None:
        try:
            os.unlink(self.path)
        except OSError:
            pass


class _Transaction:
    def __init__(self, ledger: Ledger, write: bool) -> None:
        self.ledger = ledger
        self.write = write

    def __enter__(self) -> Ledger:
        ledger = self.ledger
        ledger._lock.acquire()
        if ledger._depth:
            if self.write and not ledger._writing:
                ledger._lock.release()
                raise _NeedsWrite
            ledger._depth += 1
            return ledger
        try:
            self._begin()
        except BaseException:
            ledger._lock.release()
            raise
        ledger._depth = 1
        return ledger

    def _begin(self) -> None:
        ledger = self.ledger
        ledger._dead_markers = []
        try:
            ledger._begin(self.write)
        except Damaged:
            ledger.remove_files()
            try:
                ledger._begin(self.write)
            except Damaged as exc:
                raise LedgerUnavailable(f"the ledger is damaged and could not be rebuilt: "
                                        f"{exc}") from exc

    def __exit__(self, kind, exc, tb) -> bool:
        import sqlite3
        ledger = self.ledger
        try:
            ledger._depth -= 1
            if ledger._depth:
                return False
            commit = kind is None
            failure = _classify(exc) if kind is not None and issubclass(kind, sqlite3.Error) \
                else exc if kind is not None and issubclass(kind, Damaged) else None
            try:
                ledger._finish(commit)
            except (Damaged, LedgerUnavailable) as exc_at_end:
                failure = exc_at_end
            if isinstance(failure, Damaged):
                ledger.remove_files()  # rebuilt from the files at the next use
                failure = LedgerUnavailable(f"the ledger was found damaged ({failure}) and "
                                            "removed: it is rebuilt from the files at its next "
                                            "use")
            if failure is not None:
                raise failure from exc
            if commit:
                for path in ledger._dead_markers:
                    try:
                        os.unlink(path)
                    except FileNotFoundError:
                        pass
            return False
        finally:
            ledger._dead_markers = []
            ledger._lock.release()


def _rollback(conn: Any) -> None:
    try:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
    except Exception:  # noqa: BLE001 - the error that brought us here is the one to report
        pass


_CORRUPT, _NOTADB = 11, 26  # SQLite's primary result codes for "not a sound database"


def _classify(exc: Exception) -> Exception:
    code = getattr(exc, "sqlite_errorcode", None)
    text = str(exc)
    if (code is not None and code & 0xFF in (_CORRUPT, _NOTADB)) or "malformed" in text \
            or "not a database" in text:
        return Damaged(text)
    return LedgerUnavailable(f"the ledger cannot be used: {text}")


class Session:
    """One session in the ledger, inside a transaction: what a write needs (the next sequence
    number, the latest name, the lifecycle, a record by id), what a read needs (messages by
    sequence number, events, correction chains), and the changes store operations record."""

    def __init__(self, ledger: Ledger, session_id: str, sid: int, seen: str | None,
                 messages: int, vectors: int, set_aside: int, lacking: int,
                 epoch: int) -> None:
        self.ledger = ledger
        self.session_id = session_id
        self.sid = sid
        self.seen = seen
        self.messages = messages
        self.vectors = vectors
        self.set_aside = set_aside
        self.lacking = lacking
        self.epoch = epoch
        # what latest_name and lifecycle found in this transaction, kept up to date by the
        # changes recorded here (a batch's second write asks again)
        self._found: dict = {}

    @property
    def _conn(self) -> Any:
        return self.ledger._conn

    def save(self) -> None:
        self._conn.execute("UPDATE sessions SET seen = ?, messages = ?, vectors = ?, "
                           "set_aside = ?, lacking = ?, epoch = ? WHERE sid = ?",
                           (self.seen, self.messages, self.vectors, self.set_aside, self.lacking,
                            self.epoch, self.sid))

    def changed(self) -> None:
        """A change was made to the session's files: its directories are recorded as the
        transaction's changes leave them, as it commits (record_directories), once however
        many changes it made (a framework's batch)."""
        self.ledger._changed[self.session_id] = self

    def record_directories(self) -> None:
        """Record the directories as they are now, with the counters (not while a writer
        without the ledger works in the session, nor when they cannot be looked at: it is
        listed again at its next use)."""
        self.ledger._markers = None  # listed anew: a writer may have come since
        try:
            live = self.ledger._marked(self.session_id) == "live"
            self.seen = None if live else self.ledger.seen_now(self.session_id)
        except OSError:
            self.seen = None
        self.save()

    @property
    def revision(self) -> str:
        """`<epoch>.<messages>`: changes whenever what a read of the session answers may have
        changed. Its first part changes for anything but a new message; within one epoch the
        second, the next sequence number, only grows (a new message is numbered from it)."""
        return f"{self.epoch}.{self.messages}"

    def known(self) -> bool:
        """Does the store hold any record of the session (any area, any kind)?"""
        return bool(self.vectors or self.set_aside) or self._conn.execute(
            "SELECT 1 FROM files WHERE sid = ? LIMIT 1", (self.sid,)).fetchone() is not None

    # --- what a write needs --------------------------------------------------------------------
    def latest_name(self) -> str | None:
        """The latest name of a `.msg` or `.ses` in pending or imported (a new one follows)."""
        if "latest" not in self._found:
            row = self._conn.execute("SELECT name FROM files WHERE sid = ? AND area < 2 "
                                     "ORDER BY name DESC LIMIT 1", (self.sid,)).fetchone()
            self._found["latest"] = row[0] if row else None
        return self._found["latest"]

    def lifecycle(self, loose: bool = True) -> str | None:
        """The latest lifecycle event's kind (open, close, reopen, delete_session) in pending
        or imported. `loose`: as the write path reads an event (any JSON object with such an
        `event`); else only from events that decode whole (a read's rule)."""
        key = ("lifecycle", loose)
        if key not in self._found:
            strict = "" if loose else f"AND kind = {EVENT} "
            row = self._conn.execute(
                "SELECT event FROM files INDEXED BY files_events WHERE sid = ? AND event IN "
                f"('open', 'close', 'reopen', 'delete_session') AND area < 2 {strict}"
                "ORDER BY name DESC LIMIT 1", (self.sid,)).fetchone()
            self._found[key] = row[0] if row else None
        return self._found[key]

    def find(self, item_id: str, message: bool = True) -> tuple[str, str] | None:
        """(name, area) of the session's `.msg` (else `.ses`) with this id, in the area
        order pending, imported, quarantined."""
        test = "IS NULL" if message else "IS NOT NULL"
        row = self._conn.execute(
            f"SELECT name, area FROM files INDEXED BY files_id WHERE substr(name, 25, 36) = ? "
            f"AND sid = ? AND event {test} ORDER BY area LIMIT 1",
            (item_id, self.sid)).fetchone()
        return (row[0], AREA_NAMES[row[1]]) if row else None

    # --- what a read needs ---------------------------------------------------------------------
    def events(self) -> list[tuple[str, str, int, str | None, str | None]]:
        """(name, area, kind, body, reason) of the session's `.ses` in pending and imported,
        in name order."""
        return [(n, AREA_NAMES[a], k, b, r) for n, a, k, b, r in self._conn.execute(
            "SELECT name, area, kind, body, reason FROM files INDEXED BY files_events "
            "WHERE sid = ? AND event IS NOT NULL AND area < 2 ORDER BY name", (self.sid,))]

    def forgetting_bodies(self) -> list[str]:
        """The records (JSON) of the session's delete and mark events that decode whole, in
        name order (outbox.views.Forgotten folds them)."""
        return [row[0] for row in self._conn.execute(
            f"SELECT body FROM files INDEXED BY files_events WHERE sid = ? "
            f"AND event IN ('delete', 'mark') "
            f"AND area < 2 AND kind = {EVENT} ORDER BY name", (self.sid,))]

    def messages_from(self, start: int) -> "Iterator[tuple[int, str, str, str | None]]":
        """(sequence number, name, area, corrects) of the readable messages in pending and
        imported numbered `start` or later, in arrival order (number, then name): read as the
        caller iterates."""
        cursor = self._conn.execute(
            f"SELECT seq, name, area, corrects FROM files INDEXED BY files_seq WHERE sid = ? "
            f"AND kind = {MESSAGE} AND area < 2 AND seq >= ? ORDER BY seq, name",
            (self.sid, start))
        for seq, name, area, corrects in cursor:
            yield seq, name, AREA_NAMES[area], corrects

    def message(self, message_id: str) -> tuple[int, str, str, str | None] | None:
        """(sequence number, name, area, corrects) of a readable message in pending or
        imported."""
        row = self._conn.execute(
            f"SELECT seq, name, area, corrects FROM files INDEXED BY files_id "
            f"WHERE substr(name, 25, 36) = ? AND sid = ? AND kind = {MESSAGE} AND area < 2 "
            "ORDER BY area, name LIMIT 1",
            (message_id, self.sid)).fetchone()
        return (row[0], row[1], AREA_NAMES[row[2]], row[3]) if row else None

    def corrections_of(self, message_id: str) -> list[tuple[int, str, str, str | None]]:
        """The readable messages in pending and imported that correct `message_id`."""
        return [(seq, name, AREA_NAMES[area], corrects) for seq, name, area, corrects in
                self._conn.execute(
                    "SELECT seq, name, area, corrects FROM files INDEXED BY files_corrects "
                    "WHERE sid = ? AND corrects = ? "
                    f"AND kind = {MESSAGE} AND area < 2", (self.sid, message_id))]

    def unreadable(self, message: bool = True) -> list[tuple[str, str, str]]:
        """(name, area, reason) of the session's unreadable `.msg` (else `.ses`) in pending
        and imported, by area then name (the order a listing reports them)."""
        test = "IS NULL" if message else "IS NOT NULL"
        return [(n, AREA_NAMES[a], r) for n, a, r in self._conn.execute(
            f"SELECT name, area, reason FROM files INDEXED BY files_unreadable WHERE sid = ? "
            f"AND kind = {UNREADABLE} AND area < 2 AND event {test} ORDER BY area, name",
            (self.sid,))]

    def lacking_vectors(self) -> list[tuple[str, str]]:
        """(name, area) of the session's `.msg` in pending or imported without a `.emb`."""
        return [(n, AREA_NAMES[a]) for n, a in self._conn.execute(
            "SELECT name, area FROM files INDEXED BY files_novec WHERE sid = ? AND vec = 0 "
            "AND area < 2 ORDER BY name", (self.sid,))]

    def count_lacking_vectors(self) -> int:
        return self.lacking

    def lacks_vector(self, name: str) -> bool:
        """Is this `.msg` (by name) one without its `.emb`?"""
        return self._conn.execute("SELECT 1 FROM files WHERE sid = ? AND name = ? AND vec = 0 "
                                  "AND area < 2", (self.sid, name)).fetchone() is not None

    # --- what a store operation records --------------------------------------------------------
    def added(self, name: str, area: str, kind: int, *, seq: int | None = None,
              corrects: str | None = None, event: str | None = None, body: str | None = None,
              reason: str | None = None, vec: int | None = None) -> None:
        """A new `.msg` or `.ses` (a `.emb`: vector_added)."""
        code = AREA_CODES[area]
        message = name.endswith(names.MESSAGE_EXT)
        if message and vec is None:
            vec = 1 if self._vector_lies(name) else 0
        if not message and event is None:
            event = ""
        self._conn.execute("INSERT OR REPLACE INTO files VALUES (?,?,?,?,?,?,?,?,?,?)",
                           (self.sid, name, code, kind, seq, corrects, vec, event, body, reason))
        found = self._found
        if found and code < 2:
            if not message:  # an event: the lifecycle may have changed
                found.pop(("lifecycle", True), None)
                found.pop(("lifecycle", False), None)
            if "latest" in found and (found["latest"] is None or name > found["latest"]):
                found["latest"] = name
        if code == 2:
            self.set_aside += 1
            self.epoch += 1
        elif message:
            self.messages += 1
            self.lacking += 1 - vec
            if kind != MESSAGE:
                self.epoch += 1
        else:
            self.epoch += 1

    def _vector_lies(self, message_name: str) -> bool:
        """Is this message's `.emb` in pending or imported? (a stat or two: rare)"""
        sibling = names.sibling(message_name, names.VECTOR_EXT)
        for path in (f"{self.session_id}/{sibling}",
                     f"{names.IMPORTED_DIR}/{self.session_id}/{sibling}"):
            try:
                os.stat(path, dir_fd=self.ledger.store_fd, follow_symlinks=False)
                return True
            except (FileNotFoundError, NotADirectoryError):
                continue
        return False

    def vector_added(self, vector_name: str, area: str) -> None:
        if AREA_CODES[area] == 2:
            self.set_aside += 1
            return
        self.vectors += 1
        self._vector_is(names.sibling(vector_name, names.MESSAGE_EXT), 1)

    def _vector_is(self, message_name: str, vec: int) -> None:
        """The message's `vec` flag set (its `.emb` now lies, or no longer lies, in pending or
        imported), and the count of those lacking one with it."""
        row = self._conn.execute("SELECT area, vec FROM files WHERE sid = ? AND name = ?",
                                 (self.sid, message_name)).fetchone()
        if row is None or row[1] == vec:
            return
        self._conn.execute("UPDATE files SET vec = ? WHERE sid = ? AND name = ?",
                           (vec, self.sid, message_name))
        if row[0] < 2:
            self.lacking += 1 if vec == 0 else -1

    def moved(self, moved: list[str], source: str, target: str) -> None:
        """Files renamed from area `source` to `target` (those that did move)."""
        if not moved:
            return
        self._found.clear()
        src, dst = AREA_CODES[source], AREA_CODES[target]
        vectors = [n for n in moved if n.endswith(names.VECTOR_EXT)]
        records = [n for n in moved if not n.endswith(names.VECTOR_EXT)]
        self._conn.executemany("UPDATE files SET area = ? WHERE sid = ? AND name = ?",
                               [(dst, self.sid, name) for name in records])
        if dst == 2 and src < 2:  # set aside: no longer read, no longer numbered
            self.messages -= sum(1 for n in records if n.endswith(names.MESSAGE_EXT))
            self.lacking -= sum(1 for n in records if n.endswith(names.MESSAGE_EXT)
                                and self._conn.execute(
                                    "SELECT vec FROM files WHERE sid = ? AND name = ?",
                                    (self.sid, n)).fetchone() == (0,))
            self.vectors -= len(vectors)
            self.set_aside += len(moved)
            for name in vectors:
                self._vector_gone(name)
            self.epoch += 1

    def removed(self, removed: list[str], area: str) -> None:
        """Entries removed from the session's directory of `area`."""
        if not removed:
            return
        self._found.clear()
        code = AREA_CODES[area]
        for name in removed:
            if not names.is_final(name):
                continue  # reason files, temporaries, directories: no row
            if name.endswith(names.VECTOR_EXT):
                if code == 2:
                    self.set_aside -= 1
                else:
                    self.vectors -= 1
                    self._vector_gone(name)
                continue
            row = self._conn.execute("SELECT vec FROM files WHERE sid = ? AND name = ? "
                                     "AND area = ?", (self.sid, name, code)).fetchone()
            if row is None:
                continue
            self._conn.execute("DELETE FROM files WHERE sid = ? AND name = ?", (self.sid, name))
            if code == 2:
                self.set_aside -= 1
            elif name.endswith(names.MESSAGE_EXT):
                self.messages -= 1
                self.lacking -= row[0] == 0
        self.epoch += 1

    def _vector_gone(self, vector_name: str) -> None:
        message_name = names.sibling(vector_name, names.MESSAGE_EXT)
        if not self._vector_lies(message_name):  # the other area may still hold one
            self._vector_is(message_name, 0)
