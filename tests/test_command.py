"""``scrapy robotstxt`` against real local sites: in the test's reactor (``scrapy``,
the command's own parsing and answer) and, for what only a process shows
(arguments end to end, standard input, exit status, a project), as a real
process (``scrapy_process``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scrapy.utils.defer import deferred_f_from_coro_f, maybe_deferred_to_future
from twisted.internet import threads

from scrapy_rfc9309.components.command._command import (
    EXIT_ALLOWED,
    EXIT_DISALLOWED,
    EXIT_ERROR,
    EXIT_NO_ROBOTS,
    EXIT_PAGE_UNREAD,
    exit_code,
    explain,
    explain_url,
)
from scrapy_rfc9309.parser._lines import BOM_IGNORED
from scrapy_rfc9309.parser._lint import MAX_RULE_LENGTH, MAX_RULES, lint
from scrapy_rfc9309.parser._robotstxt import RobotsTxt
from scrapy_rfc9309.sites._outcome import Kind, SiteOutcome

from .command_runner import robotstxt
from .profiles import examples
from .server import redirect, silent_server, status, text

ROBOTS = "User-agent: *\nDisallow: /private\nCrawl-delay: 2\nSitemap: https://e.com/s.xml\n"


async def run_scrapy(
    *args: str, cwd: Path, stdin: str | None = None, extra_env: dict[str, str] | None = None
) -> tuple[str, int]:
    """Run ``scrapy ARGS`` in a thread, so the reactor keeps serving the sites."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1]), **(extra_env or {})}
    env.pop("SCRAPY_SETTINGS_MODULE", None)
    done = await maybe_deferred_to_future(
        threads.deferToThread(
            subprocess.run,
            [str(Path(sys.executable).with_name("scrapy")), *args],  # what users run
            input=stdin if stdin is not None else "",
            capture_output=True,
            text=True,
            env=env,
            cwd=str(cwd),
            timeout=120,
            check=False,
        )
    )
    return done.stdout + done.stderr, done.returncode


async def scrapy_process(
    *args: str, cwd: Path, stdin: str | None = None, extra_env: dict[str, str] | None = None
) -> tuple[str, int]:
    """Run ``scrapy robotstxt ARGS`` as a process (see :func:`run_scrapy`)."""
    return await run_scrapy("robotstxt", *args, cwd=cwd, stdin=stdin, extra_env=extra_env)


async def scrapy(*args: str, cwd: Path, stdin: str | None = None) -> tuple[str, int]:
    """Run ``scrapy robotstxt ARGS`` in this test's reactor (see :mod:`.command_runner`)."""
    return await robotstxt(*args, cwd=cwd, stdin=stdin)


#: The settings of a crawl that reads each page's usage signals (the page
#: middleware on, as the add-on enables it): ``--page`` answers as such a crawl.
PAGES_READ = (
    "-s",
    "ROBOTSTXT_OBEY=True",
    "-s",
    'SPIDER_MIDDLEWARES={"scrapy_rfc9309.RobotsMetaMiddleware": 950}',
)


def json_lines(output: str) -> list[dict]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


@deferred_f_from_coro_f
async def test_command_fetches_through_scrapy_and_follows_redirects(sites, tmp_path) -> None:
    site = sites(routes={"/robots.txt": redirect("/real"), "/real": text(ROBOTS)})
    output, code = await scrapy(site.url("/private/x"), "--agent", "ExampleBot", cwd=tmp_path)
    assert code == EXIT_DISALLOWED, output
    assert 'DISALLOWED by line 2: "Disallow: /private"' in output
    assert "group:       line 1: User-agent: *" in output
    assert "crawl-delay: 2.0 s" in output
    assert "sitemap:     https://e.com/s.xml" in output
    assert f"robots.txt:  {site.url('/robots.txt')} -> {site.url('/real')} (301)" in output
    assert site.hits == ["/robots.txt", "/real"]
    output, code = await scrapy(site.url("/public"), cwd=tmp_path)
    assert code == EXIT_ALLOWED, output
    assert "agent:       Scrapy" in output


@deferred_f_from_coro_f
async def test_command_several_urls_one_fetch_per_site_json(sites, tmp_path) -> None:
    """RFC 9309 2.3: one robots.txt per site, however many URLs; --json per URL."""
    robots = "User-Agent: ExampleBot\nUser-agent: OtherBot\nDisallow: /private\nAllow: /p\n"
    one = sites(routes={"/robots.txt": redirect("/real"), "/real": text(robots)})
    two = sites(routes={"/robots.txt": text("User-agent: *\nDisallow: /\n")})
    urls = [one.url("/private/a"), one.url("/public"), one.url("/x"), two.url("/any")]
    output, code = await scrapy(*urls, "--agent", "ExampleBot", "--json", cwd=tmp_path)
    assert code == EXIT_DISALLOWED, output
    answers = json_lines(output)
    assert [answer["url"] for answer in answers] == urls
    first, second, third, fourth = answers
    assert first["verdict"] == "disallowed"
    assert (first["line"], first["rule"]) == (3, "Disallow: /private")
    assert first["robots_txt"] == [
        {"url": one.url("/robots.txt"), "status": 301},
        {"url": one.url("/real"), "status": 200},
    ]
    # the file's own spelling of agents, with their lines
    assert first["group"] == [
        {"line": 1, "text": "User-Agent: ExampleBot"},
        {"line": 2, "text": "User-agent: OtherBot"},
    ]
    assert (first["outcome"], first["agent"]) == ("parsed", "ExampleBot")
    assert (second["verdict"], second["line"], second["rule"]) == ("allowed", 4, "Allow: /p")
    assert (third["verdict"], third["line"], third["rule"]) == ("allowed", None, None)
    assert (fourth["verdict"], fourth["line"]) == ("disallowed", 2)
    assert one.hits == ["/robots.txt", "/real"]
    assert two.hits == ["/robots.txt"]


@deferred_f_from_coro_f
async def test_command_lenient_dot_segments_says_the_path_it_matched_as_the_crawl_does(
    sites, tmp_path
) -> None:
    """LENIENT(dot-segments): ``/./private/a`` is refused as ``/private/a``, the
    path the server resolves it to, and the command says so, text and JSON."""
    site = sites(routes={"/robots.txt": text(ROBOTS)})
    url = site.url("/./private/a")
    output, code = await scrapy(url, cwd=tmp_path)
    assert code == EXIT_DISALLOWED, output
    assert (
        'DISALLOWED by line 2: "Disallow: /private" (matched as /private/a, the path the '
        "server resolves /./private/a to)" in output
    ), output
    output, code = await scrapy(url, site.url("/private/a"), "--json", cwd=tmp_path)
    resolved, plain = json_lines(output)
    assert (resolved["verdict"], resolved["line"], resolved["matched_as"]) == (
        "disallowed",
        2,
        "/private/a",
    )
    assert (plain["verdict"], plain["matched_as"]) == ("disallowed", None)


@deferred_f_from_coro_f
async def test_command_reads_urls_from_stdin(sites, tmp_path) -> None:
    """URLs on standard input, one a line, blank lines and comments skipped (in
    this reactor); ``-`` reads them too (a process, its real standard input)."""
    site = sites(routes={"/robots.txt": text(ROBOTS)})
    stdin = f"{site.url('/a')}\n\n# a comment\n{site.url('/b')}\n"
    output, code = await scrapy("--json", cwd=tmp_path, stdin=stdin)
    assert code == EXIT_ALLOWED, output
    assert [answer["url"] for answer in json_lines(output)] == [site.url("/a"), site.url("/b")]
    assert site.hits == ["/robots.txt"]
    output, code = await scrapy_process("-", cwd=tmp_path, stdin=site.url("/private/z") + "\n")
    assert code == EXIT_DISALLOWED, output


@deferred_f_from_coro_f
async def test_the_process_and_the_in_reactor_command_answer_alike(
    sites, tmp_path, monkeypatch
) -> None:
    """``scrapy`` (in this reactor) is the command's own path: the process's
    ``run`` and the test helper both drive ``RobotsTxtCommand.answer``, so the
    same arguments give the same output and exit status (RFC 9309 2.2.2
    verdict, 2.3.1.3 unavailable, a bad --agent)."""
    from scrapy_rfc9309.components import RobotsTxtCommand

    site = sites(routes={"/robots.txt": text(ROBOTS)})
    gone = sites(routes={"/robots.txt": status(404)})
    answered: list[list[str]] = []
    answer = RobotsTxtCommand.answer

    async def spy(self: Any, args: list[str], *rest: Any) -> int:
        answered.append(list(args))
        return await answer(self, args, *rest)

    monkeypatch.setattr(RobotsTxtCommand, "answer", spy)
    for args in (
        (site.url("/private/x"), "--agent", "ExampleBot", gone.url("/a")),
        (site.url("/a"), "--json"),
        (site.url("/a"), "--agent", "/1.0 (x)"),
    ):
        in_reactor = await scrapy(*args, cwd=tmp_path)
        assert in_reactor == await scrapy_process(*args, cwd=tmp_path)
    # the helper went through the command's answer (the process's is its own)
    urls = [site.url("/private/x"), gone.url("/a")]
    assert answered == [urls, [site.url("/a")], [site.url("/a")]]


@deferred_f_from_coro_f
async def test_command_2_3_1_3_and_2_3_1_4_exit_3(sites, tmp_path) -> None:
    gone = sites(routes={"/robots.txt": status(503)})
    output, code = await scrapy(gone.url("/a"), "-s", "RETRY_ENABLED=0", cwd=tmp_path)
    assert code == EXIT_NO_ROBOTS, output
    assert "unreachable (HTTP 503)" in output
    assert "DISALLOWED: robots.txt unreachable" in output
    missing = sites(routes={"/robots.txt": status(404)})
    output, code = await scrapy(missing.url("/a"), "--json", cwd=tmp_path)
    assert code == EXIT_NO_ROBOTS, output
    (answer,) = json_lines(output)
    assert (answer["verdict"], answer["outcome"], answer["detail"]) == (
        "allowed",
        "unavailable",
        "HTTP 404",
    )


@deferred_f_from_coro_f
async def test_command_offline_file_with_warnings(tmp_path) -> None:
    robots = tmp_path / "robots.txt"
    robots.write_bytes(b"User-agent: ExampleBot\nDissallow /tmp\n")
    output, code = await scrapy(
        "https://e.com/tmp/a", "--file", str(robots), "--agent", "ExampleBot", cwd=tmp_path
    )
    assert code == EXIT_DISALLOWED, output
    assert "line 2: missing ':'" in output
    output, code = await scrapy("https://e.com/tmp/a", "--file", str(robots), cwd=tmp_path)
    assert code == EXIT_ALLOWED, output  # Scrapy's token has no group here
    assert "group:       none applies" in output


@deferred_f_from_coro_f
async def test_command_errors_exit_2(tmp_path) -> None:
    output, code = await scrapy("https://e.com/", "--file", str(tmp_path / "nope"), cwd=tmp_path)
    assert code == EXIT_ERROR, output
    assert "cannot read" in output
    output, code = await scrapy("http://127.0.0.1:9/", "--agent", "/1.0 (x)", cwd=tmp_path)
    assert code == EXIT_ERROR, output
    assert "--agent must contain a product token" in output
    output, code = await scrapy("example.com/a", cwd=tmp_path)
    assert code == EXIT_ERROR, output
    assert "verdict:     ERROR: not an absolute URL" in output
    robots = tmp_path / "robots.txt"
    robots.write_bytes(b"User-agent: *\nDisallow: /\n")
    output, code = await scrapy(
        "https://e.com/a", "not a url", "--file", str(robots), "--json", cwd=tmp_path
    )
    assert code == EXIT_ERROR, output
    assert [answer["verdict"] for answer in json_lines(output)] == ["disallowed", "error"]


HEADINGS = ("Usage", "Options", "Global Options")


@pytest.mark.parametrize("columns", ["80", "100"])
@deferred_f_from_coro_f
async def test_command_help_documents_exit_codes_with_no_stray_headings(tmp_path, columns) -> None:
    """The help lists the exit codes; Scrapy's help formatter underlines any help
    line ending with ':' as a heading: no option's help wraps into one."""
    output, code = await scrapy_process("-h", cwd=tmp_path, extra_env={"COLUMNS": columns})
    assert code == 0, output
    assert "--lint FILE|URL" in output
    for line in (
        "  2  error: bad arguments",
        "  1  a robots.txt rule disallows a URL",
        "  3  a robots.txt is unreachable",
        "  0  every URL allowed",
    ):
        assert line in output
    lines = output.splitlines()
    assert not [line for line in lines if line.rstrip().endswith("default:")], output
    underlined = [
        before.strip()
        for before, line in pairwise(lines)
        if len(line) > 2 and set(line) <= {"=", "-"}
    ]
    assert underlined == list(HEADINGS), output


LINTED = (
    "Disallow: /early\n"  # 1: before any user-agent
    "User-agent: *\n"  # 2
    "Disallow: /a\n"  # 3
    "Sitemap: /sitemap.xml\n"  # 4: relative
    "User-agent: ExampleBot\n"  # 5
    "Disallow: /" + "x" * MAX_RULE_LENGTH + "\n"  # 6: too long
    "User-agent: *\n"  # 7: a second '*' group
    "Dissallow: /b\n"  # 8: misspelt
)


def test_lint_finds_what_site_owners_check_sorted_by_line() -> None:
    findings = lint(RobotsTxt.parse(LINTED))
    assert [line for line, _ in findings] == [1, 4, 6, 7, 8]
    messages = dict(findings)
    assert "before any user-agent" in messages[1]
    assert "not an absolute http(s) URL" in messages[4]
    assert f"rule of {MAX_RULE_LENGTH + 1} characters" in messages[6]
    assert "another 'User-agent: *' group (the first is at line 2)" in messages[7]
    assert "Dissallow" in messages[8]


#: google/robotstxt (robots.cc, 2026-02-19): the tags it knows but does not
#: support, chosen from what HTTP Archive finds in real robots.txt files.
GOOGLE_KNOWN_UNSUPPORTED = [
    "clean-param",
    "content-signal",
    "content-usage",
    "crawl-delay",
    "domain",
    "host",
    "noarchive",
    "nofollow",
    "noindex",
    "request-rate",
    "revisit-after",
    "visit-time",
]
#: Of them, the tags this parser reads (usage signals, Crawl-delay): still read.
READ_HERE = {"content-signal", "content-usage", "crawl-delay"}


@pytest.mark.parametrize(
    "tag", [pytest.param(tag, id=f"google-{tag}") for tag in GOOGLE_KNOWN_UNSUPPORTED]
)
def test_lint_names_google_known_but_unsupported_tags_as_such(tag: str) -> None:
    """google/robotstxt lists ``clean-param``, ``content-signal``, ``content-usage``,
    ``crawl-delay``, ``domain``, ``host``, ``noarchive``, ``nofollow``, ``noindex``,
    ``request-rate``, ``revisit-after`` and ``visit-time`` as known but unsupported
    tags: lint names each it does not read with one finding kind ("known but
    unsupported directive"), never "unknown directive"; those it reads stay read
    (no finding: RFC 9309 2.2.4 other records, read by this parser)."""
    spelt = tag.title()
    value = {"content-signal": "search=yes", "content-usage": "train-ai=n", "crawl-delay": "5"}
    body = f"User-agent: *\nDisallow: /x\n{spelt}: {value.get(tag, '/y')}\n"
    findings = lint(RobotsTxt.parse(body))
    if tag in READ_HERE:
        assert findings == []
        return
    assert findings == [
        (3, f"known but unsupported directive {spelt!r} ignored (as in Google's reference parser)")
    ]
    other = lint(RobotsTxt.parse("User-agent: *\nNoodle: x\n"))
    assert other == [(2, "unknown directive 'Noodle' ignored")]


def test_lint_more_than_2048_rules() -> None:
    body = "User-agent: *\n" + "".join(f"Disallow: /{n}\n" for n in range(MAX_RULES + 5))
    findings = lint(RobotsTxt.parse(body))
    assert findings == [
        (
            MAX_RULES + 2,
            f"more than {MAX_RULES} rules: search engines ignore this rule and every one after it",
        )
    ]
    assert lint(RobotsTxt.parse("User-agent: *\nDisallow: /\nSitemap: https://e.com/s\n")) == []


@deferred_f_from_coro_f
async def test_command_lint_file_and_url(sites, tmp_path) -> None:
    robots = tmp_path / "robots.txt"
    robots.write_text(LINTED)
    output, code = await scrapy("--lint", str(robots), cwd=tmp_path)
    assert code == EXIT_DISALLOWED, output
    lines = [line for line in output.splitlines() if line.startswith(str(robots))]
    assert [line.split(":")[1] for line in lines] == ["1", "4", "6", "7", "8"]
    assert "5 findings" in output
    site = sites(routes={"/robots.txt": text("User-agent: *\nDisallow: /\n")})
    output, code = await scrapy("--lint", site.url("/"), "--json", cwd=tmp_path)
    assert code == EXIT_ALLOWED, output
    (data,) = json_lines(output)
    assert data == {
        "robots_txt": site.url("/robots.txt"),
        "outcome": "parsed",
        "detail": "HTTP 200",
        "findings": [],
    }
    assert site.hits == ["/robots.txt"]


@deferred_f_from_coro_f
async def test_command_lint_page_url_names_its_robots_txt_and_a_bom_is_no_finding(
    sites, tmp_path
) -> None:
    """--lint on a page URL names the robots.txt it checked; a UTF-8 byte order mark
    alone (the file is UTF-8, RFC 9309 2.2) is no finding and exits 0."""
    site = sites(routes={"/robots.txt": text(b"\xef\xbb\xbfUser-agent: *\nDisallow: /x\n")})
    output, code = await scrapy("--lint", site.url("/some/page"), cwd=tmp_path)
    assert code == EXIT_ALLOWED, output
    assert f"0 findings in {site.url('/robots.txt')}" in output
    assert "byte order mark" not in output
    assert lint(RobotsTxt.parse(b"\xef\xbb\xbfDisallow: /early\n"))[0][0] == 1  # others stay
    assert RobotsTxt.parse(b"\xef\xbb\xbfUser-agent: *\n").warnings  # the parser still says


@deferred_f_from_coro_f
async def test_command_2_3_1_4_an_ftp_server_that_never_answers_is_unreachable_in_time(
    tmp_path,
) -> None:
    """RFC 9309 2.3.1.4: a robots.txt server that accepts and never answers is
    unreachable once ROBOTSTXT_DOWNLOAD_TIMEOUT has passed, even through Scrapy's
    FTP handler (which ignores download_timeout): exit 3, no traceback, not held
    until the server drops the connection (here after 20 s)."""
    import time

    port = silent_server(drop_after=20.0)
    try:
        url = f"ftp://127.0.0.1:{port.getHost().port}/x"
        started = time.monotonic()
        output, code = await scrapy_process(
            url, "-s", "ROBOTSTXT_DOWNLOAD_TIMEOUT=0.5", cwd=tmp_path
        )
        took = time.monotonic() - started
    finally:
        port.stopListening()
    assert code == EXIT_NO_ROBOTS, output
    assert "outcome:     unreachable (timed out after 0.5 s)" in output
    assert "DISALLOWED: robots.txt unreachable" in output
    assert "Traceback" not in output
    assert took < 15, took


@deferred_f_from_coro_f
async def test_command_2_3_1_4_unreachable_host_without_retry_noise(tmp_path) -> None:
    """An unreachable robots.txt (RFC 9309 2.3.1.4) is one attempt: the answer says
    so, with no "Gave up retrying" ERROR from Scrapy's RetryMiddleware."""
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    output, code = await scrapy(f"http://127.0.0.1:{port}/a", cwd=tmp_path)
    assert code == EXIT_NO_ROBOTS, output
    assert "DISALLOWED: robots.txt unreachable" in output
    assert "Gave up retrying" not in output
    assert "ERROR" not in output


def test_exit_code_order_for_several_urls() -> None:
    def answer(verdict: str, outcome: str | None = "parsed") -> dict:
        return {"verdict": verdict, "outcome": outcome}

    assert exit_code([answer("allowed")]) == EXIT_ALLOWED
    assert exit_code([answer("allowed"), answer("disallowed")]) == EXIT_DISALLOWED
    assert exit_code([answer("allowed", "unavailable")]) == EXIT_NO_ROBOTS
    assert exit_code([answer("disallowed", "unreachable"), answer("disallowed")]) == 1
    assert exit_code([answer("error", None), answer("disallowed")]) == EXIT_ERROR


@settings(max_examples=examples(200), deadline=None)
@given(st.binary(max_size=2000) | st.text(max_size=2000).map(str.encode))
def test_lint_never_raises_and_is_sorted_by_line(body: bytes) -> None:
    robots = RobotsTxt.parse(body)
    findings = lint(robots)
    numbers = [line for line, _ in findings]
    assert numbers == sorted(numbers)
    assert all(1 <= line <= robots.body.count(b"\n") + 1 for line in numbers)
    # every parser warning is a finding, but the byte order mark RFC 9309 2.2 allows
    bom = (1, BOM_IGNORED)
    assert set(robots.warnings) - {bom} <= set(findings)
    assert bom not in findings


@settings(max_examples=examples(100), deadline=None)
@given(url=st.text(max_size=200), agent=st.sampled_from(["*", "ExampleBot", "Scrapy"]))
def test_explain_url_always_answers(url: str, agent: str) -> None:
    outcome = SiteOutcome(Kind.PARSED, RobotsTxt.parse(LINTED), "HTTP 200", 0.0)
    answer = explain_url(outcome, url, agent)
    assert answer["verdict"] in ("allowed", "disallowed", "error")
    json.dumps(answer)


def test_hostile_many_agent_lines_and_groups_stay_linear() -> None:
    """A 500 KiB file of 'User-agent: *' lines and groups: the command's output and
    the lint take one pass each (a quadratic one would not finish)."""
    one_group = RobotsTxt.parse("User-agent: *\n" * 36_000 + "Disallow: /x\n")
    outcome = SiteOutcome(Kind.PARSED, one_group, "HTTP 200", 0.0)
    assert len(explain_url(outcome, "/x", "ExampleBot")["group"]) == 36_000
    assert explain(one_group, "/x", "ExampleBot")[1] is False
    groups = RobotsTxt.parse("User-agent: *\nDisallow: /x\n" * 18_000)
    findings = lint(groups)
    assert len(findings) == 17_999 + 1  # every '*' group after the first, and rule 2,049


def test_http_guide_ch9_a_restricted_site_is_disallowed_with_exit_3() -> None:
    """401/403 under ROBOTSTXT_AUTH_DISALLOW: every URL disallowed, like unreachable."""
    from scrapy_rfc9309.components.command._command import EXIT_NO_ROBOTS, exit_code, explain_url

    chain = (("https://e.com/robots.txt", 403),)
    outcome = SiteOutcome(Kind.RESTRICTED, None, "HTTP 403", 0.0, chain)
    answer = explain_url(outcome, "https://e.com/a", "ExampleBot")
    assert answer["verdict"] == "disallowed" and answer["outcome"] == "restricted"
    assert exit_code([answer]) == EXIT_NO_ROBOTS
    broken = SiteOutcome(Kind.INTERNAL_ERROR, None, "builtins.TypeError: x", 0.0, chain)
    assert exit_code([explain_url(broken, "https://e.com/a", "ExampleBot")]) == EXIT_ERROR


def test_2_2_1_agent_option_is_reduced_like_the_setting() -> None:
    from scrapy.exceptions import UsageError

    from scrapy_rfc9309.components.command._command import check_agent

    assert check_agent("MJ12bot/1.4.8 (+http://mj12bot.com/)") in ("MJ12bot", "MJ")
    assert check_agent("ExampleBot") == "ExampleBot"
    assert check_agent("*") == "*"
    with pytest.raises(UsageError, match="--agent"):
        check_agent("/1.0")


@pytest.mark.slow
@deferred_f_from_coro_f
async def test_http_guide_ch9_page_shows_the_page_directives_for_the_agent(sites, tmp_path) -> None:
    from .server import html_page, page_with_headers

    site = sites(
        routes={
            "/robots.txt": text(ROBOTS),
            "/meta": text(
                html_page(
                    '<meta name="robots" content="noindex"><meta name="other" content="none">'
                ),
                content_type=b"text/html",
            ),
            "/doc.pdf": page_with_headers(
                b"%PDF-1.4",
                [(b"X-Robots-Tag", b"examplebot: nofollow, noarchive")],
                b"application/pdf",
            ),
            "/moved": redirect("/private/x", 302),
            "/private/x": text(
                html_page('<meta name="robots" content="none">'), content_type=b"text/html"
            ),
        }
    )
    urls = [site.url(path) for path in ("/meta", "/doc.pdf", "/private/x", "/moved")]
    output, code = await scrapy(*urls, "--agent", "ExampleBot", "--page", "--json", cwd=tmp_path)
    answers = {answer["url"]: answer for answer in json_lines(output)}
    assert code == EXIT_DISALLOWED, output
    meta = answers[site.url("/meta")]["page"]
    assert meta["status"] == 200 and meta["directives"] == ["noindex"]
    assert meta["sources"]["noindex"] == ['<meta name="robots">']
    pdf = answers[site.url("/doc.pdf")]["page"]
    assert pdf["directives"] == ["noarchive", "nofollow"]
    assert pdf["sources"]["nofollow"] == ["X-Robots-Tag: examplebot"]
    private = answers[site.url("/private/x")]["page"]
    assert private["status"] is None and "Forbidden by robots.txt line 2" in private["error"]
    moved = answers[site.url("/moved")]["page"]
    assert moved["status"] == 302 and "redirect is not followed" in moved["error"]
    assert site.count("/private/x") == 0  # a disallowed page is never fetched, nor redirected to
    output, code = await scrapy(site.url("/meta"), "--agent", "ExampleBot", "--page", cwd=tmp_path)
    assert 'directive:   noindex (<meta name="robots">)' in output, output


@pytest.mark.slow
@deferred_f_from_coro_f
async def test_page_read_only_in_part_names_the_limit(sites, tmp_path) -> None:
    """A page whose robots META tag lies past a limit of the reading: ``--page``
    says which limit, in text and in ``--json`` (``truncated``)."""
    from .server import html_page

    places = "".join(f'<meta name="description" content="robots {i}">' for i in range(300))
    head = places + '<meta name="robots" content="noindex">'
    site = sites(
        routes={
            "/robots.txt": text(ROBOTS),
            "/page": text(html_page(head), content_type=b"text/html"),
        }
    )
    args = (site.url("/page"), "--agent", "ExampleBot", "--page")
    output, _ = await scrapy(*args, "--json", cwd=tmp_path)
    page = json_lines(output)[0]["page"]
    assert page["directives"] == [] and page["truncated"] == ["MAX_META_TAGS"], output
    output, _ = await scrapy(*args, cwd=tmp_path)
    assert "limit:       read only in part (MAX_META_TAGS reached)" in output, output


def reset() -> Any:
    """Close the connection without an answer (a reset)."""

    def route(request: Any) -> int:
        from twisted.web import server

        request.channel.transport.abortConnection()
        return server.NOT_DONE_YET

    return route


@pytest.mark.slow
@deferred_f_from_coro_f
async def test_http_guide_ch9_page_that_cannot_be_read_says_why_and_exits_5(
    sites, tmp_path
) -> None:
    """``--page``: a page robots.txt allows but that cannot be downloaded (a reset,
    a time-out) is reported readably, with its own exit status; a redirect's
    status is given in ``--json`` as in the text; a page read leniently says so."""
    from .server import hang, html_page

    site = sites(
        routes={
            "/robots.txt": text(ROBOTS),
            "/reset": reset(),
            "/hang": hang(),
            "/moved": redirect("/elsewhere", 302),
            "/spaced": text(
                html_page('<meta name="robots" content="noindex nofollow">'),
                content_type=b"text/html",
            ),
        }
    )
    options: tuple[str, ...] = ("--agent", "ExampleBot", "--page", "-s", "RETRY_ENABLED=0")
    options += ("-s", "DOWNLOAD_TIMEOUT=0.5")
    # one run per output format, the four pages together; each page's own exit
    # status is what exit_code() makes of its answer alone
    urls = [site.url(path) for path in ("/reset", "/hang", "/moved", "/spaced")]
    output, code = await scrapy(*urls, *options, "--json", cwd=tmp_path)
    assert code == EXIT_PAGE_UNREAD, output
    answers = {answer["url"]: answer for answer in json_lines(output)}
    assert [exit_code([answers[url]]) for url in urls] == [
        EXIT_PAGE_UNREAD,
        EXIT_PAGE_UNREAD,
        EXIT_ALLOWED,
        EXIT_ALLOWED,
    ], output
    page = answers[site.url("/reset")]["page"]
    assert page["failed"] is True and page["status"] is None, output
    assert page["error"].startswith("download failed: "), output
    assert "ConnectionLost: Connection to the other side was lost" in page["error"], output
    assert "Failure" not in page["error"] and "<" not in page["error"], output
    page = answers[site.url("/hang")]["page"]
    assert page["failed"] is True and "Timeout" in page["error"], output
    page = answers[site.url("/moved")]["page"]
    assert page["status"] == 302 and page["failed"] is False, output
    page = answers[site.url("/spaced")]["page"]
    assert page["directives"] == ["nofollow", "noindex"] and page["lenient"] == ["meta-space"]
    output, code = await scrapy(*urls, *options, cwd=tmp_path)
    assert code == EXIT_PAGE_UNREAD, output
    assert output.count("page:        not read: download failed: ") == 2, output  # reset, hang
    assert "Timeout" in output, output
    assert "page:        HTTP 302, not read: HTTP 302 to '/elsewhere'" in output, output
    assert "lenient:     a blank read as a separator between known directives" in output, output
    output, code = await scrapy("file:///etc/passwd", "--page", "--json", cwd=tmp_path)
    assert code == EXIT_ERROR, output
    page = json_lines(output)[0]["page"]
    assert page["error"].startswith("not an http(s) URL (file:)"), output
    assert site.count("/elsewhere") == 0


def test_exit_status_of_a_page_not_read_comes_after_the_site_outcomes() -> None:
    unread = {"verdict": "allowed", "outcome": "parsed", "page": {"failed": True}}
    assert exit_code([unread]) == EXIT_PAGE_UNREAD
    assert exit_code([unread, {"verdict": "allowed", "outcome": "unavailable"}]) == EXIT_NO_ROBOTS
    assert exit_code([unread, {"verdict": "disallowed", "outcome": "parsed"}]) == EXIT_DISALLOWED
    internal = {"verdict": "allowed", "outcome": "parsed", "page": {"internal_error": True}}
    assert exit_code([internal]) == EXIT_ERROR
    # the structured fields decide, never the text of a detail
    worded = {"verdict": "allowed", "outcome": "parsed", "page": {"error": "internal error: X"}}
    assert exit_code([worded]) == EXIT_ALLOWED
    tdmrep = {"verdict": "allowed", "outcome": "parsed", "cause": "internal_error"}
    assert exit_code([tdmrep]) == EXIT_ERROR


@deferred_f_from_coro_f
async def test_malformed_and_other_scheme_urls_are_errors_not_crashes(tmp_path) -> None:
    robots = tmp_path / "robots.txt"
    robots.write_bytes(b"User-agent: *\nDisallow: /\n")
    stdin = "http://[::1\nfile:///etc/passwd\nhttp://127.0.0.1:99999/\n"
    output, code = await scrapy("--json", cwd=tmp_path, stdin=stdin)
    answers = json_lines(output)
    assert code == EXIT_ERROR, output
    assert [answer["verdict"] for answer in answers] == ["error"] * 3, output
    assert "file:" in answers[1]["detail"] and "Traceback" not in output


@deferred_f_from_coro_f
async def test_2_5_a_local_file_is_read_only_up_to_the_size_limit(tmp_path) -> None:
    output, code = await scrapy(
        "http://127.0.0.1:9/a",
        "--file",
        "/dev/zero",
        "-s",
        "ROBOTSTXT_MAX_SIZE=600000",
        cwd=tmp_path,
    )
    assert code == EXIT_ALLOWED, output  # NULs only: no rule; and it returns at all
    assert "over the size limit" in output


def test_2_2_4_lint_flags_agents_joined_into_one_group_by_a_record() -> None:
    """A Crawl-delay between user-agent lines does not end the group: the
    Disallow that follows binds every agent named since."""
    body = (
        "User-agent: MJ12bot\nCrawl-delay: 15\n"
        "User-agent: bingbot\nCrawl-delay: 10\n"
        "User-agent: Yandex\nDisallow: /\n"
        "User-agent: Other\nAllow: /\n"
    )
    findings = lint(RobotsTxt.parse(body))
    assert [line for line, message in findings if "joins the group of line 1" in message] == [3, 5]
    assert [line for line, message in findings if "another Crawl-delay" in message] == [4]
    assert not any(line == 7 for line, _ in findings)  # a group after rules is a new group
    assert RobotsTxt.parse(body).check(url="/x", agent="MJ12bot").line == 6  # the RFC reading


def test_2_2_4_lint_accepts_agents_that_share_their_rules_on_purpose() -> None:
    body = "User-agent: a\nUser-agent: b\nCrawl-delay: 2\nDisallow: /x\n"
    assert lint(RobotsTxt.parse(body)) == []


# -- one decision path: the command and the crawl agree --------------------------------

_PAGE_SIGNALS = {
    "/header": ([(b"Content-Usage", b"train-ai=n")], "", "Content-Usage header"),
    "/tdm-header": ([(b"tdm-reservation", b"1")], "", "tdm-reservation header"),
    "/tdm-meta": ([], '<meta name="tdm-reservation" content="1">', "<meta"),
}


@pytest.mark.parametrize("path", sorted(_PAGE_SIGNALS))
@deferred_f_from_coro_f
async def test_aipref_and_tdmrep_page_signals_refuse_in_the_command_as_in_the_crawl(
    sites, tmp_path, path: str
) -> None:
    """IETF AIPREF attach (Content-Usage header) and TDMRep (tdm-reservation header,
    meta): ``--purpose train-ai --page`` exits 4 naming the page's preference, as a
    crawl with ``ROBOTSTXT_PURPOSES = ["train-ai"]`` drops the page's items."""
    from scrapy_rfc9309.components.command._command import EXIT_USAGE_REFUSED

    from .server import html_page, page_with_headers
    from .test_usage import usage_crawl

    headers, head, source = _PAGE_SIGNALS[path]
    routes = {
        "/robots.txt": text("User-agent: *\nAllow: /\n"),
        path: page_with_headers(html_page(head), headers),
    }
    site = sites(routes=routes)
    url = site.url(path)
    _, items, stats = await usage_crawl([url], {"ROBOTSTXT_PURPOSES": ["train-ai"]})
    assert items == [] and stats["robotsmeta/usage"] == 1
    output, code = await scrapy(url, "--purpose", "train-ai", "--page", *PAGES_READ, cwd=tmp_path)
    assert code == EXIT_USAGE_REFUSED, output
    assert "purposes:    train-ai: REFUSED, train-ai=n by " + source in output
    output, code = await scrapy(
        url, "--purpose", "train-ai", "--page", "--json", *PAGES_READ, cwd=tmp_path
    )
    (answer,) = json_lines(output)
    assert code == EXIT_USAGE_REFUSED, output
    assert answer["refused"]["source"].startswith(source)
    assert answer["usage"]["train-ai"]["value"] == "n"


@deferred_f_from_coro_f
async def test_a_scheme_scrapy_cannot_download_fails_at_once_never_deferred(sites) -> None:
    """Not the site's answer (RFC 9309 2.3.1.4 speaks of the server): a scheme with
    no download handler gets Scrapy's own NotSupported at once, never a deferral."""
    import time

    from .conftest import crawl

    site = sites(routes={"/robots.txt": text("User-agent: *\nAllow: /\n")}, default=text("ok"))
    port = site.url("/").split(":")[2].split("/")[0]
    bad = f"htp://127.0.0.1:{port}/x"
    started = time.monotonic()
    spider, stats = await crawl(
        [bad, site.url("/ok")],
        {"ROBOTSTXT_UNREACHABLE_DEFER": 300, "ROBOTSTXT_UNREACHABLE_TTL": 300},
        allow_errors=True,
    )
    assert time.monotonic() - started < 10
    assert "Unsupported URL scheme 'htp'" in spider.dropped[bad]
    assert spider.fetched == [site.url("/ok")]
    assert stats["robotstxt/not_downloadable"] == 1
    assert "robotstxt/deferred" not in stats and "robotstxt/unreachable" not in stats


@deferred_f_from_coro_f
async def test_a_scheme_scrapy_cannot_download_is_said_as_file_urls_are(tmp_path) -> None:
    """``htp:`` and ``file:`` URLs: both not checked (exit 2), no traceback."""
    for url in ("htp://127.0.0.1:9/x", "file:///x"):
        output, code = await scrapy(url, cwd=tmp_path)
        assert code == EXIT_ERROR, output
        assert f"verdict:     ERROR: not an http(s) URL ({url.split(':')[0]}:)" in output
        assert "a crawl passes it to Scrapy unchecked" in output
        assert "Traceback" not in output


@deferred_f_from_coro_f
async def test_command_checks_the_store_settings_as_the_crawl_does(sites, tmp_path) -> None:
    """A bad ROBOTSTXT_STORE_ARCHIVE stops the command as it stops a crawl,
    store or no store, naming the setting; nothing is fetched."""
    site = sites(routes={"/robots.txt": text("User-agent: *\nDisallow: /x\n")})
    output, code = await scrapy(site.url("/a"), "-s", "ROBOTSTXT_STORE_ARCHIVE=bogus", cwd=tmp_path)
    assert code == 2, output
    assert "ROBOTSTXT_STORE_ARCHIVE" in output and "'bogus'" in output
    assert site.hits == []
