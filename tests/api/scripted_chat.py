"""A LangChain chat model that answers from a script (langchain-core's GenericFakeChatModel: no
network, no key), takes tools (`bind_tools` returns it unchanged, so `create_agent` accepts it)
and records the messages of every call, so a test sees what history the agent sent."""

from __future__ import annotations

import copy
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from pydantic import Field


class ScriptedChatModel(GenericFakeChatModel):
    """Answers each call with the next message of `messages` (an iterator of AIMessage or
    str); `inputs` holds each call's messages, copied."""

    inputs: list[list[Any]] = Field(default_factory=list)
    disable_streaming: bool = True  # `stream` too answers through _generate, whole

    def bind_tools(self, tools, **kwargs):
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.inputs.append(copy.deepcopy(messages))
        return super()._generate(messages, stop, run_manager, **kwargs)


def script(*answers: AIMessage | str) -> ScriptedChatModel:
    return ScriptedChatModel(messages=iter(answers))


def calls(name: str, args: dict, call_id: str, message_id: str | None = None) -> AIMessage:
    """An answer calling one tool."""
    return AIMessage("", id=message_id, tool_calls=[{"name": name, "args": args, "id": call_id}])
