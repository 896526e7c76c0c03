"""The MCP server of `agent-memory mcp` (mcpserve.command): the official SDK's MCPServer with a tool
per tool of the command registry (cli.commands, typed by mcpserve.tools). A tool's input schema
is its typed parameters, its output schema the command's `data` and `store`, and every failure it
anticipates is a tool error (`isError`) whose text is one JSON object."""

from __future__ import annotations

import inspect
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field, ValidationError

from agent_memory.mcpserve import tools as mcp_tools
from agent_memory.mcpserve.schemas import output_schema
from agent_memory.cli.parser import VERSION

INSTRUCTIONS = (
    "agent-memory records and reads this project's dialogue messages. Open a session "
    "(session_open) once, then `write` each message as it happens; a write is durable once it "
    "answers, even with the logger down (store \"file\": it is delivered later, never write it "
    "again). Read back with `read`, `get`, `working_set` (what to keep in mind now) and "
    "`search`; follow a dialogue's structure with `path`, `leaves`, `graph` and `relations`; "
    "forget with `delete` (mode hard erases a text written by mistake, a secret say), `mark` "
    "and `session_delete`. A failed call is a tool error whose text is one JSON object: code, message, "
    "exit_code and its meaning.")


class Answer(BaseModel):
    """A command's answer: what the CLI prints as `data` and `store`."""

    store: str = Field(description="which side answered: \"logger\", \"file\" (the outbox), "
                                   "or \"both\" (a read that merged messages still waiting in "
                                   "the outbox)")
    data: Any = Field(description="the command's answer, as the CLI prints it")


class CliTool(Tool):
    """The SDK's Tool, whose every anticipated failure is one JSON object: the command's error
    (mcpserve.tools.error_text) as it is, and arguments that do not match the input schema as a
    usage error (nothing was run). The SDK would put "Error executing tool NAME: " before the
    first, and pydantic's report in place of the second; and it would ignore an argument the
    tool does not take, where a misspelt option must not pass unnoticed."""

    async def run(self, arguments, context, convert_result=False):
        unknown = sorted(set(arguments or {}) - set(self.parameters["properties"]))
        if unknown:
            raise ToolError(mcp_tools.invalid_arguments_text(
                [{"loc": (name,), "msg": "not an argument of this tool"} for name in unknown]))
        try:
            return await super().run(arguments, context, convert_result)
        except UnexpectedToolError:
            raise  # a crash: the SDK logs it and tells the client nothing more
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                raise ToolError(mcp_tools.invalid_arguments_text(cause.errors())) from cause
            if isinstance(cause, ToolError):
                raise ToolError(str(cause)) from None
            raise


class Server(MCPServer):
    """The SDK's server, with the errors the MCP specification asks for: a call of a tool it
    does not serve, and a prompt or resource it does not have, are protocol errors (-32602,
    naming it), not a tool result (the SDK's default) or an internal error. It serves tools
    only, so it advertises neither prompts nor resources."""

    async def call_tool(self, name, arguments, context=None):
        if self._tool_manager.get_tool(name) is None:
            raise MCPError(INVALID_PARAMS, f"Unknown tool: {name}")
        return await super().call_tool(name, arguments, context)

    async def get_prompt(self, name, arguments=None, context=None):
        raise MCPError(INVALID_PARAMS, f"Unknown prompt: {name} (this server has none)")

    async def read_resource(self, uri, context=None):
        raise MCPError(INVALID_PARAMS, f"Unknown resource: {uri} (this server has none)",
                       data={"uri": str(uri)})


def build_server(call, tools: list[mcp_tools.Tool] | None = None) -> MCPServer:
    """The server: each tool of `tools` (mcpserve.tools.TOOLS unless a subset is given) runs
    its command through `await call(ctx, tool, arguments)` (mcpserve.command.Runner.call)."""
    built = []
    for spec in (mcp_tools.TOOLS if tools is None else tools):
        made = CliTool.from_function(
            _tool_function(spec, call), name=spec.name, title=spec.title,
            description=inspect.cleandoc(spec.description),
            annotations=ToolAnnotations(title=spec.title, read_only_hint=spec.read_only,
                                        destructive_hint=spec.destructive,
                                        idempotent_hint=spec.idempotent,
                                        open_world_hint=False),
            structured_output=True)
        made.parameters = input_schema(made.parameters)
        made.output_schema = output_schema(spec.name)
        built.append(made)
    # No `subscriptions/listen`: the tool list never changes, and the SDK's default (served)
    # makes `server/discover` (protocol 2026-07-28) advertise list changes and resource
    # subscriptions that `initialize` does not; unserved, both advertise the same.
    server = Server("agent-memory", version=VERSION, instructions=INSTRUCTIONS,
                    log_level="WARNING", tools=built, subscriptions=False)
    for method in ("prompts/list", "resources/list", "resources/templates/list"):
        server._lowlevel_server._request_handlers.pop(method, None)
    # The SDK wraps every message in an OpenTelemetry span, a no-op without an exporter (this
    # server installs none) that still cost 0.5 to 1 ms of a 1.5 to 2.5 ms `info` call: left out
    # (the SDK's documented opt-out is an empty middleware list).
    server._lowlevel_server.middleware = []
    return server


def input_schema(generated: dict[str, Any]) -> dict[str, Any]:
    """The SDK's schema of a tool's parameters, made smaller and stricter: no generated
    titles (a model reads the descriptions), no `"default": null` (a field left out is
    null; every optional field's type admits it), and no property it does not declare."""
    schema = {"type": "object", "properties": {}, "additionalProperties": False}
    for name, prop in generated["properties"].items():
        schema["properties"][name] = {k: v for k, v in prop.items()
                                      if k != "title" and not (k == "default" and v is None)}
    if generated.get("required"):
        schema["required"] = list(generated["required"])
    return schema


def _tool_function(spec: mcp_tools.Tool, call):
    """The function the SDK registers: the tool's typed parameters (the input schema) plus the
    request's context (for the client's roots), answering an Answer."""
    parameters = mcp_tools.parameters(spec)

    async def tool_call(ctx, **arguments):
        return await call(ctx, spec, arguments)

    context = inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context)
    tool_call.__signature__ = inspect.Signature([*parameters, context], return_annotation=Answer)
    tool_call.__annotations__ = {**{p.name: p.annotation for p in parameters},
                                 "ctx": Context, "return": Answer}
    tool_call.__name__ = tool_call.__qualname__ = spec.name
    return tool_call
