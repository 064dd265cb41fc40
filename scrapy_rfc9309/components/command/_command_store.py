"""``scrapy robotstxt history URL`` and ``URL --at TIME``: reports from the robots.txt store.

Read-only: the store is opened for reading and never changed; no download.
"""

from __future__ import annotations

import json
import logging
import sys
from argparse import Namespace
from dataclasses import replace
from typing import Any

from scrapy.exceptions import UsageError

from ...parser._robotstxt import RobotsTxt
from ...sites._outcome import Kind, SiteOutcome
from ...sites._request_decision import tdmrep_refusal
from ...sites._site import robots_url, site_of
from ..settings._settings import RobotsTxtSettings
from ._command_answer import (
    EXIT_ALLOWED,
    EXIT_ERROR,
    TdmRepAnswer,
    exit_code,
    explain_url,
    no_site_reason,
    tdmrep_note,
)
from ._command_text import print_answer

__all__ = [
    "history_entry",
    "history_line",
    "lifetime_at",
    "parse_time",
    "run_at",
    "run_history",
    "stored_outcome",
]

logger = logging.getLogger("scrapy_rfc9309.command")

#: The tdmrep.json answer of ``--at`` when the store kept no copy at that time.
NOT_STORED = "not kept by the store: --at answers from robots.txt alone"


def open_store_of(scrapy_settings: Any, opts: Namespace) -> Any:
    """The store ``--store`` or ``ROBOTSTXT_STORE_URI`` names (``UsageError`` if none)."""
    from ...sites._store import NoStore, StoreError
    from ...sites._store_uri import without_password
    from ..settings._store_settings import StoreSettings

    try:
        configured = StoreSettings.from_settings(scrapy_settings, uri=opts.store)
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
        return configured.open(read_only=True)  # a report never makes or changes a store
    except ValueError as error:
        raise UsageError(str(error).replace("ROBOTSTXT_STORE_URI", name)) from None
    except NoStore as error:  # a read-only open makes none: "no store at PATH"
        raise UsageError(str(error)) from None
    except StoreError as error:
        shown = without_password(uri)
        raise UsageError(f"{name} = {shown!r}: the store cannot be opened: {error}") from None


def run_history(scrapy_settings: Any, args: list[str], opts: Namespace) -> int:
    """``history URL``: the versions of the site's robots.txt the store has seen,
    then those of its tdmrep.json, each newest first."""
    from ...sites._store import StoreError

    if len(args) != 1:
        raise UsageError("history takes one URL")
    site = site_of(args[0]) if "://" in args[0] else None
    if site is None:
        raise UsageError(f"history: {no_site_reason(args[0])}: {args[0]!r}")
    store = open_store_of(scrapy_settings, opts)
    try:
        records = store.history(site, limit=HISTORY_LIMIT)
        tdmreps = store.tdmrep_history(site, limit=HISTORY_LIMIT)
    except StoreError as error:
        print(f"error:       {error}", file=sys.stderr)
        return EXIT_ERROR
    finally:
        close_quietly(store)
    if not records and not tdmreps:
        message = f"the store {store.uri} has no robots.txt of {site}"
        print(f"error:       {message}", file=sys.stderr)
        return EXIT_ERROR
    for file, kept in (("robots.txt", records), ("tdmrep.json", tdmreps)):
        for record in kept:
            if opts.json:
                print(json.dumps(history_entry(record, file), ensure_ascii=False))
            else:
                print(history_line(record))
    return EXIT_ALLOWED


def run_at(
    scrapy_settings: Any,
    urls: list[str],
    opts: Namespace,
    settings: RobotsTxtSettings,
    token: str,
    purposes: tuple[str, ...],
    extra: dict[str, Any] | None = None,
) -> int:
    """``URL --at TIME``: each URL's verdict from the newest copy fetched at or
    before TIME, and whether that copy was still within its lifetime then.

    The verdict is the crawl's decision on that copy with the project's
    policy (``ROBOTSTXT_ALSO_OBEY``, and ``purposes``: ``ROBOTSTXT_PURPOSES`` or
    ``--purpose``):
    what a crawl at TIME applied (``extra``: keys each answer adds). A purpose
    that tdmrep.json decides is decided by the site's tdmrep.json copy in force
    at TIME (:func:`stored_tdmrep`); without one, from robots.txt alone, and the
    answer says so."""
    from ...parser._usage import needs_tdmrep
    from ...sites._store import StoreError

    if not urls:
        raise UsageError("give at least one URL (as arguments or on standard input)")
    when = parse_time(opts.at)
    policy = replace(settings.policy, purposes=purposes)
    tdmreps: dict[str, TdmRepAnswer] | None = {} if needs_tdmrep(policy.purposes) else None
    store = open_store_of(scrapy_settings, opts)
    answers = []
    missing = False
    try:
        for url in urls:
            site = site_of(url) if "://" in url else None
            outcome = None
            why = no_site_reason(url)
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
            tdmrep = None
            if tdmreps is not None and site is not None:
                refusal = (
                    None
                    if outcome is None
                    else tdmrep_refusal(outcome, site, token, policy.also_obey)
                )
                if refusal is not None:  # never fetched by the crawl (RFC 9309 2.2.2)
                    tdmreps[site] = (None, f"not fetched: robots.txt disallows it: {refusal}")
                if site not in tdmreps:
                    until = None if record is None else record.expires_at
                    try:
                        tdmreps[site] = stored_tdmrep(store, site, when, settings, until)
                    except StoreError as error:
                        print(f"error:       {error}", file=sys.stderr)
                        return EXIT_ERROR
                tdmrep = tdmreps[site]
            elif tdmreps is not None:
                tdmrep = (None, NOT_STORED)
            answers.append(
                explain_url(
                    outcome,
                    url,
                    token,
                    why,
                    tdmrep=tdmrep,
                    also=policy.also_obey,
                    noai=settings.meta_noai,
                    policy=policy,
                )
            )
            answers[-1]["fetched_at"] = None if record is None else _iso(record.fetched_at)
            answers[-1]["at"] = _iso(when)
            if policy.purposes:
                answers[-1]["note"] = tdmrep_note(answers[-1])
            if record is not None:
                answers[-1]["expires_at"] = _iso(record.expires_at)
                answers[-1]["within_lifetime"] = bool(record.expires_at > when)
            answers[-1].update(extra or {})
            if opts.json:
                print(json.dumps(answers[-1], ensure_ascii=False), flush=True)
            else:
                print_answer(answers[-1], first=len(answers) == 1)
                if record is not None:
                    print(
                        f"stored:      fetched at {_iso(record.fetched_at)}, the newest "
                        f"copy at {_iso(when)} ({store.uri}); "
                        f"{lifetime_at(record, when)}"
                    )
    finally:
        close_quietly(store)
    return EXIT_ERROR if missing else exit_code(answers)


# -- --lint ----------------------------------------------------------------------


#: versions ``history`` lists at most
HISTORY_LIMIT = 1000


def _iso(unix: float) -> str:
    """A record's time as ``history`` and ``--at`` print it: to the millisecond
    (rounded up), so that it can be given back to ``--at``."""
    from ...sites._records import exact_iso_time

    return exact_iso_time(unix)


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
    from ...sites._records import ReaderLimits, answer_of

    answer = answer_of(record, body, record.site, ReaderLimits.of(settings))
    robots = None
    if answer.kind is Kind.PARSED:
        robots = RobotsTxt.parse(answer.body or b"", max_size=settings.max_size)
    return answer.outcome(robots, 0.0)


def stored_tdmrep(
    store: Any,
    site: str,
    when: float,
    settings: RobotsTxtSettings,
    until: float | None = None,
) -> TdmRepAnswer:
    """The site's tdmrep.json rules in force at ``when``, from the newest copy the
    store kept fetched by then, read as the crawl read the download (W3C TDMRep:
    a body read, else nothing stated), and what it came to. A copy the store
    distrusts (``sites._records.answer_of``: of another site, of an unknown
    kind, read without its body, dated after this clock) is not used: one
    WARNING; no copy: :data:`NOT_STORED`.

    With no copy fetched by ``when``, the first fetched after it while the
    robots.txt copy in force was (until ``until``) decides: the crawl fetches
    tdmrep.json once robots.txt is settled, and its requests wait for it, so
    none was decided in between."""
    import time

    from ...parser._tdmrep import TDMREP_PATH
    from ...sites._records import ReaderLimits, answer_of, stored_tdmrep_rules

    limits = ReaderLimits.of(settings)
    now = time.time()

    def read(found: tuple[Any, bytes | None] | None) -> tuple[Any, Any] | None:
        """A copy from the store and what it stands for to this reader."""
        return None if found is None else (found[0], answer_of(*found, site, limits, now=now))

    copy = read(store.tdmrep_at(site, when))
    stale = copy is not None and copy[1].usable_until <= when
    waited = ""
    if (copy is None or stale) and until is not None:
        later = [r.fetched_at for r in store.tdmrep_history(site) if when < r.fetched_at <= until]
        if later:  # none in force at TIME: the crawl's requests waited for the next
            copy, stale = read(store.tdmrep_at(site, min(later))), False
            waited = f"not yet fetched at {_iso(when)}, the crawl's requests waited for it: "
    if copy is None:
        return None, NOT_STORED
    record, answer = copy
    fetched = _iso(record.fetched_at)
    if answer.problem is not None:
        logger.warning(
            "robots.txt store %s: the tdmrep.json record of %s fetched at %s cannot be "
            "used (%s); ignored",
            store.uri,
            site,
            fetched,
            answer.problem,
        )
        return (
            None,
            f"the copy fetched at {fetched} cannot be used ({answer.problem}): {NOT_STORED}",
        )
    rules = stored_tdmrep_rules(answer)
    shown = f"{waited}stored copy fetched at {fetched} ({store.uri}): {record.detail}"
    if stale:  # a crawl at TIME would have fetched it again: none kept says what it found
        shown += f"; past its lifetime at {_iso(when)} (usable until {_iso(answer.usable_until)})"
    logger.debug("tdmrep.json of %s at %s: %s", site + TDMREP_PATH, _iso(when), shown)
    return rules, shown


def history_entry(record: Any, file: str = "robots.txt") -> dict[str, Any]:
    """One version of a robots.txt (or, ``file``, of a tdmrep.json: its URLs and
    statuses under ``tdmrep_json``) as ``history --json`` prints it."""
    chain = "tdmrep_json" if file == "tdmrep.json" else "robots_txt"
    return {
        "site": record.site,
        "file": file,
        "fetched_at": _iso(record.fetched_at),
        chain: [{"url": url, "status": status} for url, status in record.chain],
        "outcome": record.kind,
        "detail": record.detail,
        "size": record.size,
        "sha256": record.sha256,
        "lifetime": _lifetime_source(record),
        "expires_at": _iso(record.expires_at),
    }


def _lifetime_source(record: Any) -> str | None:
    """What set the record's lifetime, as ``history`` shows it in text and JSON alike:
    its own cache directive, else ``Retry-After`` or ``ROBOTSTXT_UNREACHABLE_TTL``
    for an unreachable site; ``None`` when nothing is recorded."""
    if record.lifetime:
        return str(record.lifetime)
    if record.retry_after:
        return "Retry-After"
    if record.kind == Kind.UNREACHABLE.value:
        return "ROBOTSTXT_UNREACHABLE_TTL"
    return None


def history_line(record: Any) -> str:
    """One version of a robots.txt as ``history`` prints it."""
    chain = " -> ".join(
        f"{url} ({'no response' if status is None else status})" for url, status in record.chain
    )
    digest = record.sha256[:12] if record.sha256 else "-" * 12
    seconds = max(0.0, record.expires_at - record.fetched_at)
    lifetime = _lifetime_source(record) or "-"
    return (
        f"{_iso(record.fetched_at)}  {record.kind:<11} {record.size:>7} bytes  {digest}  "
        f"{chain or '-'}  ({record.detail}; kept {round(seconds):d} s: "
        f"{lifetime})"
    )


def close_quietly(store: Any) -> None:
    from ...sites._store import StoreError

    try:
        store.close()
    except StoreError as error:
        logger.warning("closing the robots.txt store: %s", error)
