"""The agent-memory configuration document that points at a running reference fleet.

Written by `ops.fleet up` into the data directory (mode 0600, as `config generate` would), so a
user or a test can run agent-memory against the fleet with `--config PATH` at once. Its
`embedding_model` names the model the reference embedder serves by default, so vectors made by
agent-memory and by the reference logger agree.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def document(logger_port: int, embed_port: int, model: str, dimension: int,
             timeout: float = 10, secured: dict[str, Any] | None = None) -> dict[str, Any]:
    """The document for a fleet on these ports; over TLS, with the client certificate and the
    token, when the fleet's security (ops.fleet.security) asks for them."""
    from ops.fleet import security
    secured = secured or {"protocol": "http"}
    return {"ailogger_client": security.client_section(secured, logger_port, timeout),
            "embedding_client": security.client_section(secured, embed_port, timeout),
            "embedding_model": {"model": model, "dimension": dimension}}


def write(path: Path, doc: dict[str, Any]) -> Path:
    """Replace the document atomically, readable by its owner only."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, (json.dumps(doc, indent=2) + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    return path
