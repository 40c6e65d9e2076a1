# Every target bootstraps .venv on a machine that has only python3 and make.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
EXTRAS := test,testing,cli,metrics,examples
STAMP  := $(VENV)/.installed
# `make bench` adds the `bench` extra (the clients it compares against, py-spy) to the same venv.
BENCH_STAMP := $(VENV)/.installed-bench
# `make bench BENCH=quick` runs a one-minute subset; `full` is the whole table (~10 minutes).
BENCH  ?= full
SRC    := $(wildcard aioinformer tests benchmarks examples)

.PHONY: all venv test lint typecheck pytest demo bench bench-profile clean

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

venv: $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check $(SRC)
	$(BIN)/ruff format --check $(SRC)

typecheck: $(STAMP)
	$(BIN)/mypy --strict aioinformer

pytest: $(STAMP)
	$(BIN)/pytest -q

test: lint typecheck pytest

demo: $(STAMP)
	$(BIN)/aioinformer demo

bench: $(BENCH_STAMP)
	$(BIN)/python benchmarks/bench.py --mode $(BENCH)
	$(BIN)/python benchmarks/shards.py --mode $(BENCH)

bench-profile: $(BENCH_STAMP)
	$(BIN)/python benchmarks/profile_b1.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
