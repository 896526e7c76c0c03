"""Structured logs on stderr (structlog JSON lines); stdout belongs to the one JSON answer.

Configured on first use, so commands that log nothing never pay structlog's import.
"""

from __future__ import annotations

import sys

_configured = False


class _CurrentStderr:
    """Whatever sys.stderr is when a line is written (the watcher swaps in sync.agent.stderr_pump)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def _import_structlog():
    """structlog without its Twisted integration. structlog imports `structlog.twisted` whenever
    Twisted is installed (the fleet clients bring it: mcp-proxy-adapter needs jsonrpc, which
    needs Twisted); that costs about 50 ms and 2 MB resident in every process that logs, the
    agent for its whole life, and nothing here uses it. The block lasts only for structlog's
    own import: afterwards `from structlog import twisted` imports it as usual."""
    if "structlog" in sys.modules or "structlog.twisted" in sys.modules:
        import structlog
        return structlog
    sys.modules["structlog.twisted"] = None  # type: ignore[assignment]  # its import fails
    try:
        import structlog
    finally:
        del sys.modules["structlog.twisted"]
    if getattr(structlog, "twisted", None) is None and hasattr(structlog, "twisted"):
        del structlog.twisted  # the None it kept: a later import finds the module again
    return structlog


def get_logger(name: str = "agent-memory"):
    global _configured
    structlog = _import_structlog()
    if not _configured:
        structlog.configure(
            processors=[structlog.processors.add_log_level,
                        structlog.processors.TimeStamper(fmt="iso", utc=True),
                        structlog.processors.JSONRenderer()],
            logger_factory=structlog.PrintLoggerFactory(file=_CurrentStderr()),
            cache_logger_on_first_use=True)
        _configured = True
    return structlog.get_logger(name)


def install_log_bridge(log) -> None:
    """Route the standard library's log records (watchdog, the fleet clients) through structlog,
    so stderr carries JSON lines only."""

    import logging

    class Bridge(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            try:
                method = getattr(log, record.levelname.lower(), log.warning)
                method("library_log", logger=record.name, message=record.getMessage())
            except Exception:  # noqa: BLE001 - logging must never break the watcher
                pass

    root = logging.getLogger()
    root.handlers[:] = [Bridge()]
    root.setLevel(logging.WARNING)
