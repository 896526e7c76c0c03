"""What the frameworks' session stores share: one agent-memory session holding a framework's
history, one message per item, the item itself kept whole in the message's attributes (under
the framework's own key) so it reads back exactly, and a text for people and search.

Synchronous (Memory's calls); the async frameworks run each operation in a worker thread.
The session is opened on its first write (again after `clear`): opening it with the same
attributes is a repeat, so any number of processes may each hold their own object for it."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from agent_memory.api import runner
from agent_memory.api.errors import AgentMemoryError, UsageError
from agent_memory.api.memory import Memory
from agent_memory.api.results import Message

TEXT_BYTES = 1 << 20  # a message text's limit (cli.inputs.MAX_TEXT_BYTES)
# An item's JSON at most: a record is never read past 16 MiB (outbox.atomic.MAX_RECORD_BYTES),
# and holds the item and the text beside it; the CLI sets no limit on attributes itself.
ITEM_BYTES = 4 << 20


@dataclass(frozen=True)
class Entry:
    """One item as a message: who sent it to whom, its text, the item itself."""

    sender_kind: str
    sender_identity: str
    receiver_kind: str
    receiver_identity: str
    text: str
    item: Any


class Dialogue:
    """A session of the project's store holding a framework's items under `key`."""

    def __init__(self, session_id: str, key: str, *, project_root=None, config=None,
                 project_id: str | None = None, participants: Iterable[str] = (),
                 memory: Memory | None = None) -> None:
        self.session_id = session_id
        self.key = key
        self.memory = memory if memory is not None else Memory(project_root, config)
        self.project_id = project_id or _project_name(self.memory.project_root)
        self.participants = list(participants)
        self._opened = False
        self._lock = threading.Lock()  # one open at a time from this object
        self._read_lock = threading.Lock()  # one read of the copy at a time
        self._copy: list[Message] | None = None  # the session as last read
        self._copy_revision: str | None = None  # the store's revision of it then
        self._copy_ids: set[str] = set()  # the ids of its messages

    def open(self) -> None:
        """Open the session unless this object did already (a repeat when it exists with the
        same attributes; one opened with others, SESSION_CONFLICT, is used as it is)."""
        with self._lock:
            if self._opened:
                return
            try:
                self.memory.open_session(self.session_id, self.project_id, self.participants,
                                         metadata={"framework_key": self.key})
            except AgentMemoryError as exc:
                if exc.code != "SESSION_CONFLICT":
                    raise
            self._opened = True

    def append(self, entries: Iterable[Entry]) -> list[str]:
        """Write each entry, in order (each file whole before the next is written), and hand
        back their message ids once all are durable (the session's directory synced once for
        the batch, not once each). An item too large for the store refuses the whole batch,
        before anything is written."""
        entries = list(entries)
        for index, entry in enumerate(entries):
            size = len(json.dumps(entry.item, ensure_ascii=False).encode("utf-8"))
            if size > ITEM_BYTES:
                raise UsageError("ITEM_TOO_LARGE", f"item {index} takes {size} bytes as JSON, "
                                 f"more than the {ITEM_BYTES} a message may carry; nothing "
                                 "was written", {"index": index, "bytes": size,
                                                 "limit": ITEM_BYTES}, 2)
        written = []
        # Acknowledged together: each file whole before the next, the session's directory
        # synced once at the end, before any id is handed back.
        with runner.together(self.memory.project_root, self.memory.config,
                             self.memory.store) as batch:
            before = batch.revision(self.session_id)
            for entry in entries:
                self.open()
                try:
                    written.append(self._write(entry))
                except AgentMemoryError as exc:
                    if exc.code != "SESSION_UNKNOWN":  # deleted meanwhile (a clear elsewhere)
                        raise
                    self._opened = False
                    self.open()
                    written.append(self._write(entry))
            after = batch.revision(self.session_id) if before else None
            appended = batch.appended() if after else []
        self._keep(before, after, appended)
        return written

    def _keep(self, before: str | None, after: str | None, appended: list[dict]) -> None:
        """Add what a batch appended to the copy, when the copy was the session as the batch
        began and the batch's messages are all that changed it (the same epoch, the next
        number moved by as many: the batch was one transaction of the ledger, so no other
        writer came between): the next read then has nothing new to read."""
        if not (before and after and appended) or any(e["corrects_message_id"]
                                                      for e in appended):
            return  # a correction: a read shows it at its root's place
        epoch, start = before.split(".")
        if after != f"{epoch}.{int(start) + len(appended)}":
            return
        with self._read_lock:
            if self._copy is None or self._copy_revision != before:
                return
            self._extend([Message.from_entry("file", e) for e in appended], after)

    def _write(self, entry: Entry) -> str:
        return self.memory.write(
            self.session_id, readable(entry.text), sender_kind=entry.sender_kind,
            sender_identity=entry.sender_identity, receiver_kind=entry.receiver_kind,
            receiver_identity=entry.receiver_identity,
            attributes={self.key: entry.item}).message_id

    def messages(self, latest: int | None = None) -> list[Message]:
        """The session's visible messages (soft-deleted ones hidden) in arrival order, or its
        `latest` ones; none for a session neither the store nor the logger knows (never
        written, or deleted).

        Read incrementally, so a turn costs what it adds, not what the session holds: the
        copy the last call made is kept with the store's revision of the session
        (Memory.revision, `<epoch>.<next sequence number>`), and each call reads the revision
        and what is new with it, in one reading of the store's ledger. The same revision: the
        copy is the answer. Only new messages since (the same epoch): those the project's
        files hold from the copy's next sequence number on are added (every message written
        here is there, pending or imported); a correction among them reads the whole session
        again. Anything else (a deletion, a mark, a message set aside, a session
        event: a new epoch) reads the whole session again, from the logger when one answers.
        Messages another project writes to the same session at the logger are seen at the
        next whole read."""
        with self._read_lock, runner.holding(self.memory.project_root):
            copy, held = self._copy, self._copy_revision
            if copy is None or held is None:
                return self._latest(self._read_whole(self.memory.revision(self.session_id)),
                                    latest)
            epoch, next_number = held.split(".")
            # from one before the copy's next number: two writers may share a number
            found = self._since(max(0, int(next_number) - 1), held)
            if found is None or found[0].split(".")[0] != epoch:
                revision = found[0] if found else self.memory.revision(self.session_id)
                copy = self._read_whole(revision)
            elif found[0] != held:
                added = [Message.from_entry("file", e) for e in found[1]
                         if e["message_id"] not in self._copy_ids]
                if any(m.corrects_message_id for m in added):
                    copy = self._read_whole(found[0])
                else:
                    self._extend(added, found[0])
            return self._latest(copy, latest)

    def _extend(self, added: list[Message], revision: str) -> None:
        """The copy with `added` after it, as of `revision` (the copy is never handed out:
        callers get slices)."""
        self._copy.extend(added)
        self._copy_ids.update(m.message_id for m in added)
        self._copy_revision = revision

    @staticmethod
    def _latest(copy: list[Message], latest: int | None) -> list[Message]:
        return copy[-latest:] if latest else list(copy)

    def _read_whole(self, revision: str | None) -> list[Message]:
        try:
            # whole: a framework gets its items back exactly, never cut to a reader's budget
            found = list(self.memory.messages(self.session_id, max_chars=0))
        except AgentMemoryError as exc:
            if exc.code != "SESSION_UNKNOWN":
                raise
            found = []
        self._copy, self._copy_revision = found, revision
        # with each correction chain's last version (a resolved read shows it at its root's
        # place): seen again among the newest, it is not new
        self._copy_ids = {m.message_id for m in found} | {m.resolved_from for m in found
                                                          if m.resolved_from}
        return found

    def _since(self, start: int, known: str) -> tuple[str, list[dict]] | None:
        """(the store's revision of the session, the entries of its messages numbered `start`
        or later in the project's files: none while the revision is still `known`), or None
        when the store cannot say."""
        from agent_memory.outbox.availability import StoreUnavailable
        try:
            return runner.since(self.memory.project_root, self.session_id, start, known,
                                self._copy_ids)
        except (StoreUnavailable, OSError, ValueError):
            return None

    def item_of(self, message: Message) -> tuple[bool, Any]:
        """(True, the item) for a message this store wrote, else (False, None)."""
        attributes = message.attributes or {}
        if self.key in attributes:
            return True, attributes[self.key]
        return False, None

    def pop(self) -> Message | None:
        """Hard-delete the session's latest message (its text purged from every file here,
        and at the logger once the delete reaches it); that message, or None when empty."""
        messages = self.messages(1)
        if not messages:
            return None
        latest = messages[-1]
        self.memory.delete(latest.message_id, "hard", session_id=self.session_id)
        return latest

    def clear(self) -> None:
        """Delete the whole session (irreversible: its texts purged); the next write opens it
        anew. Clearing a session the store never held is done."""
        try:
            self.memory.delete_session(self.session_id, confirm=self.session_id)
        except AgentMemoryError as exc:
            if exc.code != "SESSION_UNKNOWN":
                raise
        self._opened = False


def _project_name(project_root: str | None) -> str:
    """The default project id: the project directory's name, found as the CLI finds it."""
    if project_root is None:
        from agent_memory.outbox.availability import git_toplevel
        cwd = os.getcwd()
        project_root = git_toplevel(cwd) or cwd
    return os.path.basename(os.path.realpath(project_root)) or "project"


def readable(text: str) -> str:
    """The text a message shows (people, search): the item's own, cut to a text's limit on a
    character boundary (the item itself is kept whole beside it)."""
    encoded = text.encode("utf-8", "surrogatepass")
    if len(encoded) <= TEXT_BYTES:
        return text
    return encoded[:TEXT_BYTES].decode("utf-8", "ignore")
