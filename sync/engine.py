"""The sync engine: forward every pending event and message to the logger, exactly once in
effect, and move what the logger confirmed to `.imported/`.

Per session, in name (time) order: session events are barriers (the batch before an event is
sent first, then the event); messages go in batches through `messages_import` (a batch of one
goes through `append_message`, whose answer also carries the logger's sequence number).
Confirmation is per item: a confirmed item's `.msg` and `.emb` move to `.imported/`; a refused
item stays pending with the logger's reason and, after `quarantine_after` refusals across runs,
moves to `.quarantine/` with a reason file. Messages that relate to or correct a refused
message wait for it instead of being refused in turn.

A session's `open` event decides whose session the messages join, so a refused `open` (another
project already owns that session id, say) is a barrier: everything written behind it waits
while it is pending, and is quarantined with it once it is quarantined, so no message ever lands
in a session the logger gave to someone else. "Behind" is written time: a message back-dated
with `--occurred-at` to before its session's open still waits for that open.

A crash anywhere is safe: an item imported but not yet moved is imported again next time, and
the logger answers an identical repeat as success. The caller holds the sync lock.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, Callable

from agent_memory.outbox import names
from agent_memory.outbox.atomic import UnsafeFile
from agent_memory.outbox.contract import SESSION_UNKNOWN, RELATION_INADMISSIBLE
from agent_memory.outbox.store import IMPORTED, PENDING, QUARANTINED, Store, StoredFile
from agent_memory.sync.links.failures import Failed, Refused, Unreachable
from agent_memory.sync.forgetting import (FORGETTING, complete, forwarding_of_forgetting,
                                           pending_intents, purged_meanwhile)
from agent_memory.sync.links.logger import LoggerLink
from agent_memory.sync.state import SyncState


class Limits:
    """Batch bounds and the quarantine threshold (see the README for how they were chosen)."""

    def __init__(self, batch_items: int = 1000, batch_bytes: int = 4 << 20,
                 quarantine_after: int = 3, sessions_in_flight: int = 4,
                 refused_holdoff: float = 0.0) -> None:
        # A message refused less than `refused_holdoff` seconds ago is not sent again yet: the
        # watcher runs a round for every new file of a session, and without it would resend a
        # refused item (and count a refusal) on each, reaching quarantine within seconds.
        self.refused_holdoff = max(0.0, refused_holdoff)
        self.sessions_in_flight = max(1, sessions_in_flight)
        self.batch_items = max(1, batch_items)
        self.batch_bytes = max(1, batch_bytes)
        self.quarantine_after = max(1, quarantine_after)


class Outcome:
    """What happened to one pending file in this run."""

    CONFIRMED, REFUSED, WAITING, QUARANTINED, UNSENT = (
        "confirmed", "refused", "waiting", "quarantined", "unsent")

    def __init__(self, status: str, **info: Any) -> None:
        self.status = status
        self.info = info


class SessionReport:
    def __init__(self, session_id: str, track_outcomes: bool = True) -> None:
        self.session_id = session_id
        self._track = track_outcomes
        self.imported = 0
        self.events_applied = 0
        self.failed: list[dict[str, Any]] = []
        self.waiting: list[dict[str, Any]] = []
        self.quarantined: list[dict[str, Any]] = []
        self.pending = 0
        self.outcomes: dict[str, Outcome] = {}

    def record(self, name: str, outcome: Outcome) -> None:
        """Keep a file's outcome for the caller (an interactive forward, the agent's waiting commands);
        a one-shot drain of a large outbox does not keep them, so its memory stays flat."""
        if self._track:
            self.outcomes[name] = outcome

    def as_dict(self) -> dict[str, Any]:
        return {"session_id": self.session_id, "imported": self.imported,
                "events_applied": self.events_applied, "failed": self.failed,
                "waiting": self.waiting, "quarantined": self.quarantined,
                "pending": self.pending}


class _Item:
    """A pending message in a batch."""

    def __init__(self, file: StoredFile, record: Any, size: int) -> None:
        self.file = file
        self.record = record
        self.size = size
        self.message_id = record.message_id
        self.targets = {r.to_message_id for r in record.relations}
        if record.corrects_message_id:
            self.targets.add(record.corrects_message_id)


class _Barrier:
    """A session's `open` event that the logger refused: what was written behind it waits
    (`final` False, the event still pending) or is quarantined with it (`final` True)."""

    def __init__(self, event: Any, name: str, relpath: str, code: str | None,
                 statement: str | None, final: bool) -> None:
        self.event_id = event.event_id
        self.occurred_at = event.occurred_at
        self.name = name
        self.relpath = relpath
        self.code = code or "REFUSED"
        self.statement = statement or "refused by the logger"
        self.final = final

    def covers(self, name: str, written_at: str | None) -> bool:
        """Was a file written behind this event (after it by name, or by its write time)?"""
        return name > self.name or (written_at is not None and written_at >= self.occurred_at)

    def reason(self) -> str:
        where = "set aside" if self.final else "it stays pending"
        return (f"its session's open event was refused by the logger ({self.code}: "
                f"{self.statement}; {where}: {self.relpath}); nothing written behind it may "
                "join a session the logger gave to another")


def tidy(store: Store) -> list[dict[str, Any]]:
    """Before a pass over the whole store (the caller holds the sync lock): entries named like
    a session that are not one are set aside (or, unopenable, skipped), temporaries of
    writers killed midway are removed, and strays are named. What was done or found, one dict
    each: `event` ("set_aside", "skipped", "orphan_temporaries_removed", "stray"), `message`
    in words, and the details."""
    from agent_memory.outbox import cleanup
    done = []
    for moved in cleanup.set_aside_unsafe(store):
        if moved["moved_to"] is None:
            done.append({"event": "skipped", **moved,
                         "message": f"skipped {moved['entry']}: {moved['reason']}"})
        else:
            done.append({"event": "set_aside", **moved,
                         "message": f"set aside {moved['entry']} ({moved['reason']}) to "
                                    f"{moved['moved_to']}"})
    orphans = cleanup.remove_orphan_temporaries(store)
    if orphans:
        done.append({"event": "orphan_temporaries_removed", "count": orphans,
                     "message": f"removed {orphans} temporaries left by writers killed midway "
                                "(none held a record)"})
    return done + strays(store)


def strays(store: Store) -> list[dict[str, Any]]:
    """Entries that follow no naming rule of the store (outbox.entries), in tidy()'s form:
    never read, never sent, so each is said (`verify --repair` takes them)."""
    from agent_memory.outbox.entries import STRAY_PROBLEM, find_strays
    return [{"event": "stray", "entry": found["entry"], "kind": found["kind"],
             "message": f"{found['entry']}: a {found['kind']} that {STRAY_PROBLEM}"}
            for found in find_strays(store.fd)]


class SyncEngine:
    @classmethod
    def for_store(cls, store: Store, link: LoggerLink, limits: "Limits | None" = None,
                  progress: Callable[[str, dict[str, Any]], None] | None = None,
                  track_outcomes: bool = True) -> "SyncEngine":
        """An engine over the store's own refusal state (its `state.warnings` say what was
        wrong with that file, if anything)."""
        return cls(store, link, SyncState(store.path), limits, progress, track_outcomes)

    def __init__(self, store: Store, link: LoggerLink, state: SyncState,
                 limits: Limits | None = None,
                 progress: Callable[[str, dict[str, Any]], None] | None = None,
                 track_outcomes: bool = True) -> None:
        self.track_outcomes = track_outcomes
        self.store = store
        self.link = link
        self.state = state
        self.limits = limits or Limits()
        self._progress = progress or (lambda event, fields: None)
        self._moves: dict[tuple[str, str], list[StoredFile]] = {}

    # --- whole store ---------------------------------------------------------------------------
    async def sync_all(self) -> list[SessionReport]:
        """Every session with pending files; reports in name order. Unreachable propagates.

        Sessions are independent, so up to `limits.sessions_in_flight` of them are forwarded at
        once (the logger works on one session's batch while the next session's files are read);
        within a session everything stays strictly in order.
        """
        session_ids = self.store.pending_session_ids()
        reports: dict[str, SessionReport] = {}
        queue = list(reversed(session_ids))

        async def worker() -> None:
            while queue:
                session_id = queue.pop()
                reports[session_id] = await self.sync_session(session_id)

        workers = [asyncio.ensure_future(worker())
                   for _ in range(min(self.limits.sessions_in_flight, len(session_ids)))]
        try:
            await asyncio.gather(*workers)
        except BaseException:
            for task in workers:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            raise
        return [reports[s] for s in session_ids if s in reports]

    # --- one session ---------------------------------------------------------------------------
    async def sync_session(self, session_id: str) -> SessionReport:
        report = SessionReport(session_id, self.track_outcomes)
        if pending_intents(self.store):  # a purge a killed command left: finish it first
            complete(self.store)
        try:
            await self._sync_session(session_id, report)
        finally:
            self._commit_moves()  # what was confirmed before a failure still moves
            self.state.save()
            report.pending = len([f for f in self.store.files(session_id, None, (PENDING,))
                                  if not f.name.endswith(names.VECTOR_EXT)])
        return report

    async def _sync_session(self, session_id: str, report: SessionReport) -> None:
        files = self.store.files(session_id, None, (PENDING,))
        vectors = {f.item_id: f for f in files if f.name.endswith(names.VECTOR_EXT)}
        opens = self._pending_opens(files)
        files = self._in_written_order(files, opens)
        barrier = self._refused_open(session_id, opens)  # an open quarantined before this run
        blocked: set[str] = set()  # refused or waiting message ids: their dependants wait
        batch: list[_Item] = []
        batch_bytes = 0
        for file in files:
            if file.name.endswith(names.VECTOR_EXT):
                continue
            if file.name.endswith(names.EVENT_EXT):
                if barrier is not None and barrier.covers(file.name, None):
                    self._hold(file, file.item_id, barrier, report)
                    continue
                await self._flush(batch, vectors, blocked, report)
                batch, batch_bytes = [], 0
                refused = await self._apply_event(file, report, opens.get(file.name))
                if refused is not None:
                    barrier = refused
                continue
            item = self._load_message(file, report)
            if item is None:
                continue
            if barrier is not None and barrier.covers(file.name, item.record.written_at):
                blocked.add(item.message_id)
                self._hold(file, item.message_id, barrier, report,
                           vectors.get(item.message_id))
                continue
            if self._held_back(file, item.message_id, report) is not None:
                blocked.add(item.message_id)
                continue
            waits_for = sorted(item.targets & blocked)
            if waits_for:
                blocked.add(item.message_id)
                report.record(file.name, Outcome(Outcome.WAITING, waits_for=waits_for))
                report.waiting.append({"message_id": item.message_id, "file": file.relpath,
                                       "waits_for": waits_for})
                continue
            if batch and (len(batch) >= self.limits.batch_items
                          or batch_bytes + item.size > self.limits.batch_bytes):
                await self._flush(batch, vectors, blocked, report)
                batch, batch_bytes = [], 0
            batch.append(item)
            batch_bytes += item.size
        await self._flush(batch, vectors, blocked, report)
        self._settle_orphan_vectors(session_id, vectors, report)
        self._commit_moves()

    # --- the session's open as a barrier ---------------------------------------------------------
    def _pending_opens(self, files: list[StoredFile]) -> dict[str, Any]:
        """The pending `open` events among `files`, decoded, by file name."""
        from agent_memory.outbox import records
        opens = {}
        for file in files:
            if not file.name.endswith(names.EVENT_EXT):
                continue
            try:
                event = self.store.load(file, "event")
            except (OSError, records.RecordError):
                continue  # _apply_event sets it aside
            if event.event == "open":
                opens[file.name] = event
        return opens

    def _in_written_order(self, files: list[StoredFile],
                          opens: dict[str, Any]) -> list[StoredFile]:
        """`files` in name order, except a message back-dated (`--occurred-at`) to before a
        pending open written before it: it goes right after that open, so it can never reach
        the logger ahead of the event that decides whose session it joins."""
        if not opens:
            return files
        from agent_memory.outbox import records
        last_open = max(opens)
        order = {f.name: (f.name,) for f in files}
        for file in files:
            if file.name >= last_open or not file.name.endswith(names.MESSAGE_EXT):
                continue
            try:
                written_at = self.store.load(file, "message").written_at
            except (OSError, records.RecordError):
                continue  # _load_message sets it aside
            behind = [name for name, event in opens.items()
                      if name > file.name and event.occurred_at <= written_at]
            if behind:
                order[file.name] = (max(behind), file.name)
        return sorted(files, key=lambda f: order[f.name])

    def _refused_open(self, session_id: str, pending_opens: dict[str, Any]) -> _Barrier | None:
        """The session's latest `open` when it was quarantined after the logger refused it
        (and no later open is pending or confirmed): everything written behind it follows it."""
        from agent_memory.outbox import records
        latest = None
        for file in self.store.files(session_id, names.EVENT_EXT, (QUARANTINED,)):
            try:
                event = self.store.load(file, "event")
            except (OSError, records.RecordError):
                continue
            if event.event == "open" and (latest is None or file.name > latest[0].name):
                latest = (file, event)
        if latest is None:
            return None
        file, event = latest
        if any(name > file.name for name in pending_opens):
            return None
        for confirmed in self.store.files(session_id, names.EVENT_EXT, (IMPORTED,)):
            if confirmed.name > file.name and self._is_open(confirmed):
                return None
        reason = self.store.reason_of(file)
        if reason.get("reason") != "refused":
            return None  # set aside unread (damaged): nothing says the logger refused it
        return _Barrier(event, file.name, file.relpath, reason.get("code"),
                        reason.get("statement"), final=True)

    def _is_open(self, file: StoredFile) -> bool:
        from agent_memory.outbox import records
        try:
            return self.store.load(file, "event").event == "open"
        except (OSError, records.RecordError):
            return False

    def _hold(self, file: StoredFile, item_id: str, barrier: _Barrier, report: SessionReport,
              vector: StoredFile | None = None) -> None:
        """A file written behind a refused open: it waits for it, or follows it to quarantine."""
        if barrier.final:
            self._quarantine(file, vector, {"reason": "session_refused", "code": barrier.code,
                                            "statement": barrier.reason(),
                                            "event": barrier.relpath}, report)
            return
        report.record(file.name, Outcome(Outcome.WAITING, waits_for=[barrier.event_id],
                                         reason=barrier.reason()))
        report.waiting.append({"message_id" if file.name.endswith(names.MESSAGE_EXT)
                               else "event_id": item_id, "file": file.relpath,
                               "waits_for": [barrier.event_id], "reason": barrier.reason()})

    def _held_back(self, file: StoredFile, item_id: str,
                   report: SessionReport) -> dict[str, Any] | None:
        """An item refused less than `refused_holdoff` seconds ago is not sent again yet (see
        Limits): reported as refused, with its last refusal (returned), else None."""
        held = self.state.refused_within(item_id, self.limits.refused_holdoff)
        if held is None:
            return None
        report.record(file.name, Outcome(Outcome.REFUSED, code=held.get("code"),
                                         statement=held.get("statement")))
        report.failed.append({"message_id" if file.name.endswith(names.MESSAGE_EXT)
                              else "event_id": item_id, "file": file.relpath,
                              "code": held.get("code"), "statement": held.get("statement"),
                              "refusals": held.get("count"), "held_until_retry": True,
                              "quarantine_after": self.limits.quarantine_after})
        return held

    def _load_message(self, file: StoredFile, report: SessionReport) -> _Item | None:
        """Decode a pending `.msg`; an unreadable one is set aside at once (never a crash loop)."""
        try:
            data = self.store.read_bytes(file)
        except FileNotFoundError:
            return None  # moved by a concurrent syncer
        except UnsafeFile as exc:  # a symlink, a FIFO, a huge file: never read, set aside
            self._quarantine(file, None, {"reason": "unsafe", "detail": exc.reason}, report)
            return None
        from agent_memory.outbox import records
        try:
            record = records.decode(data, records.MessageRecord)
            if record.message_id != file.item_id or record.session_id != file.session_id:
                raise records.RecordError("record does not match its file name")
        except records.RecordError as exc:
            self._quarantine(file, None, {"reason": "unreadable", "detail": str(exc)}, report)
            return None
        return _Item(file, record, len(data))

    # --- events --------------------------------------------------------------------------------
    async def _apply_event(self, file: StoredFile, report: SessionReport,
                           event: Any = None) -> _Barrier | None:
        """Send one session event; the barrier it becomes when it is an `open` the logger
        refused, else None."""
        from agent_memory.outbox import records
        if event is None:
            try:
                event = self.store.load(file, "event")
            except FileNotFoundError:
                return None
            except UnsafeFile as exc:
                self._quarantine(file, None, {"reason": "unsafe", "detail": exc.reason}, report)
                return None
            except records.RecordError as exc:
                self._quarantine(file, None, {"reason": "unreadable", "detail": str(exc)},
                                 report)
                return None
        held = self._held_back(file, file.item_id, report)
        if held is not None:
            if event.event != "open":
                return None
            return _Barrier(event, file.name, file.relpath, held.get("code"),
                            held.get("statement"), final=False)
        try:
            answer = await self._send_event(event)
        except Refused as exc:
            quarantined = self._refused(file, file.item_id, exc, report)
            if event.event != "open":
                return None
            if quarantined:
                self._commit_moves()
                file = StoredFile(file.session_id, QUARANTINED, file.name)
            return _Barrier(event, file.name, file.relpath, exc.code, exc.statement,
                            final=quarantined)
        self._confirmed(file, None, file.item_id, answer, report)
        self._commit_moves()
        report.events_applied += 1
        return None

    async def _send_event(self, event: Any) -> Any:
        if event.event == "open":
            return await self.link.call(
                "open_session", session_id=event.session_id, project_id=event.project_id,
                dialogue_kind=tuple(event.dialogue_kind), participants=event.participants,
                title=event.title, metadata=event.metadata)
        if event.event in FORGETTING:
            return await forwarding_of_forgetting(
                self.link, event, lambda message_id: self._pending_message(event.session_id,
                                                                           message_id))
        command = "close_session" if event.event == "close" else "reopen_session"
        return await self.link.call(command, session_id=event.session_id)

    def _pending_message(self, session_id: str, message_id: str) -> bool:
        """Does the message still wait in the outbox (to be sent behind an event)?"""
        suffix = f"-{message_id}{names.MESSAGE_EXT}"
        return any(f.name.endswith(suffix)
                   for f in self.store.files(session_id, names.MESSAGE_EXT, (PENDING,)))

    async def _open_from_store(self, session_id: str) -> bool:
        """Open a session the logger does not know from its `open` event in the store
        (pending or imported). False when the store has none."""
        events, _bad = self.store.events(session_id)
        opened = [e for _f, e in events if e.event == "open"]
        if not opened:
            return False
        try:
            await self._send_event(opened[0])
        except Refused:
            return False
        return True

    # --- messages ------------------------------------------------------------------------------
    async def _flush(self, batch: list[_Item], vectors: dict[str, StoredFile],
                     blocked: set[str], report: SessionReport) -> None:
        if not batch:
            return
        outcomes = await self._send(batch)
        unknown = [i for i, (item, out) in enumerate(zip(batch, outcomes))
                   if not out.get("success") and out.get("code") == SESSION_UNKNOWN]
        if unknown and await self._open_from_store(batch[0].file.session_id):
            retried = await self._send([batch[i] for i in unknown])
            for index, outcome in zip(unknown, retried):
                outcomes[index] = outcome
        failed_here: set[str] = set()
        for item, outcome in zip(batch, outcomes):
            if outcome.get("purged"):
                continue  # hard-deleted while it waited: gone, never sent
            if outcome.get("success"):
                self._confirmed(item.file, vectors.get(item.message_id), item.message_id,
                                outcome, report)
                continue
            code = outcome.get("code") or "IMPORT_ITEM_FAILED"
            statement = outcome.get("statement") or "the logger did not store this item"
            if code == RELATION_INADMISSIBLE and item.targets & (failed_here | blocked):
                waits_for = sorted(item.targets & (failed_here | blocked))
                blocked.add(item.message_id)
                report.record(item.file.name, Outcome(Outcome.WAITING, waits_for=waits_for))
                report.waiting.append({"message_id": item.message_id, "file": item.file.relpath,
                                       "waits_for": waits_for})
                continue
            failed_here.add(item.message_id)
            blocked.add(item.message_id)
            self._refused(item.file, item.message_id, Refused(code, statement), report,
                          vector=vectors.get(item.message_id))
        self._commit_moves()
        self._progress("batch", {"session_id": report.session_id, "items": len(batch),
                                 "imported": report.imported})

    async def _send(self, batch: list[_Item]) -> list[dict[str, Any]]:
        """One outcome dict per item. A batch of one goes through append_message (direct, and
        its answer carries the sequence number); larger ones through messages_import. What a
        purge took meanwhile (sync.forgetting) is not sent: its outcome says so."""
        kept = purged_meanwhile(self.store, batch)
        if len(kept) < len(batch):
            sent = iter(await self._send(kept) if kept else [])
            return [next(sent) if item in kept else {"message_id": item.message_id,
                                                     "success": False, "purged": True}
                    for item in batch]
        if len(batch) == 1:
            try:
                answer = await self.link.call("append_message", **batch[0].record.import_item())
            except Refused as exc:
                return [{"message_id": batch[0].message_id, "success": False, "code": exc.code,
                         "statement": exc.statement}]
            return [{**(answer if isinstance(answer, dict) else {}), "success": True}]
        return await self.link.import_batch([item.record.import_item() for item in batch])

    # --- bookkeeping ---------------------------------------------------------------------------
    def _confirmed(self, file: StoredFile, vector: StoredFile | None, item_id: str,
                   answer: Any, report: SessionReport) -> None:
        if isinstance(answer, dict):
            answer = {k: v for k, v in answer.items() if k != "success"}
        if vector is not None and self._set_aside_if_damaged(vector, report):
            vector = None
        for part in (file, vector):
            if part is not None:
                self._move(part, IMPORTED)
        self.state.forget(item_id)
        report.record(file.name, Outcome(Outcome.CONFIRMED, answer=answer))
        if file.name.endswith(names.MESSAGE_EXT):
            report.imported += 1

    def _refused(self, file: StoredFile, item_id: str, refusal: Refused, report: SessionReport,
                 vector: StoredFile | None = None) -> bool:
        """Count a refusal; True when it moved the file to `.quarantine/`."""
        count = self.state.refused(item_id, refusal.code, refusal.statement)
        if count >= self.limits.quarantine_after:
            self._quarantine(file, vector, {"reason": "refused", "code": refusal.code,
                                            "statement": refusal.statement,
                                            "refusals": count}, report)
            self.state.forget(item_id)
            return True
        report.record(file.name, Outcome(Outcome.REFUSED, code=refusal.code,
                                         statement=refusal.statement))
        report.failed.append({"message_id" if file.name.endswith(names.MESSAGE_EXT)
                              else "event_id": item_id, "file": file.relpath,
                              "code": refusal.code, "statement": refusal.statement,
                              "refusals": count,
                              "quarantine_after": self.limits.quarantine_after})
        return False

    def _quarantine(self, file: StoredFile, vector: StoredFile | None, reason: dict[str, Any],
                    report: SessionReport) -> None:
        reason_path = self.store.write_reason(file, {"file": file.name, **reason})
        for part in (file, vector):
            if part is not None:
                self._move(part, QUARANTINED)
        report.record(file.name, Outcome(Outcome.QUARANTINED, **reason))
        report.quarantined.append({"file": file.relpath, "reason_file": reason_path, **reason})

    def _set_aside_if_damaged(self, vector: StoredFile, report: SessionReport) -> bool:
        """A `.emb` about to follow its confirmed message is checked once: a damaged one (not a
        regular file, not decodable, another message's, a dimension its values disagree with)
        goes to `.quarantine/` with a reason, alone; the message is not held back by it."""
        from agent_memory.outbox import records
        from agent_memory.outbox.verify import vector_problem
        try:
            data = self.store.read_bytes(vector)
        except FileNotFoundError:
            return False  # moved by a concurrent syncer
        except UnsafeFile as exc:
            reason = {"reason": "unsafe", "detail": exc.reason}
        else:
            try:
                problem = vector_problem(records.decode(data, records.VectorRecord),
                                         vector.item_id)
            except records.RecordError as exc:
                problem = f"does not decode: {exc}"
            if problem is None:
                return False
            reason = {"reason": "unreadable", "detail": problem}
        self._quarantine(vector, None, reason, report)
        return True

    def _move(self, file: StoredFile, area: str) -> None:
        """Queue a move; `_commit_moves` performs the queue with one fsync pair per area."""
        self._moves.setdefault((file.session_id, area), []).append(file)

    def _commit_moves(self) -> None:
        moves, self._moves = self._moves, {}
        for (_session_id, area), files in moves.items():
            self.store.move(files, area)

    def _settle_orphan_vectors(self, session_id: str, vectors: dict[str, StoredFile],
                               report: SessionReport) -> None:
        """A `.emb` left pending by a crash between the two moves follows its `.msg`."""
        for vector in vectors.values():
            message = names.sibling(vector.name, names.MESSAGE_EXT)
            for area in (IMPORTED, QUARANTINED):
                fd = self.store.session_fd(session_id, area)
                if fd is None:
                    continue
                try:
                    os.stat(message, dir_fd=fd, follow_symlinks=False)
                except FileNotFoundError:
                    continue
                finally:
                    os.close(fd)
                if area != IMPORTED or not self._set_aside_if_damaged(vector, report):
                    self._move(vector, area)
                break


__all__ = ["SyncEngine", "Limits", "SessionReport", "Outcome", "Unreachable", "Failed",
           "Refused"]
