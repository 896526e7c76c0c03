"""What a command runs against: the project root, the configuration and the store, each
resolved only when the command needs it (a usage error must not cost a git call)."""

from __future__ import annotations

import argparse
import os
from functools import cached_property

from agent_memory.cli.errors import ConfigInvalidError, LoggerUnreachableError, StoreUnavailableError, UsageError
from agent_memory.outbox.availability import StoreUnavailable, git_toplevel
from agent_memory.outbox import names
from agent_memory.outbox.store import Store
from agent_memory.sync import config as config_mod


class Context:
    def __init__(self, args: argparse.Namespace, route=None, serve_command=None,
                 warm=None) -> None:
        self.args = args
        # cli.warm.Warm of a long-lived process (the MCP server, the Python API): the
        # configuration and the store as it keeps them; None in a one-shot CLI process
        self.warm = warm
        # cli.served.serve_command, handed down by the shell: what an agent this command starts
        # runs for its callers (None where no agent can be started from here)
        self.serve_command = serve_command
        self._route = route  # the agent hands its own (over its open links) to what it serves
        self.store_mode: str = args.store
        self._store: Store | None = None
        self._side: str | None = None  # side(), once worked out
        self.warnings: list[dict] = []  # said in the answer (cli.fleet_errors.warn)
        # What the project's agent made of this command (cli.agent_client): none answered and
        # one is to be started once the command has answered; one of another identity stayed.
        self.agent_wanted = False
        self.agent_declined_by: dict | None = None

    @cached_property
    def project_root(self) -> str:
        if self.args.project_root:
            root = os.path.abspath(self.args.project_root)
            if not os.path.isdir(root):
                raise UsageError(f"--project-root {root} is not a directory")
            return root
        cwd = os.getcwd()
        return git_toplevel(cwd) or cwd

    @cached_property
    def config(self) -> config_mod.Config:
        try:
            config = (config_mod.load(self.args.config) if self.warm is None
                      else self.warm.config(self.args.config))
        except config_mod.ConfigInvalid as exc:
            raise ConfigInvalidError(str(exc), problems=exc.problems) from None
        if config.warnings:
            import sys
            for warning in config.warnings:
                sys.stderr.write(f"agent-memory: warning: {warning}\n")
        return config

    @property
    def route(self):
        """How this command reaches the fleet (sync.links.route.Route): a link per call, or the
        agent's open links for a command the agent serves."""
        if self._route is None:
            from agent_memory.sync.links.route import Route
            self._route = Route()
        return self._route

    def store(self) -> Store:
        if self._store is None:
            try:
                self._store = (Store(self.project_root) if self.warm is None
                               else self.warm.store(self.project_root))
            except StoreUnavailable as exc:
                raise StoreUnavailableError(str(exc)) from None
            _finish_purges(self._store)
        return self._store

    def side(self) -> str:
        """Which side answers: "file" or "logger", from --store and the configuration, neither
        of which changes in a Context: worked out at the first call (which refuses a bad
        configuration, or --store logger without a logger), then kept."""
        if self._side is None:
            has_logger = self.config.logger is not None
            if self.store_mode == "logger" and not has_logger:
                raise LoggerUnreachableError(
                    "--store logger but no logger is configured (ailogger_client section)")
            if self.store_mode in ("file", "logger"):
                self._side = self.store_mode
            else:
                self._side = "logger" if has_logger else "file"
        return self._side

    def close(self) -> None:
        """Close the store this command opened (a warm one stays open for the next)."""
        if self._store is not None and self.warm is None:
            self._store.close()


def _finish_purges(store: Store) -> None:
    """A purge (hard delete, session delete) a killed command left unfinished is completed by
    the next command that opens the store (sync.forgetting); a look at one directory, and the
    purge code only imported when there is something to finish."""
    try:
        unfinished = any(n.endswith(".json") for n in os.listdir(
            os.path.join(store.path, names.PURGE_DIR)))
    except OSError:
        return
    if unfinished:
        from agent_memory.sync import forgetting
        forgetting.complete(store)
