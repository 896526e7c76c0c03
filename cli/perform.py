"""A parsed command run as the shell runs it, whoever asked for it (the command line, cli.main;
an MCP tool's call, mcpserve.command; a Python API method, api.runner): in the project's agent when
it serves the command and answers, else here (cli.dispatch); its answer handed over; then, when
no agent answered, the agent started for the next command (after the answer: the caller waits
on it). Typed callers (`perform_values`) skip the command line: their values are checked as
the parse checks them and become its options directly (cli.typed)."""

from __future__ import annotations

from agent_memory.cli import output, registry
from agent_memory.cli.dispatch import execute
from agent_memory.cli.errors import INTERRUPTED, CliError  # noqa: F401 - cli.main imports it here


def interrupted() -> dict:
    return output.failure_envelope(CliError("interrupted", code="INTERRUPTED"))


def perform(args, answer, agent_argv, warm=None) -> int:
    """Run `args`; `answer(rc, envelope)` gets its envelope, or the line the agent printed for
    it (a str); the exit code. `agent_argv()` is the command line the agent is asked to run
    (its requests carry one). `warm` (cli.warm.Warm): what a long-lived caller keeps between
    its commands; None in a one-shot process."""
    ctx = None
    try:
        from agent_memory.cli.context import Context
        from agent_memory.cli.served import serve_command
        ctx = Context(args, serve_command=serve_command, warm=warm)
        handling = registry.handling(args)  # its declaration, looked up once
        if handling.served:
            from agent_memory.cli import agent_client
            served = agent_client.serve(ctx, args, agent_argv())
            if served is not None:
                rc, line = served
                answer(rc, line)
                return rc
        rc, envelope = execute(ctx, args, handling)
        answer(rc, envelope)
        if ctx.agent_wanted:  # no agent answered this command: start one for the next
            from agent_memory.cli import agent_client
            agent_client.after_command(ctx)
        return rc
    except CliError as exc:
        answer(exc.exit_code, output.failure_envelope(exc))
        return exc.exit_code
    except KeyboardInterrupt:
        answer(INTERRUPTED, interrupted())
        return INTERRUPTED
    finally:
        if ctx is not None:
            ctx.close()


def perform_values(command, values: dict, global_values: dict, warm=None) -> tuple[int, dict]:
    """`command` (cli.registry.Command) called with typed values by option name (an MCP tool's
    arguments, a Python API method's parameters) and the global options' values by dest: no
    argv and no parse; a value the command line would refuse is refused with its words and
    exit 2. (exit code, the command's envelope as a dict.)"""
    import json
    from agent_memory.cli import typed
    try:
        args = typed.namespace(command, values, global_values)
    except CliError as exc:
        return exc.exit_code, output.failure_envelope(exc)
    answers: list[dict] = []

    def answer(rc: int, envelope) -> None:  # the agent's answer arrives as its printed line
        answers.append(json.loads(envelope) if isinstance(envelope, str) else envelope)

    rc = perform(args, answer, lambda: typed.argv_of(args), warm=warm)
    return rc, answers[0]
