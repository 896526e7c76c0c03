"""`agent_memory.Memory`: the commands as methods, run in this process by the CLI's own code
(api.runner), with the CLI's defaults: the project is `project_root` or the working directory's
(its git top level), the configuration `config` or the one the CLI finds.

A method's named parameters are its command's options (`block_size` for `--block-size`); any
other keyword is passed on as an option of that name too, so an option the command line gains
works here before the method names it. The values become the command's options as the command
line's parse would make them, checked by its own checks, without a command line in between
(cli.perform.perform_values): what it would refuse is refused (UsageError, exit 2)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from agent_memory.api import runner
from agent_memory.api.results import (Answer, Forgotten, Info, LeafPage, Marked, Message,
                                      MessagePage, PreviewPage, RelationPage, SearchPage,
                                      SessionPage, SessionState, Status, SyncReport,
                                      WorkingSet, WriteResult)

Relation = str | tuple[str, str]  # "reply:<id>" or ("reply", "<id>")


class Memory:
    """A project's memory. Cheap to create (nothing is opened until a call); safe to share
    between threads (calls run one at a time in the process)."""

    def __init__(self, project_root: str | os.PathLike | None = None, config: str | None = None,
                 *, store: str = "auto", no_agent: bool = False) -> None:
        self.project_root = None if project_root is None else os.path.abspath(project_root)
        self.config = None if config is None else os.path.abspath(config)
        self.store = store
        self.no_agent = no_agent

    def __repr__(self) -> str:
        return f"Memory(project_root={self.project_root!r}, config={self.config!r})"

    # --- the plumbing ---------------------------------------------------------------------------
    def global_values(self) -> dict[str, Any]:
        """The global options every call carries, by their parsed names."""
        return {"config": self.config, "project_root": self.project_root,
                "store": self.store, "no_agent": self.no_agent}

    def global_argv(self) -> list[str]:
        """The global options as a command line, for `command`."""
        from agent_memory.cli.argv import options
        return options([], config=self.config, project_root=self.project_root,
                       store=None if self.store == "auto" else self.store,
                       no_agent=self.no_agent)

    def command(self, *argv: str) -> Answer:
        """Any command by its argv after the global options (`memory.command("verify")`)."""
        return Answer(*runner.answer([*self.global_argv(), *argv]))

    def _call(self, command: list[str], **values: Any) -> Answer:
        """The command `command` names with `values` by option name (a positional's too)."""
        return Answer(*runner.answer_of(*runner.run_values(command, values,
                                                           self.global_values())))

    def _typed(self, kind, command: list[str], **values: Any):
        """The command's answer as the result type `kind` (api.results)."""
        answer = self._call(command, **values)
        return kind.from_answer(answer.store, answer.data)

    # --- the store and sessions -----------------------------------------------------------------
    def init_store(self) -> Answer:
        """`store init`: create `.agent-memory/` (and its git-ignore rule)."""
        return self._call(["store", "init"])

    def open_session(self, session_id: str, project_id: str, participants: Sequence[str],
                     dialogue_kind: str | Sequence[str] = ("human", "model"),
                     title: str | None = None,
                     metadata: dict[str, Any] | None = None, **options: Any) -> SessionState:
        """`session open`. Opening it again with the same attributes is a repeat;
        with others it is refused (SESSION_CONFLICT)."""
        kinds = dialogue_kind if isinstance(dialogue_kind, str) else "-to-".join(dialogue_kind)
        return self._typed(SessionState, ["session", "open"], session_id=session_id,
                           project_id=project_id, dialogue_kind=kinds,
                           participant=list(participants), title=title, metadata=metadata,
                           **options)

    def close_session(self, session_id: str, **options: Any) -> SessionState:
        return self._typed(SessionState, ["session", "close"], session_id=session_id,
                           **options)

    def reopen_session(self, session_id: str, **options: Any) -> SessionState:
        return self._typed(SessionState, ["session", "reopen"], session_id=session_id,
                           **options)

    def delete_session(self, session_id: str, *, confirm: str, **options: Any) -> Forgotten:
        """`session delete`: irreversible (its texts are purged); `confirm` is its id again."""
        return self._typed(Forgotten, ["session", "delete"], session_id=session_id,
                           confirm=confirm, **options)

    def sessions(self, **filters: Any) -> SessionPage:
        """`sessions`: project_id, lifecycle, participant, dialogue_kind, block_size,
        continuation."""
        answer = self._call(["sessions"], **filters)
        return SessionPage.from_answer(answer.store, answer.data)

    # --- writing and reading --------------------------------------------------------------------
    def write(self, session_id: str, text: str, *, sender_kind: str, sender_identity: str,
              receiver_kind: str, receiver_identity: str, priority: int | None = None,
              message_id: str | None = None, occurred_at: str | None = None,
              relations: Iterable[Relation] = (), corrects: str | None = None,
              attributes: dict[str, Any] | None = None, wait: float | None = None,
              embed_budget: float | None = None, **options: Any) -> WriteResult:
        """`write`: the message lands in the outbox first; then it is forwarded (or waits)."""
        relation = [r if isinstance(r, str) else f"{r[0]}:{r[1]}" for r in relations]
        answer = self._call(
            ["write"], session_id=session_id, sender_kind=sender_kind,
            sender_identity=sender_identity, receiver_kind=receiver_kind,
            receiver_identity=receiver_identity, text=text, priority=priority,
            message_id=message_id, occurred_at=occurred_at, relation=relation,
            corrects=corrects, attributes=attributes, wait=wait, embed_budget=embed_budget,
            **options)
        return WriteResult.from_answer(answer.store, answer.data)

    def read(self, session_id: str, *, start: int | None = None, block_size: int | None = None,
             continuation: str | None = None, mode: str | None = None,
             show_deleted: bool = False, **options: Any) -> MessagePage:
        """`read`: a window of the session's messages in arrival order."""
        answer = self._call(["read"], session_id=session_id, start=start,
                            block_size=block_size, continuation=continuation, mode=mode,
                            show_deleted=show_deleted, **options)
        return MessagePage.from_answer(answer.store, answer.data)

    def messages(self, session_id: str, *, block_size: int = 1000,
                 **options: Any) -> Iterator[Message]:
        """Every message of the session in arrival order, page after page (`read`)."""
        continuation = None
        while True:
            page = self.read(session_id, block_size=block_size, continuation=continuation,
                             **options)
            yield from page.messages
            if not page.more or not page.continuation:
                return
            continuation = page.continuation

    def revision(self, session_id: str) -> str | None:
        """A token that changes whenever what a read of the session answers from this
        project's store may have changed: its part after the dot for each new message (a
        correction too), its part before for anything else (a deletion, a mark, a message set
        aside, a session event). None when the store cannot tell. For readers that keep a copy of a session
        (the framework sessions) and read only what is new."""
        return runner.revision(self.project_root, session_id)

    def get(self, message_id: str, **options: Any) -> Message:
        """`get`: one message by id (NotFoundError when neither side holds it)."""
        answer = self._call(["get"], message_id=message_id, **options)
        return Message.from_entry(answer.store, answer.data)

    def preview(self, **options: Any) -> PreviewPage:
        """`read --preview`: session_id, caller, recipient, period_start, period_end,
        page_offset, page_size, preview_size, show_deleted."""
        return self._typed(PreviewPage, ["read"], preview=True, **options)

    def search(self, query: str, scope: str, target: str | None = None,
               **options: Any) -> SearchPage:
        """`search`: messages closest in meaning to `query` (scope session, project or
        all_projects; page_size, offset, filters, mode, ranking)."""
        answer = self._call(["search"], query=query, scope=scope, target=target, **options)
        return SearchPage.from_answer(answer.store, answer.data)

    def working_set(self, session_id: str, *, anchor_text: str | None = None,
                    anchor_message_id: str | None = None, **options: Any) -> WorkingSet:
        """`working-set`: the session's latest messages and those closest to an anchor."""
        answer = self._call(["working-set"], session_id=session_id, anchor_text=anchor_text,
                            anchor_message_id=anchor_message_id, **options)
        return WorkingSet.from_answer(answer.store, answer.data)

    # --- navigation -----------------------------------------------------------------------------
    def relations(self, session_id: str, **options: Any) -> RelationPage:
        return self._typed(RelationPage, ["relations"], session_id=session_id, **options)

    def path(self, session_id: str, node_id: str, **options: Any) -> MessagePage:
        """`path`: from the node back to its line's root (`messages`)."""
        answer = self._call(["path"], session_id=session_id, node_id=node_id, **options)
        return MessagePage.from_answer(answer.store, answer.data, "path")

    def leaves(self, session_id: str, **options: Any) -> LeafPage:
        return self._typed(LeafPage, ["leaves"], session_id=session_id, **options)

    def graph(self, session_id: str, anchor: str, **options: Any) -> MessagePage:
        """`graph`: the anchor and what continues from it, level by level (`messages`, each
        with its `level`; the relations among them in `data`)."""
        answer = self._call(["graph"], session_id=session_id, anchor=anchor, **options)
        return MessagePage.from_answer(answer.store, answer.data, "nodes")

    def info(self, section: str | None = None, **options: Any) -> Info:
        return self._typed(Info, ["info"], section=section, **options)

    # --- forgetting -----------------------------------------------------------------------------
    def delete(self, message_id: str, mode: str, **options: Any) -> Forgotten:
        """`delete`: mode "soft" (hidden) or "hard" (its text purged here and at the logger)."""
        answer = self._call(["delete"], message_id=message_id, mode=mode, **options)
        return Forgotten.from_answer(answer.store, answer.data)

    def mark(self, *message_ids: str, unmark: bool = False, **options: Any) -> Marked:
        """`mark`: set (or clear, `unmark`) the soft-deletion flag of messages, all or none."""
        answer = self._call(["mark"], message_ids=list(message_ids), unmark=unmark, **options)
        return Marked.from_answer(answer.store, answer.data)

    # --- the outbox and the fleet ---------------------------------------------------------------
    def status(self, probe: bool = False) -> Status:
        return self._typed(Status, ["status"], probe=probe)

    def sync(self, **options: Any) -> SyncReport:
        """`sync`: forward what waits in the outbox (through the project's agent when one
        runs)."""
        return self._typed(SyncReport, ["sync"], **options)

    def agent(self, action: str, **options: Any) -> Answer:
        """`agent start|stop|status`: the project's agent."""
        return self._call(["agent", action], **options)
