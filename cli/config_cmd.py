"""`config generate` writes a document (0600); `config validate` checks one and shows it
with secrets redacted.

`validate` checks more than every command's loading does: the certificate files it names
(readable, a certificate, a key that matches the client certificate, within their validity
period) are problems (exit 6) when wrong, and warnings when merely worrying (expiring within 14
days, a key others may read). Loading does not refuse an expired certificate: a write must
still land in the outbox, and the logger's refusal is then reported as a credentials problem."""

from __future__ import annotations

import os
import tempfile
import json
from typing import Any

from agent_memory.cli.context import Context
from agent_memory.cli.errors import ConfigInvalidError, UsageError
from agent_memory.sync import config as config_mod


def _section(protocol: str, host: str, port: int | None, ssl: dict[str, str],
             token: str | None, check_hostname: bool) -> dict[str, Any]:
    section: dict[str, Any] = {
        "protocol": protocol,
        "server": {"host": host, "port": port or (8080 if protocol == "http" else 8443)},
        "client": {"timeout": 10},
    }
    if ssl or protocol != "http":
        # top-level `ssl`: where both fleet clients read check_hostname
        section["ssl"] = {**ssl, "check_hostname": check_hostname}
    if token:
        section["auth"] = {"token": token, "token_header": "X-API-Key"}
    return section


def generate(args) -> dict[str, Any]:
    output = os.path.abspath(os.path.expanduser(args.output))
    if os.path.exists(output) and not args.force:
        raise UsageError(f"{output} exists: pass --force to replace it")
    # Certificate paths are taken relative to the working directory and written absolute, so
    # the document does not depend on where it is later read from.
    ssl = {key: os.path.abspath(os.path.expanduser(value))
           for key, value in (("cert", args.logger_cert), ("key", args.logger_key),
                              ("ca", args.logger_ca)) if value}
    protocol = args.protocol or ("mtls" if ssl else "http")
    document = {
        "ailogger_client": _section(protocol, args.logger_host, args.logger_port, ssl,
                                    args.token, args.check_hostname),
        # One fleet, one client identity: the embedder gets the same protocol and material.
        "embedding_client": _section(protocol, args.embed_host, args.embed_port, ssl,
                                     args.token, args.check_hostname),
        "embedding_model": {
            "model": args.embed_model or config_mod.DEFAULT_EMBEDDING_MODEL["model"],
            "dimension": args.embed_dimension or config_mod.DEFAULT_EMBEDDING_MODEL["dimension"],
        },
    }
    config = config_mod.Config(output, document)
    problems = config_mod.validate(document, config)
    if problems:
        raise ConfigInvalidError("; ".join(problems), problems=problems)
    directory = os.path.dirname(output)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=directory, prefix=".config-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(document, handle, indent=2)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, 0o600)
        os.replace(temp, output)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise
    return {"path": output, "config": config_mod.redacted_view(config)}


def validate(ctx: Context) -> dict[str, Any]:
    from agent_memory.sync.links.credentials import config_file_problems
    config = ctx.config
    problems, warned = config_file_problems(config)
    warnings = list(config.warnings) + warned
    if problems:
        raise ConfigInvalidError(f"{config.source}: " + "; ".join(problems), problems=problems,
                                 warnings=warnings)
    return {"valid": True, "source": config.source,
            "file_store_only": config.logger is None, "warnings": warnings,
            "config": config_mod.redacted_view(config)}


def run(ctx: Context, args) -> tuple[dict[str, Any], str]:
    if args.action == "generate":
        return generate(args), "file"
    return validate(ctx), "file"
