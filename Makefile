# make run: set up a virtual environment and run the scripted demo.
# make test: set up and run ruff, mypy --strict and pytest.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint typecheck pytest bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,embeddings,server]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/remem demo

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/pytest -q

test: lint typecheck pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/write.py
	$(BIN)/python benchmarks/recall.py
	$(BIN)/python benchmarks/locomo.py --data ../shared/data/locomo/locomo-dev.json

clean:
	rm -rf $(VENV) build src/*.egg-info
