"""The budget (cli.budget) applied to a read command's answer: its limit (--max-chars, else
the configuration's output.max_chars, else the CLI's default), what is measured (the printed
line, or an MCP tool result's text), and the command run again for a smaller block."""

from __future__ import annotations

import argparse

from agent_memory.cli import budget, output
from agent_memory.cli.errors import UsageError


def limit(ctx, args) -> int:
    """The answer's limit in characters, 0 for none; checked before the command runs."""
    given = getattr(args, "max_chars", None)
    if given is None:
        configured = ctx.config.output.get("max_chars")
        return budget.DEFAULT_CLI if configured is None else configured
    if given != 0 and given < budget.MINIMUM:
        raise UsageError(f"--max-chars must be 0 (no limit) or at least {budget.MINIMUM}, got "
                         f"{given}", code="INVALID_NUMBER", field="--max-chars")
    return given


def measure_line(envelope: dict) -> int:
    """What the CLI prints: the one line, its newline included."""
    return len(output.render(envelope))


def tool_answer(envelope: dict) -> dict:
    """A successful command's answer as its MCP tool's result (mcpserve.tools): its `data` and
    `store`. Declared here, beside what measures it: the CLI never imports the MCP server."""
    return {"store": envelope["store"], "data": envelope["data"]}


def measure_tool_text(envelope: dict) -> int:
    """What an MCP tool result's text is: the SDK's JSON of the tool's answer, indented by 2."""
    import pydantic_core
    return len(pydantic_core.to_json(tool_answer(envelope), fallback=str, indent=2).decode())


def fitted(ctx, args, envelope: dict, chars: int, dispatch) -> dict:
    """`envelope` within `chars` characters as this command answers it (cli.budget.fit)."""
    measure = measure_tool_text if getattr(args, "answer_form", "line") == "mcp" \
        else measure_line

    def rerun(changes: dict) -> dict:
        again = argparse.Namespace(**{**vars(args), **changes})
        return output.success_envelope(*dispatch(ctx, again))

    try:
        return budget.fit(envelope, chars, measure, args, rerun)
    except budget.TooLarge as exc:
        raise UsageError(f"{exc}: ask with a larger --max-chars (or 0 for no limit)",
                         code="ANSWER_TOO_LARGE", field="--max-chars") from None
