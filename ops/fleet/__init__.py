"""The reference fleet: local stand-ins for the AI Logger and the embedding service.

The real fleet is not reachable from development machines or CI, so agent-memory is tested
against these servers, built on the same framework as the real services (mcp-proxy-adapter),
through the real `ailogger-client` and `embed-client` over real HTTP. Start them with
`python -m ops.fleet up --data DIR`; tests use the fixtures in `tests/conftest.py`.

Modules: `layout` (files of a data dir), `faults` (fault switches), `control` (runtime API for
tests), `launcher` (start/stop/status of the processes), `gate` (the public listener that
implements drop/down), `serve` (one service process), `configdoc` (the agent-memory config it
writes), `logger/` and `embedder/` (the two services).
"""
