"""The names the reference pages must list, collected from the package's source.

Settings (``ROBOTSTXT_*`` / ``ROBOTS_META_*`` string literals), stat keys
(``robotstxt/...`` / ``robotsmeta/...`` literals; an f-string such as
``f"robotstxt/forbidden/{cause}"`` is a family, documented as the pattern
``robotstxt/forbidden/{cause}``), logger names (``logging.getLogger("...")``)
and request meta keys. Standard library only: ``tests/test_docs.py`` reads
the doc sources without Sphinx, ``docs/check_html.py`` the built HTML.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "scrapy_rfc9309"
DOCS = Path(__file__).resolve().parent
#: The pages that are the reference: each name must appear in one of them.
REFERENCE = {
    "settings": DOCS / "reference" / "settings.md",
    "stats": DOCS / "reference" / "stats.md",
    "loggers": DOCS / "reference" / "logging.md",
    "meta keys": DOCS / "reference" / "meta-keys.md",
}

SETTING = re.compile(r"(?:ROBOTSTXT|ROBOTS_META)_[A-Z0-9_]*[A-Z0-9]")
STAT = re.compile(r"(?:robotstxt|robotsmeta)/[a-z0-9_]+(?:/[a-z0-9_]+)*")
PLACEHOLDER = re.compile(r"\{[^{}]*\}")
#: Calls on ``meta`` whose first argument is a key.
_META_METHODS = {"get", "pop", "setdefault"}


def _modules() -> Iterator[tuple[Path, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path, ast.parse(path.read_text(encoding="utf-8"), str(path))


def _docstrings(tree: ast.Module) -> set[int]:
    """ids of the docstring nodes: names mentioned in prose are not read by the code."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _strings(tree: ast.Module) -> Iterator[str]:
    """Every string literal, an f-string as its pattern (``{}`` for each field)."""
    skip = _docstrings(tree)
    inside_fstrings: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            parts = []
            for value in node.values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    parts.append(value.value)
                    inside_fstrings.add(id(value))
                else:
                    parts.append("{}")
            yield "".join(parts)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in skip
            and id(node) not in inside_fstrings
        ):
            yield node.value


def settings() -> set[str]:
    """Every setting name the package reads: a string literal that is exactly one."""
    return {s for _, tree in _modules() for s in _strings(tree) if SETTING.fullmatch(s)}


def stats() -> set[str]:
    """Every stat key (``robotstxt/allowed``) and family (``robotstxt/forbidden/{}``).

    A literal that ends with ``/`` (``"robotstxt/"``, a prefix test) is no key.
    """
    found: set[str] = set()
    for _, tree in _modules():
        for text in _strings(tree):
            # an f-string family is a key with its fields filled in
            if STAT.fullmatch(text.replace("{}", "x")):
                found.add(text)
    return found


def loggers() -> set[str]:
    """Every name passed to ``logging.getLogger`` as a literal."""
    found: set[str] = set()
    for _, tree in _modules():
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "getLogger"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                found.add(node.args[0].value)
    return found


def _is_meta(node: ast.expr) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "meta") or (
        isinstance(node, ast.Name) and node.id == "meta"
    )


def _constants(tree: ast.Module) -> dict[str, str]:
    """The module-level ``NAME = "text"`` assignments of a module."""
    return {
        target.id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        for target in node.targets
        if isinstance(target, ast.Name)
    }


def _meta_key_nodes(node: ast.AST) -> list[ast.expr | None]:
    """The expressions used as ``meta`` keys in one node."""
    if isinstance(node, ast.Subscript) and _is_meta(node.value):
        return [node.slice]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _META_METHODS
        and _is_meta(node.func.value)
        and node.args
    ):
        return [node.args[0]]
    if (
        isinstance(node, ast.Compare)
        and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops)
        and any(_is_meta(c) for c in node.comparators)
    ):
        return [node.left]
    if isinstance(node, ast.Call):
        return [
            key
            for keyword in node.keywords
            if keyword.arg == "meta" and isinstance(keyword.value, ast.Dict)
            for key in keyword.value.keys
        ]
    return []


def meta_keys() -> set[str]:
    """Every ``Request.meta`` key the package reads or sets.

    ``x.meta[KEY]``, ``x.meta.get(KEY)`` (``pop``, ``setdefault``), ``KEY in
    x.meta`` and the keys of a dict literal passed as ``meta=``; ``KEY`` a
    literal or a module-level constant of the same module.
    """
    found: set[str] = set()
    for _, tree in _modules():
        constants = _constants(tree)
        for node in ast.walk(tree):
            for key in _meta_key_nodes(node):
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    found.add(key.value)
                elif isinstance(key, ast.Name) and key.id in constants:
                    found.add(constants[key.id])
    return found


def normalise(text: str) -> str:
    """``robotstxt/forbidden/{cause}`` -> ``robotstxt/forbidden/{}``, for comparing."""
    return PLACEHOLDER.sub("{}", text)


def expected() -> dict[str, set[str]]:
    """What each reference page must name."""
    return {
        "settings": settings(),
        "stats": stats(),
        "loggers": loggers(),
        "meta keys": meta_keys(),
    }


def missing(names: Iterable[str], text: str, *, quoted: bool = True) -> list[str]:
    """The names that ``text`` does not mention (in backquotes when ``quoted``)."""
    text = normalise(text)
    if quoted:
        return sorted(name for name in names if f"`{name}`" not in text)
    return sorted(
        name for name in names if not re.search(rf"(?<![\w/.]){re.escape(name)}(?![\w/])", text)
    )
