"""``scrapy robotstxt``: explain robots.txt verdicts, for people and for scripts.

This module parses the command's options and runs it; the work is done by
``_command_answer`` (each URL's answer as data, the exit status: pure),
``_command_text`` (the text output, from that same answer), ``_command_fetch``
(the downloads, in one crawl, through a one-attempt site service),
``_command_store`` (``history`` and ``--at``), ``_command_store_copy`` (the
stored copy a crawl would obey instead) and ``_command_lint`` (``--lint``).

``scrapy robotstxt URL [URL ...] [--agent TOKEN] [--file PATH] [--json]``
fetches each site's robots.txt once through Scrapy (so the project's
settings, proxies and User-Agent apply) with the same rules as the
middleware, or reads a local file with ``--file``, and prints for each URL
the verdict, the deciding rule and its line, the robots.txt URL chain, the
group that applied, Crawl-delay and Sitemaps. URLs come from the arguments,
or from standard input (one a line) when there are none or the only one is
``-``. With declared purposes, the usage decision is the crawl's own
(``_usage_decision``), with ``--page`` the page's own signals included.
"""

from __future__ import annotations

import json
import logging
import sys
from argparse import ArgumentParser, Namespace, RawDescriptionHelpFormatter
from collections.abc import Iterable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError
from scrapy.utils.defer import deferred_from_coro

from ...parser._usage import needs_tdmrep
from ...sites._outcome import SiteOutcome
from ...sites._site import site_of
from .._addon import settings_as_crawled
from ..settings._crawler_settings import log_setting_warnings
from ..settings._settings import RobotsTxtSettings
from ..settings._store_settings import StoreSettings
from ._command_answer import (
    EXIT_ALLOWED,
    EXIT_CODES_HELP,
    EXIT_DISALLOWED,
    EXIT_ERROR,
    EXIT_NO_ROBOTS,
    EXIT_PAGE_UNREAD,
    EXIT_USAGE_REFUSED,
    INTERNAL_ERROR,
    PageNotRead,
    PageRead,
    PageResult,
    TdmRepAnswer,
    agent_lines,
    exit_code,
    explain_url,
    no_site_reason,
    page_answer,
    page_note,
    tdmrep_note,
)
from ._command_fetch import (
    crawl_once,
    describe_download_error,
    fetcher_spider,
    lint_spider,
    read_file,
)
from ._command_lint import run_lint
from ._command_options import (
    check_agent,
    check_purposes,
    install_configured_reactor,
    warn_if_the_crawl_obeys_another,
)
from ._command_store import (
    history_entry,
    history_line,
    lifetime_at,
    parse_time,
    run_at,
    run_history,
    stored_outcome,
)
from ._command_store_copy import add_store_copy, store_copies
from ._command_text import explain, print_answer

if TYPE_CHECKING:
    from scrapy.crawler import CrawlerRunnerBase

__all__ = [
    "EXIT_ALLOWED",
    "EXIT_DISALLOWED",
    "EXIT_ERROR",
    "EXIT_NO_ROBOTS",
    "EXIT_PAGE_UNREAD",
    "EXIT_USAGE_REFUSED",
    "INTERNAL_ERROR",
    "PageNotRead",
    "PageRead",
    "PageResult",
    "RobotsTxtCommand",
    "TdmRepAnswer",
    "agent_lines",
    "check_agent",
    "describe_download_error",
    "exit_code",
    "explain",
    "explain_url",
    "history_entry",
    "history_line",
    "lifetime_at",
    "parse_time",
    "stored_outcome",
]

logger = logging.getLogger("scrapy_rfc9309.command")

LONG_DESC = """\
Fetch each site's robots.txt once through Scrapy (the project's settings,
proxies and User-Agent apply, with the same rules as the middleware), or read
--file, and explain the verdict for each URL: the deciding rule and its line,
the robots.txt URL chain, the group that applies. URLs come from the
arguments, or from standard input (one a line) when there are none or the
only one is '-'. With declared purposes (--purpose, or ROBOTSTXT_PURPOSES), the
usage preferences that apply are checked against them, the site's
/.well-known/tdmrep.json read when a purpose needs it. --lint FILE|URL lists a
robots.txt's findings, sorted by line.

With a robots.txt store (ROBOTSTXT_STORE_URI, or --store URI): 'history URL'
lists the versions of the site's robots.txt (and tdmrep.json) the store has
seen, and 'URL --at TIME' explains the verdict of the newest copies at TIME
(ISO 8601, UTC unless it says otherwise, or Unix seconds), without a download.
'prune' drops what the store no longer needs (ROBOTSTXT_STORE_ARCHIVE).
'audit FILE ...' checks a crawl's record (ROBOTSTXT_RECORD_FILE): its hash
chain, and every decision made again from the robots.txt copies in it.
"""


class RobotsTxtCommand(ScrapyCommand):
    requires_project = False
    default_settings: ClassVar[dict[str, Any]] = {"LOG_LEVEL": "WARNING"}
    #: the warnings about the run's settings and options already logged
    _said: frozenset[str] = frozenset()

    def syntax(self) -> str:
        return (
            "[URL ...] [--agent TOKEN] [--file PATH] [--purpose NAME] [--page] [--json] "
            "| --lint FILE|URL [--json]"
            " | URL ... --at TIME [--store URI] [--agent TOKEN] [--purpose NAME] [--json]"
            " | history URL [--store URI] [--json]"
            " | prune [--store URI]"
            " | audit FILE [FILE ...]"
        )

    def short_desc(self) -> str:
        return "Explain whether robots.txt (RFC 9309) allows URLs, and by which line"

    def long_desc(self) -> str:
        return LONG_DESC + "\n" + EXIT_CODES_HELP

    def add_options(self, parser: ArgumentParser) -> None:
        super().add_options(parser)
        # keep the line breaks of the exit status table, in Scrapy's help format
        base: Any = parser.formatter_class
        parser.formatter_class = type(  # type: ignore[assignment]
            "RobotsTxtHelpFormatter", (RawDescriptionHelpFormatter, base), {}
        )
        parser.add_argument(
            "--agent",
            metavar="TOKEN",
            help="product token to obey as (the settings' one when not given)",
        )
        parser.add_argument("--file", help="a local robots.txt to read instead of fetching it")
        parser.add_argument(
            "--json",
            action="store_true",
            help="one JSON object per URL a line (verdict, rule, line, robots_txt URL chain, "
            "group, outcome), or the --lint findings as one JSON object",
        )
        parser.add_argument(
            "--purpose",
            action="append",
            metavar="NAME",
            help="a declared purpose (train-ai, ai-use, search), "
            "repeatable (ROBOTSTXT_PURPOSES when not given). Usage preferences that refuse "
            "it are shown and exit 4; tdmrep.json is read when the purpose needs it",
        )
        parser.add_argument(
            "--page",
            action="store_true",
            help="also fetch each URL that robots.txt allows and show its page-level "
            "directives for the agent (robots META tag, X-Robots-Tag)",
        )
        parser.add_argument(
            "--lint",
            metavar="FILE|URL",
            help="list the warnings of a robots.txt file or URL, sorted by line; "
            "exit 1 when there are any",
        )
        parser.add_argument(
            "--at",
            metavar="TIME",
            help="the crawl's decision before download by the newest robots.txt copy at "
            "TIME (ISO 8601, UTC unless it says otherwise, or Unix seconds; history prints "
            "each copy's time to the millisecond), read from the store; no download, no --page",
        )
        parser.add_argument(
            "--store",
            metavar="URI",
            help="the robots.txt store to read for --at and history (ROBOTSTXT_STORE_URI "
            "when not given)",
        )

    def process_options(self, args: list[str], opts: Namespace) -> None:
        super().process_options(args, opts)
        assert self.settings is not None
        if not opts.loglevel:  # the report is the output; the crawl's log is not
            self.settings.set("LOG_LEVEL", "WARNING", priority="cmdline")
        self.settings.set("EXTENSIONS", {"scrapy_rfc9309.RobotsTxtExtension": None}, "cmdline")
        # a command run is no crawl: the project's crawl report is left as the
        # crawl wrote it (the add-on enables the extension again; its record:
        # see _CommandSpider)
        self.settings.set("ROBOTSTXT_REPORT_FILE", None, "cmdline")

    def run(self, args: list[str], opts: Namespace) -> None:
        """Run :meth:`answer` under the command's ``CrawlerProcess`` (its reactor
        runs until the answer is given); its exit status is the command's."""
        from twisted.python.failure import Failure

        process = self.crawler_process
        assert process is not None
        install_configured_reactor(process.settings)
        from twisted.internet import reactor as installed

        reactor: Any = installed
        results: list[Any] = []

        def finish(result: Any) -> None:
            results.append(result)
            if reactor.running:
                reactor.stop()

        def start() -> None:
            deferred_from_coro(self.answer(args, opts, process)).addBoth(finish)

        reactor.callWhenRunning(start)
        process.start(stop_after_crawl=False)
        if not results:  # the reactor was stopped first (a signal): no answer
            self.exitcode = EXIT_ERROR
        elif isinstance(results[0], Failure):
            results[0].raiseException()
        else:
            self.exitcode = results[0]

    async def answer(self, args: list[str], opts: Namespace, runner: CrawlerRunnerBase) -> int:
        """The command's work for ``args`` and ``opts`` (parsed and processed as
        :meth:`run` has them), its downloads crawled by ``runner`` in the running
        reactor; prints the answers and returns the exit status."""
        assert self.settings is not None
        try:  # read once for the run; its crawls do not say the warnings again
            # as the project's crawl reads them: with the add-on applied
            settings = RobotsTxtSettings.from_settings(settings_as_crawled(self.settings))
            StoreSettings.from_settings(self.settings)  # checked as the crawl checks them
        except ValueError as error:  # the project's settings: one line, not the usage
            print(f"error:       {error}", file=sys.stderr)
            return EXIT_ERROR
        self._say(settings.warnings)
        # in a project: which middleware its crawl runs (each --json answer says it)
        project = warn_if_the_crawl_obeys_another(self.settings)
        extra = {} if project is None else {"project_crawl": project}
        warnings: list[str] = []
        token = check_agent(opts.agent, warnings) if opts.agent else settings.token_for(None)
        self._say(warnings)
        if args and args[0] == "audit" and not opts.lint:
            from ._command_audit import run_audit

            return run_audit(args[1:])
        if args and args[0] == "history" and not opts.lint:
            return run_history(self.settings, args[1:], opts)
        if args and args[0] == "prune" and not opts.lint:
            from ._command_prune import prune

            return prune(self.settings, args[1:], opts.store)
        if opts.at is not None:
            if opts.lint or opts.file or opts.page:
                raise UsageError("--at reads the store: it takes no --lint, --file or --page")
            purposes = self._purposes(opts.purpose) if opts.purpose else settings.purposes
            return run_at(self.settings, self._urls(args), opts, settings, token, purposes, extra)
        if opts.store:  # not silently ignored: a live answer downloads robots.txt
            raise UsageError(
                "--store is read by history, --at and prune; without them robots.txt is "
                "downloaded (or read from --file), not taken from a store"
            )
        if opts.lint:
            if args:
                raise UsageError("--lint takes no URL arguments")

            async def fetch(url: str) -> SiteOutcome | None:
                found: dict[str, SiteOutcome] = {}
                await crawl_once(runner, lint_spider(settings, url, found), self._said)
                _say_missing([url], found)
                return found.get(url)

            return await run_lint(opts.lint, settings, fetch, as_json=opts.json)
        purposes = self._purposes(opts.purpose) if opts.purpose else settings.purposes
        # the crawl's own settings and policy, with the purposes asked about: the
        # site service reads tdmrep.json when they need it
        live = replace(settings, purposes=purposes)
        policy = live.policy
        urls = self._urls(args)
        if not urls:
            raise UsageError("give at least one URL (as arguments or on standard input)")
        pages: dict[str, PageResult] = {}
        tdmreps: dict[str, TdmRepAnswer] | None = (
            {} if needs_tdmrep(purposes) and not opts.file else None
        )
        outcomes = await self._outcomes(
            runner, urls, opts.file, live, pages if opts.page else None, token, tdmreps
        )
        # RFC 9309 2.4: a crawl started now obeys a fresh stored copy, not this download
        copies = {} if opts.file else store_copies(self.settings, outcomes, settings)
        answers = []
        for url in urls:
            site = site_of(url) if "://" in url else None
            outcome = outcomes.get("" if opts.file else site or "\0")
            if outcome is None and opts.file:
                return EXIT_ERROR
            why = no_site_reason(url) if site is None else "robots.txt not fetched"
            tdmrep: TdmRepAnswer | None = None
            if needs_tdmrep(purposes):
                tdmrep = (
                    (None, "not read with --file")
                    if opts.file
                    else (tdmreps or {}).get(site or "", (None, "not fetched"))
                )
            page = pages.get(url) if opts.page else None
            decide = partial(
                explain_url,
                url=url,
                token=token,
                error=why,
                purposes=purposes,
                tdmrep=tdmrep,
                page=page,
                also=settings.also_obey,
                noai=settings.meta_noai,
                policy=policy,
            )
            answers.append(decide(outcome))
            if opts.page:
                answers[-1]["page"] = page_answer(page)
            if purposes:
                answers[-1]["note"] = tdmrep_note(answers[-1]) or page_note(page, policy)
            add_store_copy(answers[-1], copies.get(site or ""), outcome, decide)
            answers[-1].update(extra)
            if opts.json:
                print(json.dumps(answers[-1], ensure_ascii=False), flush=True)
            else:
                print_answer(answers[-1], first=len(answers) == 1)
        return exit_code(answers)

    @staticmethod
    def _urls(args: list[str]) -> list[str]:
        if args and args != ["-"]:
            return args
        if not args and sys.stdin.isatty():
            return []
        return [
            line.strip() for line in sys.stdin if line.strip() and not line.lstrip().startswith("#")
        ]

    async def _outcomes(
        self,
        runner: CrawlerRunnerBase,
        urls: list[str],
        file: str | None,
        settings: RobotsTxtSettings,
        pages: dict[str, PageResult] | None = None,
        token: str = "*",
        tdmreps: dict[str, TdmRepAnswer] | None = None,
    ) -> dict[str, SiteOutcome]:
        """Each site's outcome (key ``""`` for ``--file``); sites that failed are absent.

        Fetched in one crawl, by a one-attempt site service (``settings``: with
        the purposes asked about); with ``tdmreps``, each site's tdmrep.json too.
        With ``pages``, each URL the outcome allows is fetched too, in the same
        crawl, and its page-level directives for ``token`` stored there (or why
        it was not fetched).
        """
        found: dict[str, SiteOutcome] = {}
        sites: list[str] = []
        if file:
            outcome = read_file(Path(file), settings)
            if outcome is not None:
                found[""] = outcome
        else:
            sites = sorted({site for url in urls if "://" in url and (site := site_of(url))})
        if sites or pages is not None:
            spider = fetcher_spider(settings, found, sites, urls, pages, token, tdmreps)
            await crawl_once(runner, spider, self._said)
        _say_missing(sites, found)
        return found

    def _say(self, warnings: Iterable[str]) -> None:
        """Log the warnings about the run's settings and options not said yet."""
        said = list(warnings)
        log_setting_warnings(said, told=self._said)
        self._said = self._said | frozenset(said)

    def _purposes(self, values: list[str]) -> tuple[str, ...]:
        """``--purpose`` values checked (:func:`check_purposes`), their warnings said."""
        warnings: list[str] = []
        purposes = check_purposes(values, warnings)
        self._say(warnings)
        return purposes


def _say_missing(keys: list[str], found: dict[str, SiteOutcome]) -> None:
    """One line on standard error naming the robots.txt the crawl did not fetch."""
    missing = [key for key in keys if key not in found]
    if missing:
        print(f"error:       the crawl did not fetch {', '.join(missing)}", file=sys.stderr)
