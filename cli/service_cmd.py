"""`service systemd|cron`: what keeps a project synced in the background, made for this
installation and this project, so a pip install needs nothing from the repository: the systemd
user unit of the watcher (`sync --watch`; a template whose instance is the project directory)
with the drop-in that names the configuration when it is not the default one, or the crontab
line of a one-shot `sync` every five minutes. The answer says what to run next; `systemd
--write` writes the files under the user's systemd directory."""

from __future__ import annotations

import os
import shlex
import sys
from typing import Any

from agent_memory.cli.context import Context
from agent_memory.cli.errors import UsageError
from agent_memory.sync import config as config_mod

TEMPLATE = "agent-memory-watch@.service"
DROP_IN = "agent-memory.conf"
CRON_SCHEDULE = "*/5 * * * *"
CRON_LOG = "$HOME/.local/state/agent-memory-sync.log"

UNIT = """\
# agent-memory's watcher for one project, as a systemd user unit: it forwards the project's
# outbox (.agent-memory/) to the logger as files appear and serves agent-memory's commands.
# Written by `agent-memory service systemd` ({version}). The instance name is the project
# directory, escaped: systemctl --user enable --now "agent-memory-watch@$(systemd-escape --path DIR)"

[Unit]
Description=agent-memory watcher for %f
After=network-online.target
# `agent-memory store init` creates the project's store
ConditionPathIsDirectory=%f/.agent-memory

[Service]
Type=simple
WorkingDirectory=%f
ExecStart={exec_start} --project-root %f sync --watch
# SIGTERM: the batch in flight finishes, the state is published, exit 0.
KillSignal=SIGTERM
KillMode=mixed
TimeoutStopSec=60
# A crash restarts it; a clean exit (stopped, or another watcher holds the store) does not,
# nor does a problem a restart cannot fix: usage (2), no store (3), no logger configured (4),
# an invalid configuration (6). Fix it, then `systemctl --user restart` the instance.
Restart=on-failure
RestartSec=5
RestartPreventExitStatus=2 3 4 6
# stdout carries the final summary, stderr the JSON log lines: both go to the journal.
StandardOutput=journal
StandardError=journal
NoNewPrivileges=yes

[Install]
WantedBy=default.target
"""


def run(ctx: Context, args) -> tuple[dict[str, Any], str]:
    ctx.store()  # the project has a store (else exit 3, saying how to make one)
    root = os.path.realpath(ctx.project_root)
    config_path, explicit = config_mod.locate(args.config)
    notes = []
    if ctx.config.logger is None:
        notes.append("no logger is configured: the file store is the whole memory and there is "
                     "nothing to forward (`agent-memory config generate` writes a configuration)")
    if args.action == "systemd":
        return systemd(root, config_path if explicit else None, args, notes), "file"
    return cron(root, config_path if explicit else None, notes), "file"


def executable() -> list[str]:
    """How to run this installation's agent-memory: its console script beside the interpreter
    (a venv, pipx, uv tool), else the one on PATH, else the interpreter with the module."""
    beside = os.path.join(os.path.dirname(sys.executable), "agent-memory")
    if os.access(beside, os.X_OK):
        return [os.path.abspath(beside)]
    import shutil
    found = shutil.which("agent-memory")
    if found:
        return [os.path.abspath(found)]
    return [os.path.abspath(sys.executable), "-m", "agent_memory.cli"]


def escape_path(path: str) -> str:
    """`systemd-escape --path`: the instance name of a directory ("/" becomes "-", any byte
    other than ASCII letters, digits, ":", "_" and a "." not leading becomes \\xNN)."""
    trimmed = "/".join(part for part in path.split("/") if part)
    if not trimmed:
        return "-"
    out = []
    for index, byte in enumerate(trimmed.encode("utf-8", "surrogateescape")):
        char = chr(byte)
        if char == "/":
            out.append("-")
        elif (char.isascii() and (char.isalnum() or char in ":_")) or (char == "." and index):
            out.append(char)
        else:
            out.append(f"\\x{byte:02x}")
    return "".join(out)


def _systemd_quoted(words: list[str]) -> str:
    """A command line for ExecStart: each word quoted when it must be, `%` doubled."""
    quoted = []
    for word in words:
        word = word.replace("%", "%%")
        if any(c in word for c in " \t\"'\\;"):
            word = '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'
        quoted.append(word)
    return " ".join(quoted)


def systemd(root: str, config: str | None, args, notes: list[str]) -> dict[str, Any]:
    from agent_memory.sync.identity import VERSION
    directory = os.path.join(os.environ.get("XDG_CONFIG_HOME")
                             or os.path.join(os.path.expanduser("~"), ".config"),
                             "systemd", "user")
    unit_file = os.path.join(directory, TEMPLATE)
    unit = UNIT.format(version=VERSION, exec_start=_systemd_quoted(executable()))
    instance = f"agent-memory-watch@{escape_path(root)}.service"
    answer: dict[str, Any] = {"unit_file": unit_file, "unit": unit, "instance": instance}
    files = [(unit_file, unit)]
    if config is not None:  # the watcher must read the configuration this command read
        drop_in_file = os.path.join(directory, f"{instance}.d", DROP_IN)
        value = f"AGENT_MEMORY_CONFIG={config}".replace("%", "%%")
        drop_in = f"[Service]\nEnvironment=\"{value}\"\n"
        answer.update(drop_in_file=drop_in_file, drop_in=drop_in)
        files.append((drop_in_file, drop_in))
    quoted = shlex.quote(instance)
    answer["next"] = [
        *([] if args.write else ["agent-memory service systemd --write"]),
        "systemctl --user daemon-reload",
        f"systemctl --user enable --now {quoted}",
        f"systemctl --user status {quoted}",
        f"journalctl --user -u {quoted} -f",
        "loginctl enable-linger \"$USER\"    # optional: keep it running without a login session",
        f"systemctl --user disable --now {quoted}    # to stop it",
    ]
    if args.write:
        answer["written"] = [path for path, text in files if _write(path, text, args.force)]
    if notes:
        answer["notes"] = notes
    return answer


def _write(path: str, text: str, force: bool) -> bool:
    """Write `text` to `path` (0644, atomically); False when it already holds exactly that.
    A file that differs is replaced only with --force."""
    try:
        with open(path, encoding="utf-8") as handle:
            if handle.read() == text:
                return False
        if not force:
            raise UsageError(f"{path} exists and differs: pass --force to replace it",
                             field="--force")
    except FileNotFoundError:
        pass
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temporary = f"{path}.tmp-{os.getpid()}"
    with open(temporary, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.chmod(temporary, 0o644)
    os.replace(temporary, path)
    return True


def cron(root: str, config: str | None, notes: list[str]) -> dict[str, Any]:
    words = [*executable(), "--project-root", root, "sync"]
    command = " ".join(shlex.quote(word) for word in words)
    if config is not None:
        command = f"AGENT_MEMORY_CONFIG={shlex.quote(config)} {command}"
    command = command.replace("%", "\\%")  # cron reads a bare % as a line break
    line = f"{CRON_SCHEDULE} {command} >> \"{CRON_LOG}\" 2>&1"
    answer: dict[str, Any] = {"line": line, "log": CRON_LOG, "next": [
        "mkdir -p \"$HOME/.local/state\"",
        "crontab -e    # add the line",
        "crontab -l    # check it is there; stop by deleting the line",
    ]}
    notes.append("each run exits 0 when it forwarded everything or had nothing to do, 4 while "
                 "the logger is unreachable (the files stay pending for the next run), 6 while "
                 "it refuses the credentials, 1 when an item was refused")
    answer["notes"] = notes
    return answer
