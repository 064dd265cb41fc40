"""THE usage decision: each source's preferences -> the ``Usage`` that applies, the refusal.

Pure, no Scrapy import. One function decides, for the crawl (the robots.txt
middleware's usage gate before download, the robots META middleware after
it) and for ``scrapy robotstxt --purpose`` alike, so that both always agree:

* :class:`UsageSources` holds what each source states for one URL: the
  robots.txt ``Content-Usage`` / ``Content-Signal`` lines of our groups, the
  site's ``/.well-known/tdmrep.json`` (TDMRep), and the page's own signals
  (``Content-Usage`` header, IETF AIPREF attach draft; ``tdm-reservation`` /
  ``tdm-policy`` headers and ``<meta name="tdm-reservation">`` /
  ``<meta name="tdm-policy">``, TDMRep);
* :func:`applicable_usage` is the ONE place where the sources are merged:
  the TDMRep sources in the report's order of precedence (tdmrep.json, then
  the headers, then the HTML meta, each stated value -- reservation and
  policy alike -- superseding the one before, an absent value resetting
  nothing; a policy goes with a reservation of 1 only), and that
  with the AIPREF sources (robots.txt ``Content-Usage`` / ``Content-Signal``,
  the ``Content-Usage`` header) per category the most restrictive, ``n``
  beating ``y`` (the AIPREF vocabulary's combination rule);
* :func:`decide_usage` gives the applicable usage and what refuses each of
  the declared purposes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, NamedTuple

from ._dots import resolved_url
from ._response_usage import (
    TDM_POLICY_SOURCES,
    response_usage,
    tdm_policy_value,
    unread_usage,
    with_tdm_policy,
)
from ._usage import NO_PREFERENCES, Preference, Usage

#: Page directives read as a refusal of ``train-ai`` with ``ROBOTS_META_NOAI``
#: (de-facto values some sites write; no specification defines them).
NOAI_DIRECTIVES = ("noai", "noimageai")
#: The sources of a response's usage signals (``read_usage_signals``).
_TDM_HEADER = "tdm-reservation header"
_TDM_META = "<meta"
_POLICY_HEADER, _POLICY_META = "tdm-policy header", '<meta name="tdm-policy">'

if TYPE_CHECKING:
    from ._tdmrep import TdmRep
    from ._verdicts import Verdicts

__all__ = [
    "NOAI_DIRECTIVES",
    "UsageDecision",
    "UsageSources",
    "applicable_usage",
    "decide_usage",
    "site_sources",
    "superseded",
    "tdm_usage_of",
    "usage_as_served",
]


class UsageSources(NamedTuple):
    """What each source states for one URL (``NO_PREFERENCES``: nothing, or not read)."""

    robots_txt: Usage = NO_PREFERENCES
    tdmrep: Usage = NO_PREFERENCES
    #: the response's ``Content-Usage`` header (AIPREF) and ``Content-Signal`` header
    #: (Content Signals Policy); known only after download
    header: Usage = NO_PREFERENCES
    #: the response's ``tdm-reservation`` header (TDMRep)
    tdm_header: Usage = NO_PREFERENCES
    #: the response's ``<meta name="tdm-reservation">`` (TDMRep)
    tdm_meta: Usage = NO_PREFERENCES
    #: ``noai`` / ``noimageai`` page directives, with ``ROBOTS_META_NOAI`` (not standard)
    noai: Usage = NO_PREFERENCES
    #: the response's ``tdm-policy`` header (TDMRep; ``None``: none stated)
    tdm_header_policy: str | None = None
    #: the response's ``<meta name="tdm-policy">`` (TDMRep; ``None``: none stated)
    tdm_meta_policy: str | None = None
    #: refusals assumed for the response's usage headers read only in part
    #: (a reading limit met: fail closed, :func:`~._response_usage.unread_usage`)
    unread: Usage = NO_PREFERENCES

    def with_page(
        self,
        signals: Iterable[tuple[str, str]],
        truncated: Mapping[str, Iterable[str]] | None = None,
    ) -> UsageSources:
        """These sources with the response's signals (``read_usage_signals``), each
        kept apart: TDMRep gives them an order of precedence. ``truncated``: the
        usage headers that met a reading limit (``read_usage_signals``), each
        read as refusing what it can state (:func:`~._response_usage.unread_usage`)."""
        header: list[tuple[str, str]] = []
        tdm_header: list[tuple[str, str]] = []
        tdm_meta: list[tuple[str, str]] = []
        policies: dict[str, str] = {}
        for source, value in signals:
            if source in TDM_POLICY_SOURCES:
                policy = tdm_policy_value(value)
                if policy is not None:  # the first stated of each source
                    policies.setdefault(source, policy)
            if source.startswith(_TDM_HEADER) or source == _POLICY_HEADER:
                tdm_header.append((source, value))
            elif source.startswith(_TDM_META):
                tdm_meta.append((source, value))
            else:
                header.append((source, value))
        return self._replace(
            header=response_usage(header),
            tdm_header=response_usage(tdm_header),
            tdm_meta=response_usage(tdm_meta),
            tdm_header_policy=policies.get(_POLICY_HEADER),
            tdm_meta_policy=policies.get(_POLICY_META),
            unread=unread_usage(truncated or {}),
        )

    def with_noai(self, sources: Mapping[str, Iterable[str]]) -> UsageSources:
        """These sources with the page's ``noai`` / ``noimageai`` directives
        (``PageDirectives.sources``: directive -> where it came from) read as a
        refusal of ``train-ai`` (``ROBOTS_META_NOAI``; de facto, not standard)."""
        for directive in NOAI_DIRECTIVES:
            where = list(sources.get(directive, ()))
            if where:
                refusal = Preference("train-ai", False, where[0], None, directive)
                return self._replace(noai=Usage({"train-ai": refusal}))
        return self

    @property
    def page(self) -> Usage:
        """What the response itself states (header and meta), merged as
        :func:`applicable_usage` merges them."""
        return _page_usage(self)


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
    (``None``: not read, or not needed for the declared purposes), each read
    for the path as sent and as served (:func:`usage_as_served`)."""
    resolved = resolved_url(url)
    return UsageSources(
        robots_txt=(
            NO_PREFERENCES
            if robots is None
            else usage_as_served(lambda at: robots.usage(url=at, agent=token), url, resolved)
        ),
        tdmrep=(NO_PREFERENCES if tdmrep is None else usage_as_served(tdmrep.usage, url, resolved)),
    )


def usage_as_served(usage_of: Callable[[str], Usage], url: str, resolved: str | None) -> Usage:
    """``usage_of(url)``, a source's preferences for ``url``; ``resolved``:
    :func:`~._dots.resolved_url` of ``url``.

    LENIENT(dot-segments): a path the server resolves to another
    (``/x/../ai/a`` is served as ``/ai/a``) takes the source's preferences for
    both paths, per category the most restrictive, as a ``Disallow`` matches
    both: a ``Content-Usage: /ai/ train-ai=n`` line or a tdmrep.json
    ``/ai/*`` reservation cannot be got past with dot segments."""
    usage = usage_of(url)
    return usage if resolved is None else usage.merged(usage_of(resolved))


def superseded(base: Usage, over: Usage) -> Usage:
    """``base`` with each category ``over`` states replaced by ``over``'s value;
    a category ``over`` does not state keeps ``base``'s (an absent value never
    resets one)."""
    if not over.preferences:
        return base
    if not base.preferences:
        return over
    return Usage({**base.preferences, **over.preferences})


def tdm_usage_of(sources: UsageSources) -> Usage:
    """The TDMRep preference, as the TDMRep final community group report orders
    its techniques: the header supersedes tdmrep.json, the HTML metadata
    supersedes both, and "at every step, the absence of a property MUST not
    reset current values".

    ``tdm-reservation`` and ``tdm-policy`` are two properties, each superseded
    on its own ("The values of `tdm-reservation` and `tdm-policy` found in this
    header supercede any value inferred from a TDM file"; the meta's
    "supercede previous values"): the policy that applies is the meta's, else
    the header's, else the matching tdmrep.json rule's. It goes with a
    reservation of 1 only ("TDM rights are reserved. If a TDM Policy is set,
    TDM Agents MAY use it"; with 0, "TDM Agents SHOULD NOT process
    `tdm-policy`").
    """
    usage = superseded(superseded(sources.tdmrep, sources.tdm_header), sources.tdm_meta)
    policy = sources.tdm_meta_policy or sources.tdm_header_policy or _stated_policy(sources.tdmrep)
    return with_tdm_policy(usage, policy)


def _page_usage(sources: UsageSources) -> Usage:
    page_tdm = with_tdm_policy(
        superseded(sources.tdm_header, sources.tdm_meta),
        sources.tdm_meta_policy or sources.tdm_header_policy,
    )
    return sources.header.merged(page_tdm).merged(sources.noai).merged(sources.unread)


def _stated_policy(usage: Usage) -> str | None:
    """The policy a reservation of 1 in ``usage`` carries (tdmrep.json's rule)."""
    return next((p.policy for p in usage.preferences.values() if p.policy and not p.allowed), None)


def applicable_usage(sources: UsageSources) -> Usage:
    """The preferences that apply, merged from every source.

    * TDMRep (tdmrep.json, ``tdm-reservation`` header, meta): each stated value
      supersedes the one before it, an absent one resets nothing
      (:func:`tdm_usage_of`, the report's processing order);
    * AIPREF (robots.txt ``Content-Usage`` / ``Content-Signal`` lines, the
      ``Content-Usage`` header) and the TDMRep result: per category the most
      restrictive wins (:meth:`Usage.merged`; the AIPREF vocabulary combines
      preferences so that a refusal beats a permission, and the attach draft
      orders none of its attachments above another);
    * ``noai`` / ``noimageai`` (``ROBOTS_META_NOAI``) add a refusal of ``train-ai``;
    * a usage header read only in part refuses what it can state (fail closed:
      a refusal past the limit is never read as a permission).
    """
    aipref = sources.robots_txt.merged(sources.header)
    return aipref.merged(tdm_usage_of(sources)).merged(sources.noai).merged(sources.unread)


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
