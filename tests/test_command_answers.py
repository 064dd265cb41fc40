"""``scrapy robotstxt``'s answers say what the docs promise, in text and ``--json`` alike.

Real runs of the command (in the test's reactor, :mod:`.command_runner`)
against the real local server: the copy of a robots.txt in the project's
store that a crawl started now obeys instead of the live download (RFC 9309
2.4), the keys of an answer with no rules read (2.3.1.3, 2.3.1.4), the
tdmrep.json note, and the wording of the text output and of the log lines.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rfc9309.components.command._command import (
    EXIT_ALLOWED,
    EXIT_DISALLOWED,
    EXIT_NO_ROBOTS,
    EXIT_USAGE_REFUSED,
)

from .command_runner import robotstxt
from .conftest import crawl
from .server import retry_after, status, text
from .test_store import age_store

#: the robots.txt a crawl puts in the store, then the one the site serves after
CRAWLED = b"User-agent: *\nDisallow: /a\n"
CHANGED = b"User-agent: *\nDisallow: /b\n"


def _answers(output: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in output.splitlines() if line.startswith('{"')]


@deferred_f_from_coro_f
async def test_2_4_the_answer_names_the_stored_copy_a_crawl_obeys_instead(sites, tmp_path) -> None:
    """RFC 9309 2.4: after the site changed its robots.txt, a crawl started now
    obeys the store's copy still in force, not the live download: the answer
    says so (``store_copy``: its times, sha256 and verdict for the URL, by the
    same decision), in text and JSON; the store is only read."""
    site = sites(routes={"/robots.txt": text(CRAWLED)}, default=text("x"))
    path = Path(tmp_path) / "robots.db"
    store = f"sqlite:///{path}"
    spider, _ = await crawl([site.url("/b")], {"ROBOTSTXT_STORE_URI": store})
    assert spider.fetched == [site.url("/b")]
    site.routes["/robots.txt"] = text(CHANGED)
    options = ("-s", f"ROBOTSTXT_STORE_URI={store}")
    output, code = await robotstxt(site.url("/a"), "--json", *options, cwd=tmp_path)
    assert code == EXIT_ALLOWED, output  # the live file allows /a
    (answer,) = _answers(output)
    copy = answer["store_copy"]
    assert copy["sha256"] == hashlib.sha256(CRAWLED).hexdigest()
    assert (copy["verdict"], copy["cause"], copy["line"], copy["rule"]) == (
        "disallowed",
        "rule",
        2,
        "Disallow: /a",
    )
    assert copy["outcome"] == "parsed"
    assert copy["fetched_at"] < copy["expires_at"]
    output, code = await robotstxt(site.url("/a"), *options, cwd=tmp_path)
    assert code == EXIT_ALLOWED, output
    assert "store:       a crawl started now obeys the store's copy fetched at " in output
    assert "not this download, until it expires at " in output
    assert output.rstrip().endswith('(RFC 9309 2.4): DISALLOWED by line 2: "Disallow: /a"')
    # the store saw no write: its history is the crawl's one copy
    output, code = await robotstxt(
        "history", site.url("/"), "--json", "--store", store, cwd=tmp_path
    )
    assert [entry["sha256"] for entry in _answers(output)] == [hashlib.sha256(CRAWLED).hexdigest()]


@deferred_f_from_coro_f
async def test_2_4_the_same_copy_or_an_expired_one_adds_nothing(sites, tmp_path) -> None:
    """A stored copy with the live body, or one past its lifetime (a crawl
    downloads the file again), adds nothing; a store that does not exist is
    not made."""
    site = sites(routes={"/robots.txt": text(CRAWLED)}, default=text("x"))
    path = Path(tmp_path) / "robots.db"
    options = ("-s", f"ROBOTSTXT_STORE_URI=sqlite:///{path}")
    output, code = await robotstxt(site.url("/a"), "--json", *options, cwd=tmp_path)
    assert code == EXIT_DISALLOWED, output
    assert "store_copy" not in _answers(output)[0]
    assert not path.exists()
    await crawl([site.url("/b")], {"ROBOTSTXT_STORE_URI": f"sqlite:///{path}"})
    output, code = await robotstxt(site.url("/a"), "--json", *options, cwd=tmp_path)
    assert "store_copy" not in _answers(output)[0], output  # the same body
    site.routes["/robots.txt"] = text(CHANGED)
    age_store(path, 2 * 86400)  # fetched two days ago: expired (RFC 9309 2.4)
    output, code = await robotstxt(site.url("/a"), "--json", *options, cwd=tmp_path)
    assert code == EXIT_ALLOWED, output
    assert "store_copy" not in _answers(output)[0], output


@deferred_f_from_coro_f
async def test_2_3_1_3_and_2_3_1_4_answers_without_rules_have_every_documented_key(
    sites, tmp_path
) -> None:
    """docs/command.md: the keys present when a robots.txt answered with a status
    (404: RFC 9309 2.3.1.3; 503: 2.3.1.4) are there, empty; ``also_obey`` has
    each listed token's verdict (the whole site's); ``lifetime`` says what set
    it (``Retry-After`` for a 503 with one)."""
    missing = sites(routes={"/robots.txt": status(404)})
    gone = sites(routes={"/robots.txt": retry_after(503, "120")})
    also = ("-s", "ROBOTSTXT_ALSO_OBEY=OtherBot")
    for site, verdict, expected in ((missing, "allowed", EXIT_NO_ROBOTS), (gone, "disallowed", 3)):
        output, code = await robotstxt(site.url("/a"), "--json", *also, cwd=tmp_path)
        assert code == expected, output
        (answer,) = _answers(output)
        assert answer["verdict"] == verdict
        assert (
            answer["groups"],
            answer["robots_usage"],
            answer["crawl_delay"],
            answer["sitemaps"],
            answer["warnings"],
        ) == ([], {}, None, [], [])
        assert answer["also_obey"] == [
            {"agent": "OtherBot", "verdict": verdict, "rule": None, "line": None, "group": []}
        ]
        assert answer["decided_by"] is None
        assert answer["lifetime"] is not None, answer
    output, _ = await robotstxt(gone.url("/a"), "--json", cwd=tmp_path)
    assert _answers(output)[0]["lifetime"] == "Retry-After"
    output, _ = await robotstxt(gone.url("/a"), cwd=tmp_path)  # the text reads the same
    assert "lifetime:    Retry-After" in output


@deferred_f_from_coro_f
async def test_tdmrep_only_refusal_note_is_in_the_json_answer(sites, tmp_path) -> None:
    """TDMRep: a refusal by tdmrep.json alone may be lifted by the page; the note
    saying what this crawl does is part of the answer (``note``), printed from it."""
    routes = {
        "/robots.txt": text("User-agent: *\nAllow: /\n"),
        "/.well-known/tdmrep.json": text('[{"location": "/news/*", "tdm-reservation": 1}]'),
    }
    site = sites(routes=routes)
    args = (site.url("/news/a"), "--purpose", "train-ai")
    output, code = await robotstxt(*args, "--json", cwd=tmp_path)
    assert code == EXIT_USAGE_REFUSED, output
    (answer,) = _answers(output)
    note = answer["note"]
    assert note.startswith("the page's own tdm-reservation header or meta supersedes tdmrep.json")
    text_output, _ = await robotstxt(*args, cwd=tmp_path)
    assert f"note:        {note}\n" in text_output
    output, _ = await robotstxt(site.url("/other"), "--purpose", "train-ai", "--json", cwd=tmp_path)
    assert _answers(output)[0]["note"] is None


@deferred_f_from_coro_f
async def test_text_says_robots_txt_states_no_usage_beside_tdmrep_json_s(sites, tmp_path) -> None:
    """The robots.txt usage line names robots.txt: it does not contradict the
    tdmrep.json line after it. The DEBUG line of a one-rule tdmrep.json says
    ``1 rule``."""
    routes = {
        "/robots.txt": text("User-agent: *\nAllow: /\n"),
        "/.well-known/tdmrep.json": text('[{"location": "/news/*", "tdm-reservation": 1}]'),
    }
    site = sites(routes=routes)
    output, _ = await robotstxt(
        site.url("/news/a"), "--purpose", "train-ai", "-L", "DEBUG", cwd=tmp_path
    )
    assert "usage:       robots.txt states none (Content-Usage, Content-Signal)" in output
    assert "usage:       none stated" not in output
    assert f"{site.url('/.well-known/tdmrep.json')}, 1 rule\n" in output


@deferred_f_from_coro_f
async def test_help_names_the_agent_option_token(tmp_path) -> None:
    """``-h`` says ``--agent TOKEN``, as the docs do."""
    output, _ = await robotstxt("-h", cwd=tmp_path)
    assert "--agent TOKEN" in output and "--agent AGENT" not in output


@deferred_f_from_coro_f
async def test_2_3_1_4_the_commands_unreachable_warning_says_what_a_crawl_would_do(
    sites, tmp_path
) -> None:
    """No crawl runs: the one attempt's WARNING says a crawl would drop the requests."""
    site = sites(routes={"/robots.txt": status(503)})
    output, code = await robotstxt(site.url("/a"), cwd=tmp_path)
    assert code == EXIT_NO_ROBOTS, output
    assert (
        f"robots.txt unreachable (HTTP 503): {site.url('/robots.txt')}; a crawl given this "
        "answer would drop "
        f"requests to {site.origin} (RFC 9309 2.3.1.4); one attempt, not tried again"
    ) in output
    assert "are dropped" not in output


@deferred_f_from_coro_f
async def test_2_2_1_decided_by_names_the_listed_token_that_refused_else_null(
    sites, tmp_path
) -> None:
    """With ``ROBOTSTXT_ALSO_OBEY``, ``decided_by`` is always there: the listed
    token whose rule refused the URL, ``null`` when our own token's verdict
    stands (its rule refused, or every token allows)."""
    robots = "User-agent: *\nDisallow: /own\n\nUser-agent: OtherBot\nDisallow: /other\n"
    site = sites(routes={"/robots.txt": text(robots)})
    urls = [site.url("/own"), site.url("/other"), site.url("/free")]
    output, _ = await robotstxt(*urls, "--json", "-s", "ROBOTSTXT_ALSO_OBEY=OtherBot", cwd=tmp_path)
    decided = [(a["verdict"], a["decided_by"]) for a in _answers(output)]
    assert decided == [("disallowed", None), ("disallowed", "OtherBot"), ("allowed", None)]


@deferred_f_from_coro_f
async def test_2_4_a_time_history_prints_can_be_given_back_to_at(sites, tmp_path) -> None:
    """RFC 9309 2.4: ``history`` prints each copy's fetch time to the
    millisecond (rounded up), so ``--at`` that very time finds the copy (a time
    cut to the second was before the fetch: no copy then)."""
    site = sites(routes={"/robots.txt": text("User-agent: *\nDisallow: /a\n")}, default=text("x"))
    store = f"sqlite:///{Path(tmp_path) / 'robots.db'}"
    await crawl([site.url("/b")], {"ROBOTSTXT_STORE_URI": store})
    output, code = await robotstxt(
        "history", site.url("/"), "--json", "--store", store, cwd=tmp_path
    )
    assert code == 0, output
    (entry,) = [json.loads(line) for line in output.splitlines() if line.startswith('{"')]
    output, code = await robotstxt(
        site.url("/a"), "--json", "--at", entry["fetched_at"], "--store", store, cwd=tmp_path
    )
    assert code == EXIT_DISALLOWED, output


@deferred_f_from_coro_f
async def test_2_4_the_stored_copys_verdict_names_the_also_obey_token_and_the_usage_line(
    sites, tmp_path
) -> None:
    """The stored copy's verdict is given as the answer's is: refused by a
    ``ROBOTSTXT_ALSO_OBEY`` token's group, it names the token (``decided_by``);
    refusing a declared purpose, it names the usage line (``refused``)."""
    stored = (
        b"User-agent: *\nDisallow: /private/\nContent-Usage: /ai/ train-ai=n\n\n"
        b"User-agent: GPTBot\nDisallow: /a/\n"
    )
    site = sites(routes={"/robots.txt": text(stored)}, default=text("x"))
    store = f"sqlite:///{Path(tmp_path) / 'robots.db'}"
    settings = {"ROBOTSTXT_ALSO_OBEY": ["GPTBot"], "ROBOTSTXT_PURPOSES": ["train-ai"]}
    await crawl([site.url("/x")], {"ROBOTSTXT_STORE_URI": store, **settings})
    site.routes["/robots.txt"] = text("User-agent: *\nAllow: /\n")
    options = (
        "-s",
        f"ROBOTSTXT_STORE_URI={store}",
        "-s",
        "ROBOTSTXT_ALSO_OBEY=GPTBot",
        "-s",
        "ROBOTSTXT_PURPOSES=train-ai",
    )
    output, _ = await robotstxt(site.url("/a/1"), "--json", *options, cwd=tmp_path)
    assert _answers(output), output
    assert _answers(output)[0]["store_copy"]["decided_by"] == "GPTBot", output
    output, _ = await robotstxt(site.url("/a/1"), *options, cwd=tmp_path)
    assert 'DISALLOWED for GPTBot (ROBOTSTXT_ALSO_OBEY) by line 6: "Disallow: /a/"' in output
    output, _ = await robotstxt(site.url("/ai/1"), "--json", *options, cwd=tmp_path)
    refused = _answers(output)[0]["store_copy"]["refused"]
    assert (refused["category"], refused["line"]) == ("train-ai", 3), output
    output, _ = await robotstxt(site.url("/ai/1"), *options, cwd=tmp_path)
    assert (
        'store:       by that copy, line 3: "Content-Usage: /ai/ train-ai=n" refuses train-ai'
        in (output)
    ), output
