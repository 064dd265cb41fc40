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
    modules = sorted((PACKAGE / layer).glob("*.py"))
    assert modules, f"no modules in {layer}"
    for path in modules:
        extra = _package_imports(path, layer) - ALLOWED[layer]
        assert not extra, f"{layer}/{path.name} imports {sorted(extra)}"


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


def _module_imports(path: Path) -> set[str]:
    """The modules of scrapy_rfc9309 (``layer/_name``) that a module imports,
    at any place in it (functions and ``TYPE_CHECKING`` blocks included);
    a subpackage's ``__init__`` is not followed (it only hands names on)."""
    layer = path.parent.name
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ImportFrom):
            continue
        module = node.module or ""
        if node.level == 1 and module:
            found.add(f"{layer}/{module.split('.')[0]}")
        elif node.level == 2 and "." in module:
            sub, name = module.split(".")[:2]
            found.add(f"{sub}/{name}")
        elif module.startswith("scrapy_rfc9309.") and module.count(".") >= 2:
            sub, name = module.split(".")[1:3]
            found.add(f"{sub}/{name}")
    return found


def test_no_module_imports_one_that_imports_it_back() -> None:
    """Data flows one way inside each layer too: no circle of imports among
    the package's modules (a circle means two modules that each need the
    other, one job split in two or two jobs in one)."""
    graph = {
        f"{path.parent.name}/{path.stem}": _module_imports(path)
        for layer in ALLOWED
        for path in (PACKAGE / layer).glob("_*.py")
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
