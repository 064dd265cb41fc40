"""``make demo``: start the demo site, crawl it with the demo project, show the result.

Everything runs on 127.0.0.1; nothing leaves the machine.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from scrapy_rfc9309 import RobotsTxt

HERE = Path(__file__).resolve().parent
# What a newcomer needs from the crawl log: our start-up lines, the middleware's
# line for each dropped request, the spider's line for each fetched one, and
# the close summary.
SHOWN = re.compile(r"\[scrapy_rfc9309|\[follow\] INFO: Fetched|^Rules that|^\s+\d+ x ")
# The extension's lines at close: the summary and the report written.
CLOSING = re.compile(r"robots\.txt summary|robots\.txt report written|^Rules that|^\s+\d+ x ")
# The stats keys of scrapy-rfc9309 and what they count (see README.md).
STAT_LABELS = {
    "robotstxt/request_count": "robots.txt downloads started",
    "robotstxt/response_count": "robots.txt responses received",
    "robotstxt/response_status_count/200": "... of them HTTP 200",
    "robotstxt/sites": "sites whose robots.txt was checked",
    "robotstxt/parsed": "sites whose robots.txt was parsed",
    "robotstxt/allowed": "requests let through after a check",
    "robotstxt/forbidden": "requests dropped",
    "robotstxt/forbidden/rule": "... by a Disallow rule",
    "robotstxt/forbidden/unreachable": "... because robots.txt was unreachable",
    "robotstxt/forbidden/closing": "... because the spider closed first",
    "robotstxt/unavailable": "sites whose robots.txt was unavailable (allow all)",
    "robotstxt/unreachable": "sites whose robots.txt was unreachable (disallow all)",
}


def short(line: str) -> str:
    """A log line without its timestamp."""
    return re.sub(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d ", "", line)


def wait_for_port(port_file: Path, server: subprocess.Popen[bytes]) -> int:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if port_file.exists() and port_file.read_text().strip():
            return int(port_file.read_text())
        if server.poll() is not None:
            raise SystemExit("the demo site did not start")
        time.sleep(0.05)
    raise SystemExit("the demo site did not start within 20 s")


def main() -> int:
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    with tempfile.TemporaryDirectory() as tmp:
        port_file = Path(tmp) / "port"
        site = subprocess.Popen(
            [sys.executable, str(HERE / "demo_site.py"), "--port-file", str(port_file)],
            stdout=subprocess.DEVNULL,
        )
        try:
            origin = f"http://127.0.0.1:{wait_for_port(port_file, site)}"
            print(f"== demo site on {origin}/ ; its robots.txt:\n")
            with urllib.request.urlopen(f"{origin}/robots.txt") as robots:
                print(robots.read().decode())
            report = Path(tmp) / "robots-report.json"
            print("== crawling it with example_project (scrapy crawl follow):")
            print("   each URL the spider met, fetched or dropped, and the deciding line\n")
            crawl = subprocess.run(
                [
                    *(sys.executable, "-m", "scrapy", "crawl", "follow"),
                    *("-a", f"start_url={origin}/", "-s", f"ROBOTSTXT_REPORT_FILE={report}"),
                ],
                cwd=HERE,
                env=env,
                capture_output=True,
                text=True,
            )
            shown = [short(line) for line in crawl.stderr.splitlines() if SHOWN.search(line)]
            at_close = [line for line in shown if CLOSING.search(line)]
            print("\n".join(line for line in shown if not CLOSING.search(line)))
            if report.exists():
                data = json.loads(report.read_text())
                print("\n== robots.txt stats of the crawl\n")
                for key, value in data["stats"].items():
                    print(f"  {key:<40} {value:>4}  {STAT_LABELS.get(key, '')}")
                print("\n== the close summary (RobotsTxtExtension)\n")
                print("\n".join(at_close))
                print("\n== the report written at close (ROBOTSTXT_REPORT_FILE), per site\n")
                for record in data["sites"]:
                    print(json.dumps(record, indent=2))
            else:
                print(crawl.stderr[-3000:])
            print("\n== why is /search?q=robots fetched and /private/accounts not?")
            print("   scrapy robotstxt URL URL\n", flush=True)
            with urllib.request.urlopen(f"{origin}/robots.txt") as response:
                robots = RobotsTxt.parse(response.read())
            anyone = robots.check(url="/search?q=robots", agent="*")
            print(
                "   DemoBot has a group of its own, so the '*' group does not apply to it\n"
                "   (RFC 9309 2.2.1); for a crawler without one, /search?q=robots is "
                f"{'allowed' if anyone.allowed else 'disallowed'} by line {anyone.line}: "
                f'"{anyone.rule}"\n'
            )
            explain = subprocess.run(
                [
                    *(sys.executable, "-m", "scrapy", "robotstxt"),
                    *(f"{origin}/search?q=robots", f"{origin}/private/accounts"),
                ],
                cwd=HERE,
                env=env,
                capture_output=True,
                text=True,
            )
            print(explain.stdout + explain.stderr)
            return crawl.returncode
        finally:
            site.terminate()
            site.wait(timeout=10)


if __name__ == "__main__":
    raise SystemExit(main())
