# The commands of README.md. Each sets itself up in .venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# pytest-xdist workers: the suite mostly waits on sockets, timers and subprocesses
TEST_WORKERS ?= 2

.PHONY: test demo lint bench dist check-dist matrix clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

test: $(STAMP)
	$(BIN)/ruff check scrapy_rfc9309 tests benchmarks example_project
	$(BIN)/ruff format --check scrapy_rfc9309 tests benchmarks example_project
	$(BIN)/mypy scrapy_rfc9309
	$(BIN)/python -m pytest -n $(TEST_WORKERS)

lint: $(STAMP)
	$(BIN)/ruff check scrapy_rfc9309 tests benchmarks example_project

demo: $(STAMP)
	$(BIN)/python example_project/run_demo.py

bench: $(STAMP)
	$(BIN)/python benchmarks/parser.py

# The wheel and the sdist, in dist/.
dist: $(STAMP)
	rm -rf dist build
	$(BIN)/pip install --quiet build
	$(BIN)/python -m build --outdir dist .

# twine's checks of what a package index would show (twine only in .venv).
check-dist: dist
	$(BIN)/pip install --quiet twine
	$(BIN)/twine check --strict dist/*

# The built wheel in fresh venvs: the lowest supported Scrapy on Python 3.10
# and the newest on Python 3.13, each with the asyncio and the default reactor.
matrix: check-dist
	bash .ci/matrix

clean:
	rm -rf $(VENV) build dist *.egg-info
