"""What a package index and an installer see: version, entry point, README links."""

from __future__ import annotations

import re
from importlib.metadata import entry_points, version
from pathlib import Path

import pytest

import scrapy_rfc9309

ROOT = Path(__file__).resolve().parents[1]


def test_version_is_the_distributions() -> None:
    assert scrapy_rfc9309.__version__ == version("scrapy-rfc9309")


def test_scrapy_command_entry_point() -> None:
    (point,) = [p for p in entry_points(group="scrapy.commands") if p.name == "robotstxt"]
    assert point.value == "scrapy_rfc9309.components:RobotsTxtCommand"


def test_readme_links_work_on_a_package_index() -> None:
    readme = ROOT / "README.md"
    if not readme.exists():
        pytest.skip("run from a copy of the tests, against the installed wheel")
    targets = re.findall(r"\]\(([^)]+)\)", readme.read_text())
    assert targets
    relative = [target for target in targets if not target.startswith(("https://", "#"))]
    assert relative == []


def test_readme_links_each_documentation_page_and_each_exists() -> None:
    """README is the front page: it links every page of the documentation, at
    the repository's address (``[project.urls] Source``), and each link names
    a file of the repository."""
    readme = ROOT / "README.md"
    if not readme.exists() or not (ROOT / "docs").is_dir():
        pytest.skip("run from a copy of the tests, against the installed wheel")
    source = re.search(r'^Source = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M)
    assert source is not None
    prefix = f"{source.group(1)}/blob/main/"
    targets = re.findall(r"\]\(([^)]+)\)", readme.read_text())
    files = [target.removeprefix(prefix) for target in targets if target.startswith(prefix)]
    assert [name for name in files if not (ROOT / name).is_file()] == []
    pages = {
        page.relative_to(ROOT).as_posix()
        for page in (ROOT / "docs").rglob("*.md")
        if "_build" not in page.parts and page.name not in {"index.md", "changelog.md"}
    }
    assert sorted(pages - set(files)) == []


def test_robots_parsed_is_scrapys_signal_where_scrapy_has_one() -> None:
    from scrapy import signals

    assert scrapy_rfc9309.robots_parsed is getattr(
        signals, "robots_parsed", scrapy_rfc9309.robots_parsed
    )
    assert scrapy_rfc9309.robots_parsed is not None


def test_import_star_works_without_the_optional_packages() -> None:
    """``from scrapy_rfc9309 import *`` imports every name in ``__all__``;
    none may need scrapy-redis or redis (optional), while the queue for
    scrapy-redis is still found by its name where scrapy-redis is installed."""
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['scrapy_redis'] = None; sys.modules['redis'] = None\n"
        "from scrapy_rfc9309 import *\n"
        "import scrapy_rfc9309\n"
        "assert all(name in globals() for name in scrapy_rfc9309.__all__)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    import scrapy_rfc9309

    assert scrapy_rfc9309.RobotsTxtRedisQueue.__name__ == "RobotsTxtRedisQueue"
