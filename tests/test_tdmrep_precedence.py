"""TDMRep precedence between tdmrep.json, the ``tdm-reservation`` header and the
HTML meta: a crawl and ``scrapy robotstxt --purpose train-ai --page`` agree.

The TDMRep final community group report ("Processing priority") orders the
techniques: the HTTP header supersedes tdmrep.json, HTML metadata supersedes
both, and "at every step, the absence of a property MUST not reset current
values".
"""

from __future__ import annotations

import json
import logging

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rfc9309.components.command._command import EXIT_ALLOWED, EXIT_USAGE_REFUSED
from scrapy_rfc9309.parser._usage import Preference, Usage
from scrapy_rfc9309.parser._usage_decision import UsageSources, applicable_usage

from .server import html_page, page_with_headers, text
from .test_command import PAGES_READ, json_lines, scrapy
from .test_usage import usage_crawl

POLICY = "https://example.com/tdm-policy.json"
TDMREP = json.dumps(
    [
        {"location": "/file-only/*", "tdm-reservation": 1, "tdm-policy": POLICY},
        {"location": "/header-over-file/*", "tdm-reservation": 1},
        {"location": "/header-1-over-file-0/*", "tdm-reservation": 0},
        {"location": "/absent-resets-nothing/*", "tdm-reservation": 1},
        {"location": "/bad/*", "tdm-reservation": True},
    ]
)

#: path -> (tdm-reservation header or None, meta content or None, refused?)
CASES = {
    "/file-only/a": (None, None, True),
    "/header-over-file/a": ("0", None, False),
    "/header-1-over-file-0/a": ("1", None, True),
    "/meta-over-header/a": ("1", "0", False),
    "/meta-1-over-header-0/a": ("0", "1", True),
    # "true" is a protocol error: read as unset, it resets nothing
    "/absent-resets-nothing/a": ("true", None, True),
}


def _route(header: str | None, meta: str | None):
    headers = [(b"tdm-reservation", header.encode())] if header is not None else []
    head = f'<meta name="tdm-reservation" content="{meta}">' if meta is not None else ""
    return page_with_headers(html_page(head), headers)


@pytest.mark.parametrize("path", list(CASES))
@deferred_f_from_coro_f
async def test_tdmrep_processing_priority_crawl_and_command_agree(sites, tmp_path, path) -> None:
    """TDMRep final report, "Processing priority": the header supersedes
    tdmrep.json, the HTML meta supersedes both; "at every step, the absence of a
    property MUST not reset current values". The crawl and the command agree."""
    header, meta, refused = CASES[path]
    site = sites(
        routes={
            "/robots.txt": text("User-agent: *\nAllow: /\n"),
            "/.well-known/tdmrep.json": text(TDMREP, content_type=b"application/json"),
            path: _route(header, meta),
        }
    )
    url = site.url(path)
    _, items, _ = await usage_crawl([url], {"ROBOTSTXT_PURPOSES": ["train-ai"]})
    assert (items == []) is refused, items
    output, code = await scrapy(
        url, "--purpose", "train-ai", "--page", "--json", *PAGES_READ, cwd=tmp_path
    )
    (answer,) = json_lines(output)
    assert code == (EXIT_USAGE_REFUSED if refused else EXIT_ALLOWED), output
    assert (answer["refused"] is not None) is refused
    assert answer["usage"]["train-ai"]["value"] == ("n" if refused else "y")


def test_tdmrep_precedence_in_the_one_decision() -> None:
    """The same, unit by unit: AIPREF sources keep the most restrictive rule
    (draft-ietf-aipref-vocab-08: a refusal beats a permission)."""
    from scrapy_rfc9309.parser._tdmrep import tdm_usage

    reserved = tdm_usage(False, "/.well-known/tdmrep.json", "x")
    free = tdm_usage(True, "/.well-known/tdmrep.json", "x")
    page = UsageSources().with_page([("tdm-reservation header", "0")])
    preference = applicable_usage(page._replace(tdmrep=reserved)).get("train-ai")
    assert preference is not None
    assert preference.allowed
    meta = page.with_page([("tdm-reservation header", "0"), ('<meta name="tdm-reservation">', "1")])
    preference = applicable_usage(meta._replace(tdmrep=free)).get("train-ai")
    assert preference is not None
    assert not preference.allowed
    # a robots.txt Content-Usage (AIPREF) n is not superseded by a TDMRep 0
    line = Preference("train-ai", False, "robots.txt", 3, "Content-Usage: train-ai=n")
    robots = page._replace(robots_txt=Usage({"train-ai": line}))
    assert applicable_usage(robots).get("train-ai") == line
    # an absent value resets nothing: no header, no meta, the file's reservation stays
    preference = applicable_usage(UsageSources(tdmrep=reserved)).get("train-ai")
    assert preference is not None
    assert not preference.allowed


@deferred_f_from_coro_f
async def test_tdm_policy_in_the_drop_message_and_the_command(sites, tmp_path, caplog) -> None:
    """TDMRep: a rule's ``tdm-policy`` is shown wherever its reservation refuses a
    purpose; bad ``tdm-reservation`` values are logged at INFO (once per fetch)."""
    site = sites(
        routes={
            "/robots.txt": text("User-agent: *\nAllow: /\n"),
            "/.well-known/tdmrep.json": text(TDMREP, content_type=b"application/json"),
        },
        default=text("page"),
    )
    url = site.url("/file-only/a")
    settings = {"ROBOTSTXT_PURPOSES": ["train-ai"], "ROBOTS_META_OBEY": False}
    with caplog.at_level(logging.INFO, logger="scrapy_rfc9309.usage"):
        spider, _items, _stats = await usage_crawl(
            [url, site.url("/bad/a"), site.url("/bad/b")], settings
        )
    # without page directives read, nothing can supersede the file: dropped before download
    assert f"tdm-policy {POLICY}" in spider.dropped[url]
    assert site.count("/file-only/a") == 0
    findings = [r.getMessage() for r in caplog.records if "tdm-reservation true" in r.getMessage()]
    assert len(findings) == 1, findings
    output, code = await scrapy(url, "--purpose", "train-ai", cwd=tmp_path)
    assert code == EXIT_USAGE_REFUSED, output
    assert f"tdm-policy {POLICY}" in output
    output, _ = await scrapy(url, "--purpose", "train-ai", "--json", cwd=tmp_path)
    (answer,) = json_lines(output)
    assert answer["refused"]["policy"] == POLICY


PAGE_POLICY = "http://127.0.0.1/Policies/TDM,v2.json?Lang=EN"


@pytest.mark.parametrize(
    ("path", "headers", "head", "source"),
    [
        pytest.param(
            "/header-policy",
            [(b"tdm-reservation", b"1"), (b"tdm-policy", PAGE_POLICY.encode())],
            "",
            "tdm-reservation header",
            id="tdmrep-sec-tdm-header",
        ),
        pytest.param(
            "/meta-policy",
            [],
            '<meta name="tdm-reservation" content="1">'
            f'<meta name="TDM-Policy" content="{PAGE_POLICY.replace("&", "&amp;")}">',
            '<meta name="tdm-reservation">',
            id="tdmrep-sec-tdm-html-meta",
        ),
    ],
)
@deferred_f_from_coro_f
async def test_page_tdm_policy_in_the_drop_line_report_and_command(
    sites, tmp_path, caplog, path, headers, head, source
) -> None:
    """TDMRep final report, "TDM Header Field in HTTP Responses": "`tdm-reservation`
    and the optional `tdm-policy` are two properties added to the HTTP header of
    the response"; "TDM Metadata in HTML Content": "`tdm-policy` is expressed as
    value of the `name` attribute of a second `meta` element". A page reserving
    with a policy names it in the item-drop DEBUG line, the JSON report and
    ``scrapy robotstxt --page --json`` (``refused.policy``), as written."""
    report = tmp_path / "report.json"
    site = sites(
        routes={
            "/robots.txt": text("User-agent: *\nAllow: /\n"),
            path: page_with_headers(html_page(head), headers),
        }
    )
    url = site.url(path)
    settings = {
        "ROBOTSTXT_PURPOSES": ["train-ai"],
        "EXTENSIONS": {"scrapy_rfc9309.RobotsTxtExtension": 0},
        "ROBOTSTXT_REPORT_FILE": str(report),
    }
    with caplog.at_level(logging.DEBUG, logger="scrapy_rfc9309"):
        _, items, stats = await usage_crawl([url], settings)
    assert items == [] and site.count(path) == 1
    assert stats["robotsmeta/usage"] == 1
    (line,) = [r.getMessage() for r in caplog.records if "Dropped an item of" in r.getMessage()]
    assert f"policy {PAGE_POLICY}" in line and source in line, line
    sites_reported = json.loads(report.read_text())["sites"]
    (record,) = [entry for entry in sites_reported if entry["usage_dropped"]]
    (dropped,) = record["usage_dropped"]
    assert f"policy {PAGE_POLICY}" in dropped["preference"], dropped
    output, code = await scrapy(
        url, "--purpose", "train-ai", "--page", "--json", *PAGES_READ, cwd=tmp_path
    )
    assert code == EXIT_USAGE_REFUSED, output
    (answer,) = json_lines(output)
    assert answer["refused"]["policy"] == PAGE_POLICY
    assert answer["refused"]["source"] == source
    output, _ = await scrapy(url, "--purpose", "train-ai", "--page", *PAGES_READ, cwd=tmp_path)
    assert f"tdm-policy {PAGE_POLICY}" in output


def test_tdm_policy_precedence_in_the_one_decision() -> None:
    """TDMRep final report, "Processing priority": "The values of
    `tdm-reservation` and `tdm-policy` found in this header supercede any value
    inferred from a TDM file on the origin server"; the meta's "supercede
    previous values"; "tdm-policy": with a reservation of 0, "TDM Agents SHOULD
    NOT process `tdm-policy` in this case". Each property on its own: an absent
    one resets nothing."""
    from scrapy_rfc9309.parser._tdmrep import tdm_usage

    file_1 = tdm_usage(False, "/.well-known/tdmrep.json", "x", "https://file/p")
    header = ("tdm-reservation header", "1")

    def policy(sources: UsageSources, *signals: tuple[str, str]) -> str | None:
        preference = applicable_usage(sources.with_page(signals)).get("train-ai")
        assert preference is not None
        return None if preference.allowed else (preference.policy or "")

    # the header's policy supersedes the file's; the meta's supersedes both
    assert policy(UsageSources(tdmrep=file_1), ("tdm-policy header", "https://h/p")) == (
        "https://h/p"
    )
    meta = ('<meta name="tdm-policy">', "https://m/p")
    assert policy(UsageSources(tdmrep=file_1), ("tdm-policy header", "https://h/p"), meta) == (
        "https://m/p"
    )
    # a header reservation without a policy keeps the file's policy (absent resets nothing)
    assert policy(UsageSources(tdmrep=file_1), header) == "https://file/p"
    # a page policy with a page reservation, no file
    assert policy(UsageSources(), header, ("tdm-policy header", " https://h/p ")) == "https://h/p"
    # reservation 0 on the page: not reserved, the policy is not processed
    assert policy(UsageSources(tdmrep=file_1), ("tdm-reservation header", "0"), meta) is None
    # a policy without any reservation states nothing
    assert not applicable_usage(UsageSources().with_page([meta]))
    # an empty policy is none; a control character is escaped (it is logged)
    assert policy(UsageSources(), header, ("tdm-policy header", "  ")) == ""
    escaped = policy(UsageSources(), header, ('<meta name="tdm-policy">', "https://x/\nForged"))
    assert escaped == "https://x/\\nForged"
    # the page's own usage (scrapy robotstxt --page) carries it too
    page = UsageSources().with_page([header, meta]).page.get("train-ai")
    assert page is not None and page.policy == "https://m/p"
