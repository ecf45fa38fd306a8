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

pytest: $(STAMP)
	$(BIN)/pytest -q

test: lint typecheck pytest

up: $(STAMP)
	$(BIN)/memserver --kb $(or $(KB),example_kb) up

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
