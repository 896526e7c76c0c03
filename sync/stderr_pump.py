"""A stderr that never blocks the watcher.

The watcher logs a few lines per round. Started by hand with its stderr on a pipe that nobody
reads (a script's `Popen(stderr=PIPE)` it never drains, `sync --watch 2>&1 | slow-reader`), a
plain write blocks as soon as the pipe's buffer is full: the loop stops, and so do the CLI
commands the agent serves. Here a write only queues the text; a thread of its own writes it to
the file descriptor, waiting (poll) until the descriptor can take it, in pieces no larger than a
pipe takes at once, so that thread never blocks for good either and the watcher can always
exit. What does not fit in the queue is dropped and counted; a line says how many once the
reader catches up.
"""

from __future__ import annotations

import json
import os
import queue
import select
import threading
import time

PIPE_BUF = 4096  # POSIX: a pipe with room reports POLLOUT and takes this much without blocking
CAPACITY = 10000  # queued writes (log lines) before new ones are dropped


class StderrPump:
    """A text stream for sys.stderr (and sys.stdout) in the watcher's process."""

    encoding = "utf-8"
    errors = "backslashreplace"

    def __init__(self, fd: int = 2, capacity: int = CAPACITY) -> None:
        self._fd = fd
        self._queue: queue.Queue[str] = queue.Queue(capacity)
        self._stop = threading.Event()
        self.dropped = 0
        self._reported = 0
        self._thread = threading.Thread(target=self._run, name="stderr-pump", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ the stream's side ---
    def write(self, text: str) -> int:
        if text:
            try:
                self._queue.put_nowait(text)
            except queue.Full:
                self.dropped += 1
        return len(text)

    def flush(self) -> None:
        """Nothing to do: the pump writes as soon as the descriptor takes it."""

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def fileno(self) -> int:
        return self._fd

    def close(self, timeout: float = 2.0) -> None:
        """Write what is queued, for up to `timeout` seconds (a reader that never reads gets
        nothing more), then stop the thread."""
        deadline = time.monotonic() + timeout
        while self._queue.unfinished_tasks and time.monotonic() < deadline:
            time.sleep(0.01)
        self._stop.set()
        self._thread.join(max(0.0, deadline - time.monotonic()) + 0.5)

    # ------------------------------------------------------------------ the thread's side ---
    def _run(self) -> None:
        poller = select.poll()
        poller.register(self._fd, select.POLLOUT)
        while True:
            try:
                text = self._queue.get(timeout=0.2)
            except queue.Empty:
                if self._stop.is_set():
                    return
                continue
            try:
                if not self._write(poller, self._dropped_notice() + text):
                    return
            finally:
                self._queue.task_done()

    def _dropped_notice(self) -> str:
        dropped = self.dropped
        if dropped == self._reported:
            return ""
        count, self._reported = dropped - self._reported, dropped
        return json.dumps({"event": "log_lines_dropped", "count": count, "level": "warning",
                           "reason": "stderr was not read"}) + "\n"

    def _write(self, poller: select.poll, text: str) -> bool:
        """False when the pump must stop (asked to while stderr stays full, or stderr gone)."""
        data = text.encode(self.encoding, self.errors)
        while data:
            if not poller.poll(200):
                if self._stop.is_set():
                    return False
                continue
            try:
                written = os.write(self._fd, data[:PIPE_BUF])
            except InterruptedError:
                continue
            except OSError:  # EPIPE, EBADF: nobody will ever read it
                return False
            data = data[written:]
        return True
