"""Durable, atomic file operations (maildir's protocol).

A record becomes visible only under its final name, and only once its bytes are on disk: an
unnamed file in the directory (O_TMPFILE, 0600) -> write -> fsync -> link() to the final name
(fails rather than overwrite) -> fsync the directory. A writer killed before the link leaves
nothing behind (the file system frees an unnamed file), and no name is made and removed on the
way. Where the file system or the kernel has no unnamed files (or /proc is not mounted), a
named temporary takes its place (O_EXCL, O_NOFOLLOW, 0600; unlinked after the link; one a
killed writer left is swept by outbox.cleanup). Moves are rename() plus an
fsync of both directories; a missing directory fsync is the classic lost-file bug. Every operation
works relative to a directory descriptor opened with O_NOFOLLOW, so a symlink planted in the store
is refused instead of followed.
"""

from __future__ import annotations

import errno
import os
import stat

from agent_memory.outbox.names import TEMP_PREFIX

DIR_MODE = 0o700
FILE_MODE = 0o600
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class UnsafePathError(OSError):
    """A store path that is a symlink or not a directory."""


def open_dir(path: str, dir_fd: int | None = None) -> int:
    """Open a directory without following a symlink at its last component."""
    try:
        return os.open(path, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise UnsafePathError(exc.errno, f"not a real directory (symlink or file): {path}") from exc
        raise


def open_dirs(dir_fd: int, paths: "list[tuple[str, ...]]") -> "list[int | None]":
    """A descriptor of each directory of `paths` (each a tuple of names, one per level, below
    `dir_fd`), opened one level at a time and following a symlink at none of them (open_dir
    at each): None for one that is not there. On an error, those opened are closed again."""
    out: list[int | None] = []
    try:
        for parts in paths:
            try:
                out.append(_open_below(dir_fd, parts))
            except FileNotFoundError:
                out.append(None)
    except BaseException:
        for fd in out:
            if fd is not None:
                os.close(fd)
        raise
    return out


def _open_below(dir_fd: int, parts: tuple[str, ...]) -> int:
    fd = open_dir(parts[0], dir_fd=dir_fd)
    for part in parts[1:]:
        try:
            inner = open_dir(part, dir_fd=fd)
        finally:
            os.close(fd)
        fd = inner
    return fd


def ensure_dir(parent_fd: int, name: str) -> int:
    """Open `name` under `parent_fd`, creating it 0700 (and syncing the parent) if missing."""
    try:
        os.mkdir(name, DIR_MODE, dir_fd=parent_fd)
    except FileExistsError:
        pass
    else:
        os.fsync(parent_fd)
    return open_dir(name, dir_fd=parent_fd)


def create_exclusive(dir_fd: int, name: str, data: bytes, sync_dir: bool = True) -> None:
    """Write `data` as the new file `name` in `dir_fd`; FileExistsError if the name is taken.
    `sync_dir` False leaves the directory's fsync to the caller (several files made in one
    directory, synced once before any of them is acknowledged)."""
    if not (_UNNAMED and _create_unnamed(dir_fd, name, data)):
        _create_named(dir_fd, name, data)
    if sync_dir:
        os.fsync(dir_fd)


# Unnamed files: O_TMPFILE (Linux 3.11), linked through /proc. Cleared for the process at the
# first sign that this system has none, so a create does not try again each time.
_UNNAMED = hasattr(os, "O_TMPFILE") and os.path.isdir("/proc/self/fd")
# what opening one answers where the file system or the kernel has none
_NOT_SUPPORTED = (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL)


def _write_whole(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
    os.fsync(fd)


def _create_unnamed(dir_fd: int, name: str, data: bytes) -> bool:
    """create_exclusive through an unnamed file: True once linked; False, with nothing made,
    where this system has none (the caller then uses a named temporary). Anything else is
    raised as the named way raises it (FileNotFoundError for a directory removed meanwhile,
    PermissionError, no room)."""
    global _UNNAMED
    try:
        fd = os.open(".", os.O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, FILE_MODE, dir_fd=dir_fd)
    except OSError as exc:
        _raise_if_removed(dir_fd, name)
        if exc.errno not in _NOT_SUPPORTED:
            raise
        _UNNAMED = False
        return False
    try:
        _write_whole(fd, data)
        proc = f"/proc/self/fd/{fd}"
        try:
            os.link(proc, name, dst_dir_fd=dir_fd, follow_symlinks=True)
        except FileExistsError:
            raise
        except OSError as exc:
            _raise_if_removed(dir_fd, name)
            # /proc gone, or refusing links through it (a hardened system): the named way
            if exc.errno in (errno.EPERM, errno.EACCES) or not os.path.exists(proc):
                _UNNAMED = False
                return False
            raise
    finally:
        os.close(fd)
    return True


def _raise_if_removed(dir_fd: int, name: str) -> None:
    """FileNotFoundError when the directory was removed (nothing can be created in it: the
    kernel says EPERM or ENOENT for an unnamed file there, ENOENT for a named one)."""
    if os.fstat(dir_fd).st_nlink == 0:
        raise FileNotFoundError(errno.ENOENT, "the directory was removed", name)


def _create_named(dir_fd: int, name: str, data: bytes) -> None:
    """create_exclusive through a named temporary, unlinked once linked."""
    temp = f"{TEMP_PREFIX}{os.getpid()}-{os.urandom(16).hex()}"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 FILE_MODE, dir_fd=dir_fd)
    try:
        try:
            _write_whole(fd, data)
        finally:
            os.close(fd)
        os.link(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
    finally:
        try:
            os.unlink(temp, dir_fd=dir_fd)
        except FileNotFoundError:
            pass


# No record comes near this: a text is at most 1 MiB; the rest of a record is small.
MAX_RECORD_BYTES = 16 << 20


class UnsafeFile(OSError):
    """A final-named entry that is not a plain file of a sane size (a symlink, a FIFO, a device,
    a directory, a huge file): never followed, never read; it is reported and set aside."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(errno.EINVAL, reason, name)
        self.reason = reason

    def __str__(self) -> str:
        return self.reason


SYMLINK = "a symbolic link, not a file"


def unsafe_reason(info: os.stat_result, limit: int = MAX_RECORD_BYTES) -> str | None:
    """Why an entry found under a record's name can never be one (a symbolic link, a FIFO, a
    socket, a device, a directory, a file over `limit`), or None: the one wording of readers,
    `status` and `verify`."""
    if stat.S_ISLNK(info.st_mode):
        return SYMLINK
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file (a FIFO, socket, device or directory)"
    if info.st_size > limit:
        return f"{info.st_size} bytes: over the {limit}-byte limit of a record"
    return None


def read_file(dir_fd: int, name: str, limit: int = MAX_RECORD_BYTES) -> bytes:
    """Read a whole regular file of at most `limit` bytes without following a symlink.

    Opened non-blocking, so a FIFO planted under a message's name cannot hang the reader;
    anything but a regular file, or a file over `limit`, raises UnsafeFile."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                     dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafeFile(name, SYMLINK) from None
        raise
    try:
        reason = unsafe_reason(os.fstat(fd), limit)
        if reason is not None:
            raise UnsafeFile(name, reason)
        chunks = []
        total = 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > limit:  # it grew while we read
                raise UnsafeFile(name, f"over the {limit}-byte limit of a record")
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def move(src_fd: int, dst_fd: int, name: str) -> bool:
    """Move `name` from one directory to another durably; False if it was not there."""
    return len(move_many(src_fd, dst_fd, [name])) == 1


def move_many(src_fd: int, dst_fd: int, names: list[str]) -> list[str]:
    """Move files between two directories, then fsync both once; returns the names moved.

    One pair of directory fsyncs covers the whole group: a rename is atomic, so after a crash
    before the fsyncs each file is in one of the two places, never lost, and one still in the
    source is simply forwarded again. A name no longer in the source was moved by a concurrent
    mover and is skipped.
    """
    moved = []
    for name in names:
        try:
            os.rename(name, name, src_dir_fd=src_fd, dst_dir_fd=dst_fd)
        except FileNotFoundError:
            continue
        moved.append(name)
    if moved:
        os.fsync(dst_fd)
        os.fsync(src_fd)
    return moved
