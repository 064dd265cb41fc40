"""``make demo``: the example project crawls the local demo site (no internet)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_demo_crawls_the_local_site_and_explains_every_drop() -> None:
    demo = subprocess.run(
        [sys.executable, str(ROOT / "example_project" / "run_demo.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert demo.returncode == 0, demo.stdout + demo.stderr
    out = demo.stdout
    assert "Obeying robots.txt (RFC 9309) as 'DemoBot'" in out
    assert 'report.pdf: Forbidden by robots.txt line 13: "Disallow: /*.pdf$"' in out
    assert 'accounts: Forbidden by robots.txt line 10: "Disallow: /private/"' in out
    assert 'price: Forbidden by robots.txt line 12: "Disallow: /*?sort="' in out
    assert "7 requests allowed, 3 dropped (3 by rules" in out
    assert "'robotstxt/forbidden/rule': 3" in out
    assert 'verdict:     DISALLOWED by line 10: "Disallow: /private/"' in out
    assert "Crawl-delay 0.2 s" in out
