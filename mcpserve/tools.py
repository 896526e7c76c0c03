"""The MCP server's tools (mcpserve.command), read from the command registry (cli.commands): each
tool's typed parameters are options of its command, their types and choices those the command
declares. The server runs the command from those values by the CLI's own code (cli.typed,
cli.perform), so a tool answers exactly what the command prints: its `data` and `store`, or its
error with the exit code's meaning.

A tool for a new command is its `Tool(...)` in the command's entry of cli.commands (and its
output schema in mcpserve.schemas)."""

import inspect
import json
from typing import Annotated, Any, Literal

from pydantic import Field, WrapValidator

from agent_memory.cli import registry
from agent_memory.cli.budget import DEFAULT_MCP
from agent_memory.cli.commands import TOOL_GROUPS as GROUPS
from agent_memory.cli.errors import MEANINGS, USAGE
from agent_memory.cli.registry import (FLAG, INTEGER, JSON, NAMES, POSITIONALS, SECONDS, TEXTS,
                                       Option, Tool)

TOOLS: list[Tool] = registry.tools()


def selected(names: str | None) -> list[Tool]:
    """The tools `--tools` names: a comma-separated list of tool names and groups (core,
    navigate, forget, all); all of them without a list. ValueError names what is unknown."""
    if names is None:
        return list(TOOLS)
    wanted: set[str] = set()
    by_name = {t.name for t in TOOLS}
    for word in (w.strip() for w in names.split(",")):
        if word == "all":
            wanted |= by_name
        elif word in GROUPS:
            wanted |= {t.name for t in TOOLS if t.group == word}
        elif word in by_name:
            wanted.add(word)
        else:
            raise ValueError(f"--tools: {word!r} is neither a tool nor a group (groups: "
                             f"{', '.join(GROUPS)}, all; tools: {', '.join(sorted(by_name))})")
    return [t for t in TOOLS if t.name in wanted]


def _absent_or(value: Any, validate) -> Any:
    """null, and for a text the empty string, mean "left out" (a model whose client demands
    every field, as strict schemas do, fills a field it means to leave out with one of them)."""
    return None if value is None or value == "" else validate(value)


def _nullable(schema: dict[str, Any]) -> None:
    """The property's type with null beside it (`"type": ["integer", "null"]`, null among an
    enum's values), so the `default: null` it carries is valid against it and a client may
    send null (JSON Schema 2020-12; strict-schema converters keep it)."""
    schema["type"] = [schema["type"], "null"]
    if "enum" in schema:
        schema["enum"] = [*schema["enum"], None]


def optional(kind: Any, description: str) -> Any:
    """An option the caller may leave out (or send as null): the CLI's default then applies.
    Typed as `kind`, not `kind | None`: the SDK would read a string field that may be None
    as JSON first, turning a title "null" into nothing and "[1]" into a list. The schema
    says `kind` or null (_nullable)."""
    return Annotated[kind, WrapValidator(_absent_or),
                     Field(description=description, json_schema_extra=_nullable)]


def _as_object(value: Any, validate) -> Any:
    if value is None or value == "":
        return None
    if isinstance(value, str):  # the SDK parses JSON text first; what reaches here is not JSON
        raise ValueError("must be a JSON object (or its JSON text)")
    if not isinstance(value, dict):
        raise ValueError("must be a JSON object")
    return value


def _object_or_text(schema: dict[str, Any]) -> None:
    """A free-form object is advertised as its JSON text (a string) or null: strict-schema
    converters refuse an object whose properties are not declared. An object is accepted
    too."""
    description = schema.get("description")
    schema.clear()
    schema.update({"type": ["string", "null"], "default": None})
    if description:
        schema["description"] = description


def json_object(description: str) -> Any:
    """An optional free-form JSON object, kept verbatim (`metadata`, `attributes`)."""
    return Annotated[Any, WrapValidator(_as_object),
                     Field(description=description + ", as a JSON object or its JSON text",
                           json_schema_extra=_object_or_text)]


def required(kind: Any, description: str) -> Any:
    return Annotated[kind, Field(description=description)]


def error_text(exit_code: int, envelope: dict[str, Any]) -> str:
    """A failed command as the tool error's text: the CLI's code and message (and details),
    the exit code it would have exited with and what that code means."""
    error = envelope["error"]
    body = {"code": error["code"], "message": error["message"], "exit_code": exit_code,
            "meaning": MEANINGS.get(exit_code, "unexpected failure")}
    if "details" in error:
        body["details"] = error["details"]
    return json.dumps(body, ensure_ascii=False)


def invalid_arguments_text(errors: list[dict[str, Any]]) -> str:
    """Arguments that do not match a tool's input schema, in the shape of a command's usage
    error (nothing was run): each field named with what is wrong, not the value given."""
    fields = [".".join(str(part) for part in e["loc"]) or "arguments" for e in errors]
    problems = "; ".join(f"{field}: {e['msg']}" for field, e in zip(fields, errors))
    return error_text(USAGE, {"error": {"code": "USAGE",
                                        "message": f"invalid arguments: {problems}",
                                        "details": {"fields": fields}}})


MAX_CHARS = f"at most this many characters in this result (default {DEFAULT_MCP}; 0: no " \
            f"limit); a cut answer says how to read on"
_TYPES = {INTEGER: int, SECONDS: float, FLAG: bool, TEXTS: list[str]}


def _kind(option: Option) -> Any:
    """An option's type as a tool's argument: its choices as an enum, a list for what repeats."""
    choices = option.tool_choices or option.choices
    if option.tool_pair is not None:
        return Annotated[list[Literal[choices]], Field(min_length=2, max_length=2)]
    if choices is not None:
        return Literal[choices]
    if option.kind in (NAMES, POSITIONALS):
        return Annotated[list[str], Field(min_length=1)]
    return _TYPES.get(option.kind, str)


def _with_default(option: Option) -> str:
    """An option's help as a tool argument's description: with its default, which the model
    cannot read anywhere else (its values are the schema's enum)."""
    shown = option.shown_default()
    return option.help if shown is None else f"{option.help} (default {shown})"


def parameters(tool: Tool) -> list[inspect.Parameter]:
    """The tool's typed parameters (its input schema): the options it names, each required or
    optional as the tool says (else as the command does), and a read's budget, `max_chars`."""
    made = []
    for param in tool.params:
        option = tool.command.option(param.name)
        described = param.help or _with_default(option)
        needed = option.required if param.required is None else param.required
        if option.kind == JSON:  # a free-form object: always optional
            annotation, needed = json_object(described), False
        elif needed:
            annotation = required(_kind(option), described)
        else:
            annotation = optional(_kind(option), described)
        made.append(inspect.Parameter(param.name, inspect.Parameter.KEYWORD_ONLY,
                                      annotation=annotation,
                                      default=inspect.Parameter.empty if needed else None))
    if tool.command.top.budgeted:
        made.append(inspect.Parameter("max_chars", inspect.Parameter.KEYWORD_ONLY,
                                      annotation=optional(int, MAX_CHARS), default=None))
    return made


def values(tool: Tool, arguments: dict[str, Any]) -> dict[str, Any]:
    """The command's option values of a call: the arguments given, what the tool always sets,
    and for a read its budget (the caller's, else the server's default) measured on the tool
    result's text."""
    given = {name: value for name, value in arguments.items() if value is not None}
    given.update(tool.fixed)
    if tool.command.top.budgeted:
        given.setdefault("max_chars", DEFAULT_MCP)
        given["answer_form"] = "mcp"
    return given
