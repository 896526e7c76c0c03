"""Who forwards a store: the identity of a project's agent (and of any holder of the sync lock),
and how a command tells whether it may rely on it.

An identity is four facts: the store (its real path), the configuration document (its real
path, or None for the built-in default), a digest of that document's bytes and of every file it
names (client certificates, keys, CA bundles: a certificate renewed in place is a new
identity), and agent-memory's version. A command uses an agent, or believes "another process
will deliver this", only when all four are its own.

Pure standard library and cheap: every command that may ask the agent computes its own
identity (the document and the few files it names are read and hashed once per command, tens
of microseconds); the agent hashes its own once per change on disk, never once per request.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing costs the write path 3 ms: annotations only
if TYPE_CHECKING:
    from typing import Any

VERSION = "1.7.47"
FIELDS = ("store", "config", "digest", "version")
_SSL_FILES = ("cert", "key", "ca")
_MAX_NAMED_FILE = 1 << 20  # a certificate bundle is a few KiB; a larger file is hashed in part


def _blake2b():
    try:  # the builtin module: hashlib would load OpenSSL first (3 ms on the write path)
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - every CPython build has it
        from hashlib import blake2b
    return blake2b(digest_size=16)


def named_files(config) -> list[str]:
    """Every file the document names (the ssl cert, key and ca of both client sections, in
    both places a section may hold them), resolved against the document's directory."""
    found: list[str] = []
    for name in ("ailogger_client", "embedding_client"):
        section = config.document.get(name)
        if not isinstance(section, dict):
            continue
        client = section.get("client")
        for ssl in (section.get("ssl"), client.get("ssl") if isinstance(client, dict) else None):
            if not isinstance(ssl, dict):
                continue
            for key in _SSL_FILES:
                value = ssl.get(key)
                if isinstance(value, str) and value:
                    path = config.resolve_path(value)
                    if path not in found:
                        found.append(path)
    return found


def digest(config) -> str:
    """The digest of the configuration's content: the document's bytes and each named file's
    (by path); cached on the Config, which is immutable once loaded."""
    cached = getattr(config, "_identity_digest", None)
    if cached is not None:
        return cached
    hashed = _blake2b()
    hashed.update(getattr(config, "raw", b"") or b"")
    for path in named_files(config):
        hashed.update(b"\0" + os.fsencode(path) + b"\0")
        try:
            with open(path, "rb") as handle:
                hashed.update(handle.read(_MAX_NAMED_FILE))
        except OSError as exc:
            hashed.update(f"unreadable {exc.errno}".encode())
    value = hashed.hexdigest()
    config._identity_digest = value
    return value


def signature(config) -> tuple:
    """A cheap fingerprint of the files behind the configuration (stat only): when it changes,
    the digest is computed again."""
    paths = ([config.source] if config.source else []) + named_files(config)
    marks = []
    for path in paths:
        try:
            info = os.stat(path)
        except OSError as exc:
            marks.append((path, exc.errno))
            continue
        marks.append((path, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns))
    return tuple(marks)


def of(store_path: str, config) -> dict[str, Any]:
    """The identity a command (or a lock holder) runs with."""
    return {"store": os.path.realpath(store_path),
            "config": os.path.realpath(config.source) if config.source else None,
            "digest": digest(config), "version": VERSION}


def differences(mine: dict[str, Any], theirs: dict[str, Any] | None) -> list[str]:
    """Which of the four facts differ (all of them when `theirs` is not an identity)."""
    if not isinstance(theirs, dict):
        return list(FIELDS)
    return [field for field in FIELDS if mine.get(field) != theirs.get(field)]


def describe(theirs: dict[str, Any], different: list[str]) -> str:
    """What is different about another process, in words (no secret: a path, a version, a
    digest prefix)."""
    parts = []
    if "store" in different:
        parts.append(f"the store {theirs.get('store')}")
    if "config" in different:
        parts.append(f"the configuration {theirs.get('config') or '(none: built-in default)'}")
    elif "digest" in different:
        parts.append(f"other content of the configuration {theirs.get('config')} "
                     f"(digest {str(theirs.get('digest'))[:12]})")
    if "version" in different:
        parts.append(f"agent-memory {theirs.get('version')}")
    return " and ".join(parts) or "the same configuration"
