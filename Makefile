# make run: set up a virtual environment, start remem serve on a temporary directory, run the
# scripted demo through the HTTP client, print a curl line; serves until Ctrl-C.
# make test: set up and run ruff, mypy --strict and pytest.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint typecheck pytest bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,embeddings,server,e2ee,mcp]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/remem quickstart

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
