"""One command at a time, in this process, by the command line's own code: a method's typed
values become the command's options as the parse would make them, without a command line
(cli.perform.perform_values, as an MCP tool's call); `command(*argv)` goes through `cli.main.run`.
The same validation, outbox write, forwarding through the project's agent (started after the
command in auto mode, as the CLI does), budgets and answers.

The CLI's code assumes one command per process at a time, so calls from any thread (or event
loop) are serialized by one process-wide lock. The process keeps its configuration and stores
warm between calls (cli.warm), as the MCP server does."""

from __future__ import annotations

import json
import threading
from contextlib import ExitStack, contextmanager
from typing import Any, Container, Iterator

_LOCK = threading.RLock()
_WARM = None  # cli.warm.Warm, made by the first call: the process's configuration and stores


def _warm():
    global _WARM
    if _WARM is None:
        from agent_memory.cli.warm import Warm
        _WARM = Warm()
    return _WARM


def run(argv: list[str]) -> tuple[int, dict[str, Any]]:
    """(exit code, the command's JSON answer as a dict)."""
    from agent_memory.cli import agent_client
    from agent_memory.cli.main import run as run_argv
    lines: list[str] = []
    with _LOCK:
        agent_client.reap_started()
        rc = run_argv(argv, lines.append, warm=_warm())
    if len(lines) != 1:  # only --help prints otherwise; no method asks for it
        return 1, {"success": False, "error": {
            "code": "INTERNAL_ERROR", "message": f"the command answered {len(lines)} lines"}}
    return rc, json.loads(lines[0])


def run_values(words: list[str], values: dict[str, Any], global_values: dict[str, Any]
               ) -> tuple[int, dict[str, Any]]:
    """(exit code, the answer as a dict) of the command `words` names, called with `values` by
    option name and the global options' `global_values` by dest."""
    from agent_memory.cli import agent_client, output, typed
    from agent_memory.cli.errors import CliError
    from agent_memory.cli.perform import perform_values
    try:
        command = typed.command(words)
    except CliError as exc:
        return exc.exit_code, output.failure_envelope(exc)
    with _LOCK:
        agent_client.reap_started()
        return perform_values(command, values, global_values, warm=_warm())


class together:
    """`with runner.together(project_root, config, store_mode):` the commands run inside, in
    this thread, create their files with one fsync of each directory as it ends
    (outbox.store.Store.together): for a batch of writes whose results are handed back only
    after it. Where nothing is forwarded (the file store: no logger configured, or `--store
    file`), the batch is also one transaction of the store's ledger (each write's joins it;
    with a logger, each write keeps its own, since the project's agent moves what it
    forwards meanwhile). The store is checked once, as the batch begins (cli.warm's pin). The
    process's other threads wait meanwhile (their writes must be synced before they answer)."""

    def __init__(self, project_root: str | None, config: str | None = None,
                 store_mode: str = "auto") -> None:
        self.project_root = project_root
        self.config = config
        self.store_mode = store_mode
        self._held: ExitStack | None = None
        self._store = None  # while the batch is one transaction of the store's ledger
        self._batch = None  # outbox.store's together: what the batch appended

    def __enter__(self) -> "together":
        from agent_memory.outbox.availability import StoreUnavailable
        from agent_memory.outbox.ledger import LedgerUnavailable
        with ExitStack() as held:  # all let go again if entering fails
            held.enter_context(_LOCK)
            try:
                store = held.enter_context(_warm().pinned(_root(self.project_root)))
            except (StoreUnavailable, OSError):
                store = None  # each write then says why, and syncs itself
            if store is not None:
                if not self._forwards():
                    try:  # entered before the fsyncs' span: commits after the directories'
                        held.enter_context(_LedgerBatch(store.ledger.transaction(write=True)))
                        self._store = store
                    except LedgerUnavailable:
                        pass  # each write does without it, as it would alone
                self._batch = store.together()
                held.enter_context(self._batch)
            self._held = held.pop_all()
        return self

    def revision(self, session_id: str) -> str | None:
        """The session's revision now, inside the batch (outbox.store.Store.revision), when
        the batch is one transaction of the ledger (no other writer can change the session
        meanwhile); else None."""
        if self._store is None:
            return None
        try:
            return self._store.revision(session_id)
        except (ValueError, OSError):
            return None

    def appended(self) -> list[dict[str, Any]]:
        """The messages the batch appended so far, each as a full-mode read lists it
        (outbox.views.message_entry of the file as written)."""
        if self._batch is None:
            return []
        from agent_memory.outbox import records, views
        from agent_memory.outbox.store import StoredMessage
        return [views.message_entry(StoredMessage(
            file, records.decode(data, records.KINDS["message"])))
            for file, data in self._batch.appended]

    def _forwards(self) -> bool:
        """May a write of the batch be forwarded (a logger configured, not `--store file`)?"""
        if self.store_mode == "file":
            return False
        try:
            return _warm().config(self.config).logger is not None
        except Exception:  # noqa: BLE001 - a bad configuration: each write says so itself
            return True

    def __exit__(self, *exc: object) -> None:
        held, self._held = self._held, None
        if held is not None:
            held.__exit__(*exc)


class _LedgerBatch:
    """The batch's ledger transaction: one that cannot commit leaves the files written (the
    ledger catches up with them at its next use)."""

    def __init__(self, transaction: Any) -> None:
        self.transaction = transaction

    def __enter__(self) -> None:
        self.transaction.__enter__()

    def __exit__(self, *exc: object) -> bool:
        from agent_memory.outbox.ledger import LedgerUnavailable
        try:
            self.transaction.__exit__(*exc)
        except LedgerUnavailable:
            pass
        return False


@contextmanager
def holding(project_root: str | None) -> Iterator[None]:
    """`with runner.holding(project_root):` the calls inside, from this thread, run as one:
    the process's other threads wait, and the project's store is checked once, as it
    begins (cli.warm's pin). For a reader asking the revision, then what is new."""
    from agent_memory.outbox.availability import StoreUnavailable
    with _LOCK, ExitStack() as held:
        try:
            held.enter_context(_warm().pinned(_root(project_root)))
        except (StoreUnavailable, OSError):
            pass  # each call says why
        yield


def _root(project_root: str | None) -> str:
    import os
    from agent_memory.outbox.availability import git_toplevel
    if project_root is None:
        cwd = os.getcwd()
        return git_toplevel(cwd) or cwd
    return project_root


def since(project_root: str | None, session_id: str, start: int, known: str | None = None,
          held: Container[str] = ()) -> tuple[str, list[dict[str, Any]]] | None:
    """(the session's revision, its messages numbered `start` or later as the project's files
    say: what `--store file read --mode full --start START` lists, every block at once), read
    together so they agree, for a reader that keeps a copy and takes only what is new
    (integrations.dialogue): no message while the revision is still `known`, none whose id
    it `held` already. None when the store's ledger cannot say. StoreUnavailable and
    ValueError as the store raises them."""
    from agent_memory.outbox.window import since as window_since
    with _LOCK:
        return window_since(_warm().store(_root(project_root)), session_id, start, known,
                            held)


def revision(project_root: str | None, session_id: str) -> str | None:
    """The session's revision in the project's store (outbox.store.Store.revision): a token
    that changes whenever a read of the session may answer otherwise; None when the store or
    its ledger cannot say (the caller reads the session again)."""
    from agent_memory.outbox.availability import StoreUnavailable
    from agent_memory.outbox.contract import is_valid_session_id
    if not is_valid_session_id(session_id):
        return None
    with _LOCK:
        try:
            return _warm().store(_root(project_root)).revision(session_id)
        except (StoreUnavailable, OSError):
            return None


def answer(argv: list[str]) -> tuple[str, Any]:
    """(store, data) of the command line `argv` that succeeded; its failure raised as an
    AgentMemoryError (KeyboardInterrupt when it was interrupted)."""
    return answer_of(*run(argv))


def answer_of(rc: int, envelope: dict[str, Any]) -> tuple[str, Any]:
    """(store, data) of a command's envelope that says success; else its failure raised."""
    if envelope.get("success"):
        return envelope.get("store", "file"), envelope.get("data")
    error = envelope.get("error") or {}
    if error.get("code") == "INTERRUPTED":
        raise KeyboardInterrupt
    from agent_memory.api.errors import from_answer
    raise from_answer(rc, error)
