"""The package's layers: data flows one way, parser -> sites -> components.

``scrapy_rfc9309.parser`` imports only the standard library,
``scrapy_rfc9309.sites`` the parser (and the ``redis`` client, for the Redis
store only), and neither imports Scrapy or Twisted, so both can be used (and
tested) without them.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import scrapy_rfc9309

PACKAGE = Path(scrapy_rfc9309.__file__).parent
#: what each layer may import from the package itself
ALLOWED = {
    "parser": {"parser"},
    "sites": {"parser", "sites"},
    "components": {"parser", "sites", "components"},
}


def _package_imports(path: Path, layer: str) -> set[str]:
    """The subpackages of scrapy_rfc9309 that a module imports."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level == 1:
                found.add(layer)
            elif node.level == 2:
                found.add(module.split(".")[0] if module else "<top>")
            elif module.startswith("scrapy_rfc9309"):
                parts = module.split(".")
                found.add(parts[1] if len(parts) > 1 else "<top>")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("scrapy_rfc9309"):
                    parts = alias.name.split(".")
                    found.add(parts[1] if len(parts) > 1 else "<top>")
    return found


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layer_imports_only_the_layers_below(layer: str) -> None:
    modules = sorted((PACKAGE / layer).rglob("*.py"))
    assert modules, f"no modules in {layer}"
    for path in modules:
        extra = {_layer_of(target) for target in _imports(path)} - ALLOWED[layer] - {"<top>"}
        assert not extra, f"{path.relative_to(PACKAGE)} imports {sorted(extra)}"


#: The parts of ``components`` (its subpackages) and which others each may
#: import: one way, from the command and the crawl path down to the store.
#: The modules directly in ``components`` (clock, compat, engine, report,
#: which components are enabled) import only the settings; the add-on, which
#: names every component, may import any.
COMPONENT_PARTS = {
    "settings": set(),
    "store": {"settings"},
    "sitefiles": {"settings", "store", "cluster", "record"},
    "record": {"settings"},
    "cluster": {"settings"},
    "pages": {"settings", "sitefiles", "record"},
    "crawl": {"settings", "sitefiles", "cluster"},
    "extension": {"settings", "sitefiles", "cluster"},
    "command": {"settings", "sitefiles", "store", "pages", "record"},
}


def _part_of(module: str) -> str:
    """``crawl`` for ``scrapy_rfc9309.components.crawl._queue``; ``""`` for a
    module directly in ``components``."""
    parts = module.split(".")
    return parts[2] if len(parts) > 3 else ""


def test_component_parts_import_one_way() -> None:
    """The subpackages of ``components`` show the architecture: each imports
    only the parts below it, and the foundation imports none."""
    parts = sorted(
        p.name for p in (PACKAGE / "components").iterdir() if p.is_dir() and p.name[0] != "_"
    )
    assert parts == sorted(COMPONENT_PARTS)
    for path in sorted((PACKAGE / "components").rglob("_*.py")):
        if path.name == "__init__.py":  # it only hands names on
            continue
        module = _module_name(path)
        own = _part_of(module)
        for target in _imports(path):
            if _layer_of(target) != "components" or _part_of(target) in ("", own):
                continue
            if own == "" and path.stem == "_addon":
                continue
            allowed = COMPONENT_PARTS.get(own, {"settings"})
            assert _part_of(target) in allowed, f"{module} imports {target}"


def _module_name(path: Path) -> str:
    """The dotted name of the package module at ``path``."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _layer_of(module: str) -> str:
    """``parser``, ``sites`` or ``components`` for a module of the package."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "<top>"


def _imports(path: Path) -> set[str]:
    """The package's modules (dotted names) that the module at ``path`` imports,
    at any place in it (functions and ``TYPE_CHECKING`` blocks included)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if not module.startswith("scrapy_rfc9309"):
                continue
            for alias in node.names:  # ``from . import _compat``: a module
                candidate = f"{module}.{alias.name}"
                sub = PACKAGE.parent / candidate.replace(".", "/")
                found.add(candidate if sub.with_suffix(".py").exists() else module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("scrapy_rfc9309"))
    return found


def test_every_module_is_in_a_layer() -> None:
    flat = sorted(p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py")
    assert flat == [], f"modules outside the layers: {flat}"


def test_pure_layers_import_neither_scrapy_nor_twisted() -> None:
    code = (
        "import sys\n"
        "import scrapy_rfc9309, scrapy_rfc9309.parser, scrapy_rfc9309.sites\n"
        "from scrapy_rfc9309 import RobotsTxt\n"
        "RobotsTxt.parse(b'User-agent: *\\nDisallow: /x').allowed(url='/x', agent='a')\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in {'scrapy', 'twisted'})\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_no_module_imports_one_that_imports_it_back() -> None:
    """Data flows one way inside each layer too: no circle of imports among
    the package's modules (a circle means two modules that each need the
    other, one job split in two or two jobs in one)."""
    # a subpackage's ``__init__`` is not followed (it only hands names on)
    graph = {
        _module_name(path): _imports(path)
        for layer in ALLOWED
        for path in (PACKAGE / layer).rglob("_*.py")
        if path.name != "__init__.py"
    }
    assert len(graph) > 50
    state: dict[str, int] = {}  # 1: on the path being walked, 2: done

    def walk(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph.get(module, ())):
            if target not in graph:
                continue
            assert state.get(target) != 1, " -> ".join([*path, module, target])
            if target not in state:
                walk(target, [*path, module])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            walk(module, [])


def test_the_crawl_clock_is_looked_up_by_the_site_service_alone() -> None:
    """Dependencies are handed down: the site service looks up the crawler's
    clock (which tests replace) and gives it to its parts; no other module
    looks it up."""
    callers = sorted(
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if path.name != "_clock.py" and "clock_of(" in path.read_text(encoding="utf-8")
    )
    assert callers == ["components/sitefiles/_service.py"]


#: The test helpers that wait for real processes on their own time (see
#: ``tests/waiting.py``): the only modules of the suite that may wait for time.
REAL_PROCESS_HELPERS = ["cluster_crawl.py", "redis_server.py", "server.py", "waiting.py"]


def test_only_the_real_process_helpers_wait_for_time() -> None:
    """Time is injected, not waited for: a test about time moves a clock, one that
    holds a store call opens a gate (``tests/gates.py``), one that waits for
    another real process uses ``tests/waiting.py``; no other module of the
    suite names ``time.sl``-``eep`` (the word is split here so that this test
    does not find itself)."""
    word = "".join(["sl", "eep"])
    tests = Path(__file__).parent
    waiting = sorted(
        str(path.relative_to(tests))
        for path in tests.rglob("*.py")
        if word in path.read_text(encoding="utf-8")
    )
    assert set(waiting) <= set(REAL_PROCESS_HELPERS), waiting


#: A module over this many lines has more than one job; a class over
#: ``MAX_CLASS_LINES``, more than one role.
MAX_MODULE_LINES = 500
MAX_CLASS_LINES = 350


def test_no_module_or_class_outgrows_one_job() -> None:
    """Small modules and classes, each with one job: none of the package's
    modules is over ``MAX_MODULE_LINES`` lines, none of its classes over
    ``MAX_CLASS_LINES``."""
    import ast

    long_modules, long_classes = [], []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        name = str(path.relative_to(PACKAGE))
        if text.count("\n") > MAX_MODULE_LINES:
            long_modules.append((name, text.count("\n")))
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_CLASS_LINES:
                    long_classes.append((f"{name}:{node.name}", lines))
    assert long_modules == [] and long_classes == [], (long_modules, long_classes)
