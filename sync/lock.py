"""One syncer per store: an flock on `.agent-memory/.sync.lock`.

The kernel drops an flock when its holder dies, even by kill -9, so a stale lock cannot block
the store; the pid written into the file only says who holds it now (a liveness lock).
"""

from __future__ import annotations

import fcntl
import os
import time

LOCK_NAME = ".sync.lock"


class SyncLock:
    """A non-blocking exclusive lock on one store."""

    def __init__(self, store_path: str) -> None:
        self.path = os.path.join(store_path, LOCK_NAME)
        self._fd: int | None = None

    def acquire(self, wait: float = 0.0) -> bool:
        """Take the lock, waiting up to `wait` seconds; False when another process holds it."""
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
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
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
        """The pid of the live holder, or None when nobody holds the lock."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            return None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                content = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
                return int(content) if content.isdigit() else -1
            fcntl.flock(fd, fcntl.LOCK_UN)
            return None
        finally:
            os.close(fd)

    def __enter__(self) -> "SyncLock":
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
