"""agent-memory: durable dialogue memory for AI agents.

Installed as one import package, `agent_memory`, whose subpackages are the repository's
folders (setuptools' package-dir maps this directory onto it):

- `agent_memory.outbox`: the file store (paths, records, atomic create, scans, moves);
- `agent_memory.sync`: forwarding it to the fleet: the engine at its root, the fleet links
  (`links`), the project's resident agent (`agent`), the vectors and local search (`vectors`);
- `agent_memory.cli`: the command line;
- `agent_memory.pipeline`: the live checks (`python -m agent_memory.pipeline`).

Dependencies flow one way: cli -> sync -> outbox. The reference fleet, the benchmarks and the
tests (`ops/`, `tests/`) are development tools and are not installed.
"""
