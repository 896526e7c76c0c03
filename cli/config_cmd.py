"""`config generate` writes a document (0600); `config validate` checks one and shows it
with secrets redacted."""

from __future__ import annotations

import os
import tempfile
import json
from typing import Any

from cli.context import Context
from cli.errors import ConfigInvalidError, UsageError
from sync import config as config_mod


def _section(protocol: str, host: str, port: int | None, ssl: dict[str, str],
             token: str | None) -> dict[str, Any]:
    section: dict[str, Any] = {
        "protocol": protocol,
        "server": {"host": host, "port": port or (8080 if protocol == "http" else 8443)},
        "client": {"timeout": 10},
    }
    if ssl:
        section["ssl"] = {**ssl, "check_hostname": False}
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
        "ailogger_client": _section(protocol, args.logger_host, args.logger_port, ssl, args.token),
        # One fleet, one client identity: the embedder gets the same protocol and material.
        "embedding_client": _section(protocol, args.embed_host, args.embed_port, ssl, args.token),
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
    config = ctx.config
    return {"valid": True, "source": config.source,
            "file_store_only": config.logger is None, "warnings": list(config.warnings),
            "config": config_mod.redacted_view(config)}


def run(ctx: Context, args) -> tuple[dict[str, Any], str]:
    if args.action == "generate":
        return generate(args), "file"
    return validate(ctx), "file"
