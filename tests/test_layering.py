"""The house's layering, read from the code itself: dependencies flow one way,
`integrations -> api -> cli -> sync -> outbox` (a layer may use any below it, none above), no
product module imports the development tools (`ops`, `tests`), and no module-level import
cycle exists. Every import counts, the lazy ones inside functions too.

`mcpserve` (the MCP server, `agent-memory mcp`) stands beside `api` on top of `cli`: it drives
the CLI's commands and may use `cli -> sync -> outbox`, and no layer imports it (the CLI names
its command's module as a dotted path that cli.dispatch imports, not by an import of its
own)."""

from __future__ import annotations

import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAYERS = ["outbox", "sync", "cli", "api", "integrations"]  # each may import those before it
BESIDE = {"mcpserve": "cli"}  # a top layer on the named one: it imports that and what is below
PRODUCT = LAYERS + list(BESIDE) + ["pipeline"]


def modules():
    """{dotted name under agent_memory: path} of every product module."""
    found = {}
    for package in PRODUCT:
        for folder, _dirs, files in os.walk(os.path.join(ROOT, package)):
            if "__pycache__" in folder:
                continue
            for name in files:
                if name.endswith(".py"):
                    path = os.path.join(folder, name)
                    dotted = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                    found[dotted.removesuffix(".__init__")] = path
    return found


def imports(path: str, top_level_only: bool = False) -> set[str]:
    """The modules `path` imports (dotted, under agent_memory, without that prefix), or the
    bare top-level names of anything else it imports."""
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    nodes = tree.body if top_level_only else ast.walk(tree)
    out = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            if name == "agent_memory" or name.startswith("agent_memory."):
                out.add(name.removeprefix("agent_memory").lstrip("."))
            else:
                out.add(name.split(".")[0])
    return out


def test_dependencies_flow_one_way():
    wrong = []
    for module, path in modules().items():
        layer = module.split(".")[0]
        below = BESIDE.get(layer, layer)
        allowed = set(LAYERS[:LAYERS.index(below) + 1]) if below in LAYERS else set(LAYERS)
        allowed.add(layer)
        for name in imports(path):
            if name in ("ops", "tests"):
                wrong.append((module, name))
            target = name.split(".")[0]
            if target in PRODUCT and target not in allowed:
                wrong.append((module, name))
    assert not wrong, f"imports against the flow: {sorted(wrong)}"


def test_no_module_level_import_cycle():
    found = modules()
    graph = {}
    for module, path in found.items():
        edges = set()
        for name in imports(path, top_level_only=True):
            while name and name not in found:  # `from a.b import c` names a.b.c or a.b
                name = name.rpartition(".")[0]
            if name and name != module:
                edges.add(name)
        graph[module] = edges
    state: dict[str, int] = {}
    cycle: list[str] = []

    def visit(node: str, trail: list[str]) -> bool:
        state[node] = 1
        for other in sorted(graph[node]):
            if state.get(other) == 1:
                cycle.extend(trail[trail.index(other):] + [other])
                return True
            if other not in state and visit(other, trail + [other]):
                return True
        state[node] = 2
        return False
    for start in sorted(graph):
        if start not in state and visit(start, [start]):
            break
    assert not cycle, f"a module-level import cycle: {' -> '.join(cycle)}"
