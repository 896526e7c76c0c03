"""`store init`: create `.agent-memory/` (0700) and, inside git, the rule that ignores it."""

from __future__ import annotations

import os
from typing import Any

from agent_memory.cli.context import Context
from agent_memory.cli.errors import StoreUnavailableError
from agent_memory.outbox import atomic
from agent_memory.outbox.availability import git_ignores
from agent_memory.outbox.names import STORE_DIR


def run(ctx: Context, args) -> tuple[dict[str, Any], str]:
    root = ctx.project_root
    path = os.path.join(root, STORE_DIR)
    created = False
    if os.path.islink(path) or (os.path.exists(path) and not os.path.isdir(path)):
        raise StoreUnavailableError(f"{path} exists and is not a real directory: remove it first")
    if not os.path.exists(path):
        os.mkdir(path, atomic.DIR_MODE)
        created = True
        fd = atomic.open_dir(root)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    rule_added = False
    ignore_file = None
    if git_ignores(root, STORE_DIR + "/") is False:
        ignore_file = os.path.join(root, ".gitignore")
        _append_rule(ignore_file, f"/{STORE_DIR}/")
        rule_added = True
        if git_ignores(root, STORE_DIR + "/") is not True:
            raise StoreUnavailableError(
                f"added /{STORE_DIR}/ to {ignore_file} but git still does not ignore it "
                "(a later negation rule?): fix the ignore rules by hand")
    return {"path": path, "created": created, "ignore_rule_added": rule_added,
            "ignore_file": ignore_file}, "file"


def _append_rule(ignore_file: str, rule: str) -> None:
    """Append a line to .gitignore, starting a new line if the file does not end with one."""
    prefix = ""
    try:
        with open(ignore_file, "rb") as handle:
            content = handle.read()
        if content and not content.endswith(b"\n"):
            prefix = "\n"
    except FileNotFoundError:
        pass
    with open(ignore_file, "a", encoding="utf-8") as handle:
        handle.write(f"{prefix}{rule}\n")
        handle.flush()
        os.fsync(handle.fileno())
