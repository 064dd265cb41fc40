"""Whether a site's robots.txt lets the crawler fetch its tdmrep.json (RFC 9309
2.2.2: ``/.well-known/tdmrep.json`` is a URL of the site like any other).

The answer is read from the robots.txt copy the crawl keeps for the site, in
force or expired since (a request that copy released may still be decided by
it, and start the tdmrep.json fetch then). A tdmrep.json fetch may wait for
room (``ROBOTSTXT_CONCURRENT_DOWNLOADS``) between its launch, when the copy
is kept, and its start; meanwhile a small ``ROBOTSTXT_CACHE_MAX_SITES`` may
evict the copy. So the answer is also read at the launch, and used at the
start when no copy is kept any more (a copy kept then, perhaps a newer one,
is read again). Scrapy glue around the pure
:func:`~...sites._request_decision.tdmrep_refusal`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...sites._request_decision import tdmrep_refusal

if TYPE_CHECKING:
    from collections.abc import Callable

    from ...sites._outcome import SiteOutcome
    from ..settings._settings import RobotsTxtSettings

__all__ = ["TdmRepRobotsCheck"]


class TdmRepRobotsCheck:
    """The robots.txt check of each tdmrep.json fetch: read at its launch
    (:meth:`keep`) and at its start (:meth:`refusal`)."""

    def __init__(
        self, settings: RobotsTxtSettings, kept_copy: Callable[[str], SiteOutcome | None]
    ) -> None:
        """``kept_copy(site)``: the site's robots.txt copy, expired or not (``None``:
        none kept)."""
        self._settings = settings
        self._kept_copy = kept_copy
        #: site -> the answer read at its fetch's launch, until the fetch starts
        #: (the answer, not the copy: an evicted copy is not kept alive here)
        self._at_launch: dict[str, str | None] = {}

    def keep(self, site: str) -> None:
        """A tdmrep.json fetch of ``site`` is launched: the answer of its robots.txt
        copy now, for its start (:meth:`refusal`)."""
        outcome = self._kept_copy(site)
        if outcome is not None:
            self._at_launch[site] = self._refusal_of(outcome, site)

    def refusal(self, site: str) -> str | None:
        """The fetch of ``site``'s tdmrep.json starts: why its robots.txt disallows
        it to the crawler's token or a ``ROBOTSTXT_ALSO_OBEY`` token (``None``: it
        allows it), from the copy kept now, or else the answer read at the launch."""
        at_launch = self._at_launch.pop(site, None)
        outcome = self._kept_copy(site)
        return at_launch if outcome is None else self._refusal_of(outcome, site)

    def _refusal_of(self, outcome: SiteOutcome, site: str) -> str | None:
        token = self._settings.token_for(None)  # the User-Agent tdmrep.json is fetched with
        return tdmrep_refusal(outcome, site, token, self._settings.also_obey)
