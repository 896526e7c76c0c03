"""Tool definitions every MCP client accepts: valid JSON Schema 2020-12 whose defaults are valid
against their own properties, null and the empty text accepted as "left out", unknown
arguments refused naming them, a title, four hints and an output schema per tool, names and
descriptions within what clients enforce, a strict-schema conversion that succeeds on every
tool; protocol errors (-32602) for an unknown tool, prompt or resource; `--tools` subsets."""

from __future__ import annotations

import asyncio
import json
import re

import anyio
import jsonschema
import pytest
from mcp.shared.exceptions import MCPError

from amtest import make_project, message_args, open_args
from test_mcp import call, mcp_session

from agent_memory.mcpserve import tools as mcp_tools
from agent_memory.mcpserve.server import build_server


def listed(selection: str | None = None) -> list[dict]:
    server = build_server(lambda ctx, argv: None, mcp_tools.selected(selection))
    tools = asyncio.run(server.list_tools())
    return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]


def test_every_schema_is_valid_2020_12_and_every_default_fits_its_property():
    validator = jsonschema.Draft202012Validator
    for tool in listed():
        validator.check_schema(tool["inputSchema"])
        validator.check_schema(tool["outputSchema"])
        schema = tool["inputSchema"]
        assert schema["additionalProperties"] is False
        for name, prop in schema["properties"].items():
            if "default" in prop:
                validator(prop).validate(prop["default"])  # default null is allowed
            if name not in schema.get("required", []):
                validator(prop).validate(None)  # every optional field takes null
        assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", tool["name"]), tool["name"]
        assert 0 < len(tool["description"]) <= 1024, tool["name"]
        hints = tool["annotations"]
        assert tool["title"] and hints["title"] == tool["title"]
        assert {"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} <= \
            set(hints), tool["name"]


def test_tool_subsets_and_their_size():
    full, core = listed(), listed("core")
    assert {t["name"] for t in core} == {t.name for t in mcp_tools.TOOLS if t.group == "core"}
    assert {t["name"] for t in listed("navigate,delete")} == \
        {"preview", "relations", "path", "leaves", "graph", "info", "delete"}
    assert len(json.dumps(core)) < len(json.dumps(full)) * 0.65
    with pytest.raises(ValueError, match="bogus"):
        mcp_tools.selected("core,bogus")


def test_a_strict_schema_conversion_accepts_every_tool():
    """The OpenAI Agents SDK's strict conversion (every field required, no free-form object):
    it fails on a schema it cannot make strict."""
    strict = pytest.importorskip("agents.strict_schema")
    for tool in listed():
        converted = strict.ensure_strict_json_schema(json.loads(json.dumps(tool["inputSchema"])))
        assert set(converted["required"]) == set(converted["properties"]), tool["name"]


def test_left_out_fields_unknown_arguments_and_protocol_errors(tmp_path):
    project = make_project(tmp_path)
    assert project.cli("--store", "file", *open_args("S1")).rc == 0
    written = project.cli("--store", "file", *message_args("S1", "hello")).data["message_id"]

    async def go():
        async with mcp_session(project, "--store", "file") as session:
            # what a strict-schema model sends for the fields it leaves out: null, ""
            ok, read = await call(session, "read", session_id="S1", start=None,
                                  block_size=None, continuation="", mode=None,
                                  show_deleted=None)
            assert ok and [m["message_id"] for m in read["data"]["messages"]] == [written]
            ok, found = await call(session, "search", query="hello", scope="session",
                                   target="S1", occurred_from="", occurred_to="",
                                   filter_session_id="", sender_kind=None, ranking="bm25")
            assert ok, found
            ok, wrote = await call(session, "write", session_id="S1", sender_kind="human",
                                   sender_identity="a", receiver_kind="model",
                                   receiver_identity="b", text="with attributes as text",
                                   attributes='{"k": [1, 2]}', message_id="", occurred_at="")
            assert ok, wrote
            ok, error = await call(session, "read", session_id="S1", bogus_field=1)
            assert not ok and error["exit_code"] == 2 and error["details"]["fields"] == \
                ["bogus_field"], error
            for attempt in (session.call_tool("no_such_tool", {}),
                            session.get_prompt("no_such_prompt"),
                            session.read_resource("agent-memory://nothing")):
                with pytest.raises(MCPError) as raised:
                    await attempt
                assert raised.value.code == -32602
                assert "no_such" in raised.value.message or "nothing" in raised.value.message
            capabilities = session.initialize_result.capabilities
            assert capabilities.tools is not None
            assert capabilities.prompts is None and capabilities.resources is None
        async with mcp_session(project, "--store", "file", after=("--tools", "forget")) as session:
            names = {t.name for t in (await session.list_tools()).tools}
            assert names == {"delete", "mark", "session_delete"}
    anyio.run(go)
    stored = project.cli("--store", "file", "read", "--session-id", "S1").data["messages"]
    assert stored[-1]["attributes"] == {"k": [1, 2]}


def test_the_openai_agents_sdk_calls_every_tool_with_strict_schemas(tmp_path):
    """The OpenAI Agents SDK's own MCP integration (agents.mcp) over stdio, its strict-schema
    conversion on: every tool converts (the SDK would silently fall back to a non-strict
    schema otherwise) and is called through the SDK's function tool with what a strict model
    sends: every field, null for those it leaves out. No model and no network: the tools are
    driven directly. A call may fail on its merits (an unknown message, say), never on its
    arguments."""
    pytest.importorskip("agents")
    from agents.mcp import MCPServerStdio, MCPUtil
    from agents.tool_context import ToolContext
    from amtest import CLI
    project = make_project(tmp_path)
    assert project.cli("--store", "file", *open_args("S1")).rc == 0
    message = project.cli("--store", "file", *message_args("S1", "hello")).data["message_id"]
    required_values = {"session_id": "S1", "project_id": "P", "dialogue_kind": ["human", "model"],
                       "participant": ["alice"], "sender_kind": "human", "sender_identity": "a",
                       "receiver_kind": "model", "receiver_identity": "b", "text": "strict",
                       "message_id": message, "node_id": message, "anchor": message,
                       "mode": "soft", "confirm": "S9", "message_ids": [message],
                       "query": "hello", "scope": "all_projects"}

    async def go():
        server = MCPServerStdio({"command": CLI, "args": ["--store", "file", "mcp"],
                                 "env": project.env, "cwd": project.root},
                                client_session_timeout_seconds=60)
        async with server:
            answers = {}
            for tool in await server.list_tools():
                function = MCPUtil.to_function_tool(tool, server, convert_schemas_to_strict=True)
                assert function.strict_json_schema, tool.name
                schema = function.params_json_schema
                arguments = {name: required_values[name] if name in tool.input_schema.get(
                    "required", []) else None for name in schema["properties"]}
                if tool.name == "session_delete":
                    arguments["session_id"] = "S9"
                context = ToolContext(context=None, tool_name=tool.name, tool_call_id="c1",
                                      tool_arguments=json.dumps(arguments))
                answers[tool.name] = await function.on_invoke_tool(context,
                                                                  json.dumps(arguments))
            return answers
    answers = asyncio.run(go())
    assert set(answers) == {t.name for t in mcp_tools.TOOLS}
    for name, answer in answers.items():
        text = answer if isinstance(answer, str) else json.dumps(answer, default=str)
        assert '"exit_code": 2' not in text and "USAGE" not in text, (name, text)
