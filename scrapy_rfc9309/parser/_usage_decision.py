"""THE usage decision: each source's preferences -> the ``Usage`` that applies, the refusal.

Pure, no Scrapy import. One function decides, for the crawl (the robots.txt
middleware's usage gate before download, the robots META middleware after
it) and for ``scrapy robotstxt --purpose`` alike, so that both always agree:

* :class:`UsageSources` holds what each source states for one URL: the
  robots.txt ``Content-Usage`` / ``Content-Signal`` lines of our groups, the
  site's ``/.well-known/tdmrep.json`` (TDMRep), and the page's own signals
  (``Content-Usage`` header, IETF AIPREF attach draft; ``tdm-reservation``
  header and ``<meta name="tdm-reservation">``, TDMRep);
* :func:`applicable_usage` is the ONE place where the sources are merged
  (today: per category the most restrictive, ``n`` beats ``y``, whatever the
  source); a change of precedence between sources is an edit there;
* :func:`decide_usage` gives the applicable usage and what refuses each of
  the declared purposes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, NamedTuple

from ._usage import NO_PREFERENCES, Preference, Usage, response_usage

if TYPE_CHECKING:
    from ._robotstxt import Verdicts
    from ._tdmrep import TdmRep

__all__ = ["UsageDecision", "UsageSources", "applicable_usage", "decide_usage", "site_sources"]


class UsageSources(NamedTuple):
    """What each source states for one URL (``NO_PREFERENCES``: nothing, or not read)."""

    robots_txt: Usage = NO_PREFERENCES
    tdmrep: Usage = NO_PREFERENCES
    #: the response's own header and meta signals (known only after download)
    page: Usage = NO_PREFERENCES

    def with_page(self, signals: Iterable[tuple[str, str]]) -> UsageSources:
        """These sources with the response's signals (``read_usage_signals``)."""
        return self._replace(page=response_usage(signals))


class UsageDecision(NamedTuple):
    """The usage that applies, the first refusal of a declared purpose, and each one."""

    usage: Usage
    #: the preference that refuses the first refused purpose, else ``None``
    refusal: Preference | None
    #: each refused purpose, with the preference that refuses it (declaration order)
    refusals: dict[str, Preference]


def site_sources(
    robots: Verdicts | None, url: str, token: str, tdmrep: TdmRep | None = None
) -> UsageSources:
    """The site-wide sources of ``url`` for ``token``: robots.txt and tdmrep.json
    (``None``: not read, or not needed for the declared purposes)."""
    return UsageSources(
        robots_txt=NO_PREFERENCES if robots is None else robots.usage(url=url, agent=token),
        tdmrep=NO_PREFERENCES if tdmrep is None else tdmrep.usage(url),
    )


def applicable_usage(sources: UsageSources) -> Usage:
    """The preferences that apply, merged from every source.

    Today the sources are equal: per category the most restrictive wins
    (:meth:`Usage.merged`). Precedence between sources (e.g. TDMRep: a
    header supersedes the file, a meta supersedes the header) belongs here.
    """
    return sources.robots_txt.merged(sources.tdmrep).merged(sources.page)


def decide_usage(sources: UsageSources, purposes: Iterable[str]) -> UsageDecision:
    """The applicable usage for ``sources`` and what refuses the declared ``purposes``."""
    usage = applicable_usage(sources)
    refusals = {
        purpose: refused
        for purpose in dict.fromkeys(purposes)
        if (refused := usage.refusal((purpose,))) is not None
    }
    first = next(iter(refusals.values()), None)
    return UsageDecision(usage, first, refusals)
