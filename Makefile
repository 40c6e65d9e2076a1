# Every target bootstraps .venv on a machine that has only python3 and make.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
EXTRAS := test,testing,cli,metrics,examples
STAMP  := $(VENV)/.installed
# `make bench` adds the `bench` extra (the clients it compares against, py-spy) to the same venv.
BENCH_STAMP := $(VENV)/.installed-bench
# `make docs` adds the `docs` extra (MkDocs, mkdocstrings) to the same venv.
DOCS_STAMP := $(VENV)/.installed-docs
# `make bench BENCH=quick` runs a one-minute subset; `full` is the whole table (~10 minutes).
BENCH  ?= full
SRC    := $(wildcard aioinformer tests benchmarks examples docs)

# `make soak` runs the soak under faults for SOAK_SECONDS at SOAK_RATE writes/s.
SOAK_SECONDS ?= 300
SOAK_RATE    ?= 50

# `make test-lowest`: the lowest versions pyproject.toml allows, in a venv of their own.
LOWEST_VENV ?= .venv-lowest
# uv (which resolves them: --resolution lowest-direct) comes from PyPI into a venv of its own.
UV_VENV     ?= .venv-uv
UV          := $(UV_VENV)/bin/uv

.PHONY: all venv test test-lowest lint typecheck pytest demo bench bench-startup bench-profile docs soak replicas-chaos clean

all: test

# Each slow step says what it does first (the installs are quiet and take minutes).
$(BIN)/python:
	@echo "make: creating the virtual environment $(VENV) ($(PYTHON) -m venv)"
	$(PYTHON) -m venv $(VENV)
	@echo "make: upgrading pip in $(VENV)"
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip

# Re-installs only when the dependency list or the pins change.
$(STAMP): pyproject.toml constraints.txt | $(BIN)/python
	@echo "make: installing aioinformer and the extras $(EXTRAS) into $(VENV) (a few minutes)"
	$(BIN)/python -m pip install --quiet --disable-pip-version-check \
		-c constraints.txt -e '.[$(EXTRAS)]'
	@touch $@

$(BENCH_STAMP): pyproject.toml constraints.txt | $(BIN)/python
	@echo "make: installing the bench extra (the clients compared against, py-spy) into $(VENV)"
	$(BIN)/python -m pip install --quiet --disable-pip-version-check \
		-c constraints.txt -e '.[$(EXTRAS),bench]'
	@touch $@ $(STAMP)

$(DOCS_STAMP): pyproject.toml constraints.txt | $(BIN)/python
	@echo "make: installing the docs extra (MkDocs, mkdocstrings) into $(VENV)"
	$(BIN)/python -m pip install --quiet --disable-pip-version-check \
		-c constraints.txt -e '.[$(EXTRAS),docs]'
	@touch $@ $(STAMP)

venv: $(STAMP)

# ruff, then the floor plan: import-linter's contracts in pyproject.toml (layers, no circles).
lint: $(STAMP)
	$(BIN)/ruff check $(SRC)
	$(BIN)/ruff format --check $(SRC)
	$(BIN)/lint-imports --no-cache

# The library, its tests and the examples (the demo among them), all strict. The examples
# are scripts run from examples/ (they import each other by file name): a run of their own.
typecheck: $(STAMP)
	$(BIN)/mypy --strict aioinformer tests
	$(BIN)/mypy --strict examples

pytest: $(STAMP)
	$(BIN)/pytest -q

test: lint typecheck pytest

$(UV):
	@echo "make: creating the virtual environment $(UV_VENV) for uv"
	$(PYTHON) -m venv $(UV_VENV)
	@echo "make: installing uv (the resolver of make test-lowest) into $(UV_VENV)"
	$(UV_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -c constraints.txt uv

# Every direct dependency (and extra) at the floor pyproject.toml gives it, the rest at the
# newest release that fits (uv's lowest-direct resolution); the runtime dependencies exactly at
# their floors even where a test tool asks for more (kubernetes 37 wants aiohttp>=3.14.3):
# floors.txt, made from pyproject.toml, overrides them. Re-made when pyproject.toml changes.
$(LOWEST_VENV)/.installed: pyproject.toml | $(UV)
	rm -rf $(LOWEST_VENV)
	@echo "make: creating $(LOWEST_VENV) with the lowest versions pyproject.toml allows"
	$(UV) venv --quiet --python $(PYTHON) $(LOWEST_VENV)
	$(PYTHON) -c 'import tomllib; deps = tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"];\
		print("\n".join(d.replace(">=", "==") for d in deps))' > $(LOWEST_VENV)/floors.txt
	@echo "make: installing aioinformer and the extras $(EXTRAS) at their floors into $(LOWEST_VENV)"
	$(UV) pip install --quiet --python $(LOWEST_VENV)/bin/python --resolution lowest-direct \
		--override $(LOWEST_VENV)/floors.txt -e '.[$(EXTRAS)]'
	@touch $@

# The floors are real: with the lowest versions installed, every public namespace imports and
# the fast part of the suite passes (`-m "not slow"`: no whole-program tests).
test-lowest: $(LOWEST_VENV)/.installed
	$(UV) pip freeze --python $(LOWEST_VENV)/bin/python --exclude-editable
	$(LOWEST_VENV)/bin/python -c 'from aioinformer import *; import aioinformer.lowlevel, aioinformer.workqueue, aioinformer.testing, aioinformer.metrics, aioinformer.integrations'
	@echo "make: running the fast part of the suite on the lowest versions"
	$(LOWEST_VENV)/bin/pytest -q -m "not slow"

demo: $(STAMP)
	@echo "make: starting the demo (python -m examples.demo; Ctrl-C ends it)"
	$(BIN)/python -m examples.demo

bench: $(BENCH_STAMP)
	$(BIN)/python benchmarks/bench.py --mode $(BENCH)
	$(BIN)/python benchmarks/shards.py --mode $(BENCH)
	$(BIN)/python benchmarks/import_time.py

# Start-up costs (issue 19): import aioinformer against import aiohttp, a pytest run with the
# plugin against one without, connect() against earlier implementations (~2 minutes).
bench-startup: $(STAMP)
	$(BIN)/python benchmarks/import_time.py

bench-profile: $(BENCH_STAMP)
	$(BIN)/python benchmarks/profile_b1.py

# The site (docs/ and the API reference from the docstrings) into site/; any warning fails.
# NO_MKDOCS_2_WARNING: Material's end-of-life notice, printed on every build, is not ours.
docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

soak: $(STAMP)
	$(BIN)/python benchmarks/soak.py --seconds $(SOAK_SECONDS) --rate $(SOAK_RATE)

# The acceptance run of issue 21: ShardedController replicas as processes against the
# standalone fake API server (2,000 objects, 50 updates/s, 8 s leases) under kill -9, SIGSTOP,
# a cut-off, a join and a graceful stop, with the shard gate on and off (~6 minutes).
replicas-chaos: $(STAMP)
	$(BIN)/python benchmarks/replicas_chaos.py

clean:
	rm -rf $(VENV) $(LOWEST_VENV) $(UV_VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis site
