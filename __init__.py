"""agent-memory: durable dialogue memory for AI agents.

Installed as one import package, `agent_memory`, whose subpackages are the repository's
folders (setuptools' package-dir maps this directory onto it):

- `agent_memory.outbox`: the file store (paths, records, atomic create, scans, moves);
- `agent_memory.sync`: forwarding it to the fleet: the engine at its root, the fleet links
  (`links`), the project's resident agent (`agent`), the vectors and local search (`vectors`);
- `agent_memory.cli`: the command line;
- `agent_memory.pipeline`: the live checks (`python -m agent_memory.pipeline`);
- `agent_memory.api`: the Python API (`agent_memory.Memory`, `agent_memory.AsyncMemory`, the
  typed results and exceptions, below), the commands run in the caller's process;
- `agent_memory.integrations`: the agent frameworks' session stores on top of it (each imports
  its framework, an optional extra).

Dependencies flow one way: integrations -> api -> cli -> sync -> outbox. The reference fleet, the benchmarks and the
tests (`ops/`, `tests/`) are development tools and are not installed.
"""

# The Python API as lazy attributes: `import agent_memory` stays as cheap as a CLI start (no
# argparse, no fleet client, no framework) until one of them is used.
_LAZY = {
    "Memory": "agent_memory.api.memory",
    "AsyncMemory": "agent_memory.api.aio",
    "Answer": "agent_memory.api.results",
    "WriteResult": "agent_memory.api.results",
    "Message": "agent_memory.api.results",
    "MessagePage": "agent_memory.api.results",
    "SessionEntry": "agent_memory.api.results",
    "SessionPage": "agent_memory.api.results",
    "Match": "agent_memory.api.results",
    "SearchPage": "agent_memory.api.results",
    **{name: "agent_memory.api.results" for name in (
        "WorkingSet", "SessionState", "Forgotten", "Marked", "RelationPage", "LeafPage",
        "PreviewPage", "Info", "Status", "SyncReport")},
    **{name: "agent_memory.api.errors" for name in (
        "AgentMemoryError", "RefusedError", "UsageError", "StoreUnavailableError",
        "LoggerUnreachableError", "NotFoundError", "ConfigInvalidError",
        "EmbeddingUnavailableError", "NoRoomError", "StoreHeldError")},
}
__all__ = sorted(_LAZY)


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'agent_memory' has no attribute {name!r}")
    import importlib
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
