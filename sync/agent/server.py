"""The listening end of the agent's socket: accept, check the peer, hand the request to the
service, send its answer. What a request does is the service's business (sync.agent.service);
this module only moves frames, reads each request's envelope (sync.agent.requests) and keeps
strangers out.

Only the process holding the store's sync lock serves, so a socket file found at start is a
dead agent's (stale) and is replaced. Each connection is served in its own thread; a request
that takes long (a write waiting for the logger) never holds up a read.
"""

from __future__ import annotations

import os
import socket
import threading
from typing import Any, Callable

from agent_memory.sync.agent import channel, requests

# (the request's envelope, its whole frame) -> the answer
Handler = Callable[[requests.Envelope, bytes], dict[str, Any]]
RECEIVE_TIMEOUT = 30.0


class AgentServer:
    def __init__(self, path: str, handle: Handler, log) -> None:
        self.path = path
        self._handle = handle
        self._log = log
        self._sock: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._inode: int | None = None
        self._uid = os.getuid()
        self.requests = 0
        self.refused_peers = 0

    def start(self) -> None:
        try:
            os.unlink(self.path)  # a killed agent's socket: we hold the lock, it is dead
            self._log.info("agent_stale_socket_replaced", socket=self.path)
        except FileNotFoundError:
            pass
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        try:
            sock.bind(self.path)
            os.chmod(self.path, 0o600)  # the directory is 0700 already: no window for others
            self._inode = os.stat(self.path).st_ino
            sock.listen(64)
        except BaseException:
            sock.close()
            raise
        self._sock = sock
        self._thread = threading.Thread(target=self._accept_loop, name="agent-accept",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop accepting and remove the socket file (connections in flight finish)."""
        sock, self._sock = self._sock, None
        if sock is None:
            return
        try:
            if self._inode is not None and os.stat(self.path).st_ino == self._inode:
                os.unlink(self.path)
        except OSError:
            pass
        try:
            sock.shutdown(socket.SHUT_RDWR)  # wakes the accept() below
        except OSError:
            pass
        sock.close()
        if self._thread is not None:
            self._thread.join(5.0)

    def _accept_loop(self) -> None:
        while True:
            sock = self._sock
            if sock is None:
                return
            try:
                conn, _ = sock.accept()
            except OSError:
                if self._sock is None:
                    return
                continue
            threading.Thread(target=self._serve, args=(conn,), name="agent-request",
                             daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            try:
                uid = channel.peer_uid(conn)
                if uid != self._uid:
                    self.refused_peers += 1
                    self._log.warning("agent_peer_refused", peer_uid=uid)
                    channel.send(conn, {"ok": False, "refused": True,
                                             "error": f"uid {uid} may not use this agent"})
                    _close_gently(conn)
                    return
                conn.settimeout(RECEIVE_TIMEOUT)
                body = channel.receive_body(conn)
                try:
                    envelope = requests.envelope(body)
                except ValueError as exc:
                    raise ConnectionError(str(exc)) from None
                conn.settimeout(None)
                self.requests += 1
                try:
                    answer = self._handle(envelope, body)
                except Exception as exc:  # noqa: BLE001 - the client falls back; never a crash
                    self._log.exception("agent_request_failed", op=envelope.op)
                    answer = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
                channel.send(conn, answer)
            except (OSError, ConnectionError) as exc:
                self._log.info("agent_connection_lost", error=str(exc))


def _close_gently(conn: socket.socket) -> None:
    """Let the refused peer read our answer: closing with its request unread would reset the
    connection under it. Its request is discarded unread."""
    try:
        conn.shutdown(socket.SHUT_WR)
        conn.settimeout(1.0)
        for _ in range(64):
            if not conn.recv(1 << 16):
                break
    except OSError:
        pass
