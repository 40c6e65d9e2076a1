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

.PHONY: all venv test lint typecheck pytest demo bench bench-profile docs soak replicas-chaos clean

all: test

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip

# Re-installs only when the dependency list or the pins change.
$(STAMP): pyproject.toml constraints.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check \
		-c constraints.txt -e '.[$(EXTRAS)]'
	@touch $@

$(BENCH_STAMP): pyproject.toml constraints.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check \
		-c constraints.txt -e '.[$(EXTRAS),bench]'
	@touch $@ $(STAMP)

$(DOCS_STAMP): pyproject.toml constraints.txt | $(BIN)/python
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

demo: $(STAMP)
	$(BIN)/python -m examples.demo

bench: $(BENCH_STAMP)
	$(BIN)/python benchmarks/bench.py --mode $(BENCH)
	$(BIN)/python benchmarks/shards.py --mode $(BENCH)

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
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis site
