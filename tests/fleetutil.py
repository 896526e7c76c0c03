"""Helpers for tests that talk to the reference logger through the real client."""

import asyncio

from ops.fleet.net import free_port


def closed_port() -> int:
    """A loopback port nothing listens on."""
    return free_port()


def read_all(fleet, session_id: str) -> list[dict]:
    """Every message the logger holds for a session (full mode), following continuations."""
    return fleet.read_session(session_id)


def held_by(fleet, session_id: str) -> list[dict]:
    """read_all, or none while the logger does not know the session yet."""
    try:
        return read_all(fleet, session_id)
    except Exception as exc:  # noqa: BLE001 - the client's refusal: SESSION_UNKNOWN
        if "SESSION_UNKNOWN" not in str(exc):
            raise
        return []


def logger_sessions(fleet, **filters) -> list[dict]:
    async def go():
        async with fleet.logger_client() as client:
            return (await client.sessions_list(block_size=1000, **filters))["data"]["sessions"]
    return asyncio.run(go())


def offline_document(model: str = "hash-1024", dimension: int = 1024) -> dict:
    """A configuration whose logger and embedder listen nowhere (connection refused)."""
    port = closed_port()
    section = {"protocol": "http", "server": {"host": "127.0.0.1", "port": port},
               "client": {"timeout": 5}}
    return {"ailogger_client": section, "embedding_client": section,
            "embedding_model": {"model": model, "dimension": dimension}}
