"""``scrapy robotstxt --lint FILE|URL``: a robots.txt's findings, as text or JSON."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path

from scrapy.exceptions import UsageError

from ...parser._lint import lint
from ...parser._robotstxt import RobotsTxt
from ...sites._outcome import SiteOutcome
from ...sites._site import robots_url, site_of
from ..settings._settings import RobotsTxtSettings
from ._command_answer import EXIT_ALLOWED, EXIT_DISALLOWED, EXIT_ERROR, EXIT_NO_ROBOTS
from ._command_fetch import read_file

__all__ = ["run_lint"]


async def run_lint(
    target: str,
    settings: RobotsTxtSettings,
    fetch: Callable[[str], Awaitable[SiteOutcome | None]],
    *,
    as_json: bool,
) -> int:
    """``--lint FILE|URL``: the findings of a robots.txt (see ``_lint``), sorted by
    line; ``fetch`` downloads a URL's robots.txt in the command's crawl."""
    if "://" in target:
        site = site_of(target)
        if site is None:
            raise UsageError(f"not an absolute URL: {target!r}")
        url = target if target.split("?")[0].endswith("/robots.txt") else robots_url(site)
        outcome = await fetch(url)
    else:
        outcome = read_file(Path(target), settings)
    if outcome is None:
        return EXIT_ERROR
    source = outcome.source or target
    if outcome.robots is None:
        message = f"robots.txt {outcome.kind.value} ({outcome.detail})"
        if as_json:
            print(
                json.dumps(
                    {
                        "robots_txt": source,
                        "outcome": outcome.kind.value,
                        "detail": outcome.detail,
                        "findings": [],
                    }
                )
            )
        else:
            print(f"{source}: {message}")
        return EXIT_NO_ROBOTS
    assert isinstance(outcome.robots, RobotsTxt)
    findings = lint(outcome.robots)
    if as_json:
        data = {
            "robots_txt": source,
            "outcome": outcome.kind.value,
            "detail": outcome.detail,
            "findings": [{"line": line, "message": message} for line, message in findings],
        }
        print(json.dumps(data, ensure_ascii=False))
    else:
        for line, message in findings:
            print(f"{source}:{line}: {message}")
        print(f"{len(findings)} finding{'' if len(findings) == 1 else 's'} in {source}")
    return EXIT_DISALLOWED if findings else EXIT_ALLOWED
