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


def test_readme_links_name_files_of_the_repository_or_real_sites() -> None:
    """Each README link is a file of the repository (relative, as a code host shows
    it), a web address, or an anchor; none points at a placeholder host."""
    readme = ROOT / "README.md"
    if not readme.exists() or not (ROOT / "docs").is_dir():
        pytest.skip("run from a copy of the tests, against the installed wheel")
    targets = re.findall(r"\]\(([^)]+)\)", readme.read_text())
    assert targets
    assert [target for target in targets if ".invalid" in target] == []
    relative = [target for target in targets if not target.startswith(("https://", "#"))]
    assert [t for t in relative if not (ROOT / t.partition("#")[0]).is_file()] == []


def test_readme_links_each_documentation_page() -> None:
    """README is the front page: it links every page of the documentation, by
    its path in the repository (``docs/getting-started.md``)."""
    readme = ROOT / "README.md"
    if not readme.exists() or not (ROOT / "docs").is_dir():
        pytest.skip("run from a copy of the tests, against the installed wheel")
    targets = re.findall(r"\]\(([^)]+)\)", readme.read_text())
    files = {target.partition("#")[0] for target in targets}
    pages = {
        page.relative_to(ROOT).as_posix()
        for page in (ROOT / "docs").rglob("*.md")
        if "_build" not in page.parts and page.name not in {"index.md", "changelog.md"}
    }
    assert sorted(pages - files) == []


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


def test_every_package_directory_is_in_the_wheel() -> None:
    """pyproject.toml lists the packages the wheel holds one by one: a subpackage
    added without its line would be missing from every install but a clone's."""
    pyproject = ROOT / "pyproject.toml"
    if not pyproject.exists():
        pytest.skip("run from a copy of the tests, against the installed wheel")
    block = pyproject.read_text().split("[tool.setuptools]", 1)[1].split("]", 1)[0]
    listed = set(re.findall(r'"(scrapy_rfc9309[\w.]*)"', block))
    # the package as installed: the source tree in a clone, the wheel's files
    # where the tests run against a built wheel (a subpackage left out of it
    # is missing there)
    package = Path(scrapy_rfc9309.__file__).resolve().parent
    found = {
        ".".join(("scrapy_rfc9309", *path.parent.relative_to(package).parts))
        for path in package.rglob("__init__.py")
    }
    assert found == listed
