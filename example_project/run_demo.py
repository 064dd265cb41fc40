"""``make demo``: start the demo site, crawl it with the demo project, show the result.

Everything runs on 127.0.0.1; nothing leaves the machine.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
# What a newcomer needs from the crawl log: our lines, the spider's "Not
# fetched ... because ...", the close summary and the robotstxt/ stats.
SHOWN = re.compile(
    r"\[scrapy_rfc9309|\[follow\]|^Rules that|^\s+\d+ x |'robotstxt/|'item_scraped_count'"
)


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
            print("== crawling it with example_project (scrapy crawl follow)\n", flush=True)
            crawl = subprocess.run(
                [sys.executable, "-m", "scrapy", "crawl", "follow", "-a", f"start_url={origin}/"],
                cwd=HERE,
                env=env,
                capture_output=True,
                text=True,
            )
            print("\n".join(line for line in crawl.stderr.splitlines() if SHOWN.search(line)))
            print("\n== why is /private/accounts not fetched? (scrapy robotstxt)\n", flush=True)
            explain = subprocess.run(
                [sys.executable, "-m", "scrapy", "robotstxt", f"{origin}/private/accounts"],
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
