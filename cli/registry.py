"""The command registry's shapes and lookups: a command, its options and its MCP tools are each
declared once (cli.commands), and the parser (cli.parser), dispatch (cli.dispatch), the agent's
served set (cli.served), the typed calls (cli.typed) and the MCP tools (mcpserve.tools) are all
read from that one declaration. Plain classes, no import: the write path loads this module."""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs the write path 3 ms: annotations only
if TYPE_CHECKING:
    from typing import Any

# An option's kind: what its value is, on the command line and as a typed argument.
TEXT = "text"            # a string as given
INTEGER = "integer"      # checked whole (cli.option_types.integer)
SECONDS = "seconds"      # checked whole (cli.option_types.seconds)
FLAG = "flag"            # present or not
TEXTS = "texts"          # repeatable: each occurrence adds one (`--relation A --relation B`)
NAMES = "names"          # one or more after the flag, repeatable (`--participant a b`)
JSON = "json"            # a JSON object's text on the command line; an object as an argument
POSITIONAL = "positional"    # one value without a flag
POSITIONALS = "positionals"  # one or more values without a flag


class Option:
    """One option of a command: its flag (or positional name), what its value is, and the
    words that describe it, which the help and the reference (docs/reference/cli.md) are made
    of: `help` (what it does, without its default), `default` (the parse's value when it is
    left out) or `default_text` (the default in words, where the parse leaves None and the
    command works it out: "25000, or the configuration's output.max_chars"), `choices` (checked
    by the parse) or `tool_choices` (the values the command itself checks, also the MCP
    schema's enum; `tool_pair` makes it a list of exactly two joined by that separator:
    `--dialogue-kind`), `env` (the environment variable it falls back to), `example` (a value,
    for the reference) and `aliases` (earlier spellings still accepted, not shown)."""

    __slots__ = ("flag", "name", "dest", "kind", "help", "required", "default", "choices",
                 "metavar", "group", "hidden", "tool_choices", "tool_pair", "default_text",
                 "env", "example", "aliases")

    def __init__(self, flag: str, kind: str = TEXT, *, help: str | None = None,
                 required: bool = False, default: Any = None, choices: tuple | None = None,
                 metavar: str | None = None, dest: str | None = None, group: str | None = None,
                 hidden: bool = False, tool_choices: tuple | None = None,
                 tool_pair: str | None = None, default_text: str | None = None,
                 env: str | None = None, example: str | None = None,
                 aliases: tuple = ()) -> None:
        self.flag = flag
        self.name = flag.lstrip("-").replace("-", "_")  # a typed argument's name
        self.dest = dest or self.name  # its attribute in the parsed Namespace
        self.kind = kind
        self.help = help
        self.required = required or kind in (POSITIONAL, POSITIONALS)
        self.default = [] if kind == TEXTS and default is None else \
            False if kind == FLAG else default
        self.choices = choices
        self.metavar = metavar
        self.group = group  # a named argument group of the help (read's preview)
        self.hidden = hidden  # left out of the help and the reference
        self.tool_choices = tool_choices
        self.tool_pair = tool_pair
        self.default_text = default_text
        self.env = env
        self.example = example
        self.aliases = aliases

    @property
    def positional(self) -> bool:
        return self.kind in (POSITIONAL, POSITIONALS)

    @property
    def takes_value(self) -> bool:
        return self.kind != FLAG

    def shown_default(self) -> str | None:
        """The default in words, as the help and the reference state it (None: the option has
        none to state: required, a flag, or a repeatable list that starts empty)."""
        if self.default_text is not None:
            return self.default_text
        if self.required or self.kind == FLAG or self.default in (None, []):
            return None
        if isinstance(self.default, float):
            return f"{self.default:g}"
        return str(self.default)

    def values(self) -> tuple | None:
        """The values it accepts, where they are a list (checked by the parse or the command)."""
        return self.choices or (self.tool_choices if self.tool_pair is None else None)

    def described(self) -> str:
        """Its help with what the declaration says besides: accepted values, default, the
        environment variable it falls back to (the --help line; the reference has columns)."""
        parts = [self.help or ""]
        values = self.tool_choices if self.choices is None and self.tool_pair is None else None
        if values:
            parts.append(f"({'|'.join(values)})")
        shown = self.shown_default()
        if shown is not None:
            parts.append(f"[default: {shown}]")
        if self.env is not None:
            parts.append(f"[env: {self.env}]")
        return " ".join(part for part in parts if part)


class Example:
    """One example of a command: the command line as a user types it, and what it does. Every
    example is parsed by the real parser in tests/docs (a renamed option breaks the test)."""

    __slots__ = ("line", "says")

    def __init__(self, line: str, says: str) -> None:
        self.line = line
        self.says = says


class Param:
    """One argument of an MCP tool: an option of its command by name, with what differs for the
    tool (required where the command leaves it optional, its own description)."""

    __slots__ = ("name", "required", "help")

    def __init__(self, name: str, required: bool | None = None, help: str | None = None) -> None:
        self.name = name
        self.required = required
        self.help = help


class Tool:
    """The MCP tool of a command (or of one of its forms: `read --preview`). Its arguments are
    the command's options it names, in that order; `fixed` are the options it always sets.
    Reads are idempotent; a write only when `idempotent` says so."""

    __slots__ = ("name", "title", "group", "read_only", "destructive", "idempotent",
                 "description", "params", "fixed", "command")

    def __init__(self, name: str, title: str, group: str, description: str,
                 params: tuple, *, read_only: bool, destructive: bool = False,
                 idempotent: bool | None = None, fixed: dict | None = None) -> None:
        self.name = name
        self.title = title
        self.group = group  # core, navigate or forget (`agent-memory mcp --tools`)
        self.read_only = read_only
        self.destructive = destructive  # may erase what cannot be had back
        self.idempotent = read_only if idempotent is None else idempotent
        self.description = description
        self.params = tuple(p if isinstance(p, Param) else Param(p) for p in params)
        self.fixed = fixed or {}
        self.command: Command | None = None  # set by the command that declares it


class Command:
    """A command (or an action of one: `session open`): its name, help (one line), description,
    examples, the exit codes it can answer, options, the module that runs it (`run(ctx,
    args)`, named on the command, not its actions), whether the project's watcher serves it
    (True, or the name of the flag that makes it served: `status --probe`), the options of its answer's budget where its answer fits one (`budget`:
    cli.commands.BUDGET, the read commands' `--max-chars`), its actions, and its MCP tools.

    What is derived from where a command stands (`top`, `words`, `all_options`) is set once,
    as plain attributes: the write path reads them on every command."""

    __slots__ = ("name", "help", "options", "module", "served", "budgeted", "actions",
                 "tools", "parent", "groups", "top", "words", "all_options", "description",
                 "examples", "exit_codes")

    def __init__(self, name: str, help: str, options: tuple = (), *, module: str | None = None,
                 served: bool | str = False, budget: tuple = (), actions: tuple = (),
                 tools: tuple = (), groups: dict | None = None, description: str | None = None,
                 examples: tuple = (), exit_codes: tuple = ()) -> None:
        self.name = name
        self.help = help  # one line: the command list's
        self.description = description  # what --help and the reference say besides (prose)
        self.examples = examples  # Example(...): at least one per command (tests/docs)
        # The exit codes it can answer besides 0 (success), 2 (usage) and 130 (interrupted),
        # which every command can (cli.exit_codes).
        self.exit_codes = exit_codes
        self.groups = groups or {}  # a named group of options in the help: its description
        self.options = options
        self.module = module
        self.served = served
        self.budgeted = bool(budget)
        self.parent: Command | None = None
        self.top: Command = self  # the command itself, or the command of an action
        self.words: tuple[str, ...] = (name,)  # its words on the command line: session open
        self.all_options: tuple = (*options, *budget)  # its options, and its budget's
        self.actions = {action.name: action for action in actions}
        for action in actions:
            action.parent = action.top = self
            action.words = (name, action.name)
            action.all_options = (*action.options, *budget)
        self.tools = tools
        for tool in tools:
            tool.command = self

    def option(self, name: str) -> Option:
        """The option a typed argument names (`block_size` for `--block-size`)."""
        for option in self.all_options:
            if option.name == name:
                return option
        raise KeyError(f"{' '.join(self.words)} has no option {name!r}")


def commands() -> dict[str, Command]:
    """Every command by name, in the order of the help."""
    from agent_memory.cli.commands import COMMANDS
    return COMMANDS


def command_of(args) -> Command | None:
    """The declaration of a parsed command (its action's, for a command with actions)."""
    command = commands().get(args.command)
    if command is not None and command.actions:
        return command.actions.get(getattr(args, "action", None))
    return command


def tools() -> list[Tool]:
    """Every MCP tool, in the order of the commands that declare them."""
    found = []
    for command in commands().values():
        for declared in (command, *command.actions.values()):
            found.extend(declared.tools)
    return found


class Handling:
    """What the shell does with a parsed command, read from its declaration in one look
    (cli.perform, cli.dispatch, cli.served): the module whose `run(ctx, args)` runs it (None:
    no such command), whether the project's agent serves this call of it, whether its answer
    fits a budget."""

    __slots__ = ("module", "served", "budgeted")

    def __init__(self, module: str | None, served: bool, budgeted: bool) -> None:
        self.module = module
        self.served = served
        self.budgeted = budgeted


def handling(args) -> Handling:
    """How the parsed command `args` is handled (its command's declaration: an action's is
    its command's)."""
    command = commands().get(args.command)
    if command is None:
        return Handling(None, False, False)
    served = bool(getattr(args, command.served)) if isinstance(command.served, str) \
        else command.served
    return Handling(command.module, served, command.budgeted)
