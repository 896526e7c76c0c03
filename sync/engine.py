"""The sync engine: forward every pending event and message to the logger, exactly once in
effect, and move what the logger confirmed to `.imported/`. What goes when is sync.plan's to
decide (pure, tested on its own); this reads the files for it, does each step it yields
through the logger link (the port: `call` one command, `import_batch`; each event's command
from sync.events), and keeps the books (confirm, move, count refusals, quarantine).

Per session, in the order the store acknowledged the files (sync.plan.acknowledged_order:
messages as the store numbers them, so the logger numbers them alike): session events are
barriers (the batch before an event is sent first, then the event); messages go in batches
through `messages_import` (a batch of up to APPEND_UP_TO goes message by message through
`append_message`, whose answer also carries the logger's sequence number).
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
from typing import Any, Callable

from agent_memory.outbox import names
from agent_memory.outbox.atomic import UnsafeFile
from agent_memory.outbox.contract import SESSION_UNKNOWN, RELATION_INADMISSIBLE
from agent_memory.outbox.store import IMPORTED, PENDING, QUARANTINED, Store, StoredFile
from agent_memory.sync.links.failures import Failed, Refused, Unreachable
from agent_memory.sync.forgetting import (FORGETTING, complete, forwarding_of_forgetting,
                                           pending_intents, purged_meanwhile)
from agent_memory.sync import events, plan
from agent_memory.sync.links.logger import LoggerLink
from agent_memory.sync.state import SyncState


APPEND_UP_TO = 8  # a batch this small goes message by message (append_message): see _send


class Limits:
    """Batch bounds and the quarantine threshold (docs/design.md says what they are,
    CHANGELOG.md how they were chosen)."""

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

    @classmethod
    def of(cls, entry: plan.Entry) -> "_Item":
        file, record = entry.record
        return cls(file, record, entry.size)


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
    from agent_memory.outbox import entries
    return [{"event": "stray", "entry": found["entry"], "kind": found["kind"],
             "message": f"{found['entry']}: a {found['kind']} that {entries.STRAY_PROBLEM}"}
            for found in entries.strays(store)]


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
        """The session's plan (sync.plan), done step by step: the plan decides what goes
        when from what the files say and the logger answered; this does each step."""
        files = self.store.files(session_id, None, (PENDING,))
        vectors = {f.item_id: f for f in files if f.name.endswith(names.VECTOR_EXT)}
        events = self._pending_events(files)
        opens = {name: event for name, event in events.items()
                 if event is not None and event.event == "open"}
        files = self._acknowledged_order(files, events)
        steps = plan.session_steps(
            self._entries(files, events), batch_items=self.limits.batch_items,
            batch_bytes=self.limits.batch_bytes, prior=self._refused_open(session_id, opens),
            held=lambda item_id: self.state.refused_within(item_id,
                                                           self.limits.refused_holdoff))
        answer = None
        while True:
            try:
                step = steps.send(answer)
            except StopIteration:
                break
            answer = await self._do(step, vectors, report)
        self._settle_orphan_vectors(session_id, vectors, report)
        self._commit_moves()

    def _entries(self, files: list[StoredFile], events: dict[str, Any]):
        """The session's pending messages and events as the plan sees them, read one at a
        time as the plan asks (a large drain keeps only a batch in memory)."""
        for file in files:
            if file.name.endswith(names.VECTOR_EXT):
                continue
            if file.name.endswith(names.EVENT_EXT):
                event, broken = events.get(file.name), None
                if event is None:
                    event, broken = self._read(file, "event")
                    if event is None and broken is None:
                        continue  # moved by a concurrent syncer
                yield plan.Entry(file.name, "event", file.item_id,
                                 event=getattr(event, "event", None),
                                 occurred_at=getattr(event, "occurred_at", None),
                                 broken=broken, record=(file, event), shown=file.relpath)
                continue
            record, broken, size = self._read_message(file)
            if record is None and broken is None:
                continue
            if broken is not None:
                yield plan.Entry(file.name, "message", file.item_id, broken=broken,
                                 record=(file, None))
                continue
            targets = {r.to_message_id for r in record.relations}
            if record.corrects_message_id:
                targets.add(record.corrects_message_id)
            yield plan.Entry(file.name, "message", file.item_id, targets=frozenset(targets),
                             size=size, written_at=record.written_at, record=(file, record))

    async def _do(self, step: Any, vectors: dict[str, StoredFile],
                  report: SessionReport) -> Any:
        """One step of the plan; the answer it takes back (SendEvent, SendBatch)."""
        file = step.entry.record[0] if not isinstance(step, plan.SendBatch) else None
        vector = vectors.get(step.entry.item_id) if file is not None and \
            step.entry.kind == "message" else None
        if isinstance(step, plan.SendBatch):
            blocked: set[str] = set()
            await self._flush([_Item.of(e) for e in step.entries], vectors, blocked, report)
            return blocked
        if isinstance(step, plan.SendEvent):
            return await self._apply_event(file, step.entry.record[1], report)
        if isinstance(step, plan.SetAside):
            self._quarantine(file, None, step.reason, report)
        elif isinstance(step, plan.Hold):
            self._hold(file, step.entry.item_id, step.barrier, report, vector)
        elif isinstance(step, plan.HeldBack):
            self._report_held(file, step.entry.item_id, step.refusal, report)
        elif isinstance(step, plan.Wait):
            report.record(file.name, Outcome(Outcome.WAITING, waits_for=step.waits_for))
            report.waiting.append({"message_id": step.entry.item_id, "file": file.relpath,
                                   "waits_for": step.waits_for})
        return None

    # --- the order, and the session's open as a barrier -----------------------------------------
    def _pending_events(self, files: list[StoredFile]) -> dict[str, Any]:
        """The pending events among `files`, decoded, by file name (None: it cannot be read;
        _entries reads it again and the plan sets it aside)."""
        from agent_memory.outbox import records
        events = {}
        for file in files:
            if not file.name.endswith(names.EVENT_EXT):
                continue
            try:
                events[file.name] = self.store.load(file, "event")
            except (OSError, records.RecordError):
                events[file.name] = None
        return events

    def _acknowledged_order(self, files: list[StoredFile],
                            events: dict[str, Any]) -> list[StoredFile]:
        """`files` (vectors left out) in the order they go: the order the store acknowledged
        them (sync.plan.acknowledged_order), from each message's sequence number and write
        time (sync.acknowledged) and each event's kind and moment."""
        from agent_memory.sync.acknowledged import acknowledged
        kept = [f for f in files if not f.name.endswith(names.VECTOR_EXT)]
        numbers = acknowledged(self.store, [f for f in kept if f.name.endswith(names.MESSAGE_EXT)])
        moments = {name: (getattr(event, "event", None), getattr(event, "occurred_at", None))
                   for name, event in events.items()}
        by_name = {f.name: f for f in kept}
        return [by_name[name] for name in plan.acknowledged_order(
            [f.name for f in kept], moments, numbers)]

    def _refused_open(self, session_id: str,
                      pending_opens: dict[str, Any]) -> plan.Barrier | None:
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
        return plan.Barrier(event.event_id, event.occurred_at, file.name, file.relpath,
                            reason.get("code") or "REFUSED",
                            reason.get("statement") or "refused by the logger", final=True)

    def _is_open(self, file: StoredFile) -> bool:
        from agent_memory.outbox import records
        try:
            return self.store.load(file, "event").event == "open"
        except (OSError, records.RecordError):
            return False

    def _hold(self, file: StoredFile, item_id: str, barrier: plan.Barrier,
              report: SessionReport,
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

    def _report_held(self, file: StoredFile, item_id: str, held: dict[str, Any],
                     report: SessionReport) -> None:
        """An item refused less than `refused_holdoff` seconds ago is not sent again yet (see
        Limits): reported as refused, with its last refusal."""
        report.record(file.name, Outcome(Outcome.REFUSED, code=held.get("code"),
                                         statement=held.get("statement")))
        report.failed.append({"message_id" if file.name.endswith(names.MESSAGE_EXT)
                              else "event_id": item_id, "file": file.relpath,
                              "code": held.get("code"), "statement": held.get("statement"),
                              "refusals": held.get("count"), "held_until_retry": True,
                              "quarantine_after": self.limits.quarantine_after})

    def _read_message(self, file: StoredFile) -> tuple[Any, dict[str, Any] | None, int]:
        """(record, None, size) of a pending `.msg`; (None, why, 0) when it cannot be read
        (the plan sets it aside at once: never a crash loop); (None, None, 0) when a
        concurrent syncer moved it."""
        try:
            data = self.store.read_bytes(file)
        except FileNotFoundError:
            return None, None, 0
        except UnsafeFile as exc:  # a symlink, a FIFO, a huge file: never read, set aside
            return None, {"reason": "unsafe", "detail": exc.reason}, 0
        from agent_memory.outbox import records
        try:
            record = records.decode(data, records.MessageRecord)
            if record.message_id != file.item_id or record.session_id != file.session_id:
                raise records.RecordError("record does not match its file name")
        except records.RecordError as exc:
            return None, {"reason": "unreadable", "detail": str(exc)}, 0
        return record, None, len(data)

    def _read(self, file: StoredFile, kind: str) -> tuple[Any, dict[str, Any] | None]:
        """(record, None), (None, why it cannot be read), or (None, None) when moved."""
        from agent_memory.outbox import records
        try:
            return self.store.load(file, kind), None
        except FileNotFoundError:
            return None, None
        except UnsafeFile as exc:
            return None, {"reason": "unsafe", "detail": exc.reason}
        except records.RecordError as exc:
            return None, {"reason": "unreadable", "detail": str(exc)}

    # --- events --------------------------------------------------------------------------------
    async def _apply_event(self, file: StoredFile, event: Any,
                           report: SessionReport) -> plan.Refusal | None:
        """Send one session event; a plan.Refusal when the logger refused it, else None."""
        try:
            answer = await self._send_event(event)
        except Refused as exc:
            quarantined = self._refused(file, file.item_id, exc, report)
            if quarantined:
                self._commit_moves()
                file = StoredFile(file.session_id, QUARANTINED, file.name)
            return plan.Refusal(file.relpath, exc.code, exc.statement, quarantined)
        self._confirmed(file, None, file.item_id, answer, report)
        self._commit_moves()
        report.events_applied += 1
        return None

    async def _send_event(self, event: Any) -> Any:
        """The event's logger command (sync.events), through the link (the logger port)."""
        if event.event in FORGETTING:
            return await forwarding_of_forgetting(
                self.link, event, lambda message_id: self._pending_message(event.session_id,
                                                                           message_id))
        command, params = events.call_of(event)
        return await self.link.call(command, **params)

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
        """One outcome dict per item. A small batch (up to APPEND_UP_TO items: the agent's
        rounds, a write's inline forward) goes item by item through append_message, in order
        (each a direct call of a few milliseconds whose answer carries the sequence number,
        where a `messages_import` job takes 0.1 to 0.2 s however few its items); larger ones
        through messages_import. What a purge took meanwhile (sync.forgetting) is not sent:
        its outcome says so."""
        kept = purged_meanwhile(self.store, batch)
        if len(kept) < len(batch):
            sent = iter(await self._send(kept) if kept else [])
            return [next(sent) if item in kept else {"message_id": item.message_id,
                                                     "success": False, "purged": True}
                    for item in batch]
        if len(batch) <= APPEND_UP_TO:
            outcomes = []
            for item in batch:
                try:
                    answer = await self.link.call("append_message", **item.record.import_item())
                except Refused as exc:
                    outcomes.append({"message_id": item.message_id, "success": False,
                                     "code": exc.code, "statement": exc.statement})
                    continue
                outcomes.append({**(answer if isinstance(answer, dict) else {}),
                                 "success": True})
            return outcomes
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
            area = self.store.area_of(session_id, message, (IMPORTED, QUARANTINED))
            if area is not None and (area != IMPORTED
                                     or not self._set_aside_if_damaged(vector, report)):
                self._move(vector, area)


__all__ = ["SyncEngine", "Limits", "SessionReport", "Outcome", "Unreachable", "Failed",
           "Refused"]
