"""What a long-lived process keeps between the commands it runs (the MCP server, the Python
API): the configuration, read again only when a file behind it changed; each project's store,
opened once and kept open, its git-ignore check made again only when a file git reads for it
changed; and so the identity digest, computed once per configuration (sync.identity keeps it on
the Config). A one-shot CLI process has no holder: each command resolves everything afresh.

For processes that run one command at a time (the MCP server and the API serialize their
calls): a store found stale is closed at once, which another command using it at the same
moment would not survive. The agent, which serves requests in parallel threads, keeps none.

A caller running several commands as one (a framework's batch of writes, a read of what is
new) pins the store for their span (`Warm.pinned`): it and the configuration are checked once
in the span, and the commands of that thread inside it take them as they are.

"Changed" is told by stat (device, inode, mode, size, mtime_ns, ctime_ns, or the file's
absence), the way an editor's save, a rename over the file or a chmod shows (the store's
fingerprint is outbox.availability.ignore_mark). The store is also opened and checked again
when its last check is older than RECHECK_SECONDS, for the rules git reads from places not
watched (a core.excludesFile set elsewhere): git is then asked unless its answer kept in the
store is younger than that (outbox.availability).
"""

from __future__ import annotations

import atexit
import os
import threading
import time
from contextlib import contextmanager
from typing import Iterator

from agent_memory.outbox.availability import RECHECK_SECONDS, file_mark, ignore_mark
from agent_memory.outbox.store import Store
from agent_memory.sync import config as config_mod
from agent_memory.sync.identity import named_files


def config_mark(path: str, named: list[str]) -> tuple:
    """The document's fingerprint (present or not) and that of every file it names (`named`:
    a certificate checked by the validation, digested into the identity)."""
    return (file_mark(path), *(file_mark(name) for name in named))


def _directory_id(path: str) -> tuple | None:
    """(device, inode) of the store's directory itself (never through a symbolic link)."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino)


class _HeldStore:
    def __init__(self, store: Store, ignore: tuple) -> None:
        self.store = store
        self.directory = _directory_id(store.path)
        self.ignore = ignore
        self.checked_at = time.monotonic()

    def still_valid(self) -> bool:
        """The same directory is there, and nothing git decides by changed since its check."""
        return (self.directory is not None
                and _directory_id(self.store.path) == self.directory
                and ignore_mark(self.store.project_root) == self.ignore
                and time.monotonic() - self.checked_at < RECHECK_SECONDS)


class Warm:
    """The holder: kept for the process's life, handed to each command's Context
    (cli.context), which then neither reloads what is unchanged nor closes the store."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # path -> (its fingerprint, the Config, the files it names)
        self._configs: dict[str, tuple[tuple, config_mod.Config, list[str]]] = {}
        self._stores: dict[str, _HeldStore] = {}
        self._pins = threading.local()  # this thread's pinned stores: {absolute root: Store}
        atexit.register(self.close)

    def config(self, explicit: str | None) -> config_mod.Config:
        """The configuration a command with `--config explicit` loads (ConfigInvalid as
        config.load raises it; an invalid document is never kept)."""
        span = getattr(self._pins, "configs", None)  # inside a pin: checked once for it
        if span is not None and explicit in span:
            return span[explicit]
        config = self._config(explicit)
        if span is not None:
            span[explicit] = config
        return config

    def _config(self, explicit: str | None) -> config_mod.Config:
        path, _required = config_mod.locate(explicit)
        with self._lock:
            held = self._configs.get(path)
            if held is not None and held[0] == config_mark(path, held[2]):
                return held[1]
            before = file_mark(path)
            config = config_mod.load(explicit)
            named = named_files(config)
            mark = config_mark(path, named)
            if mark[0] == before:  # not replaced while it was read: keep it
                self._configs[path] = (mark, config, named)
            else:
                self._configs.pop(path, None)
            return config

    def store(self, project_root: str) -> Store:
        """The project's store, open (StoreUnavailable as Store raises it). A store whose
        directory was removed or replaced, or whose ignore rules changed, is closed and opened
        again, which checks it again. Inside `pinned(project_root)`, in its thread: the store
        pinned, unchecked."""
        pinned = getattr(self._pins, "stores", None)
        if pinned:
            store = pinned.get(os.path.abspath(project_root))
            if store is not None:
                return store
        real = os.path.realpath(project_root)
        with self._lock:
            held = self._stores.get(real)
            if held is not None:
                if held.still_valid():
                    return held.store
                del self._stores[real]
                held.store.close()
            ignore = ignore_mark(real)
            store = Store(real)
            self._stores[real] = _HeldStore(store, ignore)
            return store

    @contextmanager
    def pinned(self, project_root: str) -> Iterator[Store]:
        """`with warm.pinned(project_root) as store:` the project's store, checked now; the
        commands this thread runs inside take it, and the configuration as first loaded
        inside, without checking them again (their span is the caller's one operation).
        Nested pins of one project keep the outer one."""
        key = os.path.abspath(project_root)
        pins = getattr(self._pins, "stores", None)
        if pins is None:
            pins = self._pins.stores = {}
        if key in pins:
            yield pins[key]
            return
        pins[key] = store = self.store(project_root)
        outermost = getattr(self._pins, "configs", None) is None
        if outermost:
            self._pins.configs = {}
        try:
            yield store
        finally:
            del pins[key]
            if outermost:
                del self._pins.configs

    def close(self) -> None:
        """Close every store held (at the process's end)."""
        with self._lock:
            held, self._stores = list(self._stores.values()), {}
            self._configs.clear()
        for each in held:
            try:
                each.store.close()
            except OSError:
                pass
