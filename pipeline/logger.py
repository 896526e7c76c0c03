"""Looking at the logger the way the product does (sync.links.logger), for the checks."""

from __future__ import annotations

import asyncio
from typing import Any

from agent_memory.sync.config import Config
from agent_memory.sync.links.logger import LoggerLink


def call(config: Config, command: str, **params: Any) -> Any:
    """One logger command; returns the answer's data (raises sync.links.failures errors)."""
    async def go() -> Any:
        async with LoggerLink(config) as link:
            return await link.call(command, **params)
    return asyncio.run(go())


def delete_sessions(config: Config, session_ids: list[str]) -> list[str]:
    """Delete what the run opened; returns the ids that could not be deleted."""
    async def go() -> list[str]:
        left = []
        async with LoggerLink(config) as link:
            for session_id in session_ids:
                try:
                    await link.call("delete_session", session_id=session_id)
                except Exception as exc:  # unknown (never reached the logger) is fine
                    if "SESSION_UNKNOWN" not in str(exc):
                        left.append(session_id)
        return left
    return asyncio.run(go())
