"""The hand-off between `write` (in `--store auto`) and a running watcher, through the store.

The watcher holds the sync lock for its whole life, so a writer cannot forward inline. Instead:

1. The writer has already created its `.msg` (durable: fsynced, linked, directory fsynced). The
   watcher's watchdog sees it and forwards it like any other pending file.
2. The writer creates a ticket `.agent-memory/.handoff/<message_id>.wait` (JSON: session id,
   file name, pid) to say that somebody waits for this message's answer, then polls for
   `<message_id>.done` up to `--wait` seconds.
3. The watcher, after each round, answers every ticket whose message it has settled: it writes
   `<message_id>.done` (temporary + rename, so a reader sees it whole or not at all) holding
   `{"status": "confirmed", "answer": <the logger's append answer>}` or
   `{"status": "refused", "code", "statement", "where"}`. A ticket for a message it had already
   confirmed before the ticket appeared is answered from its memory of recent answers, else from
   the logger (`message_get`).
4. The writer reads the answer, removes both files and prints it (`"store": "logger"`). With no
   answer in time it removes its ticket and answers `"store": "file"`: the `.msg` stays pending
   and the watcher delivers it anyway. A message found in `.imported/` at that point is
   confirmed (`"store": "logger"`, `"forwarded": true`) without the logger's own numbers.

Tickets and answers carry no data that is not also in the store or the logger, so they are
never fsynced: a crash loses at most an answer, and then the writer answers `"file"`. Tickets a
dead writer left and answers nobody read are removed by the watcher after `TTL` seconds.
"""

from __future__ import annotations

import json
import os
import re
import time
from typing import Any

from outbox import atomic

HANDOFF_DIR = ".handoff"
WAIT_EXT = ".wait"
DONE_EXT = ".done"
TTL = 300.0
_TEMP_PREFIX = ".tmp-"
_NAME_RE = re.compile(r"^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"
                      r"(\.wait|\.done)$")


def _dir_fd(store_path: str) -> int:
    store_fd = atomic.open_dir(store_path)
    try:
        return atomic.ensure_dir(store_fd, HANDOFF_DIR)
    finally:
        os.close(store_fd)


def _read_json(dir_fd: int, name: str) -> dict[str, Any] | None:
    try:
        raw = atomic.read_file(dir_fd, name)
    except FileNotFoundError:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _unlink(dir_fd: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except FileNotFoundError:
        pass


# --- the writer's side ---------------------------------------------------------------------------
class Ticket:
    """One writer waiting for one message's answer."""

    def __init__(self, store_path: str, session_id: str, file_name: str, message_id: str) -> None:
        self.message_id = message_id
        self._fd = _dir_fd(store_path)
        body = json.dumps({"session_id": session_id, "file": file_name, "pid": os.getpid(),
                           "created": time.time()}).encode()
        temp = f"{_TEMP_PREFIX}{os.getpid()}-{os.urandom(8).hex()}"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     atomic.FILE_MODE, dir_fd=self._fd)
        try:
            os.write(fd, body)
        finally:
            os.close(fd)
        os.rename(temp, message_id + WAIT_EXT, src_dir_fd=self._fd, dst_dir_fd=self._fd)

    def wait(self, seconds: float, alive=None) -> dict[str, Any] | None:
        """The watcher's answer, or None when none came within `seconds` (or `alive()` said the
        watcher is gone). Polls every few milliseconds: a stat is microseconds, and the write
        path must not pay watchdog's import."""
        deadline = time.monotonic() + seconds
        pause = 0.002
        checked = time.monotonic()
        done = self.message_id + DONE_EXT
        while True:
            answer = _read_json(self._fd, done)
            if answer is not None:
                return answer
            now = time.monotonic()
            if now >= deadline:
                return None
            if alive is not None and now - checked > 0.25:
                checked = now
                if not alive():
                    return _read_json(self._fd, done)
            time.sleep(min(pause, max(0.0, deadline - now)))
            pause = min(pause * 1.5, 0.02)

    def close(self) -> None:
        _unlink(self._fd, self.message_id + WAIT_EXT)
        _unlink(self._fd, self.message_id + DONE_EXT)
        os.close(self._fd)


# --- the watcher's side --------------------------------------------------------------------------
class Answers:
    """The watcher's end: which tickets wait, and writing their answers."""

    def __init__(self, store_path: str) -> None:
        self._fd = _dir_fd(store_path)

    def close(self) -> None:
        os.close(self._fd)

    def waiting(self) -> dict[str, dict[str, Any]]:
        """message_id -> ticket body, for every ticket not answered yet."""
        listed = os.listdir(self._fd)
        done = {m.group(1) for m in map(_NAME_RE.match, listed) if m and m.group(2) == DONE_EXT}
        out = {}
        for name in listed:
            match = _NAME_RE.match(name)
            if match is None or match.group(2) != WAIT_EXT or match.group(1) in done:
                continue
            body = _read_json(self._fd, name)
            if body is not None and isinstance(body.get("session_id"), str) \
                    and isinstance(body.get("file"), str):
                out[match.group(1)] = body
        return out

    def answer(self, message_id: str, answer: dict[str, Any]) -> bool:
        """Write the answer for a waiting ticket (False when the writer already gave up)."""
        try:
            os.stat(message_id + WAIT_EXT, dir_fd=self._fd, follow_symlinks=False)
        except FileNotFoundError:
            return False
        temp = f"{_TEMP_PREFIX}{os.getpid()}-{os.urandom(8).hex()}"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     atomic.FILE_MODE, dir_fd=self._fd)
        try:
            os.write(fd, json.dumps(answer, ensure_ascii=False).encode())
        finally:
            os.close(fd)
        os.rename(temp, message_id + DONE_EXT, src_dir_fd=self._fd, dst_dir_fd=self._fd)
        return True

    def collect_garbage(self, ttl: float = TTL) -> int:
        """Remove tickets, answers and temporaries older than `ttl` seconds."""
        limit = time.time() - ttl
        removed = 0
        for entry in os.scandir(self._fd):
            try:
                if entry.stat(follow_symlinks=False).st_mtime < limit:
                    os.unlink(entry.name, dir_fd=self._fd)
                    removed += 1
            except FileNotFoundError:
                continue
        return removed
