"""The configuration a hand-started or autostarted agent runs with, followed on disk.

About once a second (and at once when a command brings another digest of the same document)
the document and the files it names are stat'ed (sync.identity.signature); only a change is
read, validated and hashed. A document that does not validate is logged once and the one in use
is kept until a valid one appears; one that validates with the same digest (touched, not
changed) is no change.
"""

from __future__ import annotations

import threading

from agent_memory.sync import identity
from agent_memory.sync.config import Config


class ConfigFollower:
    def __init__(self, store_path: str, config: Config, log) -> None:
        self.store_path = store_path
        self.config = config
        self.identity = identity.of(store_path, config)
        self.log = log
        self._mark = identity.signature(config)
        self._rejected: tuple | None = None  # the mark of a document that did not load
        self._lock = threading.Lock()  # the loop and the request threads both look

    def look(self) -> Config | None:
        """A valid document whose content differs from the one in use, or None."""
        with self._lock:
            mark = identity.signature(self.config)
            if mark == self._mark or mark == self._rejected:
                return None
            from agent_memory.sync import config as config_mod
            try:
                fresh = config_mod.load(self.config.source)
                if fresh.logger is None:
                    raise config_mod.ConfigInvalid(self.config.source, [
                        "no ailogger_client section: the watcher has nothing to forward to"])
            except config_mod.ConfigInvalid as exc:
                self._rejected = mark
                self.log.warning("config_invalid_kept", problems=exc.problems,
                                 reason="the configuration in use is kept until the document "
                                        "validates again")
                return None
            self._rejected = None
            self._mark = identity.signature(fresh)
            if identity.digest(fresh) == self.identity["digest"]:
                return None  # touched, not changed
            return fresh

    def take(self, fresh: Config) -> None:
        """Run with `fresh` from now on."""
        self.config = fresh
        self.identity = identity.of(self.store_path, fresh)
