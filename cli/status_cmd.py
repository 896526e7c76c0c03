"""`status [--probe]`: how the outbox is doing.

Measured from the files (never from what a watcher last published, which may be stale): per
session and in total, pending messages, events, vectors and bytes, the age of the oldest
pending, quarantined items, messages (pending or imported) without a vector. The watcher is
alive when the sync lock is held by the pid it published (the lock is an flock, freed even by a
kill -9); its published state comes along, flagged stale when it no longer runs. With
`--probe`, one request each tells whether the logger and the embedder answer.

Credentials get a section of their own (`credentials`), since retrying never fixes them: the
certificate files checked offline (expired, not yet valid, a key that does not match, expiring
within 14 days), and a refusal the watcher last met (or the probe meets), each with what to fix.
"""

from __future__ import annotations

import time
from typing import Any

from agent_memory.cli.context import Context
from agent_memory.cli.errors import CliError
from agent_memory.outbox.survey import iso

PROBE_TIMEOUT = 5.0


def _watcher(store_path: str) -> dict[str, Any]:
    from agent_memory.sync.agent import published
    from agent_memory.sync.lock import SyncLock
    holder = SyncLock(store_path).holder()
    state = published.read(store_path)
    alive = published.watcher_pid(store_path, holder)
    info: dict[str, Any] = {"alive": alive is not None, "pid": alive, "lock_holder_pid": holder}
    if holder is not None and alive is None:
        info["lock_holder"] = "a one-shot sync or an inline forward (not a watcher)"
    if state is not None:
        state = dict(state)
        state["stale"] = alive is None and state.get("status") != "stopped" \
            and "unreadable" not in state
        info["state"] = state
    else:
        info["state"] = None
    return info


async def _probe_logger(config) -> dict[str, Any]:
    if config.logger is None:
        return {"configured": False, "answers": False}
    from agent_memory.sync.links.failures import Credentials, Refused
    from agent_memory.sync.links.logger import LoggerLink, RetryPolicy
    started = time.perf_counter()
    try:
        async with LoggerLink(config, RetryPolicy(attempts=1)) as link:
            await asyncio_wait_for(link.health(), PROBE_TIMEOUT)
    except Credentials as exc:
        return _refused_credentials(exc, started)
    except Refused as exc:
        return {"configured": True, "answers": True, "refused": exc.code,
                "seconds": round(time.perf_counter() - started, 3)}
    except Exception as exc:  # noqa: BLE001 - any failure means: it does not answer
        return {"configured": True, "answers": False, "error": _describe(exc),
                "seconds": round(time.perf_counter() - started, 3)}
    return {"configured": True, "answers": True,
            "seconds": round(time.perf_counter() - started, 3)}


async def _probe_embedder(config) -> dict[str, Any]:
    if config.embedder is None:
        return {"configured": False, "answers": False}
    from agent_memory.sync.links.failures import Credentials, Refused
    from agent_memory.sync.links.logger import RetryPolicy
    model = config.embedding_model
    started = time.perf_counter()
    try:
        from agent_memory.sync.links.embedder import embed_texts
        vectors = await asyncio_wait_for(
            embed_texts(config, ["agent-memory status probe"], timeout=PROBE_TIMEOUT,
                        policy=RetryPolicy(attempts=1)), PROBE_TIMEOUT)
    except Credentials as exc:
        return {**_refused_credentials(exc, started), "model": model["model"],
                "dimension": model["dimension"]}
    except Refused as exc:
        return {"configured": True, "answers": True, "refused": exc.code,
                "error": exc.statement, "model": model["model"], "dimension": model["dimension"],
                "seconds": round(time.perf_counter() - started, 3)}
    except Exception as exc:  # noqa: BLE001 - any failure means: it does not answer
        return {"configured": True, "answers": False, "error": _describe(exc),
                "model": model["model"], "dimension": model["dimension"],
                "seconds": round(time.perf_counter() - started, 3)}
    return {"configured": True, "answers": True, "model": model["model"],
            "dimension": len(vectors[0]) if vectors else model["dimension"],
            "seconds": round(time.perf_counter() - started, 3)}


def _refused_credentials(exc, started: float) -> dict[str, Any]:
    from agent_memory.sync.links.failures import FIXES
    return {"configured": True, "answers": False, "credentials": exc.credential, "error": exc.reason,
            "fix": FIXES.get(exc.credential), "seconds": round(time.perf_counter() - started, 3)}


def credentials_report(config, watcher: dict[str, Any]) -> dict[str, Any] | None:
    """What is wrong with the credentials, as far as can be told without the network: the
    certificate files of both sections, and a refusal the watcher met last."""
    from agent_memory.sync.links.credentials import config_file_problems
    problems, warnings = config_file_problems(config)
    report: dict[str, Any] = {}
    if problems:
        report["problems"] = problems
    if warnings:
        report["warnings"] = warnings
    last = ((watcher.get("state") or {}).get("last_error") or {})
    if last.get("kind") == "credentials" and watcher.get("alive"):
        report["refused"] = {key: last.get(key) for key in
                             ("at", "credentials", "message", "fix", "retry_in_s")}
    return report or None


async def asyncio_wait_for(awaitable, seconds: float):
    import asyncio
    try:
        return await asyncio.wait_for(awaitable, seconds)
    except asyncio.TimeoutError:
        raise TimeoutError(f"no answer within {seconds} s") from None


def _describe(exc: BaseException) -> str:
    from agent_memory.sync.links.failures import describe
    return describe(exc)[:500]


def _probe(config) -> dict[str, Any]:
    import asyncio

    async def both():
        logger, embedder = await asyncio.gather(_probe_logger(config), _probe_embedder(config))
        return {"logger": logger, "embedder": embedder}

    return asyncio.run(both())


def run(ctx: Context, args) -> tuple[dict[str, Any], str]:
    store = ctx.store()
    data: dict[str, Any] = {"store": store.path, "at": iso()}
    from agent_memory.outbox import survey
    data.update(survey.survey(store.path, gaps=store.vector_gaps))
    data["watcher"] = _watcher(store.path)
    from agent_memory.cli.agent_cmd import agent_status
    data["agent"] = agent_status(store.path, ctx)
    try:
        config = ctx.config
    except CliError:
        config = None  # an invalid document: `config validate` says why
    credentials = credentials_report(config, data["watcher"]) if config is not None else None
    if credentials is not None:
        data["credentials"] = credentials
    if args.probe:
        data["probe"] = _probe(ctx.config)
    return data, "file"
