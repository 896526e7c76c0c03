"""`AgentMemoryMiddleware`: a LangChain 1.x agent (`langchain.agents.create_agent`) whose every
message lands in an agent-memory session as it is said, in the project's outbox first and then
at the fleet's logger with its ids and times, logger down or not. `pip install
'vvz-agent-memory[langchain]'`; imported as `agent_memory.integrations.langchain`'s
`AgentMemoryMiddleware`.

A message is recorded as the chat history records it (integrations/langchain.py): the message
whole under `langchain_message`, so it reads back equal, tool calls and results included, and
kinds from its type (human: human to model; AI: model to tool when it calls tools, else model
to human; tool: tool to model; system: system to model).

When: the run's input before the agent starts (`before_agent`), each tool result before the
next model call (`before_model`), each model answer as soon as the model returns it
(`after_model`), anything else added on the way before the run ends (`after_agent`). So a run
that dies keeps what was said before it died.

Once: a message is recorded when its LangChain `id` (every message in an agent's state has one)
is not yet in the session, which the store says (read at each run's start, and again whenever a
message turns up that this process's model did not just answer: a thread resumed elsewhere).
A checkpointed thread, a second `invoke` on it, a resumed interrupt: only what is new.

History: a run whose state holds nothing the session has recorded (a new process, no
checkpointer, a new thread) gets the session's latest messages placed before its input, bounded
by `history_messages` and `history_chars` (the messages' texts); cut so that it starts on a
human message, without a tool call whose result was never recorded (a run that died in its
tool), since a provider refuses either.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import BaseMessage, RemoveMessage, trim_messages
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from agent_memory.integrations.dialogue import Dialogue
from agent_memory.integrations.langchain import KEY, entry_of, message_of, text_of


class AgentMemoryMiddleware(AgentMiddleware):
    """Records an agent's messages in the session `session_id` (1 to 128 letters, digits,
    `.`, `_`, `-`) of the project at `project_root` (the working directory's by default) with
    the configuration `config` (the CLI's by default); `project_id` defaults to the project
    directory's name. With `load_history`, a run that starts afresh continues the session: at
    most `history_messages` of its latest messages, their texts at most `history_chars`
    characters (None: no bound)."""

    def __init__(self, session_id: str, *, project_root=None, config: str | None = None,
                 load_history: bool = True, history_messages: int | None = 100,
                 history_chars: int | None = 100_000, project_id: str | None = None,
                 user_identity: str = "user", ai_identity: str = "ai",
                 tool_identity: str = "tool") -> None:
        for name, bound in (("history_messages", history_messages),
                            ("history_chars", history_chars)):
            if bound is not None and (isinstance(bound, bool) or not isinstance(bound, int)
                                      or bound < 0):
                raise ValueError(f"{name} must be a whole number of at least 0, or None; "
                                 f"got {bound!r}")
        super().__init__()
        self.session_id = session_id
        self.load_history = load_history
        self.history_messages = history_messages
        self.history_chars = history_chars
        self.identities = {"human": user_identity, "model": ai_identity, "system": "system",
                           "tool": tool_identity}
        self.dialogue = Dialogue(session_id, KEY, project_root=project_root, config=config,
                                 project_id=project_id, participants=[user_identity, ai_identity])
        self._known: set[str] = set()  # ids the session holds (a store read or our write)
        self._fresh: set[str] = set()  # ids of answers this process's model just gave
        self._lock = threading.Lock()  # one run's recording at a time

    # --- the hooks ------------------------------------------------------------------------------
    def before_agent(self, state, runtime) -> dict[str, Any] | None:
        messages = list(state.get("messages") or [])
        history = self._record(messages, start=True)
        if history:
            return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *history, *messages]}
        return None

    def before_model(self, state, runtime) -> None:
        self._record(list(state.get("messages") or []))

    def after_model(self, state, runtime) -> None:
        self._record(list(state.get("messages") or []))

    def after_agent(self, state, runtime) -> None:
        self._record(list(state.get("messages") or []))

    async def abefore_agent(self, state, runtime) -> dict[str, Any] | None:
        return await asyncio.to_thread(self.before_agent, state, runtime)

    async def abefore_model(self, state, runtime) -> None:
        await asyncio.to_thread(self.before_model, state, runtime)

    async def aafter_model(self, state, runtime) -> None:
        await asyncio.to_thread(self.after_model, state, runtime)

    async def aafter_agent(self, state, runtime) -> None:
        await asyncio.to_thread(self.after_agent, state, runtime)

    def wrap_model_call(self, request, handler):
        response = handler(request)
        self._note_fresh(response)
        return response

    async def awrap_model_call(self, request, handler):
        response = await handler(request)
        self._note_fresh(response)
        return response

    # --- recording ------------------------------------------------------------------------------
    def _record(self, messages: list[BaseMessage], start: bool = False) -> list[BaseMessage]:
        """Write the messages the session does not hold yet, in state order; at a run's start,
        the history to place before them (none unless the session holds none of them)."""
        with self._lock:
            for message in messages:
                if message.id is None:  # add_messages gives every one an id; a custom reducer
                    message.id = str(uuid.uuid4())
            new = [m for m in messages if m.id not in self._known]
            if not new:
                return []
            history: list[BaseMessage] = []
            if start or any(m.id not in self._fresh for m in new):
                earlier = self._read()
                new = [m for m in new if m.id not in self._known]
                if start and self.load_history and len(new) == len(messages):
                    history = self._bounded(earlier, {m.id for m in messages})
            if new:
                self.dialogue.append([entry_of(m, self.identities) for m in new])
                self._known.update(m.id for m in new)
                self._fresh.difference_update(m.id for m in new)
            return history

    def _note_fresh(self, response: Any) -> None:
        """The model's answers, just given in this process: recorded without asking the store
        whether another process did (none can have)."""
        response = getattr(response, "model_response", response)  # ExtendedModelResponse
        for message in getattr(response, "result", [response]):
            if isinstance(message, BaseMessage):
                if message.id is None:
                    message.id = str(uuid.uuid4())
                with self._lock:
                    self._fresh.add(message.id)

    def _read(self) -> list[BaseMessage]:
        """The session's messages as LangChain messages, noted as known. One without a LangChain
        id (written otherwise, or by the chat history without one) takes its store id, so that
        placed in a state it is not recorded again."""
        earlier = []
        for stored in self.dialogue.messages():
            message = message_of(self.dialogue, stored)
            if message.id is None:
                message.id = stored.message_id
            self._known.update((stored.message_id, message.id))
            earlier.append(message)
        return earlier

    def _bounded(self, earlier: list[BaseMessage], exclude: set[str]) -> list[BaseMessage]:
        """The latest of `earlier` within the bounds, from a human message on, without tool
        calls left unanswered (nor the results of their siblings)."""
        kept = [m for m in _answered(earlier) if m.id not in exclude]
        if self.history_messages is not None:
            kept = trim_messages(kept, max_tokens=self.history_messages, token_counter=len,
                                 strategy="last", start_on="human")
        if self.history_chars is not None:
            kept = trim_messages(kept, max_tokens=self.history_chars,
                                 token_counter=lambda ms: sum(len(text_of(m)) for m in ms),
                                 strategy="last", start_on="human")
        return kept


def _answered(messages: list[BaseMessage]) -> list[BaseMessage]:
    """The messages less each AI message with a tool call no tool result answers, and the
    results of that message's other calls."""
    results = {m.tool_call_id for m in messages if m.type == "tool"}
    dropped: set[str] = set()
    kept = []
    for message in messages:
        calls = [c.get("id") for c in getattr(message, "tool_calls", None) or []]
        if message.type == "ai" and any(c not in results for c in calls):
            dropped.update(calls)
            continue
        if message.type == "tool" and message.tool_call_id in dropped:
            continue
        kept.append(message)
    return kept
