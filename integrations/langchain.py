"""LangChain's chat history (`langchain_core.chat_history.BaseChatMessageHistory`) kept by
agent-memory: the messages land in the project's outbox first and reach the fleet's logger with
their ids and times, logger down or not. `pip install 'vvz-agent-memory[langchain]'`
(langchain-core >= 1.6, < 2: the class is deprecated since 1.6.4 and due to go in 2.0).

Each message is one agent-memory message: the message whole (`message_to_dict`) under the
attribute `langchain_message`, so it reads back equal to what was added (`id`,
`additional_kwargs`, `response_metadata` included; the store's own message id goes into none of
them), its text for people and search (its tool calls' JSON when it has no text), and kinds
from its type (human: human to model; ai: model to human, or to tool when it calls tools;
tool: tool to model; system: system to model; others: model to model). Messages of the session
written otherwise (the CLI) read back as human, AI or system messages.

LangChain 1.x agents (`langchain.agents.create_agent`) record theirs through
`AgentMemoryMiddleware` (integrations/langchain_agent.py, `pip install
'vvz-agent-memory[langchain]'` brings `langchain` too): importable from here, imported only when
asked for, so this chat history needs langchain-core alone.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import (AIMessage, BaseMessage, HumanMessage, SystemMessage,
                                     message_to_dict, messages_from_dict)

from agent_memory.integrations.dialogue import Dialogue, Entry

KEY = "langchain_message"
_KINDS = {"human": ("human", "model"), "ai": ("model", "human"), "tool": ("tool", "model"),
          "system": ("system", "model")}
_OF_KIND = {"human": HumanMessage, "model": AIMessage, "system": SystemMessage}


class AgentMemoryChatMessageHistory(BaseChatMessageHistory):
    """A chat history on an agent-memory session. `session_id` follows the store's rule (1 to
    128 letters, digits, `.`, `_`, `-`); `project_root` and `config` as for
    `agent_memory.Memory`; `project_id` defaults to the project directory's name. `clear()`
    deletes the session (its texts purged from the project's files)."""

    def __init__(self, session_id: str, *, project_root=None, config: str | None = None,
                 project_id: str | None = None, user_identity: str = "user",
                 ai_identity: str = "ai", tool_identity: str = "tool") -> None:
        self.session_id = session_id
        self.identities = {"human": user_identity, "model": ai_identity, "system": "system",
                           "tool": tool_identity}
        self.dialogue = Dialogue(session_id, KEY, project_root=project_root, config=config,
                                 project_id=project_id, participants=[user_identity, ai_identity])

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        """The session's messages in order."""
        return [self._message(m) for m in self.dialogue.messages()]

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Append the messages, in the order given."""
        entries = [self._entry(m) for m in messages]
        if entries:
            self.dialogue.append(entries)

    def clear(self) -> None:
        """Delete the session (a session delete: irreversible)."""
        self.dialogue.clear()

    async def aget_messages(self) -> list[BaseMessage]:
        return await asyncio.to_thread(lambda: self.messages)

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        await asyncio.to_thread(self.add_messages, messages)

    async def aclear(self) -> None:
        await asyncio.to_thread(self.clear)

    def _message(self, stored) -> BaseMessage:
        return message_of(self.dialogue, stored)

    def _entry(self, message: BaseMessage) -> Entry:
        return entry_of(message, self.identities)


def message_of(dialogue: Dialogue, stored) -> BaseMessage:
    """The LangChain message a stored message holds (one written otherwise: a human, AI or
    system message of its text)."""
    ours, value = dialogue.item_of(stored)
    if ours:
        return messages_from_dict([value])[0]
    return _OF_KIND.get(stored.sender_kind, HumanMessage)(content=stored.text)


def entry_of(message: BaseMessage, identities: dict[str, str]) -> Entry:
    """A LangChain message as an entry: kinds from its type, identities by kind."""
    value = message_to_dict(message)
    json.dumps(value)  # refused here, before anything is written, when not JSON
    sender, receiver = _KINDS.get(message.type, ("model", "model"))
    if message.type == "ai" and getattr(message, "tool_calls", None):
        receiver = "tool"
    return Entry(sender, identities[sender], receiver, identities[receiver], text_of(message),
                 value)


def text_of(message: BaseMessage) -> str:
    """The text a message shows: its own, or its tool calls' JSON (its data's) when empty."""
    text = message.text if isinstance(message.text, str) else str(message.text)
    if not text.strip():
        calls = getattr(message, "tool_calls", None)
        text = json.dumps(calls if calls else message_to_dict(message)["data"],
                          ensure_ascii=False, default=str)
    return text


def __getattr__(name: str):
    """`AgentMemoryMiddleware` on first use: it imports `langchain` (the agents), which this
    chat history does not need."""
    if name == "AgentMemoryMiddleware":
        from agent_memory.integrations.langchain_agent import AgentMemoryMiddleware
        return AgentMemoryMiddleware
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
