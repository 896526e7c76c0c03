# The two quick-start commands: `make run` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
DEMO   ?= .demo

.PHONY: install install-dev run test test-fast bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

install: $(BIN)/python
	$(BIN)/pip install -q -e .

install-dev: $(BIN)/python
	$(BIN)/pip install -q -e '.[dev]'

# The main job on local defaults: a scratch project with a store, a session, a message written
# through the file store, then read back.
run: install
	@bash ops/demo.sh $(BIN) $(DEMO)

test: install-dev
	$(BIN)/python -m pytest -q -p no:cacheprovider

test-fast: install-dev
	$(BIN)/python -m pytest -q -p no:cacheprovider -m 'not slow'

bench: install
	$(BIN)/python -m ops.bench.write_bench

clean:
	rm -rf $(VENV) $(DEMO) *.egg-info
