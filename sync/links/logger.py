"""The connection to the AI Logger: built from the `ailogger_client` section, with our retry
policy and failure vocabulary.

`ailogger_client` costs about 0.6 s to import, so it is imported when a link is opened, never
at module import. Nothing is retried by the client or the adapter; retries are ours (tenacity):
transport failures only, with capped exponential backoff and full jitter. A refusal is never
retried. `messages_import` is submitted and its job polled at our own pace, not the client's
fixed 1 s.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from agent_memory.sync.config import Config
from agent_memory.sync.links.failures import Failed, Unreachable, translate


class RetryPolicy:
    """How hard to try before calling the logger unreachable.

    The rule is "a transport failure twice in a row": two attempts for interactive
    commands. The sync engine may try longer.
    """

    def __init__(self, attempts: int = 2, initial: float = 0.05, maximum: float = 2.0) -> None:
        self.attempts = max(1, attempts)
        self.initial = initial
        self.maximum = maximum

    def retrying(self):
        """A tenacity AsyncRetrying that retries Unreachable only (never a credentials
        problem): capped exponential backoff with full jitter, then the last failure is raised
        as it is."""
        from tenacity import (AsyncRetrying, retry_if_exception_type,
                              retry_if_not_exception_type, stop_after_attempt,
                              wait_random_exponential)
        from agent_memory.sync.links.failures import Credentials
        return AsyncRetrying(retry=retry_if_exception_type(Unreachable)
                             & retry_if_not_exception_type(Credentials),
                             stop=stop_after_attempt(self.attempts),
                             wait=wait_random_exponential(multiplier=self.initial,
                                                          max=self.maximum),
                             reraise=True)


INTERACTIVE = RetryPolicy(attempts=2, initial=0.05, maximum=0.2)
BATCH = RetryPolicy(attempts=4, initial=0.5, maximum=5.0)


# A batch of 1,000 takes the reference logger about 0.1 to 0.3 s: its job is polled every
# `poll_interval` (20 ms) for this long, so its end is seen within 20 ms, then less and less
# often (x1.5, up to 0.5 s) for a long one.
STEADY_POLL_S = 1.0


def import_client():
    """The fleet client's module, imported once per process with the cyclic garbage collector
    paused: the import builds some 60,000 objects that live as long as the process (modules,
    classes, schemas) and would otherwise trigger about 150 collections, about a tenth of the
    import's time. They are then frozen (`gc.freeze`), so the collections of the drain that
    follows do not walk them again; but only in a process of our own (the CLI, the agent, the
    MCP server): in a host process running the Python API (agent_memory.api loaded), a freeze
    would also exempt the host's objects from every later collection, so it is not done."""
    import sys
    if "ailogger_client" in sys.modules:
        import ailogger_client  # through the import system: waits for another thread's import
        return ailogger_client
    import gc
    paused = gc.isenabled()
    gc.disable()
    try:
        import ailogger_client
    finally:
        if paused:
            gc.enable()
    if "agent_memory.api" not in sys.modules:
        gc.freeze()
    return ailogger_client


class LoggerLink:
    """An open connection to the logger; use as `async with LoggerLink(config) as link`."""

    def __init__(self, config: Config, policy: RetryPolicy = INTERACTIVE,
                 poll_interval: float = 0.02, import_timeout: float = 600.0) -> None:
        if config.logger is None:
            raise ValueError("no ailogger_client section in the configuration")
        self._config = config
        self._policy = policy
        self._poll_interval = poll_interval
        self._import_timeout = import_timeout
        self._client = None

    async def __aenter__(self) -> "LoggerLink":
        client_class = import_client().AiLoggerClient
        self._client = client_class(self._config.logger, base_dir=self._config.base_dir)
        await self._client.__aenter__()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._client is not None:
            try:
                await self._client.__aexit__(None, None, None)
            except Exception:  # closing a broken connection must not hide the real outcome
                pass
            self._client = None

    async def _retrying(self, operation, *args, **kwargs) -> Any:
        """Run one client call, retrying transport failures under the policy; a TLS link that
        keeps being closed without an answer is looked at once (sync.links.credentials.confirm)."""
        try:
            async for attempt in self._policy.retrying():
                with attempt:
                    try:
                        return await operation(*args, **kwargs)
                    except Exception as exc:  # translated into Unreachable / Refused / Failed
                        raise translate(exc) from exc
        except Unreachable as exc:
            from agent_memory.sync.links.credentials import confirm
            found = await confirm(exc, self._config.logger, self._config.resolve_path)
            if found is exc:
                raise
            raise found from exc
        raise AssertionError("unreachable: tenacity reraises")

    async def call(self, command: str, **params: Any) -> Any:
        """A direct command by its client method name; returns the answer's `data`."""
        method = getattr(self._client, command)
        answer = await self._retrying(method, **{k: v for k, v in params.items()
                                                if v is not None})
        return unwrap(answer)

    async def health(self) -> Any:
        return await self.call("health")

    async def import_batch(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """`messages_import` of `items`: one outcome per item, in input order.

        Raises Unreachable when the submit or the polling cannot reach the logger (nothing is
        confirmed then; a later import of the same items is answered as a repeat), Refused when
        the whole call is refused, Failed when the job ends without a usable result.
        """
        job_id = await self._retrying(self._client.messages_import_submit, items)
        submitted = time.monotonic()
        deadline = submitted + self._import_timeout
        interval = self._poll_interval
        while True:
            snapshot = await self._retrying(self._client.get_job_status, job_id,
                                            sync_from_queue=True)
            if snapshot.is_terminal:
                break
            if time.monotonic() >= deadline:
                raise Failed(f"import job {job_id} did not finish in {self._import_timeout} s")
            await asyncio.sleep(interval)
            if time.monotonic() - submitted > STEADY_POLL_S:  # a long job: ask less often
                interval = min(interval * 1.5, 0.5)
        return _job_outcomes(snapshot, job_id, len(items))


def unwrap(answer: Any) -> Any:
    """The `data` of a `{success, data}` envelope (a bare answer is returned as it is)."""
    if isinstance(answer, dict) and answer.get("success") is True and "data" in answer:
        return answer["data"]
    return answer


def _job_outcomes(snapshot: Any, job_id: str, expected: int) -> list[dict[str, Any]]:
    """The per-item outcomes of a finished import job, read as the client itself reads them.

    The client's own readers of a job answer are reused (pinned ailogger-client 0.1.30) so a
    refusal or a result array is recognised exactly as its waiting form would.
    """
    from ailogger_client.queued_methods import _find_refusal, _find_result_array
    summary = snapshot.summary
    raw = summary.get("last_queue_poll", summary)
    refusal = _find_refusal(raw, "messages_import")
    if refusal is not None:
        raise translate(refusal)
    status = str(snapshot.execution_status or "").lower()
    result = _find_result_array(raw)
    if result is None:
        raise Failed(f"import job {job_id} ended {status!r} without a result array")
    if len(result) != expected:
        raise Failed(f"import job {job_id} answered {len(result)} outcomes for {expected} items")
    return [dict(entry) for entry in result]
