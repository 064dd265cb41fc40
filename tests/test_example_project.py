"""``make demo``: the example project crawls the local demo site (no internet) and
explains every URL it met: fetched or dropped, and the deciding robots.txt line."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run_demo() -> str:
    demo = subprocess.run(
        [sys.executable, str(ROOT / "example_project" / "run_demo.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert demo.returncode == 0, demo.stdout + demo.stderr
    return demo.stdout


@pytest.mark.slow
def test_demo_explains_every_url_the_spider_met() -> None:
    out = run_demo()
    assert "Obeying robots.txt (RFC 9309) as 'DemoBot'" in out
    assert "default USER_AGENT" not in out  # the demo identifies its crawler
    # dropped: the middleware's own line, with the deciding rule and the request
    dropped = re.findall(
        r'\[scrapy_rfc9309\.middleware\] DEBUG: Forbidden by robots.txt line (\d+): "([^"]+)" '
        r"\(http://127\.0\.0\.1:\d+/robots\.txt\): <GET http://127\.0\.0\.1:\d+(\S+)>",
        out,
    )
    assert sorted(dropped) == [
        ("10", "Disallow: /private/", "/private/accounts"),
        ("12", "Disallow: /*?sort=", "/products/?sort=price"),
        ("13", "Disallow: /*.pdf$", "/files/report.pdf"),
    ]
    # fetched: the deciding line too, or that no rule of DemoBot's groups matched
    fetched = dict(re.findall(r"Fetched http://127\.0\.0\.1:\d+(\S*): (.+)", out))
    assert (
        fetched["/private/press/launch"]
        == 'allowed by robots.txt line 11: "Allow: /private/press/"'
    )
    assert fetched["/search?q=robots"].startswith("allowed: no rule")
    assert len(fetched) == 7
    # the close summary, the labelled stats, the JSON report
    assert "7 requests allowed, 3 dropped (3 by rules" in out
    assert out.index("== robots.txt stats") < out.index("robots.txt summary:")
    assert re.search(r"robotstxt/forbidden/rule\s+3  \.\.\. by a Disallow rule", out)
    assert '"requests_dropped": 3' in out
    # why /search?q=robots is allowed for DemoBot (its own group) and not for others
    assert "the '*' group does not apply to it" in out
    assert 'disallowed by line 6: "Disallow: /search"' in out
    assert "verdict:     ALLOWED (no rule matches; RFC 9309 2.2.2)" in out
    assert "group:       line 8: User-agent: DemoBot, line 9: User-agent: demobot-images" in out
    assert 'verdict:     DISALLOWED by line 10: "Disallow: /private/"' in out
    assert "Crawl-delay 0.2 s" in out


def _make_dry_run(target: str, tmp_path: Path) -> str:
    import shutil

    import pytest

    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    if not (ROOT / "Makefile").is_file():  # the version matrix runs a copy of the tests
        pytest.skip("run from a copy of the tests, without the Makefile")
    venv = tmp_path / "venv"  # a fresh clone: nothing installed yet
    dry = subprocess.run(
        ["make", "-n", target, f"VENV={venv}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return dry.stdout


def test_make_demo_installs_the_package_alone(tmp_path: Path) -> None:
    """``make demo`` needs only the package, not the test and lint toolchain."""
    commands = _make_dry_run("demo", tmp_path)
    installs = [line for line in commands.splitlines() if "pip install" in line]
    assert installs and all("[test" not in line for line in installs), commands
    assert "run_demo.py" in commands
    full = _make_dry_run("test", tmp_path)
    assert "'.[test]'" in full
    assert "pytest -rs" in full  # skip reasons printed
