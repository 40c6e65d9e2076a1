# Every target bootstraps .venv on a machine that has only python3 and make.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
EXTRAS := test,testing,cli,metrics,examples
STAMP  := $(VENV)/.installed
SRC    := $(wildcard aioinformer tests benchmarks examples)

.PHONY: all venv test lint typecheck pytest demo bench clean

all: test

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip

# Re-installs only when the dependency list or the pins change.
$(STAMP): pyproject.toml constraints.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check \
		-c constraints.txt -e '.[$(EXTRAS)]'
	@touch $@

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

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
