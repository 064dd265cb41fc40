"""The documentation's reference pages list every setting, stat, logger and meta
key the code uses, read from the doc sources (no Sphinx needed)."""

from __future__ import annotations

import ast
import functools
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

if not (DOCS / "code_names.py").exists():
    pytest.skip("run from a copy of the tests, without docs/", allow_module_level=True)


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("code_names", DOCS / "code_names.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("code_names", module)
    spec.loader.exec_module(module)
    return module


names = _load()


@functools.cache
def _expected() -> dict[str, set[str]]:
    """What the code uses, collected once per test process (each collection
    parses every module of the package)."""
    return dict(names.expected())


def _reference(kind: str) -> str:
    return str(names.REFERENCE[kind].read_text(encoding="utf-8"))


def test_the_collector_finds_what_the_code_uses() -> None:
    """A collector that finds nothing would make the checks below pass vacuously."""
    found = _expected()
    assert {"ROBOTSTXT_MAX_SIZE", "ROBOTSTXT_STORE_URI", "ROBOTS_META_OBEY"} <= found["settings"]
    assert {"robotstxt/allowed", "robotstxt/forbidden/{}", "robotsmeta/noindex"} <= found["stats"]
    assert {"scrapy_rfc9309.middleware", "scrapy_rfc9309.store"} <= found["loggers"]
    assert {"robotstxt_explain", "robots_meta", "download_slot"} <= found["meta keys"]
    # prose is not code: a docstring naming a setting does not count
    assert not any(" " in name for name in found["settings"])


@pytest.mark.parametrize("kind", ["settings", "stats", "loggers", "meta keys"])
def test_reference_page_lists_every_name_the_code_uses(kind: str) -> None:
    missing = names.missing(_expected()[kind], _reference(kind))
    assert missing == [], f"{names.REFERENCE[kind].name} does not list: {missing}"


def _setting_sections() -> dict[str, str]:
    """Each ``### `NAME``` heading of the settings page -> the text under it."""
    parts = re.split(r"^### `([A-Z0-9_]+)`\n", _reference("settings"), flags=re.M)
    return {
        name: body.split("\n## ")[0] for name, body in zip(parts[1::2], parts[2::2], strict=True)
    }


def test_each_setting_has_a_heading_with_default_type_and_meaning() -> None:
    """One heading per setting (its anchor), then its default, its type and a
    plain meaning: no wide table that a reader scrolls sideways."""
    sections = _setting_sections()
    assert sorted(_expected()["settings"] - sections.keys()) == []
    for name, body in sections.items():
        lines = body.strip().splitlines()
        assert lines[0].startswith("- Default: ") and len(lines[0]) > len("- Default: "), name
        assert lines[1].startswith("- Type: ") and len(lines[1]) > len("- Type: "), name
        assert lines[2] == "" and " " in "".join(lines[3:]), name
    assert "| setting |" not in _reference("settings")


def _load_check_html() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_html", DOCS / "check_html.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_built_settings_page_check_reports_a_setting_without_its_anchor() -> None:
    """``make docs`` (``docs/check_html.py``) fails for a setting that is named on
    the built page but has no heading, so no anchor, of its own."""
    check = _load_check_html()
    page = (
        '<section id="robots-txt"><h2>robots.txt<a class="headerlink" href="#robots-txt">#</a>'
        '</h2><section id="robotstxt-max-size">\n<span id="robotstxt_max_size"></span>'
        '<h3><code class="docutils literal notranslate">'
        '<span class="pre">ROBOTSTXT_MAX_SIZE</span></code><a class="headerlink" '
        'href="#robotstxt-max-size">#</a></h3><p>See <code>ROBOTSTXT_CACHE_TTL</code>.</p>'
    )
    assert check.anchors(page)["ROBOTSTXT_MAX_SIZE"] == "robotstxt-max-size"
    names_on_page = {"ROBOTSTXT_MAX_SIZE", "ROBOTSTXT_CACHE_TTL"}
    assert check.settings_without_anchor(names_on_page, page) == ["ROBOTSTXT_CACHE_TTL"]


def test_built_page_check_reports_a_paragraph_turned_into_code() -> None:
    """``make docs`` fails for an inline code span longer than a log line: a
    backtick left unpaired turns the rest of a paragraph into code."""
    check = _load_check_html()
    span = '<code class="docutils literal notranslate"><span class="pre">{}</span></code>'
    log_line = "robotstxt/cluster_delay/wait_seconds " * 5
    paragraph = "the rest of the paragraph " * 20
    page = f"<p>{span.format(log_line)} and {span.format(paragraph)}</p>"
    assert check.overlong_code(page) == [paragraph[:60]]


def test_no_line_of_the_docs_starts_a_list_with_a_plus() -> None:
    """A paragraph's line that starts with ``+ `` is read as a list item: it
    cut a code span in two, and the rest of the paragraph was shown as code.
    The docs use ``-`` for lists."""
    found = []
    for page in sorted(DOCS.rglob("*.md")):
        if "_build" in page.parts:
            continue
        fenced = False
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            if line.lstrip().startswith("```"):
                fenced = not fenced
            elif not fenced and re.match(r"\s*\+ ", line):
                found.append(f"{page.relative_to(ROOT)}:{number}")
    assert found == []


def test_missing_names_are_reported() -> None:
    """The check fails for a name that is not in backquotes on the page."""
    text = "| `ROBOTSTXT_OBEY` | ... | `robotstxt/forbidden/{cause}` | ROBOTSTXT_MAX_SIZE"
    assert names.missing({"ROBOTSTXT_OBEY", "ROBOTSTXT_MAX_SIZE"}, text) == ["ROBOTSTXT_MAX_SIZE"]
    assert names.missing({"robotstxt/forbidden/{}", "robotstxt/{}"}, text) == ["robotstxt/{}"]


def test_python_examples_in_the_docs_are_valid_python() -> None:
    """Every ```python block of the doc sources parses (doctest blocks run in
    ``make docs``, ``sphinx-build -b doctest``)."""
    blocks = 0
    for page in sorted(DOCS.rglob("*.md")):
        if "_build" in page.parts:
            continue
        text = page.read_text(encoding="utf-8")
        for block in re.findall(r"^```python\n(.*?)^```$", text, re.M | re.S):
            blocks += 1
            ast.parse(block, f"{page.relative_to(ROOT)}")
    assert blocks > 5


def test_usage_page_names_the_spec_versions() -> None:
    """The versions followed (SPEC_VERSIONS) are named on the usage page too."""
    from scrapy_rfc9309.parser._usage import SPEC_VERSIONS

    page = (DOCS / "usage.md").read_text(encoding="utf-8")
    for spec in SPEC_VERSIONS:
        assert f"| {spec.name} | {spec.version} | {spec.url} |" in page, spec


def test_install_commands_work_while_not_on_an_index() -> None:
    """The package is not on PyPI: an extra is installed from a clone or a wheel."""
    for page in [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        by_name = re.findall(r"pip install [^\n]*?(?<![\w./-])['\"]?scrapy-rfc9309\b", text)
        assert by_name == [], page


def test_leniency_table_lists_every_lenient_reading() -> None:
    """Each departure from RFC 9309 tagged ``LENIENT(<id>)`` in the code is in
    the parser page's Leniency table."""
    tagged = {
        match
        for path in (ROOT / "scrapy_rfc9309").rglob("*.py")
        for match in re.findall(r"LENIENT\(([a-z0-9-]+)\)", path.read_text(encoding="utf-8"))
    }
    assert tagged
    page = (DOCS / "parser.md").read_text(encoding="utf-8")
    assert sorted(name for name in tagged if f"| `{name}` |" not in page) == []


def test_architecture_page_names_every_module() -> None:
    """The architecture page's module table lists every module of the package, so a
    module added without saying its job there fails."""
    page = (DOCS / "architecture.md").read_text(encoding="utf-8")
    package = Path(__file__).resolve().parents[1] / "scrapy_rfc9309"
    modules = sorted(
        path.relative_to(package).as_posix()
        for path in package.rglob("_*.py")
        if path.parent != package
    )
    assert len(modules) > 90
    assert [module for module in modules if f"| `{module}` |" not in page] == []


def test_decided_by_is_described_alike_on_both_pages() -> None:
    """``decided_by`` (``scrapy robotstxt --json`` with ``ROBOTSTXT_ALSO_OBEY``) is
    one thing, said the same way where the command and the setting are described:
    the listed token whose rule refused, ``null`` when our own token's verdict stands."""
    said = "the listed token whose rule refused the URL"
    for name in ("command.md", "robots-txt.md"):
        page = " ".join((DOCS / name).read_text(encoding="utf-8").split())
        assert said in page, name
        assert "`null` when our own token's verdict stands" in page, name
