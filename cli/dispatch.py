"""The command table: one parsed command run to (exit code, the envelope to print), whatever
goes wrong (every failure is one JSON object with its documented exit code). Both the shell
(cli.main) and the project's agent, for the commands it serves (cli.served), run commands
through here, so both answer the same bytes."""

from __future__ import annotations

import errno
import sys

from agent_memory.cli import output
from agent_memory.cli.errors import CliError, NoRoomError, StoreUnavailableError, UsageError
from agent_memory.outbox.atomic import UnsafePathError


def _dispatch(ctx, args) -> tuple[object, str]:
    command = args.command
    if command in NAVIGATION or (command == "read" and args.preview):
        from agent_memory.cli import navigate_cmd
        return navigate_cmd.run(ctx, args)
    if command == "session":
        from agent_memory.cli import session_cmd
        return session_cmd.run(ctx, args)
    if command == "write":
        from agent_memory.cli import write_cmd
        return write_cmd.run(ctx, args)
    if command in ("read", "get", "sessions"):
        from agent_memory.cli import read_cmd
        return read_cmd.run(ctx, args)
    if command in ("delete", "mark"):
        from agent_memory.cli import forget_cmd
        return forget_cmd.run(ctx, args)
    if command in ("search", "working-set"):
        from agent_memory.cli import retrieval_cmd
        return retrieval_cmd.run(ctx, args)
    if command == "embed":
        from agent_memory.cli import embed_cmd
        return embed_cmd.run(ctx, args)
    if command in ("sync", "import"):
        from agent_memory.cli import sync_cmd
        return sync_cmd.run(ctx, args)
    if command == "status":
        from agent_memory.cli import status_cmd
        return status_cmd.run(ctx, args)
    if command == "config":
        from agent_memory.cli import config_cmd
        return config_cmd.run(ctx, args)
    if command == "store":
        from agent_memory.cli import store_cmd
        return store_cmd.run(ctx, args)
    if command == "agent":
        from agent_memory.cli import agent_cmd
        return agent_cmd.run(ctx, args)
    if command == "gc":
        from agent_memory.cli import gc_cmd
        return gc_cmd.run(ctx, args)
    if command == "verify":
        from agent_memory.cli import verify_cmd
        return verify_cmd.run(ctx, args)
    if command == "mcp":
        from agent_memory.cli import mcp_cmd
        return mcp_cmd.run(ctx, args)
    raise UsageError(f"unknown command {command!r}")


NAVIGATION = frozenset({"relations", "path", "leaves", "graph", "info"})
# Run by the agent when one answers (cli.agent_client.serve); `status` only with --probe.
SERVED = frozenset({"read", "get", "sessions", "search", "working-set"}) | NAVIGATION
# Their answers fit --max-chars (cli.budget_apply): every command that answers texts or lists.
BUDGETED = SERVED


def execute(ctx, args) -> tuple[int, dict]:
    """Run one parsed command: (exit code, the envelope to print). The agent runs served
    commands through here too, so both paths answer the same bytes."""
    try:
        if args.command in BUDGETED:  # the budget is applied here, so the agent's answer too
            from agent_memory.cli import budget_apply
            limit = budget_apply.limit(ctx, args)
        data, store = _dispatch(ctx, args)
        envelope = output.success_envelope(data, store)
        if args.command in BUDGETED:
            envelope = budget_apply.fitted(ctx, args, envelope, limit, _dispatch)
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
