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
from typing import Any

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
    forwards meanwhile). The process's other threads wait meanwhile (their writes must be
    synced before they answer)."""

    def __init__(self, project_root: str | None, config: str | None = None,
                 store_mode: str = "auto") -> None:
        self.project_root = project_root
        self.config = config
        self.store_mode = store_mode
        self._inner = None
        self._ledger = None

    def __enter__(self) -> None:
        from agent_memory.outbox.availability import StoreUnavailable
        _LOCK.acquire()
        try:
            store = _warm().store(_root(self.project_root))
            self._inner = store.together()
            self._inner.__enter__()
        except (StoreUnavailable, OSError):
            self._inner = None  # each write then says why, and syncs itself
            return
        if self._forwards():
            return
        from agent_memory.outbox.ledger import LedgerUnavailable
        try:
            self._ledger = store.ledger.transaction(write=True)
            self._ledger.__enter__()
        except LedgerUnavailable:
            self._ledger = None  # each write does without it, as it would alone

    def _forwards(self) -> bool:
        """May a write of the batch be forwarded (a logger configured, not `--store file`)?"""
        if self.store_mode == "file":
            return False
        try:
            return _warm().config(self.config).logger is not None
        except Exception:  # noqa: BLE001 - a bad configuration: each write says so itself
            return True

    def __exit__(self, *exc: object) -> None:
        from agent_memory.outbox.ledger import LedgerUnavailable
        try:
            if self._inner is not None:
                self._inner.__exit__(*exc)  # the files' directories synced first
            if self._ledger is not None:
                try:
                    self._ledger.__exit__(*exc)
                except LedgerUnavailable:
                    pass  # the files are written; the ledger catches up at its next use
        finally:
            _LOCK.release()


def _root(project_root: str | None) -> str:
    import os
    from agent_memory.outbox.availability import git_toplevel
    if project_root is None:
        cwd = os.getcwd()
        return git_toplevel(cwd) or cwd
    return project_root


def files_from(project_root: str | None, session_id: str, start: int) -> list[dict[str, Any]]:
    """The session's messages numbered `start` or later as the project's files say (what
    `--store file read --mode full --start START` lists, every block at once): the entries,
    without the command's path around them, for a reader that keeps a copy and takes only
    what is new (integrations.dialogue). StoreUnavailable and ValueError as the store raises
    them."""
    from agent_memory.outbox.window import journal_window
    with _LOCK:
        store = _warm().store(_root(project_root))
        entries: list[dict[str, Any]] = []
        while True:
            window, _unreadable = journal_window(store, session_id, start=start,
                                                 block_size=1000, mode="full")
            entries.extend(window["messages"])
            if not window["more"]:
                return entries
            start = window["messages"][-1]["sequence_number"] + 1


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
