"""A stderr that never blocks the watcher.

The watcher logs a few lines per round. Started by hand with its stderr on a pipe that nobody
reads (a script's `Popen(stderr=PIPE)` it never drains, `sync --watch 2>&1 | slow-reader`), a
plain write blocks as soon as the pipe's buffer is full: the loop stops, and so do the CLI
commands the agent serves. Here a write only queues the text; a thread of its own writes it to
the file descriptor, waiting (poll) until the descriptor can take it, in pieces no larger than a
pipe takes at once, so that thread never blocks for good either and the watcher can always
exit. What does not fit in the queue is dropped and counted; a line says how many once the
reader catches up.

A write that fails for a reason that may pass (ENOSPC or EDQUOT on a full disk, EIO) is
counted and tried again a second later, so logging resumes by itself once there is room; only
EPIPE and EBADF (nobody will ever read it) end the pump.
"""

from __future__ import annotations

import errno
import json
import os
import queue
import select
import threading
import time

PIPE_BUF = 4096  # POSIX: a pipe with room reports POLLOUT and takes this much without blocking
CAPACITY = 10000  # queued writes (log lines) before new ones are dropped
RETRY_AFTER_ERROR = 1.0  # seconds before a write that failed (a full disk) is tried again
_GONE = (errno.EPIPE, errno.EBADF)


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
        self.write_errors = 0
        self._errors_reported = 0
        self._last_error = ""
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
                if not self._write(poller, text):
                    return
                notice = self._dropped_notice()
                if notice and not self._write(poller, notice):
                    return
            finally:
                self._queue.task_done()

    def _dropped_notice(self) -> str:
        notice = ""
        errors = self.write_errors
        if errors != self._errors_reported:
            count, self._errors_reported = errors - self._errors_reported, errors
            notice += json.dumps({"event": "log_write_failed", "count": count,
                                  "level": "warning", "error": self._last_error,
                                  "reason": "the log could not be written for a while; "
                                            "writing resumed"}) + "\n"
        dropped = self.dropped
        if dropped != self._reported:
            count, self._reported = dropped - self._reported, dropped
            notice += json.dumps({"event": "log_lines_dropped", "count": count,
                                  "level": "warning",
                                  "reason": "stderr was not read or could not be written"}) + "\n"
        return notice

    def _write(self, poller: select.poll, text: str) -> bool:
        """False when the pump must stop (asked to while stderr stays full or failing, or
        stderr gone)."""
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
            except OSError as exc:
                if exc.errno in _GONE:  # nobody will ever read it
                    return False
                # A full disk (or a failing one) for now: the text waits, the lines behind it
                # queue (then are dropped and counted), and the write is tried again.
                self.write_errors += 1
                self._last_error = exc.strerror or str(exc)
                if self._stop.wait(RETRY_AFTER_ERROR):
                    return False
                continue
            data = data[written:]
        return True
