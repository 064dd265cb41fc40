# The two commands of README.md. Each sets itself up in .venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test demo lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

test: $(STAMP)
	$(BIN)/ruff check scrapy_rfc9309 tests benchmarks example_project
	$(BIN)/ruff format --check scrapy_rfc9309 tests benchmarks example_project
	$(BIN)/mypy scrapy_rfc9309
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check scrapy_rfc9309 tests benchmarks example_project

demo: $(STAMP)
	$(BIN)/python example_project/run_demo.py

bench: $(STAMP)
	$(BIN)/python benchmarks/parser.py

clean:
	rm -rf $(VENV) build *.egg-info
