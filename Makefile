# The commands of README.md. Each sets itself up in .venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DOCS_STAMP := $(VENV)/.installed-docs
# the package alone: what `make demo` needs
DEMO_STAMP := $(VENV)/.installed-package
# pytest-xdist workers: the suite mostly waits on sockets, timers and subprocesses,
# so four workers on two cores finish sooner than fewer (pytest on an idle 2-core
# machine: 83 s with 4, 97 s with 3, 80 s with 5 for an eighth more CPU; the whole
# of `make test` about a minute and a half; pytest's last line gives its time)
TEST_WORKERS ?= 4

.PHONY: test demo lint bench docs dist check-dist matrix clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP) $(DEMO_STAMP)

$(DEMO_STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -e .
	touch $(DEMO_STAMP)

test: $(STAMP)
	$(BIN)/ruff check scrapy_rfc9309 tests benchmarks example_project docs
	$(BIN)/ruff format --check scrapy_rfc9309 tests benchmarks example_project docs
	$(BIN)/mypy scrapy_rfc9309
	$(BIN)/mypy tests
	$(BIN)/python -m pytest -rs -n $(TEST_WORKERS)

lint: $(STAMP)
	$(BIN)/ruff check scrapy_rfc9309 tests benchmarks example_project docs

demo: $(DEMO_STAMP)
	$(BIN)/python example_project/run_demo.py

bench: $(STAMP)
	$(BIN)/python benchmarks/parser.py

$(DOCS_STAMP): $(STAMP) pyproject.toml
	$(BIN)/pip install --quiet -e '.[docs]'
	touch $(DOCS_STAMP)

# The documentation site in docs/_build/html (warnings are errors), its
# doctests, and a check that the built reference lists every setting, stat,
# logger and meta key the code uses.
docs: $(DOCS_STAMP)
	$(BIN)/sphinx-build -W --keep-going -q -b html docs docs/_build/html
	$(BIN)/sphinx-build -W --keep-going -q -b doctest docs docs/_build/doctest
	$(BIN)/python docs/check_html.py docs/_build/html

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
	rm -rf $(VENV) build dist *.egg-info docs/_build
