"""One parsed command run to (exit code, the envelope to print), whatever
goes wrong (every failure is one JSON object with its documented exit code). Both the shell
(cli.main) and the project's agent, for the commands it serves (cli.served), run commands
through here, so both answer the same bytes. Which module runs a command, and whether its
answer fits a budget, is the command registry's (cli.commands)."""

from __future__ import annotations

import errno
import sys
from functools import partial

from agent_memory.cli import output, registry
from agent_memory.cli.errors import CliError, NoRoomError, StoreUnavailableError, UsageError
from agent_memory.outbox.atomic import UnsafePathError


def _dispatch(module: str | None, ctx, args) -> tuple[object, str]:
    """The command's module (cli.commands) runs it: (data, store). A module named by a dotted
    path lives in a package above the CLI (`mcpserve.command`: `agent-memory mcp`), which the
    CLI names but never imports by a statement of its own. Imported by the import statement's
    own path (importlib's would hide it from -X importtime, which tests read)."""
    if module is None:
        raise UsageError(f"unknown command {args.command!r}")
    path = f"agent_memory.{module}" if "." in module else f"agent_memory.cli.{module}"
    return __import__(path, fromlist=("run",)).run(ctx, args)


def execute(ctx, args, handling: registry.Handling) -> tuple[int, dict]:
    """Run one parsed command, as its declaration says (`handling`: cli.registry.handling):
    (exit code, the envelope to print). The agent runs served commands through here too, so
    both paths answer the same bytes."""
    try:
        if handling.budgeted:  # the budget is applied here, so the agent's answer too
            from agent_memory.cli import budget_apply
            limit = budget_apply.limit(ctx, args)
        data, store = _dispatch(handling.module, ctx, args)
        envelope = output.success_envelope(data, store)
        if handling.budgeted:
            envelope = budget_apply.fitted(ctx, args, envelope, limit,
                                           partial(_dispatch, handling.module))
        return 0, envelope
    except CliError as exc:
        return exc.exit_code, output.failure_envelope(exc)
    except UnsafePathError as exc:
        error = StoreUnavailableError(f"refused: {exc.strerror}", code="STORE_UNSAFE_PATH")
        return error.exit_code, output.failure_envelope(error)
    except PermissionError as exc:  # e.g. a session directory of another owner or mode
        error = StoreUnavailableError(
            f"permission denied: {exc.filename or 'the store'}: this user may not read or write "
            "it; fix its owner or mode", code="STORE_PERMISSION_DENIED")
        return error.exit_code, output.failure_envelope(error)
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            return _unexpected(exc)
        error = NoRoomError(f"no space left on the device for the store ({exc.strerror}): "
                            "nothing was written; free some space (`agent-memory gc` removes "
                            "old confirmed files) and try again")
        return error.exit_code, output.failure_envelope(error)
    except Exception as exc:  # unexpected: still one JSON object, and the trace on stderr
        return _unexpected(exc)


def _unexpected(exc: BaseException) -> tuple[int, dict]:
    import traceback
    traceback.print_exception(exc, file=sys.stderr)
    error = CliError(f"unexpected failure: {type(exc).__name__}: {exc}", code="INTERNAL_ERROR")
    return 1, output.failure_envelope(error)
