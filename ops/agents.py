"""Finding a project's agents (`sync --watch` processes) from outside, for the tests and the
kill soak: every live one whose command line names a path under `base` (autostarted agents
and the systemd unit pass `--project-root`) or whose working directory is under it (a watcher
started by hand inside the project, with only `--config`). Zombies are not counted."""

from __future__ import annotations

import os

from ops.fleet.procs import alive


def _under(path: bytes, base: bytes) -> bool:
    return path == base or path.startswith(base.rstrip(b"/") + b"/")


def agent_pids(base: str) -> list[int]:
    base_bytes = os.fsencode(os.path.realpath(base))
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                argv = handle.read().split(b"\0")
            if b"--watch" not in argv or not alive(int(entry)):
                continue
            cwd = os.fsencode(os.readlink(f"/proc/{entry}/cwd"))
        except OSError:
            continue
        named = any(_under(os.fsencode(os.path.realpath(os.fsdecode(arg))), base_bytes)
                    for arg in argv if arg.startswith(b"/"))
        if named or _under(cwd, base_bytes):
            found.append(int(entry))
    return found
