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

from scrapy_rfc9309.components._command import EXIT_ALLOWED, EXIT_USAGE_REFUSED
from scrapy_rfc9309.parser._usage import Preference, Usage
from scrapy_rfc9309.parser._usage_decision import UsageSources, applicable_usage

from .server import html_page, page_with_headers, text
from .test_command import json_lines, scrapy
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
    output, code = await scrapy(url, "--purpose", "train-ai", "--page", "--json", cwd=tmp_path)
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
