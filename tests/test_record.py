"""``ROBOTSTXT_RECORD_FILE`` and ``scrapy robotstxt audit``: a record of every request
decided, under which robots.txt copy (RFC 9309 2.2.2, 2.3.1, 2.4), chained by
SHA-256, and its audit (the chain, and each decision made again from the
copies in the file), against real local sites."""

from __future__ import annotations

import gzip
import hashlib
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, ClassVar

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rfc9309.components.command._command_audit import run_audit
from scrapy_rfc9309.components.record._record_read import read_record, record_bytes
from scrapy_rfc9309.components.settings._setting_values import SettingError
from scrapy_rfc9309.parser._robotstxt import RobotsTxt
from scrapy_rfc9309.sites._outcome import Kind, SiteOutcome
from scrapy_rfc9309.sites._record_audit import AuditResult, audit_lines
from scrapy_rfc9309.sites._record_lines import (
    GENESIS,
    RecordChain,
    body_fields,
    body_of,
    header_entry,
    line_hash,
    request_entry,
    robots_entry,
)
from scrapy_rfc9309.sites._request_decision import DecisionPolicy, decide_request

from .clock import SkippingClock, skipping
from .conftest import crawl
from .server import delayed, html_page, sequence, text, unreachable_for
from .test_meta_middleware import meta_crawl

ROBOTS = (
    "User-agent: *\n"  # 1
    "Disallow: /private/\n"  # 2
    "Content-Usage: /no-ai/ train-ai=n\n"  # 3
    "\n"
    "User-agent: GPTBot\n"  # 5
    "Disallow: /no-gpt/\n"  # 6
)


TDMREP = '[{"location": "/tdm/", "tdm-reservation": 1}]'


def html(head: str = "", links: list[str] = ()) -> Any:  # type: ignore[assignment]
    return text(html_page(head, links), content_type=b"text/html")


def lines_of(path: Path) -> list[dict[str, Any]]:
    opener: Any = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt") as stream:
        return [json.loads(line) for line in stream]


def audit_file(path: Path) -> AuditResult:
    return audit_lines(read_record(record_bytes(str(path))))


def requests_of(entries: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {entry["url"]: entry for entry in entries if entry["type"] == "request"}


def page_paths(site: Any) -> list[str]:
    """The pages the server served (not its robots.txt or tdmrep.json)."""
    return [hit for hit in site.hits if hit not in ("/robots.txt", "/.well-known/tdmrep.json")]


# -- real crawls -------------------------------------------------------------------------


@deferred_f_from_coro_f
async def test_every_request_the_server_saw_and_every_drop_is_recorded_and_audits(
    sites: Any, tmp_path: Path, capsys: Any
) -> None:
    """RFC 9309 2.2.2 (a rule, ``ROBOTSTXT_ALSO_OBEY``), usage preferences, page
    noindex / nofollow: one line per request decided, naming the copy in force
    and the deciding line; ``audit`` decides each again and finds them all."""
    site = sites(
        routes={
            "/robots.txt": text(ROBOTS),
            "/.well-known/tdmrep.json": text(TDMREP, content_type=b"application/json"),
            "/start": html("", ["/private/a", "/no-gpt/a", "/no-ai/a", "/noidx", "/nof", "/tdm/a"]),
            "/noidx": html('<meta name="robots" content="noindex">'),
            "/nof": html('<meta name="robots" content="nofollow">', ["/hidden"]),
        },
        default=html(),
    )
    path = tmp_path / "record-%(name)s.jsonl"
    settings = {
        "ROBOTSTXT_USER_AGENT": "ExampleBot",
        "ROBOTSTXT_ALSO_OBEY": ["GPTBot"],
        "ROBOTSTXT_PURPOSES": ["train-ai"],
        "ROBOTSTXT_RECORD_FILE": str(path),
    }
    _, items, stats = await meta_crawl([site.url("/start")], settings)
    written = tmp_path / "record-meta.jsonl"
    entries = lines_of(written)
    header = entries[0]
    assert header["type"] == "header"
    assert header["token"] == "ExampleBot"
    assert header["policy"]["also_obey"] == ["GPTBot"]
    assert header["policy"]["purposes"] == ["train-ai"]
    assert entries[-1]["type"] == "close"
    [robots] = [entry for entry in entries if entry["type"] == "robots"]
    assert robots["body"] == ROBOTS
    assert robots["chain"] == [[site.url("/robots.txt"), 200]]
    requests = requests_of(entries)
    # every page the server saw was recorded as fetched, under that copy
    for hit in page_paths(site):
        assert requests[site.url(hit)]["decision"] == "fetched", hit
        assert requests[site.url(hit)]["robots"] == line_hash(
            written.read_text().splitlines()[entries.index(robots)]
        )
    private = requests[site.url("/private/a")]
    assert private["decision"] == "dropped"
    assert private["cause"] == "rule"
    assert ["ExampleBot", False, 2, "Disallow: /private/"] in private["verdicts"]
    gpt = requests[site.url("/no-gpt/a")]
    assert (gpt["cause"], gpt["verdicts"][-1]) == (
        "rule",
        ["GPTBot", False, 6, "Disallow: /no-gpt/"],
    )
    usage = requests[site.url("/no-ai/a")]
    assert usage["cause"] == "usage"
    assert "train-ai=n" in usage["usage"]["refusal"]
    assert site.url("/hidden") not in requests  # nofollow: never requested
    # tdmrep.json alone refuses /tdm/: left to the page (TDMRep), its items dropped
    [tdmrep] = [entry for entry in entries if entry["type"] == "tdmrep"]
    assert (tdmrep["body"], tdmrep["rules"]) == (TDMREP, 1)
    tdm = requests[site.url("/tdm/a")]
    assert (tdm["decision"], tdm["cause"]) == ("fetched", "allowed")
    assert "tdm-reservation" in tdm["usage"]["refusal"]
    pages = {entry["url"]: entry for entry in entries if entry["type"] == "page"}
    assert pages[site.url("/noidx")]["directives"] == ["noindex"]
    assert pages[site.url("/noidx")]["actions"] == ["items dropped (noindex)"]
    assert pages[site.url("/nof")]["status"] == 200
    drops = [(e["page"], e["what"], e["why"]) for e in entries if e["type"] == "page_drop"]
    assert (site.url("/nof"), "link", "nofollow") in drops
    assert (site.url("/noidx"), "item", "noindex") in drops
    assert pages[site.url("/tdm/a")]["actions"] == ["items dropped (usage refused)"]
    assert any(what == "item" and why.startswith("usage: ") for _, what, why in drops)
    assert site.url("/noidx") not in items
    assert stats["robotstxt/record/lines"] == len(entries)
    assert "robotstxt/record/unwritten" not in stats
    assert run_audit([str(written)]) == 0
    output = capsys.readouterr().out
    assert "VERIFIED: 7 requests decided again and matched" in output, output


@deferred_f_from_coro_f
async def test_2_4_a_robots_txt_that_changes_and_a_deferred_site_are_recorded(
    sites: Any, tmp_path: Path
) -> None:
    """RFC 9309 2.4: a copy that expires is fetched again, and the requests after
    name the new copy; 2.3.1.4: a site unreachable at first is deferred, its
    requests decided by the copy that came once it answered."""
    clock = SkippingClock(eager=5)  # the deferral's back-offs without the wait
    changing = sites(
        routes={
            "/robots.txt": sequence(
                text("User-agent: *\nAllow: /\n"), text("User-agent: *\nDisallow: /b\n")
            ),
            "/a": skipping(clock, 30),  # the first copy expires meanwhile
        },
        default=text("page"),
    )
    deferred = sites(
        routes={
            "/robots.txt": unreachable_for(
                1.5, text("User-agent: *\nDisallow: /x\n"), now=clock.monotonic
            )
        },
        default=text("page"),
    )
    path = tmp_path / "record.jsonl.gz"
    settings = {
        "ROBOTSTXT_CACHE_TTL": 10,
        "ROBOTSTXT_UNREACHABLE_DEFER": 60,
        "SCHEDULER_PRIORITY_QUEUE": "scrapy_rfc9309.RobotsTxtPriorityQueue",
        "ROBOTSTXT_RECORD_FILE": str(path),
    }
    urls = [changing.url("/a"), deferred.url("/ok"), deferred.url("/x")]
    spider, _ = await crawl(
        urls, settings, clock=clock, followups={changing.url("/a"): [changing.url("/b")]}
    )
    assert changing.count("/robots.txt") == 2
    assert spider.dropped.keys() >= {changing.url("/b")}
    assert page_paths(changing) == ["/a"]
    assert page_paths(deferred) == ["/ok"]
    entries = lines_of(path)
    copies = [entry for entry in entries if entry["type"] == "robots"]
    by_site: dict[str, list[dict[str, Any]]] = {}
    for entry in copies:
        by_site.setdefault(entry["site"], []).append(entry)
    assert [c["body"] for c in by_site[changing.origin]] == [
        "User-agent: *\nAllow: /\n",
        "User-agent: *\nDisallow: /b\n",
    ]
    assert by_site[deferred.origin][-1]["outcome"] == "parsed"
    requests = requests_of(entries)
    for site in (changing, deferred):
        for hit in page_paths(site):
            assert requests[site.url(hit)]["decision"] == "fetched"
    assert requests[changing.url("/b")]["verdicts"] == [["Scrapy", False, 2, "Disallow: /b"]]
    assert requests[deferred.url("/x")]["cause"] == "rule"
    result = audit_file(path)
    assert result.ok, result.problems
    assert result.verified == 4
    assert result.closed


@deferred_f_from_coro_f
async def test_a_drop_by_tdmrep_json_is_decided_again_from_the_file_recorded(
    sites: Any, tmp_path: Path
) -> None:
    """Without the page's signals read, tdmrep.json's reservation drops before
    download (TDMRep); the audit reads the rules from the tdmrep line's body."""
    site = sites(
        routes={
            "/robots.txt": text("User-agent: *\nAllow: /\n"),
            "/.well-known/tdmrep.json": text(TDMREP, content_type=b"application/json"),
        },
        default=text("page"),
    )
    path = tmp_path / "record.jsonl"
    settings = {"ROBOTSTXT_PURPOSES": ["train-ai"], "ROBOTSTXT_RECORD_FILE": str(path)}
    await crawl([site.url("/ok"), site.url("/tdm/a")], settings)
    assert page_paths(site) == ["/ok"]
    requests = requests_of(lines_of(path))
    assert requests[site.url("/tdm/a")]["cause"] == "usage"
    result = audit_file(path)
    assert (result.ok, result.verified) == (True, 2), result.problems


@deferred_f_from_coro_f
async def test_editing_deleting_or_reordering_one_line_fails_naming_that_line(
    sites: Any, tmp_path: Path, capsys: Any
) -> None:
    """Any change to a line breaks the chain at the next line, and an edited
    decision no longer matches the one made again."""
    site = sites(routes={"/robots.txt": text(ROBOTS)}, default=text("page"))
    path = tmp_path / "record.jsonl"
    urls = [site.url(p) for p in ("/a", "/private/a", "/b", "/c")]
    await crawl(urls, {"ROBOTSTXT_RECORD_FILE": str(path), "CONCURRENT_REQUESTS": 1})
    lines = path.read_text().splitlines()
    assert audit_file(path).ok
    dropped = next(i for i, line in enumerate(lines) if '"decision":"dropped"' in line)
    # an edited decision: its own line no longer matches, the next breaks the chain
    edited = lines.copy()
    edited[dropped] = edited[dropped].replace('"decision":"dropped"', '"decision":"fetched"')
    problems = _problems(tmp_path / "edited.jsonl", edited)
    assert dropped + 1 in problems and "decision made again differs" in problems[dropped + 1]
    assert dropped + 2 in problems and f"line {dropped + 1}" in problems[dropped + 2]
    # a line removed
    removed = lines[:dropped] + lines[dropped + 1 :]
    problems = _problems(tmp_path / "removed.jsonl", removed)
    assert list(problems) == [dropped + 1]
    # two lines swapped
    swapped = lines.copy()
    swapped[dropped], swapped[dropped + 1] = swapped[dropped + 1], swapped[dropped]
    problems = _problems(tmp_path / "swapped.jsonl", swapped)
    assert min(problems) == dropped + 1
    # the command names the file and the line, and fails
    assert run_audit([str(tmp_path / "removed.jsonl")]) == 1
    assert f"removed.jsonl:{dropped + 1}: the chain is broken" in capsys.readouterr().out


@pytest.mark.parametrize("name", ["record.jsonl", "record.jsonl.gz"])
@deferred_f_from_coro_f
async def test_a_crawl_appended_to_a_record_chains_on_from_the_crawl_before(
    sites: Any, tmp_path: Path, capsys: Any, name: str
) -> None:
    """Two crawls writing one record, one after the other: the second's header
    line carries the hash of the first's last line, so the file is one chain;
    removing the whole first crawl breaks it at the file's first line."""
    site = sites(routes={"/robots.txt": text(ROBOTS)}, default=text("page"))
    path = tmp_path / name
    settings = {"ROBOTSTXT_RECORD_FILE": str(path), "CONCURRENT_REQUESTS": 1}
    await crawl([site.url("/a"), site.url("/private/a")], settings)
    first = [text for text, _ in read_record(record_bytes(str(path)))]
    await crawl([site.url("/b")], settings)
    both = [text for text, _ in read_record(record_bytes(str(path)))]
    result = audit_file(path)
    assert result.ok and result.runs == 2 and result.verified == 3
    second_header = json.loads(both[len(first)])
    assert second_header["type"] == "header"
    assert second_header["prev"] == hashlib.sha256(first[-1].encode()).hexdigest()
    # the first crawl removed whole: the chain does not start where the file does
    problems = _problems(tmp_path / "second-only.jsonl", both[len(first) :])
    assert list(problems) == [1] and "does not start here" in problems[1]
    assert run_audit([str(path)]) == 0
    assert "(2 crawls, one chain; closed)" in capsys.readouterr().out


def _problems(path: Path, lines: list[str]) -> dict[int, str]:
    path.write_text("\n".join(lines) + "\n")
    result = audit_file(path)
    assert not result.ok
    return dict(result.problems)


@deferred_f_from_coro_f
async def test_an_unwritable_record_path_stops_the_crawl_naming_the_setting(
    sites: Any, tmp_path: Path
) -> None:
    """Before any request: a crawl that cannot keep its record does not start."""
    from scrapy.utils.test import get_crawler

    from scrapy_rfc9309.components.record._crawl_record import crawl_record

    site = sites(routes={"/robots.txt": text(ROBOTS)}, default=text("page"))
    blocker = tmp_path / "file"
    blocker.write_text("")
    unwritable = str(blocker / "r.jsonl")  # under a file: no directory can be made
    with pytest.raises(SettingError, match="ROBOTSTXT_RECORD_FILE"):
        await crawl([site.url("/a")], {"ROBOTSTXT_RECORD_FILE": unwritable}, allow_errors=True)
    assert site.hits == []
    crawler = get_crawler(settings_dict={"ROBOTSTXT_RECORD_FILE": str(tmp_path / "%(nope)s")})
    with pytest.raises(SettingError, match="ROBOTSTXT_RECORD_FILE"):
        crawl_record(crawler)


def test_a_write_error_later_logs_one_error_and_counts_the_lines(
    tmp_path: Path, caplog: Any
) -> None:
    from scrapy_rfc9309.components._clock import Clock
    from scrapy_rfc9309.components.record._record_file import RecordFile

    class Full:
        def write(self, data: bytes) -> int:
            raise OSError(28, "No space left on device")

        def flush(self) -> None: ...

        def close(self) -> None: ...

    class Stats:
        def __init__(self) -> None:
            self.values: dict[str, int] = {}

        def inc_value(self, key: str, count: int = 1) -> None:
            self.values[key] = self.values.get(key, 0) + count

    class NoTimers(Clock):
        def call_later(self, seconds: float, fn: Any, *args: Any) -> Any:
            return None

    stats = Stats()
    record = RecordFile("/full/record.jsonl", Full(), stats, NoTimers())  # type: ignore[arg-type]
    record.add({"type": "x"})
    record.flush()
    record.add({"type": "x"})
    record.add({"type": "x"})
    record.flush()
    assert stats.values == {"robotstxt/record/unwritten": 3}
    errors = [r for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1 and "No space left on device" in errors[0].getMessage()


@deferred_f_from_coro_f
async def test_a_sigkilled_crawl_loses_at_most_its_last_second_and_audits(
    sites: Any, tmp_path: Path, capsys: Any
) -> None:
    """A crawl (its own process) killed with SIGKILL mid-crawl: every page the
    server served more than a second before the kill is in the file, which
    audits; a cut last line is reported, not a traceback."""
    from .waiting import hold, until_async

    site = sites(
        routes={"/robots.txt": text("User-agent: *\nDisallow: /p1\n")},
        default=delayed(0.05, text("page")),
    )
    path = tmp_path / "record.jsonl"
    config = {
        "urls": [site.url(f"/p{i}") for i in range(400)],
        "settings": {
            "ROBOTSTXT_OBEY": True,
            "ADDONS": {"scrapy_rfc9309.Addon": 100},
            "ROBOTSTXT_RECORD_FILE": str(path),
            "CONCURRENT_REQUESTS": 2,
            "TELNETCONSOLE_ENABLED": False,
            "LOG_LEVEL": "INFO",
        },
        "output": str(tmp_path / "out.json"),
    }
    (tmp_path / "config.json").write_text(json.dumps(config))
    crawl_process = subprocess.Popen(
        [sys.executable, "-m", "tests.cluster_crawl", str(tmp_path / "config.json")],
        cwd=Path(__file__).parent.parent,
        stderr=subprocess.DEVNULL,
    )
    try:
        await until_async(
            lambda: path.exists() and path.read_text().count('"type":"request"') >= 5,
            30,
            "some requests recorded",
        )
        await hold(1.5, "mid-crawl, more than a second after the first lines")
        killed_at = time.monotonic()
        crawl_process.send_signal(signal.SIGKILL)
    finally:
        crawl_process.kill()
        crawl_process.wait()
    written = path.read_text()
    with path.open("ab") as stream:  # as if killed in the middle of a line
        stream.write(b'{"type":"request","url":"http://cut')
    result = audit_file(path)
    assert result.ok, result.problems
    assert result.verified >= 5
    assert not result.closed
    assert result.partial == written.count("\n") + 1
    assert run_audit([str(path)]) == 0
    output = capsys.readouterr().out
    assert f"record.jsonl:{result.partial}: the last line is cut short" in output
    assert "no close line" in output
    recorded = {json.loads(line)["url"] for line in written.splitlines() if '"request"' in line}
    early = [
        hit
        for hit, when in zip(site.hits, site.hit_times, strict=True)
        if when < killed_at - 1.0 and hit != "/robots.txt"
    ]
    assert early
    assert {site.url(hit) for hit in early} <= recorded
    assert len(site.hits) < 400  # killed mid-crawl


# -- pure units: the chain and the re-derivation -------------------------------------------


def test_each_line_carries_the_hash_of_the_one_before() -> None:
    chain = RecordChain()
    first = chain.line({"type": "header"})
    second = chain.line({"type": "x"})
    assert json.loads(first)["prev"] == GENESIS
    assert json.loads(second)["prev"] == line_hash(first)
    assert chain.last == line_hash(second)


@pytest.mark.parametrize("body", [b"User-agent: *\nDisallow: /a\n", b"\xff\xfe binary", b""])
def test_a_body_is_kept_as_text_or_base64_and_read_back(body: bytes) -> None:
    fields = body_fields(body)
    assert body_of(fields) == body
    assert ("body" in fields) is (body != b"\xff\xfe binary")


def _record(policy: DecisionPolicy, body: bytes, url: str, *, tamper: str = "") -> list[str]:
    chain = RecordChain()
    lines = [
        chain.line(
            header_entry(
                version="0",
                token="ExampleBot",
                policy=policy,
                max_size=512_000,
                auth_disallow=False,
                page={},
                started=0.0,
                spider="s",
            )
        )
    ]
    robots = RobotsTxt.parse(body)
    outcome = SiteOutcome(Kind.PARSED, robots, "HTTP 200", 0.0, (("http://e.com/robots.txt", 200),))
    lines.append(chain.line(robots_entry("http://e.com:80", outcome, body, 0.0, False)))
    copy = chain.last
    decision = decide_request(outcome, url, "http://e.com:80", "ExampleBot", policy)
    entry = request_entry(
        decision, site="http://e.com:80", method="GET", now=0.0, robots=copy, tdmrep=None
    )
    if tamper:
        entry["cause"] = tamper
    lines.append(chain.line(entry))
    return lines


def test_2_2_2_a_decision_is_made_again_from_the_copy_in_the_record() -> None:
    policy = DecisionPolicy(also_obey=("GPTBot",))
    body = b"User-agent: *\nAllow: /\n\nUser-agent: GPTBot\nDisallow: /x\n"
    result = audit_lines((line, True) for line in _record(policy, body, "http://e.com/x"))
    assert (result.ok, result.verified) == (True, 1)
    # the same lines, chained again after the cause was changed: the chain holds,
    # the decision made again does not
    tampered = _record(policy, body, "http://e.com/x", tamper="allowed")
    result = audit_lines((line, True) for line in tampered)
    [(number, problem)] = result.problems
    assert number == 3 and "cause: recorded 'allowed', decided 'rule'" in problem


def test_a_record_of_another_policy_is_decided_with_its_own_header() -> None:
    """The header's policy, not the auditor's settings: ALSO_OBEY recorded is obeyed."""
    body = b"User-agent: GPTBot\nDisallow: /\n"
    lines = _record(DecisionPolicy(also_obey=("GPTBot",)), body, "http://e.com/a")
    result = audit_lines((line, True) for line in lines)
    assert result.ok
    assert json.loads(lines[2])["decision"] == "dropped"


def test_a_partial_last_line_is_reported_not_a_problem() -> None:
    lines = _record(DecisionPolicy(), b"User-agent: *\nAllow: /\n", "http://e.com/a")
    result = audit_lines([*((line, True) for line in lines), ('{"type":"req', False)])
    assert result.ok
    assert result.partial == 4


def test_audit_reads_a_gzip_record_cut_short(tmp_path: Path) -> None:
    """A gzip record cut mid-block (a crawl killed): every line written before
    the cut is read, and the last one is reported cut; ``gzip`` itself would
    lose the whole block it was reading (up to 64 KiB of lines)."""
    line = _record(DecisionPolicy(), b"User-agent: *\nAllow: /\n", "http://e.com/a")
    lines = [f'{{"n": {number}, "pad": "{"x" * 200}"}}' for number in range(2000)]
    whole = gzip.compress(("\n".join(lines) + "\n").encode())
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(whole[: len(whole) * 9 // 10])  # the last tenth lost
    read = list(read_record(record_bytes(str(path))))
    assert line and len(read) > 1500  # nearly all of it, not nothing
    assert all(complete for _, complete in read[:-1])
    assert [text for text, _ in read[:-1]] == lines[: len(read) - 1]
    # one member after another (a crawl appended to the file): both read
    appended = tmp_path / "two.jsonl.gz"
    appended.write_bytes(gzip.compress(b"a\n") + gzip.compress(b"b\n"))
    assert list(read_record(record_bytes(str(appended)))) == [("a", True), ("b", True)]


class _StatsAtSpiderClose:
    """An extension that keeps ``robotstxt/record/lines`` as Scrapy dumps it: at
    ``spider_closed``, before its stats collector logs them."""

    dumped: ClassVar[list[int]] = []

    def __init__(self, crawler: Any) -> None:
        from scrapy import signals

        self.crawler = crawler
        crawler.signals.connect(self._closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Any) -> _StatsAtSpiderClose:
        return cls(crawler)

    def _closed(self, spider: Any) -> None:
        self.dumped.append(self.crawler.stats.get_value("robotstxt/record/lines", 0))


@deferred_f_from_coro_f
async def test_the_lines_stat_as_dumped_leaves_out_what_is_written_at_engine_stop(
    sites, tmp_path: Path
) -> None:
    """docs/reference/stats.md: ``robotstxt/record/lines`` counts the lines written
    out of the buffer; the value Scrapy dumps at the spider's close leaves out
    the lines still buffered and the ``close`` line (written when the engine
    stops); read after the crawl, it is the file's line count."""
    site = sites(routes={"/robots.txt": text(ROBOTS)}, default=html())
    path = tmp_path / "record.jsonl"
    _StatsAtSpiderClose.dumped.clear()
    extension = {f"{__name__}._StatsAtSpiderClose": 0}
    settings = {"ROBOTSTXT_RECORD_FILE": str(path), "EXTENSIONS": extension}
    _, stats = await crawl([site.url("/a"), site.url("/b")], settings)
    entries = lines_of(path)
    assert entries[-1]["type"] == "close"
    (dumped,) = _StatsAtSpiderClose.dumped
    assert stats["robotstxt/record/lines"] == len(entries)
    assert dumped < len(entries)  # the close line at least comes after the dump
