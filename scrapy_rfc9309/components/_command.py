"""``scrapy robotstxt``: explain robots.txt verdicts, for people and for scripts.

``scrapy robotstxt URL [URL ...] [--agent TOKEN] [--file PATH] [--json]``
fetches each site's robots.txt once through Scrapy (so the project's
settings, proxies and User-Agent apply) with the same rules as the
middleware, or reads a local file with ``--file``, and prints for each URL
the verdict, the deciding rule and its line, the robots.txt URL chain, the
group that applied, Crawl-delay and Sitemaps. URLs come from the arguments,
or from standard input (one a line) when there are none or the only one is
``-``.

``scrapy robotstxt --lint FILE|URL`` prints the warnings of a robots.txt,
sorted by line, and the checks site owners expect (see ``_lint``).

With a robots.txt store (``ROBOTSTXT_STORE_URI`` or ``--store URI``),
``scrapy robotstxt history URL`` lists the versions of the URL's site's
robots.txt the store has seen, and ``scrapy robotstxt URL --at TIME`` gives
the verdict of the newest copy fetched at or before TIME, without a download.
"""

from __future__ import annotations

import json
import logging
import sys
from argparse import ArgumentParser, Namespace, RawDescriptionHelpFormatter
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from scrapy import Spider
from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from ..parser._lint import lint
from ..parser._page_directives import PageDirectives
from ..parser._robotstxt import RobotsTxt
from ..parser._tdmrep import TDMREP_PATH, TdmRep
from ..parser._usage import CATEGORIES, NO_PREFERENCES, Preference, Usage, needs_tdmrep
from ..sites._outcome import DISALLOW_ALL, Kind, SiteOutcome
from ..sites._site import robots_url, site_of
from ._fetcher import is_download_failure
from ._meta_middleware import _LENIENT_FORMS
from ._settings import RobotsTxtSettings, SettingError, reduce_agent_setting

__all__ = ["RobotsTxtCommand", "explain"]

logger = logging.getLogger("scrapy_rfc9309.command")

#: Exit status, for scripts (several URLs: the first that applies, in this order).
EXIT_ALLOWED = 0
EXIT_DISALLOWED = 1  # a rule disallows a URL; with --lint: the file has findings
EXIT_ERROR = 2  # bad arguments or settings, an unreadable file, a URL that is not absolute
EXIT_NO_ROBOTS = 3  # robots.txt unreachable (all disallowed) or unavailable (all allowed)
EXIT_USAGE_REFUSED = 4  # allowed, but a usage preference refuses a declared purpose
EXIT_PAGE_UNREAD = 5  # --page: a page robots.txt allows could not be downloaded

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
lists the versions of the site's robots.txt the store has seen, and
'URL --at TIME' explains the verdict of the newest copy at TIME (ISO 8601,
UTC unless it says otherwise, or Unix seconds), without a download.
"""

EXIT_CODES_HELP = """\
exit status (several URLs: the first that applies, in this order):
  2  error: bad arguments or settings, an unreadable file, a URL that is not absolute,
     an internal error; with --at or history: no copy in the store, a store that fails
  1  a robots.txt rule disallows a URL (with --lint: the file has findings)
  4  robots.txt allows a URL, but a usage preference (robots.txt Content-Usage /
     Content-Signal, or tdmrep.json) refuses a declared purpose (--purpose, or
     ROBOTSTXT_PURPOSES)
  3  a robots.txt is unreachable (RFC 9309 2.3.1.4: every URL disallowed),
     unavailable (2.3.1.3: every URL allowed) or, with ROBOTSTXT_AUTH_DISALLOW,
     answered 401/403 (every URL disallowed); the verdict says which
  5  with --page: a page robots.txt allows could not be read (time-out, connection
     refused or reset); the page line says why
  0  every URL allowed (with --lint: no findings)
"""


def agent_lines(robots: RobotsTxt, token: str) -> list[list[tuple[int, str]]]:
    """The user-agent lines of each group that governs ``token``, as the file spells
    them: ``[[(line, "User-agent: ExampleBot"), ...], ...]``. One pass over the body."""
    lines = robots.body.split(b"\n")

    def text(number: int) -> str:
        raw = lines[number - 1] if 0 < number <= len(lines) else b""
        return raw.decode("utf-8", "replace").strip(" \t\r")

    return [
        [(number, text(number)) for number, _ in group.agents] for group in robots.groups_for(token)
    ]


#: A site's tdmrep.json as the command read it: its rules (``None``: not read) and
#: what the fetch came to (``HTTP 200, 2 rules``, ``not read with --file``).
TdmRepAnswer = tuple[TdmRep | None, str]
#: How the detail of a tdmrep.json that failed for a reason of ours starts.
INTERNAL_ERROR = "internal error"


def explain_url(
    outcome: SiteOutcome | None,
    url: str,
    token: str,
    error: str = "not an absolute URL",
    purposes: tuple[str, ...] = (),
    tdmrep: TdmRepAnswer | None = None,
) -> dict[str, Any]:
    """One URL's answer as data (the ``--json`` object); ``error`` when no outcome.

    With ``purposes``, a URL that robots.txt allows is checked against its usage
    preferences (robots.txt lines, and ``tdmrep`` when given): ``refused`` names
    the preference that refuses one, else ``None``.
    """
    answer: dict[str, Any] = {
        "url": url,
        "agent": token,
        "verdict": "error",
        "rule": None,
        "line": None,
        "robots_txt": [],
        "group": [],
        "outcome": None,
        "detail": None,
        "lifetime": None,
        "usage": {},
    }
    if purposes:
        answer["purposes"] = list(purposes)
        answer["refused"] = None
        answer["tdmrep"] = None
    if outcome is None:
        answer["detail"] = error
        return answer
    answer["robots_txt"] = [{"url": u, "status": status} for u, status in outcome.chain]
    answer["outcome"] = outcome.kind.value
    answer["detail"] = outcome.detail
    answer["lifetime"] = outcome.lifetime or None
    if outcome.kind in DISALLOW_ALL:
        answer["verdict"] = "disallowed"
        return answer
    robots = outcome.robots
    if robots is None:
        answer["verdict"] = "allowed"
        _check_purposes(answer, NO_PREFERENCES, url, purposes, tdmrep)
        return answer
    assert isinstance(robots, RobotsTxt)  # fresh from the fetcher or a file, not compacted
    try:
        verdict = robots.check(url=url, agent=token)
    except ValueError as error:
        answer["detail"] = str(error)
        return answer
    answer["verdict"] = "allowed" if verdict.allowed else "disallowed"
    answer["rule"] = verdict.rule
    answer["line"] = verdict.line
    answer["usage"] = robots.usage(url=url, agent=token).as_dict()
    if verdict.allowed:
        _check_purposes(answer, robots.usage(url=url, agent=token), url, purposes, tdmrep)
    answer["group"] = [
        {"line": number, "text": text}
        for group in agent_lines(robots, token)
        for number, text in group
    ]
    return answer


def _check_purposes(
    answer: dict[str, Any],
    usage: Usage,
    url: str,
    purposes: tuple[str, ...],
    tdmrep: TdmRepAnswer | None,
) -> None:
    """Add tdmrep.json's preferences to ``answer["usage"]`` and the refusal, if any."""
    if not purposes:
        return
    if tdmrep is not None:
        rules, detail = tdmrep
        site = site_of(url) if "://" in url else None
        answer["tdmrep"] = {"url": site + TDMREP_PATH if site else None, "detail": detail}
        if rules is not None:
            usage = usage.merged(rules.usage(url))
    answer["usage"] = usage.as_dict()
    refusal = usage.refusal(purposes)
    if refusal is not None:
        answer["refused"] = _refusal_dict(refusal)
        # each refused purpose, with the preference that refuses it
        answer["refusals"] = {
            purpose: _refusal_dict(refused)
            for purpose in purposes
            if (refused := usage.refusal((purpose,))) is not None
        }


def _refusal_dict(refusal: Preference) -> dict[str, Any]:
    return {
        "category": refusal.category,
        "value": refusal.value,
        "source": refusal.source,
        "line": refusal.line,
        "rule": refusal.rule,
    }


#: Outcomes that decide for the whole site, whatever the URL (exit status 3).
_WHOLE_SITE_OUTCOMES = frozenset(
    kind.value for kind in (Kind.UNREACHABLE, Kind.UNAVAILABLE, Kind.RESTRICTED)
)


def exit_code(answers: Iterable[dict[str, Any]]) -> int:
    """The command's exit status for these answers (see ``EXIT_CODES_HELP``)."""
    codes = set()
    for answer in answers:
        if answer["verdict"] == "error" or answer["outcome"] == Kind.INTERNAL_ERROR.value:
            codes.add(EXIT_ERROR)
        elif answer["outcome"] in _WHOLE_SITE_OUTCOMES:
            codes.add(EXIT_NO_ROBOTS)
        elif answer["verdict"] == "disallowed":
            codes.add(EXIT_DISALLOWED)
        elif (answer.get("tdmrep") or {}).get("detail", "").startswith(INTERNAL_ERROR):
            codes.add(EXIT_ERROR)  # not the site's answer: never read as "nothing stated"
        elif answer.get("refused"):
            codes.add(EXIT_USAGE_REFUSED)
        page = answer.get("page") or {}
        if page.get("failed"):
            codes.add(EXIT_PAGE_UNREAD)
        elif (page.get("error") or "").startswith(INTERNAL_ERROR):
            codes.add(EXIT_ERROR)
    for code in (
        EXIT_ERROR,
        EXIT_DISALLOWED,
        EXIT_USAGE_REFUSED,
        EXIT_NO_ROBOTS,
        EXIT_PAGE_UNREAD,
    ):
        if code in codes:
            return code
    return EXIT_ALLOWED


def explain(robots: RobotsTxt, url: str, token: str) -> tuple[list[str], bool]:
    """The report lines for ``url`` under ``robots`` as ``token``, and the verdict."""
    verdict = robots.check(url=url, agent=token)
    lines = []
    if verdict.line is None:
        lines.append("verdict:     ALLOWED (no rule matches; RFC 9309 2.2.2)")
    else:
        word = "ALLOWED" if verdict.allowed else "DISALLOWED"
        lines.append(f'verdict:     {word} by line {verdict.line}: "{verdict.rule}"')
    groups = agent_lines(robots, token)
    if not groups:
        lines.append("group:       none applies (no group for this agent and no '*' group)")
    for group in groups:
        agents = ", ".join(f"line {number}: {text}" for number, text in group)
        lines.append(f"group:       {agents}")
    delay = robots.crawl_delay(token)
    lines.append(f"crawl-delay: {'none' if delay is None else f'{delay} s'}")
    usage = robots.usage(url=url, agent=token)
    if not usage:
        lines.append("usage:       none stated (Content-Usage, Content-Signal)")
    for category in sorted(usage.preferences):
        preference = usage.preferences[category]
        line, rule = preference.line, preference.rule
        lines.append(f'usage:       {category}={preference.value} by line {line}: "{rule}"')
    lines.extend(f"sitemap:     {sitemap}" for sitemap in robots.sitemaps)
    lines.extend(f"warning:     line {line}: {message}" for line, message in robots.warnings)
    return lines, verdict.allowed


_WHOLE_SITE_VERDICTS = {
    Kind.UNREACHABLE: "robots.txt unreachable (RFC 9309 2.3.1.4)",
    Kind.RESTRICTED: "robots.txt answered 401/403 (ROBOTSTXT_AUTH_DISALLOW)",
    Kind.INTERNAL_ERROR: "internal error while fetching robots.txt (see the log)",
}


def check_agent(value: str) -> str:
    """The product token ``--agent`` names, reduced as ``ROBOTSTXT_USER_AGENT`` is
    (``MyBot/1.0`` obeys as ``MyBot``, with a warning); ``UsageError`` if it names none."""
    if value.strip() == "*":
        return "*"
    try:
        return reduce_agent_setting(value, name="--agent")
    except SettingError as error:
        raise UsageError(str(error)) from None


@dataclass(frozen=True)
class PageNotRead:
    """Why ``--page`` has no directives for a URL: ``reason``; the HTTP ``status``
    when there was a response (a redirect); ``failed`` when the page was requested
    but could not be downloaded (time-out, connection refused or reset)."""

    reason: str
    status: int | None = None
    failed: bool = False


#: What ``--page`` learnt of one URL: its status and directives, or why it was not read.
PageResult = tuple[int, PageDirectives] | PageNotRead


def describe_download_error(error: BaseException) -> str:
    """``ResponseNeverReceived: ConnectionLost: Connection to the other side was lost
    ...``: the exception's type and message, and those of the failures it wraps
    (Twisted's ``ResponseNeverReceived`` / ``ResponseFailed`` carry a list; a
    wrapper raised from another exception is described by that one)."""
    cause = error.__cause__
    if isinstance(cause, BaseException) and getattr(error, "reasons", None) is None:
        return describe_download_error(cause)  # Scrapy's wrapper of the download error
    reasons = getattr(error, "reasons", None)
    if isinstance(reasons, list) and reasons:
        inner = "; ".join(
            describe_download_error(value)
            for value in (getattr(reason, "value", reason) for reason in reasons[:3])
            if isinstance(value, BaseException)
        )
        if inner:
            return f"{type(error).__name__}: {inner}"
    message = str(error).strip()
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


async def _fetch_page(
    crawler: Any, url: str, found: dict[str, SiteOutcome], token: str, pages: dict[str, PageResult]
) -> None:
    """Fetch ``url`` if its robots.txt outcome allows it, and read its page-level
    directives for ``token`` (HTTP: The Definitive Guide ch. 9: the robots META
    tag; ``X-Robots-Tag``). A page robots.txt disallows is never fetched."""
    from scrapy.http import Request
    from scrapy.http.request import NO_CALLBACK

    from ..parser._page_directives import read_page_directives
    from . import _compat

    site = site_of(url) if "://" in url else None
    if site is None:
        pages[url] = PageNotRead(_no_site_reason(url))
        return
    outcome = found.get("", found.get(site))
    if outcome is None:
        pages[url] = PageNotRead("robots.txt not fetched")
        return
    decision = outcome.decide(url, token, site)
    if not decision.allowed:
        pages[url] = PageNotRead(f"not fetched: {decision.reason}")
        return
    request = Request(url, callback=NO_CALLBACK, dont_filter=True)
    request.meta["dont_obey_robotstxt"] = True  # decided above, for this URL only
    # A redirect is not followed: its target may be another site, under other rules.
    request.meta["dont_redirect"] = True
    try:
        response = await _compat.download(crawler, request)
    except Exception as error:
        if not is_download_failure(error):  # not the site's answer: never disguised as one
            logger.exception("Internal error while fetching %s", url)
            pages[url] = PageNotRead(f"{INTERNAL_ERROR}: {describe_download_error(error)}")
            return
        pages[url] = PageNotRead(f"download failed: {describe_download_error(error)}", failed=True)
        return
    if 300 <= response.status < 400:
        location = (response.headers.get(b"Location") or b"").decode("latin-1")
        pages[url] = PageNotRead(
            f"HTTP {response.status} to {location!r}: a redirect is not followed",
            status=response.status,
        )
        return
    directives = read_page_directives(
        response.url, response.status, response.headers, response.body, token
    )
    pages[url] = (response.status, directives)


def _no_site_reason(url: str) -> str:
    """Why ``url`` has no robots.txt site to ask (the ``detail`` of an error answer)."""
    scheme, colon, _ = url.partition(":")
    if not colon or "/" in scheme:
        return "not an absolute URL"
    if scheme.lower() not in ("http", "https"):
        return f"not an http(s) URL ({scheme}:): robots.txt does not apply"
    return "not a valid http(s) URL (no host, or a malformed host or port)"


def _page_answer(result: PageResult | None) -> dict[str, Any]:
    """``--page``'s part of a URL's answer (the ``page`` object of ``--json``)."""
    if result is None:
        result = PageNotRead("not fetched")
    if isinstance(result, PageNotRead):
        return {
            "status": result.status,
            "directives": [],
            "sources": {},
            "error": result.reason,
            "failed": result.failed,
            "truncated": [],
            "lenient": [],
        }
    status, page = result
    return {
        "status": status,
        "directives": sorted(page.directives),
        "sources": {name: list(page.sources.get(name, ())) for name in sorted(page.directives)},
        "error": None,
        "failed": False,
        "truncated": sorted(page.truncated),
        "lenient": sorted(page.lenient),
    }


class RobotsTxtCommand(ScrapyCommand):
    requires_project = False
    default_settings: ClassVar[dict[str, Any]] = {"LOG_LEVEL": "WARNING"}

    def syntax(self) -> str:
        return (
            "[URL ...] [--agent TOKEN] [--file PATH] [--purpose NAME] [--page] [--json] "
            "| --lint FILE|URL [--json]"
            " | URL ... --at TIME [--store URI] | history URL [--store URI] [--json]"
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
        parser.add_argument("--agent", help="product token to obey as (default: from settings)")
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
            help="a declared purpose (train-ai, train-genai, ai-input, search, bots), "
            "repeatable; default: ROBOTSTXT_PURPOSES. Usage preferences that refuse it are "
            "shown and exit 4; tdmrep.json is read when the purpose needs it",
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
            help="the verdict of the newest robots.txt copy at TIME (ISO 8601, UTC unless "
            "it says otherwise, or Unix seconds), read from the store; no download",
        )
        parser.add_argument(
            "--store",
            metavar="URI",
            help="the robots.txt store to read for --at and history (default: ROBOTSTXT_STORE_URI)",
        )

    def process_options(self, args: list[str], opts: Namespace) -> None:
        super().process_options(args, opts)
        assert self.settings is not None
        if not opts.loglevel:  # the report is the output; the crawl's log is not
            self.settings.set("LOG_LEVEL", "WARNING", priority="cmdline")
        self.settings.set("EXTENSIONS", {"scrapy_rfc9309.RobotsTxtExtension": None}, "cmdline")

    def run(self, args: list[str], opts: Namespace) -> None:
        assert self.settings is not None
        try:
            settings = RobotsTxtSettings.from_settings(self.settings)
        except ValueError as error:
            raise UsageError(str(error)) from None
        token = check_agent(opts.agent) if opts.agent else settings.token_for(None)
        if args and args[0] == "history" and not opts.lint:
            self.exitcode = self._history(args[1:], opts)
            return
        if opts.at is not None:
            if opts.lint or opts.file or opts.page:
                raise UsageError("--at reads the store: it takes no --lint, --file or --page")
            self.exitcode = self._at(self._urls(args), opts, settings, token)
            return
        if opts.lint:
            if args:
                raise UsageError("--lint takes no URL arguments")
            self.exitcode = self._lint(opts.lint, settings, as_json=opts.json)
            return
        purposes = _purposes(opts.purpose) if opts.purpose else settings.purposes
        urls = self._urls(args)
        if not urls:
            raise UsageError("give at least one URL (as arguments or on standard input)")
        pages: dict[str, PageResult] = {}
        tdmreps: dict[str, TdmRepAnswer] | None = (
            {} if needs_tdmrep(purposes) and not opts.file else None
        )
        outcomes = self._outcomes(
            urls, opts.file, settings, pages if opts.page else None, token, tdmreps
        )
        answers = []
        for url in urls:
            site = site_of(url) if "://" in url else None
            outcome = outcomes.get("" if opts.file else site or "\0")
            if outcome is None and opts.file:
                self.exitcode = EXIT_ERROR
                return
            why = _no_site_reason(url) if site is None else "robots.txt not fetched"
            tdmrep: TdmRepAnswer | None = None
            if needs_tdmrep(purposes):
                tdmrep = (
                    (None, "not read with --file")
                    if opts.file
                    else (tdmreps or {}).get(site or "", (None, "not fetched"))
                )
            answers.append(explain_url(outcome, url, token, why, purposes, tdmrep))
            if opts.page:
                answers[-1]["page"] = _page_answer(pages.get(url))
            if opts.json:
                print(json.dumps(answers[-1], ensure_ascii=False), flush=True)
            else:
                self._print_text(answers[-1], outcome, token, first=len(answers) == 1)
                self._print_page(answers[-1])
        self.exitcode = exit_code(answers)

    @staticmethod
    def _urls(args: list[str]) -> list[str]:
        if args and args != ["-"]:
            return args
        if not args and sys.stdin.isatty():
            return []
        return [
            line.strip() for line in sys.stdin if line.strip() and not line.lstrip().startswith("#")
        ]

    def _outcomes(
        self,
        urls: list[str],
        file: str | None,
        settings: RobotsTxtSettings,
        pages: dict[str, PageResult] | None = None,
        token: str = "*",
        tdmreps: dict[str, TdmRepAnswer] | None = None,
    ) -> dict[str, SiteOutcome]:
        """Each site's outcome (key ``""`` for ``--file``); sites that failed are absent.

        With ``pages``, each URL the outcome allows is fetched too, in the same
        crawl, and its page-level directives for ``token`` stored there (or why
        it was not fetched).
        """
        if file:
            outcome = _read_file(Path(file), settings)
            found = {"": outcome} if outcome is not None else {}
            if pages is not None:
                self._fetch([], settings, [], urls, pages, token, found)
            return found
        sites = sorted({site for url in urls if "://" in url and (site := site_of(url))})
        return self._fetch(
            [robots_url(site) for site in sites],
            settings,
            sites,
            urls,
            pages,
            token,
            tdmreps=tdmreps,
        )

    def _fetch(
        self,
        targets: list[str],
        settings: RobotsTxtSettings,
        keys: list[str],
        urls: list[str] = (),  # type: ignore[assignment]
        pages: dict[str, PageResult] | None = None,
        token: str = "*",
        known: dict[str, SiteOutcome] | None = None,
        tdmreps: dict[str, TdmRepAnswer] | None = None,
    ) -> dict[str, SiteOutcome]:
        """Fetch every robots.txt URL in ``targets`` in one crawl, keyed by ``keys``;
        with ``tdmreps``, each site's tdmrep.json too (its robots.txt permitting);
        then, with ``pages``, each of ``urls`` that its outcome allows."""
        if not targets and pages is None:
            return {}
        assert self.crawler_process is not None
        found: dict[str, SiteOutcome] = dict(known or {})

        class FetchRobotsTxt(Spider):
            name = "robotstxt"

            async def start(self) -> AsyncIterator[Any]:
                from scrapy.utils.defer import (
                    deferred_from_coro,
                    maybe_deferred_to_future,
                )
                from twisted.internet.defer import DeferredList

                from ._fetcher import RobotsTxtFetcher

                fetcher = RobotsTxtFetcher(self.crawler, settings)

                async def one(key: str, url: str) -> None:
                    try:
                        found[key] = await fetcher.fetch(url)
                    except Exception:  # not the site's answer: an error, with its traceback
                        logger.exception("Internal error while fetching %s", url)

                await maybe_deferred_to_future(
                    DeferredList(
                        [deferred_from_coro(one(k, u)) for k, u in zip(keys, targets, strict=True)]
                    )
                )
                if tdmreps is not None:
                    await _fetch_tdmreps(self.crawler, settings, found, keys, tdmreps)
                if pages is not None:
                    await maybe_deferred_to_future(
                        DeferredList(
                            [
                                deferred_from_coro(
                                    _fetch_page(self.crawler, u, found, token, pages)
                                )
                                for u in urls
                            ]
                        )
                    )
                return
                yield

        self.crawler_process.crawl(FetchRobotsTxt)
        self.crawler_process.start()
        missing = [key for key in keys if key not in found]
        if missing:
            print(f"error:       the crawl did not fetch {', '.join(missing)}", file=sys.stderr)
        return found

    @staticmethod
    def _print_page(answer: dict[str, Any]) -> None:
        page = answer.get("page")
        if page is None:
            return
        if page.get("error"):
            status = f"HTTP {page['status']}, " if page.get("status") is not None else ""
            print(f"page:        {status}not read: {page['error']}")
        elif not page["directives"]:
            print(f"page:        HTTP {page['status']}, no robots directives for this agent")
        else:
            print(f"page:        HTTP {page['status']}")
            for name in page["directives"]:
                print(f"directive:   {name} ({', '.join(page['sources'][name])})")
        if page.get("truncated"):
            print(
                f"limit:       read only in part ({', '.join(page['truncated'])} reached): "
                "a directive past it is not seen"
            )
        for form in page.get("lenient") or ():
            print(f"lenient:     {_LENIENT_FORMS.get(form, form)}")

    def _print_text(
        self, answer: dict[str, Any], outcome: SiteOutcome | None, token: str, *, first: bool
    ) -> None:
        if not first:
            print()
        print(f"url:         {answer['url']}")
        print(f"agent:       {token}")
        if outcome is None:
            print(f"verdict:     ERROR: {answer['detail']}")
            return
        print(f"robots.txt:  {outcome.source}")
        print(f"outcome:     {outcome.kind.value} ({outcome.detail})")
        if outcome.lifetime:
            print(f"lifetime:    {outcome.lifetime}")
        if outcome.kind in DISALLOW_ALL:
            print(f"verdict:     DISALLOWED: {_WHOLE_SITE_VERDICTS[outcome.kind]}")
            return
        if outcome.robots is None:
            print("verdict:     ALLOWED: robots.txt unavailable (RFC 9309 2.3.1.3)")
            self._print_purposes(answer)
            return
        assert isinstance(outcome.robots, RobotsTxt)
        if answer["verdict"] == "error":
            print(f"verdict:     ERROR: {answer['detail']}")
            return
        lines, _ = explain(outcome.robots, answer["url"], token)
        print("\n".join(lines))
        self._print_purposes(answer)

    @staticmethod
    def _print_purposes(answer: dict[str, Any]) -> None:
        """The declared purposes' part: tdmrep.json and what refuses a purpose."""
        if "purposes" not in answer or answer["verdict"] != "allowed":
            return
        tdmrep = answer.get("tdmrep")
        if tdmrep is not None:
            where = tdmrep["url"] or TDMREP_PATH
            print(f"tdmrep.json: {where} ({tdmrep['detail']})")
            for category, preference in answer["usage"].items():
                if preference["source"] == TDMREP_PATH:
                    print(
                        f"usage:       {category}={preference['value']} by tdmrep.json: "
                        f"{preference['rule']}"
                    )
        purposes = ", ".join(answer["purposes"])
        refused = answer["refused"]
        if refused is None:
            print(f"purposes:    {purposes}: not refused")
            return
        refusals = answer.get("refusals") or {answer["purposes"][0]: refused}
        parts = []
        for purpose in answer["purposes"]:
            refused = refusals.get(purpose)
            if refused is None:
                parts.append(f"{purpose}: not refused")
                continue
            if refused["line"] is not None:
                where = f'robots.txt line {refused["line"]}: "{refused["rule"]}"'
            else:
                where = f"{refused['source'].removeprefix('/.well-known/')}: {refused['rule']}"
            parts.append(f"{purpose}: REFUSED, {refused['category']}={refused['value']} by {where}")
        print(f"purposes:    {', '.join(parts)}")

    # -- the store: history and --at ------------------------------------------------

    def _open_store(self, opts: Namespace) -> Any:
        """The store ``--store`` or ``ROBOTSTXT_STORE_URI`` names (``UsageError`` if none)."""
        from ..sites._store import StoreError, open_store
        from ._settings import StoreSettings
        from ._store_bridge import without_password

        assert self.settings is not None
        try:
            configured = StoreSettings.from_settings(self.settings, uri=opts.store)
        except ValueError as error:
            raise UsageError(str(error)) from None
        uri = opts.store or configured.uri
        if not uri:
            raise UsageError(
                "no robots.txt store: set ROBOTSTXT_STORE_URI in the project settings "
                "or give --store URI"
            )
        name = "--store" if opts.store else "ROBOTSTXT_STORE_URI"
        try:
            return open_store(
                uri,
                data_dir=configured.data_dir,
                redis_url=configured.redis_url,
                redis_prefix=configured.redis_prefix,
                read_only=True,  # a report never makes or changes a store
            )
        except ValueError as error:
            raise UsageError(str(error).replace("ROBOTSTXT_STORE_URI", name)) from None
        except StoreError as error:
            if str(error).startswith("no store at "):
                raise UsageError(str(error)) from None
            shown = without_password(uri)
            raise UsageError(f"{name} = {shown!r}: the store cannot be opened: {error}") from None

    def _history(self, args: list[str], opts: Namespace) -> int:
        """``history URL``: the versions of the site's robots.txt the store has seen."""
        from ..sites._store import StoreError

        if len(args) != 1:
            raise UsageError("history takes one URL")
        site = site_of(args[0]) if "://" in args[0] else None
        if site is None:
            raise UsageError(f"history: {_no_site_reason(args[0])}: {args[0]!r}")
        store = self._open_store(opts)
        try:
            records = store.history(site, limit=HISTORY_LIMIT)
        except StoreError as error:
            print(f"error:       {error}", file=sys.stderr)
            return EXIT_ERROR
        finally:
            _close_quietly(store)
        if not records:
            message = f"the store {store.uri} has no robots.txt of {site}"
            print(f"error:       {message}", file=sys.stderr)
            return EXIT_ERROR
        for record in records:
            if opts.json:
                print(json.dumps(history_entry(record), ensure_ascii=False))
            else:
                print(history_line(record))
        return EXIT_ALLOWED

    def _at(self, urls: list[str], opts: Namespace, settings: RobotsTxtSettings, token: str) -> int:
        """``URL --at TIME``: each URL's verdict from the newest copy fetched at or
        before TIME, and whether that copy was still within its lifetime then."""
        from ..sites._store import StoreError

        if not urls:
            raise UsageError("give at least one URL (as arguments or on standard input)")
        when = parse_time(opts.at)
        store = self._open_store(opts)
        answers = []
        missing = False
        try:
            for url in urls:
                site = site_of(url) if "://" in url else None
                outcome = None
                why = _no_site_reason(url)
                record = None
                if site is not None:
                    try:
                        found = store.at(site, when)
                    except StoreError as error:
                        print(f"error:       {error}", file=sys.stderr)
                        return EXIT_ERROR
                    if found is None:
                        missing = True
                        why = f"the store has no copy of {robots_url(site)} at {_iso(when)}"
                        print(f"error:       {why}", file=sys.stderr)
                    else:
                        record, body = found
                        outcome = stored_outcome(record, body, settings)
                answers.append(explain_url(outcome, url, token, why))
                answers[-1]["fetched_at"] = None if record is None else _iso(record.fetched_at)
                answers[-1]["at"] = _iso(when)
                if record is not None:
                    answers[-1]["expires_at"] = _iso(record.expires_at)
                    answers[-1]["within_lifetime"] = bool(record.expires_at > when)
                if opts.json:
                    print(json.dumps(answers[-1], ensure_ascii=False), flush=True)
                else:
                    self._print_text(answers[-1], outcome, token, first=len(answers) == 1)
                    if record is not None:
                        print(
                            f"stored:      fetched at {_iso(record.fetched_at)}, the newest "
                            f"copy at {_iso(when)} ({store.uri}); "
                            f"{lifetime_at(record, when)}"
                        )
        finally:
            _close_quietly(store)
        return EXIT_ERROR if missing else exit_code(answers)

    # -- --lint ----------------------------------------------------------------------

    def _lint(self, target: str, settings: RobotsTxtSettings, *, as_json: bool) -> int:
        if "://" in target:
            site = site_of(target)
            if site is None:
                raise UsageError(f"not an absolute URL: {target!r}")
            url = target if target.split("?")[0].endswith("/robots.txt") else robots_url(site)
            outcome = self._fetch([url], settings, [url]).get(url)
        else:
            outcome = _read_file(Path(target), settings)
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
            print(f"{len(findings)} finding{'' if len(findings) == 1 else 's'}")
        return EXIT_DISALLOWED if findings else EXIT_ALLOWED


def _purposes(values: list[str]) -> tuple[str, ...]:
    """``--purpose`` values (each may be comma-separated), checked as
    ``ROBOTSTXT_PURPOSES`` is; ``UsageError`` naming the known ones."""
    purposes: list[str] = []
    for value in values:
        for name in value.split(","):
            name = name.strip().lower()
            if not name:
                continue
            if name not in CATEGORIES:
                known = ", ".join(sorted(CATEGORIES))
                raise UsageError(f"--purpose: unknown purpose {name!r}; known: {known}")
            if name not in purposes:
                purposes.append(name)
    if not purposes:
        known = ", ".join(sorted(CATEGORIES))
        raise UsageError(f"--purpose: no purpose named; known: {known}")
    return tuple(purposes)


async def _fetch_tdmreps(
    crawler: Any,
    settings: RobotsTxtSettings,
    found: dict[str, SiteOutcome],
    sites: list[str],
    tdmreps: dict[str, TdmRepAnswer],
) -> None:
    """Each site's ``/.well-known/tdmrep.json``, as the middleware reads it; a site
    whose robots.txt disallows everything is not asked."""
    from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
    from twisted.internet.defer import DeferredList

    from ._usage_gate import TdmRepSites

    details: dict[str, str] = {}
    reader = TdmRepSites(crawler, settings, details=details)

    async def one(site: str) -> None:
        outcome = found.get(site)
        if outcome is None or outcome.kind in DISALLOW_ALL:
            tdmreps[site] = (None, "not fetched: robots.txt disallows the site")
            return
        try:
            rules = await reader.get(site)
        except Exception as error:  # not the site's answer: an error, with its traceback
            logger.exception("Internal error while fetching %s%s", site, TDMREP_PATH)
            tdmreps[site] = (None, f"{INTERNAL_ERROR}: {type(error).__name__}: {error}")
            return
        tdmreps[site] = (rules, details.get(site, "fetched"))

    await maybe_deferred_to_future(DeferredList([deferred_from_coro(one(s)) for s in sites]))


#: versions ``history`` lists at most
HISTORY_LIMIT = 1000


def _iso(unix: float) -> str:
    from ._store_bridge import utc_iso

    return utc_iso(unix)


#: ``--at``'s range in Unix seconds: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z
_FIRST_TIME = -62135596800.0
_LAST_TIME = 253402300799.0


def _span(seconds: float) -> str:
    """``3 h``, ``12 min``, ``40 s``, ``2 d``: a duration for a person."""
    seconds = abs(seconds)
    for size, unit in ((86400, "d"), (3600, "h"), (60, "min")):
        if seconds >= size:
            return f"{round(seconds / size):d} {unit}"
    return f"{round(seconds):d} s"


def lifetime_at(record: Any, when: float) -> str:
    """Whether a stored copy was within its own lifetime at ``when``, for ``--at``."""
    if record.expires_at > when:
        return f"within its lifetime at that time (expires {_iso(record.expires_at)})"
    return f"expired {_span(when - record.expires_at)} before that time ({_iso(record.expires_at)})"


def parse_time(text: str) -> float:
    """``--at``'s TIME as a Unix time: Unix seconds, or ISO 8601 (UTC unless it says)."""
    import datetime

    value = text.strip()
    try:
        unix = float(value)
    except ValueError:
        pass
    else:
        if not (_FIRST_TIME <= unix <= _LAST_TIME):  # also NaN and infinities
            raise UsageError(
                f"--at {text!r}: not a time between the years 1 and 9999; give ISO 8601 "
                "(2026-11-22T04:00:00Z) or Unix seconds"
            )
        return unix
    try:
        # Python 3.10 reads no "Z" suffix: it is +00:00
        if value[-1:] in ("Z", "z"):
            value = value[:-1] + "+00:00"
        moment = datetime.datetime.fromisoformat(value)
    except ValueError:
        raise UsageError(
            f"--at {text!r}: not a time; give ISO 8601 (2026-11-22T04:00:00Z) or Unix seconds"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    return moment.timestamp()


def stored_outcome(record: Any, body: bytes | None, settings: RobotsTxtSettings) -> SiteOutcome:
    """The outcome a stored record stands for with ``settings`` (for ``--at``), as
    the crawl derives it (``sites._records``), re-parsed from its body."""
    from ..sites._records import ReaderLimits, answer_of

    answer = answer_of(record, body, record.site, ReaderLimits.of(settings))
    robots = None
    if answer.kind is Kind.PARSED:
        robots = RobotsTxt.parse(answer.body or b"", max_size=settings.max_size)
    return answer.outcome(robots, 0.0)


def history_entry(record: Any) -> dict[str, Any]:
    """One version of a robots.txt as ``history --json`` prints it."""
    return {
        "site": record.site,
        "fetched_at": _iso(record.fetched_at),
        "robots_txt": [{"url": url, "status": status} for url, status in record.chain],
        "outcome": record.kind,
        "detail": record.detail,
        "size": record.size,
        "sha256": record.sha256,
        "lifetime": record.lifetime or None,
        "expires_at": _iso(record.expires_at),
    }


def history_line(record: Any) -> str:
    """One version of a robots.txt as ``history`` prints it."""
    chain = " -> ".join(
        f"{url} ({'no response' if status is None else status})" for url, status in record.chain
    )
    digest = record.sha256[:12] if record.sha256 else "-" * 12
    seconds = max(0.0, record.expires_at - record.fetched_at)
    lifetime = record.lifetime or (
        "Retry-After"
        if record.retry_after
        else "ROBOTSTXT_UNREACHABLE_TTL"
        if record.kind == Kind.UNREACHABLE.value
        else "-"
    )
    return (
        f"{_iso(record.fetched_at)}  {record.kind:<11} {record.size:>7} bytes  {digest}  "
        f"{chain or '-'}  ({record.detail}; kept {round(seconds):d} s: "
        f"{lifetime})"
    )


def _close_quietly(store: Any) -> None:
    from ..sites._store import StoreError

    try:
        store.close()
    except StoreError as error:
        logger.warning("closing the robots.txt store: %s", error)


def _read_file(path: Path, settings: RobotsTxtSettings) -> SiteOutcome | None:
    """A local robots.txt, read only up to ``ROBOTSTXT_MAX_SIZE`` (RFC 9309 2.5), as
    the middleware would: ``/dev/zero`` or a huge file costs no more than that."""
    try:
        with path.open("rb") as file:
            body = file.read(settings.max_size + 1)
    except OSError as error:
        print(f"error:       cannot read {path}: {error}", file=sys.stderr)
        return None
    robots = RobotsTxt.parse(body, max_size=settings.max_size)
    chain = ((str(path), None),)
    size = f"{len(body)} bytes" if len(body) <= settings.max_size else "over the size limit"
    return SiteOutcome(Kind.PARSED, robots, f"local file, {size}", 0.0, chain)
