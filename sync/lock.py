"""One syncer per store: an flock on `.agent-memory/.sync.lock`.

The kernel drops an flock when its holder dies, even by kill -9, so a stale lock cannot block
the store; what is written into the file only says who holds it now (a liveness lock): the
holder's pid on the first line, then its identity (sync.identity: store, configuration and its
digest, version) as one JSON line, so a process finding the lock held can tell whether the
holder forwards with its own configuration.
"""

from __future__ import annotations

import fcntl
import json
import os
import time

LOCK_NAME = ".sync.lock"


class SyncLock:
    """A non-blocking exclusive lock on one store."""

    def __init__(self, store_path: str) -> None:
        self.path = os.path.join(store_path, LOCK_NAME)
        self._fd: int | None = None

    def acquire(self, wait: float = 0.0, identity: dict | None = None) -> bool:
        """Take the lock, waiting up to `wait` seconds; False when another process holds it.
        `identity` (sync.identity.of) is published beside the pid."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    return False
                time.sleep(0.01)
        os.ftruncate(fd, 0)
        content = f"{os.getpid()}\n"
        if identity is not None:
            content += json.dumps(identity, separators=(",", ":")) + "\n"
        os.pwrite(fd, content.encode(), 0)
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def holder(self) -> int | None:
        """The pid of the live holder, or None when nobody holds the lock (-1 when the holder
        has not written its pid yet)."""
        held = self._held_content()
        if held is None:
            return None
        first = held.split("\n", 1)[0].strip()
        return int(first) if first.isdigit() else -1

    def holder_identity(self) -> dict | None:
        """The identity the live holder published (None: nobody holds it, or the holder did
        not say, as an older release or a test's bare lock would not)."""
        held = self._held_content()
        if held is None:
            return None
        lines = held.split("\n")
        try:
            identity = json.loads(lines[1]) if len(lines) > 1 and lines[1] else None
        except ValueError:
            return None
        return identity if isinstance(identity, dict) else None

    def _held_content(self) -> str | None:
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            return None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return os.pread(fd, 8192, 0).decode("utf-8", "replace")
            fcntl.flock(fd, fcntl.LOCK_UN)
            return None
        finally:
            os.close(fd)

    def __enter__(self) -> "SyncLock":
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
