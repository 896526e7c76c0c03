"""Where a project's agent listens, and how a request and its answer travel.

The socket is `.agent-memory/.agent.sock`: inside the store (a 0700 directory), mode 0600, so
only the store's owner can reach it; the agent also checks every peer's uid (SO_PEERCRED). A
Unix socket name holds at most 107 bytes: for a deeper project the socket lives in
`$XDG_RUNTIME_DIR/agent-memory/` (when that is a private directory of this user), else in
`/tmp/agent-memory-<uid>/` (created 0700, refused unless it is a real directory owned by this
user and closed to others), named by a hash of the store's path.

One request per connection: a 4-byte big-endian length, then a JSON object; the answer comes
back the same way. `ask` is the whole of a caller's side in one call (find the socket,
connect, send the request, receive the answer): nothing answering is None, never an error.
Pure standard library, and the client side (`connect`, `send`, `receive`) uses the `_socket`
extension itself: the `socket` module around it costs the write path 4 ms at import and adds
nothing a Unix stream needs.
"""

from __future__ import annotations

import _socket
import json
import os
import stat

TYPE_CHECKING = False  # typing costs the write path 3 ms: annotations only
if TYPE_CHECKING:
    from typing import Any

SOCKET_NAME = ".agent.sock"
LOCK_NAME = ".agent.lock"
LOG_NAME = ".agent.log"
MAX_SOCKET_PATH = 107  # sun_path is 108 bytes with its terminating NUL
MAX_FRAME = 64 << 20  # a 1 MiB text, escaped, and a read window fit with room to spare
PROTOCOL = 2  # 2: requests carry the caller's whole identity (sync.identity)
CONNECT_TIMEOUT = 2.0
_HEADER_SIZE = 4


class AgentSocketError(OSError):
    """The private directory for a long socket path cannot be trusted or made."""


class AgentLost(Exception):
    """The agent took the request but the connection broke before its answer."""


def reach(store_path: str, timeout: float = CONNECT_TIMEOUT):
    """A connection to the store's agent; None when none answers (no socket, a killed agent's
    stale one, one that is not ours)."""
    try:
        return connect(socket_path(store_path), timeout)
    except OSError:  # ENOENT: none; ECONNREFUSED: a dead agent's socket; EACCES: not ours
        return None


def ask(store_path: str, identity: dict[str, Any], op: str, fields: dict[str, Any],
        timeout: float) -> dict[str, Any] | None:
    """The answer of the store's agent to the request `op` with `fields` from `identity`
    (`request`), within `timeout` seconds once sent; None when no agent answers the
    connection (no socket, a killed agent's stale one, one that is not ours); AgentLost when
    it took the request and went away without answering."""
    sock = reach(store_path)
    if sock is None:
        return None
    try:
        try:
            send(sock, request(identity, op, **fields))
        except OSError:
            return None  # it never had the request
        sock.settimeout(timeout)
        try:
            return receive(sock)
        except (OSError, ConnectionError) as exc:
            raise AgentLost(str(exc) or type(exc).__name__) from None
    finally:
        sock.close()


def socket_path(store_path: str) -> str:
    """The agent's socket for the store at `store_path` (see the module's docstring). Both the
    name inside the store and the hash come from the store's real path, so every way of
    reaching a project (a symbolic link, a relative path) finds the same socket."""
    real = os.path.realpath(store_path)
    inside = os.path.join(real, SOCKET_NAME)
    if len(os.fsencode(inside)) <= MAX_SOCKET_PATH:
        return inside
    import hashlib
    digest = hashlib.sha256(os.fsencode(real)).hexdigest()[:32]
    return os.path.join(private_dir(), digest + ".sock")


def private_dir() -> str:
    """A directory only this user can enter, for socket names too long for the store."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and _private(runtime):
        path = os.path.join(runtime, "agent-memory")
    else:
        path = os.path.join("/tmp", f"agent-memory-{os.getuid()}")
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    if not _private(path):
        raise AgentSocketError(f"{path} is not a private directory of uid {os.getuid()} "
                               "(a real directory, owned by this user, mode 0700)")
    return path


def _private(path: str) -> bool:
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return (stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid()
            and not info.st_mode & 0o077)


def connect(path: str, timeout: float):
    """A connected Unix stream socket; OSError (FileNotFoundError, ConnectionRefusedError...)
    when nothing listens there."""
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM | _socket.SOCK_CLOEXEC)
    try:
        sock.settimeout(timeout)
        sock.connect(path)
    except BaseException:
        sock.close()
        raise
    return sock


def peer_uid(sock) -> int:
    """The uid of the process at the other end (Linux SO_PEERCRED)."""
    import struct
    raw = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", raw)
    return uid


def request(identity: dict[str, Any], op: str, **fields: Any) -> dict[str, Any]:
    """A request as the agent decodes it (sync.agent.requests): the caller's identity with the
    protocol, the op, then its fields. Built here with the standard library: the client's side
    never imports msgspec (a test proves the agent's records decode what this builds)."""
    return {**identity, "op": op, **fields}


def send(sock, message: dict[str, Any]) -> None:
    body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    sock.sendall(len(body).to_bytes(_HEADER_SIZE, "big") + body)


def receive_body(sock) -> bytes:
    """One frame's body, undecoded (the agent decodes it as sync.agent.requests); ConnectionError
    when the peer closed or sent more than a frame may hold."""
    length = int.from_bytes(_read_exactly(sock, _HEADER_SIZE), "big")
    if length > MAX_FRAME:
        raise ConnectionError(f"a frame of {length} bytes is over the limit")
    return _read_exactly(sock, length)


def receive(sock) -> dict[str, Any]:
    """One message; ConnectionError when the peer closed or sent something else."""
    body = receive_body(sock)
    try:
        message = json.loads(body)
    except ValueError as exc:
        raise ConnectionError(f"not a JSON frame: {exc}") from None
    if not isinstance(message, dict):
        raise ConnectionError("a frame that is not a JSON object")
    return message


def _read_exactly(sock, size: int) -> bytes:
    chunks = []
    while size:
        chunk = sock.recv(min(size, 1 << 20))
        if not chunk:
            raise ConnectionError("the peer closed the connection")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)
