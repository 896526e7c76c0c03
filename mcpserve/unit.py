"""`agent-memory mcp --listen ADDRESS --systemd-unit`: a systemd user unit that runs this very
server (the same executable, project, configuration and options), answered as the command's
data instead of serving: the unit's text, the file to save it as, and the commands that start
it. systemd stops it with SIGTERM, the server's clean stop (mcpserve.http_serve).

The unit never holds the token: `--token-file` is passed as a path; a token only in
$AGENT_MEMORY_MCP_TOKEN is not the service's, so a unit that needs a token needs that file.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Any

_PLAIN = re.compile(r"[A-Za-z0-9_./:,=@+\-\[\]]+")


def quoted(word: str) -> str:
    """One ExecStart word as systemd reads it: specifiers (%) and variables ($) doubled,
    anything else but plain characters in double quotes."""
    word = word.replace("%", "%%").replace("$", "$$")
    if _PLAIN.fullmatch(word):
        return word
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'


def executable() -> list[str]:
    """How this command was started: the `agent-memory` script, else the interpreter running
    the CLI's module."""
    script = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if os.path.basename(script) == "agent-memory" and os.access(script, os.X_OK):
        return [script]
    return [sys.executable, "-m", "agent_memory.cli"]


def command_line(args, plan) -> list[str]:
    """The server's command line: its global options and its own, paths made absolute."""
    words = executable()
    config = args.config if args.config is not None else os.environ.get("AGENT_MEMORY_CONFIG")
    if config:  # the service does not see this shell's environment
        words += ["--config", os.path.abspath(config)]
    if args.store != "auto":
        words += ["--store", args.store]
    if args.project_root is not None:
        words += ["--project-root", os.path.abspath(args.project_root)]
    if args.no_agent:
        words.append("--no-agent")
    host = f"[{plan.host}]" if ":" in plan.host else plan.host
    words += ["mcp", "--listen", f"{host}:{plan.port}"]
    if args.tools is not None:
        words += ["--tools", args.tools]
    if args.token_file is not None:
        words += ["--token-file", os.path.abspath(args.token_file)]
    for name in args.allowed_host or ():
        words += ["--allowed-host", name]
    if plan.cert:
        words += ["--tls-cert", plan.cert, "--tls-key", plan.key]
    return words


def unit_answer(args, plan, tools) -> dict[str, Any]:
    """The command's data: the unit, its file name and how to start it."""
    from agent_memory.cli.errors import UsageError
    if plan.port == 0:
        raise UsageError("--systemd-unit: a unit needs a fixed port (--listen HOST:PORT, "
                         "PORT not 0)", field="--listen")
    if plan.token is not None and args.token_file is None:
        raise UsageError("--systemd-unit: the token is in $AGENT_MEMORY_MCP_TOKEN, which the "
                         "service does not see (and a unit must not hold it): give "
                         "--token-file FILE", code="TOKEN_FILE_REQUIRED", field="--token-file")
    name = f"agent-memory-mcp-{plan.port}.service"
    url = plan.url()
    lines = [
        f"# agent-memory's MCP server over streamable HTTP at {url}, as a systemd *user* unit",
        f"# (`agent-memory mcp --systemd-unit`). Save it as ~/.config/systemd/user/{name}, then:",
        f"#   systemctl --user daemon-reload && systemctl --user enable --now {name}",
        f"# Logs: journalctl --user -u {name} -f    Stop: systemctl --user stop {name}",
        "",
        "[Unit]",
        f"Description=agent-memory MCP server at {url}",
        "",
        "[Service]",
        "Type=simple",
        "WorkingDirectory=" + os.getcwd().replace("%", "%%"),  # a path to the line's end
        "ExecStart=" + " ".join(quoted(word) for word in command_line(args, plan)),
        "# SIGTERM: running calls finish, new ones are refused, exit 0",
        "KillSignal=SIGTERM",
        "TimeoutStopSec=120",
        "Restart=on-failure",
        "RestartSec=2",
        "# exit 2: refused at start (an option, a missing token, the port taken): not retried",
        "RestartPreventExitStatus=2",
        "UMask=0077",
        "",
        "[Install]",
        "WantedBy=default.target",
        "",
    ]
    return {"unit": "\n".join(lines), "name": name,
            "path": os.path.join("~/.config/systemd/user", name),
            "start": f"systemctl --user daemon-reload && systemctl --user enable --now {name}",
            "url": url, "tools": len(tools)}
