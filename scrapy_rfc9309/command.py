"""``scrapy robotstxt URL [--agent TOKEN] [--file PATH]``: explain a verdict.

Fetches the site's robots.txt through Scrapy (so the project's settings,
proxies and User-Agent apply) with the same rules as the middleware, or reads
a local file with ``--file``, and prints the verdict for URL, the deciding
rule and its line, the group that applied, Crawl-delay, Sitemaps and the lint
warnings. Exit status: 0 allowed, 1 disallowed, 2 error.
"""

from __future__ import annotations

import sys
from argparse import ArgumentParser, Namespace
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, ClassVar

from scrapy import Spider
from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from ._agent import is_valid_token
from ._outcome import Kind, SiteOutcome
from ._robotstxt import RobotsTxt
from ._settings import RobotsTxtSettings
from ._site import robots_url, site_of

__all__ = ["RobotsTxtCommand", "explain"]

EXIT_ALLOWED, EXIT_DISALLOWED, EXIT_ERROR = 0, 1, 2


def explain(robots: RobotsTxt, url: str, token: str) -> tuple[list[str], bool]:
    """The report lines for ``url`` under ``robots`` as ``token``, and the verdict."""
    verdict = robots.check(url=url, agent=token)
    lines = []
    if verdict.line is None:
        lines.append("verdict:     ALLOWED (no rule matches; RFC 9309 2.2.2)")
    else:
        word = "ALLOWED" if verdict.allowed else "DISALLOWED"
        lines.append(f'verdict:     {word} by line {verdict.line}: "{verdict.rule}"')
    groups = robots.groups_for(token)
    if not groups:
        lines.append("group:       none applies (no group for this agent and no '*' group)")
    for group in groups:
        agents = ", ".join(f"line {number}: User-agent: {name}" for number, name in group.agents)
        lines.append(f"group:       {agents}")
    delay = robots.crawl_delay(token)
    lines.append(f"crawl-delay: {'none' if delay is None else f'{delay} s'}")
    lines.extend(f"sitemap:     {sitemap}" for sitemap in robots.sitemaps)
    lines.extend(f"warning:     line {line}: {message}" for line, message in robots.warnings)
    return lines, verdict.allowed


class RobotsTxtCommand(ScrapyCommand):
    requires_project = False
    default_settings: ClassVar[dict[str, Any]] = {"LOG_LEVEL": "WARNING"}

    def syntax(self) -> str:
        return "URL [--agent TOKEN] [--file PATH]"

    def short_desc(self) -> str:
        return "Explain whether robots.txt (RFC 9309) allows a URL, and by which line"

    def add_options(self, parser: ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("--agent", help="product token to obey as (default: from settings)")
        parser.add_argument("--file", help="a local robots.txt to read instead of fetching it")

    def process_options(self, args: list[str], opts: Namespace) -> None:
        super().process_options(args, opts)
        assert self.settings is not None
        if not opts.loglevel:  # the report is the output; the crawl's log is not
            self.settings.set("LOG_LEVEL", "WARNING", priority="cmdline")
        self.settings.set("EXTENSIONS", {"scrapy_rfc9309.RobotsTxtExtension": None}, "cmdline")

    def run(self, args: list[str], opts: Namespace) -> None:
        if len(args) != 1:
            raise UsageError("give exactly one URL")
        url = args[0]
        site = site_of(url)
        if site is None and not opts.file:
            raise UsageError(f"not an absolute URL: {url!r}")
        assert self.settings is not None
        try:
            settings = RobotsTxtSettings.from_settings(self.settings)
        except ValueError as error:
            raise UsageError(str(error)) from None
        token = opts.agent or settings.token_for(None)
        if not is_valid_token(token) and token != "*":
            raise UsageError(f"--agent must be a product token ([A-Za-z_-]), got {token!r}")
        print(f"url:         {url}")
        print(f"agent:       {token}")
        if opts.file:
            outcome = self._read_file(Path(opts.file), settings)
            print(f"robots.txt:  {opts.file}")
        else:
            assert site is not None
            print(f"robots.txt:  {robots_url(site)}")
            outcome = self._fetch(site, settings)
        if outcome is None:
            self.exitcode = EXIT_ERROR
            return
        self.exitcode = self._report(outcome, url, token)

    def _read_file(self, path: Path, settings: RobotsTxtSettings) -> SiteOutcome | None:
        try:
            body = path.read_bytes()
        except OSError as error:
            print(f"error:       cannot read {path}: {error}", file=sys.stderr)
            return None
        robots = RobotsTxt.parse(body, max_size=settings.max_size)
        return SiteOutcome(Kind.PARSED, robots, f"local file, {len(body)} bytes", 0.0)

    def _fetch(self, site: str, settings: RobotsTxtSettings) -> SiteOutcome | None:
        assert self.crawler_process is not None
        found: list[SiteOutcome] = []

        class FetchRobotsTxt(Spider):
            name = "robotstxt"

            async def start(self) -> AsyncIterator[Any]:
                from ._fetcher import RobotsTxtFetcher

                fetcher = RobotsTxtFetcher(self.crawler, settings)
                found.append(await fetcher.fetch(robots_url(site)))
                return
                yield

        self.crawler_process.crawl(FetchRobotsTxt)
        self.crawler_process.start()
        if not found:
            print("error:       the crawl did not run", file=sys.stderr)
            return None
        return found[0]

    def _report(self, outcome: SiteOutcome, url: str, token: str) -> int:
        print(f"outcome:     {outcome.kind.value} ({outcome.detail})")
        if outcome.kind is Kind.UNREACHABLE:
            print("verdict:     DISALLOWED: robots.txt unreachable (RFC 9309 2.3.1.4)")
            return EXIT_DISALLOWED
        if outcome.robots is None:
            print("verdict:     ALLOWED: robots.txt unavailable (RFC 9309 2.3.1.3)")
            return EXIT_ALLOWED
        assert isinstance(outcome.robots, RobotsTxt)  # fresh from the fetcher, not compacted
        lines, allowed = explain(outcome.robots, url, token)
        print("\n".join(lines))
        return EXIT_ALLOWED if allowed else EXIT_DISALLOWED
