"""What the watcher knows of its logger's health, and when it tries it again.

After a failed round there are no rounds for a capped, jittered, growing delay (x
`backoff_factor` from `backoff_initial` up to `backoff_max`); meanwhile one cheap `health`
request every `probe_interval` seconds tells when the logger is back, and the drain starts at
once. The logger refusing this configuration's credentials is no outage: retrying will not fix
it, so there are no probes and the delay is long (x2 from `credentials_backoff_initial` up to
`credentials_backoff_max`); a changed configuration is tried at once (`forget`).
"""

from __future__ import annotations

import asyncio
import time

from agent_memory.outbox.survey import iso
from agent_memory.sync.agent.backoff import Backoff
from agent_memory.sync.links.failures import (Credentials, Failed, Refused, Unreachable, account,
                                              pending_reason)
from agent_memory.sync.links.logger import RetryPolicy

PROBE_POLICY = RetryPolicy(attempts=1)


class LoggerHealth:
    def __init__(self, options, report, log) -> None:
        self.options = options
        self.report = report
        self.log = log
        self._backoff = Backoff(options.backoff_initial, options.backoff_max,
                                options.backoff_factor)
        self._credentials = Backoff(options.credentials_backoff_initial,
                                    options.credentials_backoff_max, 2.0)
        self._last_failure: BaseException | None = None
        self._announced_back = False  # "logger_back" logged since the last failure
        self.retry_at: float | None = None
        self.next_probe = 0.0

    # --- the loop's side ---------------------------------------------------------------------
    def waiting(self, now: float) -> bool:
        """No round now: the logger failed and its delay has not run out."""
        return self.retry_at is not None and now < self.retry_at

    def failed_before(self) -> bool:
        """The last round failed (the next one is a full rescan)."""
        return self.retry_at is not None

    def failed(self, exc: BaseException) -> float:
        """A round failed with `exc`: publish it, log it, and wait; the delay."""
        credentials = isinstance(exc, Credentials)
        backoff = self._credentials if credentials else self._backoff
        delay = backoff.failed()
        self._last_failure = exc
        self._announced_back = False
        now = time.monotonic()
        self.retry_at = now + delay
        # no probes while credentials are refused: a probe would only be refused as well
        self.next_probe = self.retry_at if credentials else \
            now + min(self.options.probe_interval, delay)
        report = self.report
        report.totals["errors"] += 1
        report.next_attempt = time.time() + delay
        said = account(exc)
        message = str(said["message"])[:2000]
        report.last_error = {"at": iso(), **said, "message": message,
                             "consecutive_failures": backoff.failures,
                             "retry_in_s": round(delay, 3)}
        report.status = "backing_off"
        self.log.warning("logger_" + str(said["kind"]), error=message,
                         failures=backoff.failures, retry_in_s=round(delay, 3))
        return delay

    def succeeded(self) -> None:
        """A round went through: the logger is back (said once) and the delays start over."""
        failures = self._backoff.failures
        if failures and not self._announced_back:
            # the backoff ran out before a probe saw the logger answer: the round did
            self.log.info("logger_back", after_failures=failures)
        if failures:
            self.log.info("logger_drained", after_failures=failures)
        self.forget()

    def forget(self) -> None:
        """Start over (a round went through, or the configuration changed): the next round is
        tried at once."""
        self._backoff.reset()
        self._credentials.reset()
        self._last_failure = None
        self.retry_at = None

    async def probe_if_due(self, config, now: float) -> bool:
        """While waiting, one `health` request per `probe_interval`: True when the logger
        answered (the drain starts at once)."""
        if now < self.next_probe:
            return False
        if await self._probe(config):
            self.log.info("logger_back", after_failures=self._backoff.failures)
            self._announced_back = True
            self.retry_at = now
            return True
        self.next_probe = time.monotonic() + self.options.probe_interval
        return False

    async def _probe(self, config) -> bool:
        """One `health` request: does the logger answer at all?"""
        from agent_memory.sync.links.logger import LoggerLink
        try:
            async with LoggerLink(config, PROBE_POLICY) as link:
                await asyncio.wait_for(link.health(), self.options.probe_timeout)
        except Refused:
            return True  # it answered
        except (Unreachable, Failed, asyncio.TimeoutError, OSError):
            return False
        except Exception:  # noqa: BLE001 - anything else: not back yet
            return False
        return True

    # --- the request threads' side -----------------------------------------------------------
    def backing_off(self) -> str | None:
        """Why no round is tried now (the logger failed and no probe is due yet): a command
        that waits is answered at once. None when a round may run; a due probe becomes that
        round."""
        now = time.monotonic()
        if self.retry_at is not None and now < self.retry_at:
            if now < self.next_probe:
                failure = self._last_failure
                if isinstance(failure, Unreachable):
                    return pending_reason(failure)
                return f"the logger failed: {(self.report.last_error or {}).get('message', '')}"
            self.retry_at = now
        return None
