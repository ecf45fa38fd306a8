# The two commands a user needs: `make test` and `make up`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test lint typecheck pytest install up bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check memserver ingest_agent read_agent tests bench
	$(BIN)/ruff format --check memserver ingest_agent read_agent tests bench

typecheck: $(STAMP)
	$(BIN)/mypy
	$(BIN)/mypy --explicit-package-bases bench

pytest: $(STAMP)
	$(BIN)/pytest -q

test: lint typecheck pytest

# `make up` runs on a working copy of example_kb (under the git-ignored .memserver/, so
# the repository's example stays pristine for the tests), or on your own KB=DIR.
# Extra flags: make up UP_ARGS="--embedder hash --watch 10s".
UP_KB := .memserver/example_kb
up: $(STAMP)
ifdef KB
	$(BIN)/memserver --kb $(KB) up $(UP_ARGS)
else
	mkdir -p $(UP_KB) && cp -R example_kb/. $(UP_KB)/
	$(BIN)/memserver --kb $(UP_KB) up $(UP_ARGS)
endif

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
