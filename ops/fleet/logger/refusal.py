"""Refusals of the reference logger and the two wire shapes the client recognises.

Direct commands answer a refusal in the answer itself (route A of the contract digest):
`{"success": false, "error": statement, "data": {"code", "framework_code", "details"}}`, which
ailogger-client turns into ServiceRefusalError(code, statement, command=...). The always-queued
`messages_import` refuses a whole call at submit time in-band (route C): a JSON-RPC error whose
`data.code` is the stable code, raised from `validate_params` before any job exists.
"""

from __future__ import annotations

from typing import Any

FRAMEWORK_CODE = -32000  # the client ignores the value; the key's presence marks a refusal


class Refusal(Exception):
    """A refusal with a stable code (outbox.contract) and a statement for humans."""

    def __init__(self, code: str, statement: str, *, violation: str | None = None,
                 expected: Any = None, got: Any = None) -> None:
        super().__init__(f"{code}: {statement}")
        self.code = code
        self.statement = statement
        self.details: dict[str, Any] = {}
        if violation is not None:
            self.details["violation"] = violation
        if expected is not None:
            self.details["expected"] = expected
        if got is not None:
            self.details["got"] = got if isinstance(got, (str, int, float, bool)) else repr(got)

    def as_result(self) -> Any:
        """Route A: the answer-borne refusal of a direct command."""
        from mcp_proxy_adapter.commands.result import CommandResult

        return CommandResult(success=False, error=self.statement,
                             data={"code": self.code, "framework_code": FRAMEWORK_CODE,
                                   "details": self.details})

    def as_validation_error(self) -> Exception:
        """Route C: the in-band JSON-RPC error of a queued command's submit."""
        from mcp_proxy_adapter.core.errors import ValidationError

        return ValidationError(self.statement, data={"code": self.code, "details": self.details})

    def as_item(self, message_id: Any) -> dict[str, Any]:
        """A failed item of an import: never a `data` dict (that would refuse the whole import)."""
        return {"message_id": message_id if isinstance(message_id, str) else None,
                "success": False, "code": self.code, "statement": self.statement}
