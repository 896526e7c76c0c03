"""A model of the OpenAI Agents SDK's `Model` interface that answers from a script (no network,
no key) and records the input of every call, so a test sees what history the Runner sent."""

from __future__ import annotations

import copy
from typing import Any

from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (ResponseFunctionToolCall, ResponseOutputMessage,
                                    ResponseOutputText, ResponseReasoningItem)
from openai.types.responses.response_reasoning_item import Summary


def say(text: str, item_id: str = "msg_1") -> ResponseOutputMessage:
    return ResponseOutputMessage(id=item_id, type="message", role="assistant",
                                 status="completed",
                                 content=[ResponseOutputText(type="output_text", text=text,
                                                             annotations=[])])


def call(name: str, arguments: str, call_id: str) -> ResponseFunctionToolCall:
    """A function call without an `id` (some providers send none)."""
    return ResponseFunctionToolCall(type="function_call", name=name, arguments=arguments,
                                    call_id=call_id)


def think(text: str, item_id: str = "rs_1") -> ResponseReasoningItem:
    return ResponseReasoningItem(id=item_id, type="reasoning",
                                 summary=[Summary(type="summary_text", text=text)])


class ScriptedModel(Model):
    """Answers each call with the next list of output items of `turns`."""

    def __init__(self, turns: list[list[Any]]) -> None:
        self.turns = list(turns)
        self.inputs: list[Any] = []

    async def get_response(self, system_instructions, input, model_settings, tools,
                           output_schema, handoffs, tracing, *, previous_response_id=None,
                           conversation_id=None, prompt=None, **kwargs) -> ModelResponse:
        self.inputs.append(copy.deepcopy(input))
        return ModelResponse(output=self.turns.pop(0), usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError("the tests do not stream")
