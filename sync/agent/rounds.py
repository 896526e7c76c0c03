"""What one of the agent's rounds did, in the form a one-shot `sync` reports it.

A `sync` run beside the project's agent of its own configuration does not forward the store
itself (the agent holds the sync lock): it asks the agent for a round now (the `sync` request)
and answers that round's report, with the exit codes it would have had inline
(cli.sync_cmd). So the answer travels over the socket as JSON: the sessions' reports, the
warnings, and the failure that stopped the round (its `as_dict`, sync.links.failures), if
any.
"""

from __future__ import annotations

from typing import Any

from agent_memory.sync.links import failures


class RoundResult:
    def __init__(self) -> None:
        self.reports: list = []  # sync.engine.SessionReport, in the order forwarded
        self.warnings: list[str] = []
        self.error: BaseException | None = None  # what stopped the round
        self.cut_short = False  # the agent began to stop mid-round: not the whole store

    def as_dict(self) -> dict[str, Any]:
        """The JSON the agent answers a `sync` request with."""
        answer: dict[str, Any] = {"sessions": [report.as_dict() for report in self.reports],
                                  "warnings": list(self.warnings)}
        if self.error is not None:
            answer["failure"] = failures.as_failure(self.error).as_dict()
        return answer
