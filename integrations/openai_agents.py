"""A `Session` of the OpenAI Agents SDK (`agents.memory.Session`) kept by agent-memory: the
history lands in the project's outbox first and reaches the fleet's logger with its ids and
times, logger down or not. `pip install 'vvz-agent-memory[openai-agents]'`.

Each item the SDK hands over is one message: the item whole under the attribute
`openai_agents_item` (so it reads back equal, as JSON, to what was added), a text for people
and search (the message's text, a call as `name(arguments)`, a call's output), and kinds from
its role or type (user: human to model; assistant: model to human; system and developer:
system to model; a tool call: model to tool; its output: tool to model; anything else, as
reasoning: model to model). Messages of the session written otherwise (the CLI) read back as
`{"role", "content"}` items.

Every method takes the SDK's `wrapper` keyword (the run's `RunContextWrapper`), as the SDK's own
context-aware sessions do: the Runner passes it only to a session whose four methods all accept
it. It is accepted and left unused: the session's project and id are fixed when it is made, and
the run's context (the application's own objects) is neither stored nor sent to the logger.

Every method runs its commands in a worker thread, one command at a time in the process, so
one session object may serve several threads, each with its own event loop (Runner.run_sync).
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from agent_memory.integrations.dialogue import Dialogue, Entry

if TYPE_CHECKING:
    from agents.items import TResponseInputItem
    from agents.memory import SessionSettings
    from agents.run_context import RunContextWrapper

KEY = "openai_agents_item"
_ROLE_KINDS = {"user": ("human", "model"), "assistant": ("model", "human"),
               "system": ("system", "model"), "developer": ("system", "model")}
_ROLE_OF_KIND = {"human": "user", "model": "assistant", "system": "system", "tool": "user"}


class AgentMemorySession:
    """The SDK's Session protocol on an agent-memory session. `session_id` follows the store's
    rule (1 to 128 letters, digits, `.`, `_`, `-`); `project_root` and `config` as for
    `agent_memory.Memory` (the CLI's defaults); `project_id` defaults to the project
    directory's name. `pop_item` hard-deletes the latest item; `clear_session` deletes the
    session (both purge their texts from the project's files)."""

    session_settings: SessionSettings | None = None

    def __init__(self, session_id: str, *, project_root=None, config: str | None = None,
                 project_id: str | None = None, user_identity: str = "user",
                 assistant_identity: str = "assistant", tool_identity: str = "tool",
                 session_settings: SessionSettings | None = None) -> None:
        self.session_id = session_id
        self.session_settings = session_settings
        self.identities = {"human": user_identity, "model": assistant_identity,
                           "system": "system", "tool": tool_identity}
        self.dialogue = Dialogue(session_id, KEY, project_root=project_root, config=config,
                                 project_id=project_id,
                                 participants=[user_identity, assistant_identity])
        self._converted: tuple[list, list] | None = None  # (messages, their items)

    async def get_items(self, limit: int | None = None, *,
                        wrapper: RunContextWrapper[Any] | None = None,
                        ) -> list[TResponseInputItem]:
        """The history in order; with `limit`, its latest `limit` items (none for 0)."""
        if limit is not None and limit <= 0:
            return []
        return await asyncio.to_thread(self._items, limit)

    async def add_items(self, items: list[TResponseInputItem], *,
                        wrapper: RunContextWrapper[Any] | None = None) -> None:
        """Append the items, in the order given."""
        entries = [self._entry(item) for item in items]
        if entries:
            await asyncio.to_thread(self.dialogue.append, entries)

    async def pop_item(self, *, wrapper: RunContextWrapper[Any] | None = None,
                       ) -> TResponseInputItem | None:
        """Remove (hard delete) and return the latest item; None when there is none."""
        popped = await asyncio.to_thread(self.dialogue.pop)
        return None if popped is None else self._item(popped)

    async def clear_session(self, *, wrapper: RunContextWrapper[Any] | None = None) -> None:
        """Delete the session and every item of it (a session delete)."""
        await asyncio.to_thread(self.dialogue.clear)

    # --- items and messages ---------------------------------------------------------------------
    def _items(self, latest: int | None = None) -> list[Any]:
        """The items of the session's latest messages (all without `latest`), each converted
        once: the dialogue keeps its messages from call to call (integrations.dialogue), so a
        whole history costs what was added since, not what it holds."""
        messages = self.dialogue.messages(latest)
        if latest:
            return [self._item(m) for m in messages]
        held = self._converted
        if not (held and held[0] and len(held[0]) <= len(messages)
                and messages[0] is held[0][0] and messages[len(held[0]) - 1] is held[0][-1]):
            held = self._converted = ([], [])
        for message in messages[len(held[0]):]:
            held[0].append(message)
            held[1].append(self._item(message))
        return list(held[1])

    def _item(self, message) -> Any:
        ours, item = self.dialogue.item_of(message)
        if ours:
            return item
        return {"role": _ROLE_OF_KIND.get(message.sender_kind, "user"), "content": message.text}

    def _entry(self, item: Any) -> Entry:
        json.dumps(item)  # refused here, before anything is written, when not JSON
        sender, receiver = _kinds(item)
        return Entry(sender, self.identities[sender], receiver, self.identities[receiver],
                     text_of(item), item)


def _kinds(item: Any) -> tuple[str, str]:
    if not isinstance(item, dict):
        return "model", "model"
    role = item.get("role")
    if role in _ROLE_KINDS and item.get("type", "message") == "message":
        return _ROLE_KINDS[role]
    kind = str(item.get("type", ""))
    if kind.endswith("_output"):
        return "tool", "model"
    if kind.endswith("_call"):
        return "model", "tool"
    return "model", "model"


def text_of(item: Any) -> str:
    """A readable text for an item (a message's text, `name(arguments)` for a call, a call's
    output); its JSON where it has none."""
    text = ""
    if isinstance(item, dict):
        content = item.get("content")
        if isinstance(content, str):
            text = content
        elif isinstance(content, list):
            text = "\n".join(_part_text(p) for p in content if _part_text(p))
        elif item.get("type") == "function_call":
            text = f"{item.get('name')}({item.get('arguments', '')})"
        elif "output" in item:
            output = item["output"]
            text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
        elif isinstance(item.get("summary"), list):
            text = "\n".join(_part_text(p) for p in item["summary"] if _part_text(p))
    if not text.strip():
        text = json.dumps(item, ensure_ascii=False)
    return text


def _part_text(part: Any) -> str:
    if isinstance(part, dict):
        value = part.get("text", part.get("refusal"))
        return value if isinstance(value, str) else ""
    return ""
