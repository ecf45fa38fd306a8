# The two commands a user needs: `make test` and `make up`.
# Both install with constraints.txt: the exact versions the suite passed with (a new
# machine gets what was tested, an older venv is brought to it). `make test-latest`
# tries the newest versions pyproject.toml allows, `make pins` moves constraints.txt
# to them once the whole suite passes (docs/dependencies.md).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
PINS := constraints.txt
RUN_STAMP := $(VENV)/.installed-run
DEV_STAMP := $(VENV)/.installed-dev

.PHONY: test lint typecheck pytest browser install install-run up up-reset bench clean \
	test-latest pins

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# What running needs (`make up`): no test or lint tools.
$(RUN_STAMP): $(BIN)/python pyproject.toml $(PINS)
	$(BIN)/pip install --quiet -c $(PINS) -e .
	touch $(RUN_STAMP)

$(DEV_STAMP): $(BIN)/python pyproject.toml $(PINS)
	$(BIN)/pip install --quiet -c $(PINS) -e '.[dev]'
	touch $(DEV_STAMP) $(RUN_STAMP)

install-run: $(RUN_STAMP)

install: $(DEV_STAMP)

lint: $(DEV_STAMP)
	$(BIN)/ruff check memserver ingest_agent read_agent tests bench
	$(BIN)/ruff format --check memserver ingest_agent read_agent tests bench

typecheck: $(DEV_STAMP)
	$(BIN)/mypy
	$(BIN)/mypy -p bench

# The web console's browser tests drive Debian's Chromium with its driver (selenium
# finds them on PATH; nothing is downloaded). Installed here when missing.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
browser:
	@if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then \
	  echo "installing chromium and chromium-driver (apt) for the console's browser tests"; \
	  $(SUDO) apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver; \
	fi

pytest: $(DEV_STAMP) browser
	$(BIN)/pytest -q

test: lint typecheck pytest

# The newest versions pyproject.toml allows, in a venv of their own, through the whole
# suite: a new release that breaks us is seen here first. `make pins` then writes them
# to constraints.txt (only when the suite passed).
LATEST := .venv-latest
PINS_HEADER := \# The exact versions the whole suite passed with (make pins wrote it; docs/dependencies.md).
test-latest: browser
	rm -rf $(LATEST)
	$(PY) -m venv $(LATEST)
	$(LATEST)/bin/python -m pip install --quiet --upgrade pip
	$(LATEST)/bin/pip install --quiet --upgrade -e '.[dev]'
	$(LATEST)/bin/ruff check memserver ingest_agent read_agent tests bench
	$(LATEST)/bin/mypy
	MEMSERVER_UNPINNED=1 $(LATEST)/bin/pytest -q

pins: test-latest
	{ echo "$(PINS_HEADER)"; $(LATEST)/bin/pip freeze --exclude-editable; } > $(PINS)
	@echo "constraints.txt now holds the versions the suite passed with; review and commit it"

# `make up` runs on a working copy of example_kb (under the git-ignored .memserver/, so
# the repository's example stays pristine for the tests), made once and then kept (pages,
# notes, database); `make up-reset` starts from a fresh copy. Or on your own KB=DIR.
# Extra flags: make up UP_ARGS="--embedder hash --watch 10s".
UP_KB := .memserver/example_kb
up: $(RUN_STAMP)
ifdef KB
	$(BIN)/memserver --kb $(KB) up $(UP_ARGS)
else
	@$(BIN)/python -m memserver.up.working_copy $(UP_KB) example_kb
	$(BIN)/memserver --kb $(UP_KB) up $(UP_ARGS)
endif

up-reset: $(RUN_STAMP)
	@$(BIN)/python -m memserver.up.working_copy --reset $(UP_KB) example_kb
	$(BIN)/memserver --kb $(UP_KB) up $(UP_ARGS)

# The quick benchmarks, each with small options: startup and per-call costs, keyword-only
# search and search latency at 1,000 generated pages (hash index, built once under
# /tmp/memserver-latency and reused), and the 30 example questions answered without a
# model (hash embedder). About 3-4 minutes on the shared two-core machine (3 min 12 s at
# load 3, most of it eval_answers ingesting and asking; bench_startup 5 s). The
# long ones (10,000-100,000 pages, LoCoMo, a real model) and the figures recorded so far
# are in bench/RESULTS.md; run one with `.venv/bin/python -m bench.NAME --help`.
bench: $(DEV_STAMP)
	nice -n 10 $(BIN)/python -m bench.bench_startup
	nice -n 10 $(BIN)/python -m bench.bench_keyword_overhead --pages 1000 --rounds 1
	nice -n 10 $(BIN)/python -m bench.bench_search_latency --sizes 1000 --rounds 1
	nice -n 10 $(BIN)/python -m bench.eval_answers --embedder hash

clean:
	rm -rf $(VENV) $(LATEST) .pytest_cache .mypy_cache .ruff_cache
