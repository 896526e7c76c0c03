"""agent-memory's configuration: one JSON document, found, validated and redacted here.

Lookup order: `--config`, else `$AGENT_MEMORY_CONFIG`, else
`~/.config/vvz-agent-memory/config.json`. No document at all is valid: it means the file store
only (the embedded default). A document that is named but missing, unreadable or wrong is
invalid (exit 6), because silently falling back to file-only would hide a broken deployment.

Pure standard library: every CLI call loads the configuration, including the fast write path.
"""

from __future__ import annotations

import json
import os

TYPE_CHECKING = False  # typing costs the write path 3 ms: annotations only
if TYPE_CHECKING:
    from typing import Any

ENV_VAR = "AGENT_MEMORY_CONFIG"
DEFAULT_PATH = os.path.join("~", ".config", "vvz-agent-memory", "config.json")
SECTIONS = ("ailogger_client", "embedding_client", "embedding_model", "agent", "outbox",
            "output")
# The read commands' answer budget (cli.budget): max_chars, 0 for no limit, None for the
# CLI's default. The MCP server passes its own unless the caller gives one.
OUTPUT_KEYS = ("max_chars",)
# Caps on what may wait in the outbox (pending files): a write that would pass one is refused
# (exit 8, nothing written) instead of filling the disk while the logger is away. None: no cap.
OUTBOX_KEYS = ("max_pending_messages", "max_pending_bytes")
# The project's agent (see cli.agent_client): "auto" uses a running one and starts one when
# none runs, "use" never starts one, "off" never talks to one. `idle_exit`: seconds an
# autostarted agent waits without requests and without moving a file (files pending or not)
# before it exits.
AGENT_MODES = ("auto", "use", "off")
DEFAULT_AGENT = {"mode": "auto", "idle_exit": 900}
INFINITY = float("inf")
PROTOCOLS = ("http", "https", "mtls")
DEFAULT_EMBEDDING_MODEL = {"model": "BAAI/bge-m3", "dimension": 1024}
REDACTED = "***"
_SSL_FILES = ("cert", "key", "ca")


class ConfigInvalid(Exception):
    """The configuration cannot be used; `problems` lists every reason found."""

    def __init__(self, source: str | None, problems: list[str]) -> None:
        where = source or "configuration"
        super().__init__(f"{where}: " + "; ".join(problems))
        self.source = source
        self.problems = problems


class Config:
    """A validated document (or the embedded default when `source` is None).

    What commands read of it on every call (the logger's and the embedder's sections, the
    outbox caps, the output budget) is taken once, here: a Config is never changed after it is
    made, so these are plain attributes, to be read and not changed."""

    def __init__(self, source: str | None, document: dict[str, Any] | None = None) -> None:
        self.source = source
        self.document: dict[str, Any] = document if document is not None else {}
        self.warnings: list[str] = []
        self.raw = b""  # the document's bytes as read (sync.identity digests them)
        self.logger: dict[str, Any] | None = self.document.get("ailogger_client")
        self.embedder: dict[str, Any] | None = self.document.get("embedding_client")
        self.outbox: dict[str, int | None] = _keys(self.document.get("outbox"), OUTBOX_KEYS)
        self.output: dict[str, int | None] = _keys(self.document.get("output"), OUTPUT_KEYS)

    @property
    def base_dir(self) -> str:
        return os.path.dirname(self.source) if self.source else os.getcwd()

    @property
    def agent(self) -> dict[str, Any]:
        return {**DEFAULT_AGENT, **self.document.get("agent", {})}

    @property
    def embedding_model(self) -> dict[str, Any]:
        return {**DEFAULT_EMBEDDING_MODEL, **self.document.get("embedding_model", {})}

    def resolve_path(self, path: str) -> str:
        """Relative paths in the document resolve against the document's directory."""
        return os.path.normpath(os.path.join(self.base_dir, os.path.expanduser(path)))


def _keys(section: Any, keys: tuple[str, ...]) -> dict[str, Any]:
    """The values of `keys` in a section (None where not given). A section that is not an
    object is validate's to report: the Config is made before the validation runs."""
    given = section if isinstance(section, dict) else {}
    return {key: given.get(key) for key in keys}


def locate(explicit: str | None) -> tuple[str | None, bool]:
    """(path, required): the document to read and whether its absence is an error."""
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit)), True
    env = os.environ.get(ENV_VAR)
    if env:
        return os.path.abspath(os.path.expanduser(env)), True
    return os.path.expanduser(DEFAULT_PATH), False


def load(explicit: str | None = None) -> Config:
    """Find, read and validate the configuration; ConfigInvalid lists what is wrong."""
    path, required = locate(explicit)
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except FileNotFoundError:
        if required:
            raise ConfigInvalid(path, ["file not found"]) from None
        return Config(None)
    except OSError as exc:
        raise ConfigInvalid(path, [f"cannot read: {exc.strerror or exc}"]) from None
    try:
        document = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigInvalid(path, [f"not valid JSON: {exc}"]) from None
    config = Config(path, document if isinstance(document, dict) else {})
    config.raw = raw
    config.warnings = exposure_warnings(path, config)
    problems = validate(document, config)
    if problems:
        raise ConfigInvalid(path, problems)
    return config


def exposure_warnings(path: str, config: Config) -> list[str]:
    """A document holding a token that other users can read is worth a warning."""
    holds_token = any(isinstance((config.document.get(name) or {}).get("auth"), dict)
                      and config.document[name]["auth"].get("token")
                      for name in ("ailogger_client", "embedding_client")
                      if isinstance(config.document.get(name), dict))
    if not holds_token:
        return []
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return []
    if mode & 0o044:
        return [f"{path} holds a token and other users can read it (mode "
                f"{mode & 0o777:o}): run `chmod 600 {path}`"]
    return []


def validate(document: Any, config: Config) -> list[str]:
    """Every problem of a document: shape, types, and that referenced files exist."""
    if not isinstance(document, dict):
        return ["the document must be a JSON object"]
    problems = [f"unknown section {key!r} (expected one of {', '.join(SECTIONS)})"
                for key in document if key not in SECTIONS]
    for name in ("ailogger_client", "embedding_client"):
        if name in document:
            problems += _client_section(name, document[name], config)
    if "embedding_model" in document:
        problems += _model_section(document["embedding_model"])
    if "agent" in document:
        problems += _agent_section(document["agent"])
    if "outbox" in document:
        problems += _outbox_section(document["outbox"])
    if "output" in document:
        problems += _output_section(document["output"])
    return problems


def _output_section(section: Any) -> list[str]:
    if not isinstance(section, dict):
        return ["output must be an object with max_chars"]
    problems = [f"unknown key output.{key} (expected {', '.join(OUTPUT_KEYS)})"
                for key in section if key not in OUTPUT_KEYS]
    value = section.get("max_chars")
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or
                              (value != 0 and value < 1000)):
        problems.append(f"output.max_chars must be 0 (no limit), an integer of at least 1000, "
                        f"or null, got {value!r}")
    return problems


def _outbox_section(section: Any) -> list[str]:
    if not isinstance(section, dict):
        return ["outbox must be an object with max_pending_messages and/or max_pending_bytes"]
    problems = [f"unknown key outbox.{key} (expected {', '.join(OUTBOX_KEYS)})"
                for key in section if key not in OUTBOX_KEYS]
    for key in OUTBOX_KEYS:
        value = section.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)
                                  or value <= 0):
            problems.append(f"outbox.{key} must be a positive integer or null, got {value!r}")
    return problems


def _agent_section(section: Any) -> list[str]:
    if not isinstance(section, dict):
        return ["agent must be an object with mode and idle_exit"]
    problems = [f"unknown key agent.{key} (expected mode, idle_exit)"
                for key in section if key not in DEFAULT_AGENT]
    mode = section.get("mode", "auto")
    if mode not in AGENT_MODES:
        problems.append(f"agent.mode must be one of {', '.join(AGENT_MODES)}, got {mode!r}")
    idle = section.get("idle_exit", DEFAULT_AGENT["idle_exit"])
    # finite: JSON's 1e400 reads as infinity, which the agent's --idle-exit refuses, so every
    # agent started would exit at once
    if not isinstance(idle, (int, float)) or isinstance(idle, bool) or not 0 < idle < INFINITY:
        problems.append(f"agent.idle_exit must be a number of seconds above 0, got {idle!r}")
    return problems


def _client_section(name: str, section: Any, config: Config) -> list[str]:
    if not isinstance(section, dict):
        return [f"{name} must be an object"]
    problems: list[str] = []
    protocol = section.get("protocol", "http")
    if protocol not in PROTOCOLS:
        problems.append(f"{name}.protocol must be one of {', '.join(PROTOCOLS)}, got {protocol!r}")
    server = section.get("server")
    if not isinstance(server, dict):
        problems.append(f"{name}.server must be an object with host and port")
    else:
        host = server.get("host")
        if not isinstance(host, str) or not host.strip():
            problems.append(f"{name}.server.host must be a non-empty string")
        port = server.get("port")
        if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535:
            problems.append(f"{name}.server.port must be an integer from 1 to 65535, got {port!r}")
    client = section.get("client", {})
    if not isinstance(client, dict):
        problems.append(f"{name}.client must be an object")
        client = {}
    timeout = client.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                or not timeout > 0):
        problems.append(f"{name}.client.timeout must be a number greater than 0, got {timeout!r}")
    ssl_files: dict[str, Any] = {}
    for where, ssl in ((f"{name}.ssl", section.get("ssl", {})),
                       (f"{name}.client.ssl", client.get("ssl", {}))):
        if not isinstance(ssl, dict):
            problems.append(f"{where} must be an object")
            continue
        for key in _SSL_FILES:
            value = ssl.get(key)
            if value is None:
                continue
            if not isinstance(value, str) or not value:
                problems.append(f"{where}.{key} must be a file path")
            elif not os.path.isfile(config.resolve_path(value)):
                shown = "(path not shown: it names a private key)" if key == "key" \
                    else config.resolve_path(value)
                problems.append(f"{where}.{key}: file not found: {shown}")
            else:
                ssl_files[key] = value
        check = ssl.get("check_hostname")
        if check is not None and where.endswith(".client.ssl"):
            problems.append(f"{where}.check_hostname is not read there (ailogger-client reads "
                            f"it from {name}.ssl only, so it would silently be off): move it "
                            f"to {name}.ssl.check_hostname")
        elif check is not None and not isinstance(check, bool):
            problems.append(f"{where}.check_hostname must be true or false")
    if protocol == "mtls":
        missing = [k for k in ("cert", "key") if k not in ssl_files]
        if missing:
            problems.append(f"{name}: protocol mtls needs ssl {' and '.join(missing)}")
    auth = section.get("auth", {})
    if not isinstance(auth, dict):
        problems.append(f"{name}.auth must be an object")
    else:
        for key in ("token", "token_header"):
            if key in auth and not isinstance(auth[key], str):
                problems.append(f"{name}.auth.{key} must be a string")
    return problems


def _model_section(section: Any) -> list[str]:
    if not isinstance(section, dict):
        return ["embedding_model must be an object with model and dimension"]
    problems = []
    model = section.get("model", DEFAULT_EMBEDDING_MODEL["model"])
    if not isinstance(model, str) or not model.strip():
        problems.append("embedding_model.model must be a non-empty string")
    dimension = section.get("dimension", DEFAULT_EMBEDDING_MODEL["dimension"])
    if not isinstance(dimension, int) or isinstance(dimension, bool) or dimension <= 0:
        problems.append(f"embedding_model.dimension must be a positive integer, got {dimension!r}")
    return problems


def redacted_view(config: Config) -> dict[str, Any]:
    """The resolved document for display: absolute file paths, tokens replaced by ***."""
    view: dict[str, Any] = {}
    for name in ("ailogger_client", "embedding_client"):
        section = config.document.get(name)
        if section is None:
            view[name] = None
            continue
        shown = json.loads(json.dumps(section))
        shown.setdefault("protocol", "http")
        for ssl in (shown.get("ssl"), (shown.get("client") or {}).get("ssl")):
            if isinstance(ssl, dict):
                for key in _SSL_FILES:
                    if isinstance(ssl.get(key), str):
                        ssl[key] = REDACTED if key == "key" else config.resolve_path(ssl[key])
        auth = shown.get("auth")
        if isinstance(auth, dict) and auth.get("token"):
            auth["token"] = REDACTED
        view[name] = shown
    view["embedding_model"] = config.embedding_model
    view["agent"] = config.agent
    view["outbox"] = dict(config.outbox)  # copies: the view is the caller's, the Config not
    view["output"] = dict(config.output)
    return view
