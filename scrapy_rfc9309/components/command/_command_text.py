"""``scrapy robotstxt``'s text output, drawn only from each URL's answer (as ``--json``).

The same dict :func:`~._command_answer.explain_url` gives is printed as JSON
or, by this module, as aligned ``name: value`` lines for a person.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from ...parser._robotstxt import RobotsTxt
from ...parser._tdmrep import TDMREP_PATH
from ...sites._outcome import Kind, SiteOutcome, matched_note
from ..pages._meta_middleware import _LENIENT_FORMS
from ._command_answer import explain_url

__all__ = ["explain", "print_answer", "robots_lines"]

_WHOLE_SITE_VERDICTS = {
    Kind.UNREACHABLE.value: "robots.txt unreachable (RFC 9309 2.3.1.4)",
    Kind.RESTRICTED.value: "robots.txt answered 401/403 (ROBOTSTXT_AUTH_DISALLOW)",
    Kind.INTERNAL_ERROR.value: "internal error while fetching robots.txt (see the log)",
}


def explain(robots: RobotsTxt, url: str, token: str) -> tuple[list[str], bool]:
    """The report lines for ``url`` under ``robots`` as ``token``, and the verdict."""
    answer = explain_url(SiteOutcome(Kind.PARSED, robots, "", 0.0), url, token)
    if answer["verdict"] == "error":
        raise ValueError(answer["detail"])
    return robots_lines(answer), answer["verdict"] == "allowed"


def robots_lines(answer: dict[str, Any]) -> list[str]:
    """What a parsed robots.txt says of the answer's URL: verdict, groups, usage, ..."""
    lines = []
    decided_by = answer.get("decided_by")
    if decided_by is not None:  # refused by a ROBOTSTXT_ALSO_OBEY token's group
        lines.append(
            f"verdict:     DISALLOWED for {decided_by} (ROBOTSTXT_ALSO_OBEY) by line "
            f'{answer["line"]}: "{answer["rule"]}"'
        )
    elif answer["line"] is None:
        lines.append("verdict:     ALLOWED (no rule matches; RFC 9309 2.2.2)")
    else:
        word = "ALLOWED" if answer["verdict"] == "allowed" else "DISALLOWED"
        matched_as = answer.get("matched_as")
        matched = "" if matched_as is None else matched_note(matched_as, answer["url"])
        lines.append(f'verdict:     {word} by line {answer["line"]}: "{answer["rule"]}"{matched}')
    for other in answer.get("also_obey") or ():
        word = "allowed" if other["verdict"] == "allowed" else "DISALLOWED"
        rule = (
            "(no rule matches)"
            if other["line"] is None
            else f'by line {other["line"]}: "{other["rule"]}"'
        )
        group = ", ".join(f"line {agent['line']}: {agent['text']}" for agent in other["group"])
        lines.append(
            f"also obey:   {other['agent']}: {word} {rule} (group: {group or 'none applies'})"
        )
    if not answer["groups"]:
        lines.append("group:       none applies (no group for this agent and no '*' group)")
    for group in answer["groups"]:
        agents = ", ".join(f"line {agent['line']}: {agent['text']}" for agent in group)
        lines.append(f"group:       {agents}")
    delay, applied = answer["crawl_delay"], answer.get("crawl_delay_applied")
    capped = (
        f" (a crawl waits {applied} s: ROBOTSTXT_CRAWL_DELAY_MAX)"
        if delay is not None and applied is not None and applied < delay
        else ""
    )
    lines.append(f"crawl-delay: {'none' if delay is None else f'{delay} s'}{capped}")
    usage = answer["robots_usage"]
    if not usage:
        lines.append("usage:       robots.txt states none (Content-Usage, Content-Signal)")
    for category, preference in usage.items():
        line, rule = preference["line"], preference["rule"]
        lines.append(f'usage:       {category}={preference["value"]} by line {line}: "{rule}"')
    lines.extend(f"sitemap:     {sitemap}" for sitemap in answer["sitemaps"])
    lines.extend(
        f"warning:     line {warning['line']}: {warning['message']}"
        for warning in answer["warnings"]
    )
    return lines


def _source(answer: dict[str, Any]) -> str:
    """The robots.txt URL chain as :attr:`SiteOutcome.source` says it."""
    chain = answer["robots_txt"]
    if not chain:
        return ""
    text = str(chain[0]["url"])
    for before, after in pairwise(chain):
        text += f" -> {after['url']} ({before['status']})"
    return text


def print_answer(answer: dict[str, Any], *, first: bool) -> None:
    """One URL's answer as text (its ``page`` part too, with ``--page``)."""
    _print_verdict(answer, first=first)
    _print_store_copy(answer)
    _print_page(answer)


def _print_store_copy(answer: dict[str, Any]) -> None:
    """The store's copy a crawl started now obeys instead of this download (RFC 9309
    2.4), with its verdict for the URL, when there is one that differs."""
    copy = answer.get("store_copy")
    if copy is None:
        return
    word = "ALLOWED" if copy["verdict"] == "allowed" else copy["verdict"].upper()
    if copy.get("decided_by") is not None:
        word += f" for {copy['decided_by']} (ROBOTSTXT_ALSO_OBEY)"
    if copy["line"] is not None:
        word += f' by line {copy["line"]}: "{copy["rule"]}"'
    elif copy["outcome"] != Kind.PARSED.value:
        word += f" ({copy['outcome']})"
    digest = (copy["sha256"] or "no body")[:12]
    print(
        f"store:       a crawl started now obeys the store's copy fetched at "
        f"{copy['fetched_at']} ({digest}), not this download, until it expires at "
        f"{copy['expires_at']} (RFC 9309 2.4): {word}"
    )
    refused = copy.get("refused")
    if refused is not None:
        where = (
            f'line {refused["line"]}: "{refused["rule"]}"' if refused["line"] else refused["rule"]
        )
        print(f"store:       by that copy, {where} refuses {refused['category']}")
    elif copy["cause"] == "usage":
        print("store:       by that copy, a usage preference refuses a declared purpose")


def _print_verdict(answer: dict[str, Any], *, first: bool) -> None:
    if not first:
        print()
    print(f"url:         {answer['url']}")
    print(f"agent:       {answer['agent']}")
    if answer["outcome"] is None:
        print(f"verdict:     ERROR: {answer['detail']}")
        return
    print(f"robots.txt:  {_source(answer)}")
    print(f"outcome:     {answer['outcome']} ({answer['detail']})")
    if answer["lifetime"]:
        print(f"lifetime:    {answer['lifetime']}")
    if answer["outcome"] in _WHOLE_SITE_VERDICTS:
        print(f"verdict:     DISALLOWED: {_WHOLE_SITE_VERDICTS[answer['outcome']]}")
        return
    if answer["verdict"] == "error":
        print(f"verdict:     ERROR: {answer['detail']}")
        return
    if answer["outcome"] != Kind.PARSED.value:  # no rules read: RFC 9309 2.3.1.3
        print("verdict:     ALLOWED: robots.txt unavailable (RFC 9309 2.3.1.3)")
    else:
        print("\n".join(robots_lines(answer)))
    if answer.get("cause") == "usage":  # allowed by robots.txt, dropped all the same
        print("crawl:       DROPPED before download: a usage preference refuses a declared purpose")
    _print_purposes(answer)


def _print_purposes(answer: dict[str, Any]) -> None:
    """The declared purposes' part: tdmrep.json, the page's signals, what refuses."""
    if "purposes" not in answer or answer["verdict"] != "allowed":
        return
    tdmrep = answer.get("tdmrep")
    sources = answer.get("usage_sources") or {}
    if tdmrep is not None:
        where = tdmrep["url"] or TDMREP_PATH
        print(f"tdmrep.json: {where} ({tdmrep['detail']})")
        for category, preference in (sources.get("tdmrep") or {}).items():
            print(
                f"usage:       {category}={preference['value']} by tdmrep.json: "
                f"{preference['rule']}{_policy(preference)}"
            )
    for category, preference in (sources.get("page") or {}).items():
        print(
            f"usage:       {category}={preference['value']} by the page: {preference['rule']}"
            f"{_policy(preference)}"
        )
    purposes = ", ".join(answer["purposes"])
    refused = answer["refused"]
    if refused is None:
        print(f"purposes:    {purposes}: not refused")
        _print_note(answer)
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
        elif refused["source"] == TDMREP_PATH:
            where = f"{refused['source'].removeprefix('/.well-known/')}: {refused['rule']}"
        else:
            where = f"{refused['source']}: {refused['rule']}"
        parts.append(
            f"{purpose}: REFUSED, {refused['category']}={refused['value']} by {where}"
            f"{_policy(refused)}"
        )
    print(f"purposes:    {', '.join(parts)}")
    _print_note(answer)


def _print_note(answer: dict[str, Any]) -> None:
    if answer.get("note"):
        print(f"note:        {answer['note']}")


def _policy(preference: dict[str, Any]) -> str:
    """TDMRep's ``tdm-policy`` of a preference, when stated: ``, tdm-policy URL``."""
    policy = preference.get("policy")
    return f", tdm-policy {policy}" if policy else ""


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
