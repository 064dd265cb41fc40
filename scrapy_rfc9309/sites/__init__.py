"""The site table: what each site's robots.txt said, and for how long.

Pure, no Scrapy, the clock passed in: a site key (scheme, host, port; RFC 9309
2.3), the outcome of its robots.txt fetch (RFC 9309 2.3.1.1-2.3.1.4), its
lifetime (RFC 9309 2.4 and HTTP caching), and a table that runs one fetch per
site at a time and keeps outcomes until they expire.
"""

from __future__ import annotations

from ._lifetime import Lifetime, cache_lifetime, headers_lifetime
from ._outcome import DISALLOW_ALL, Decision, Kind, SiteOutcome, kind_of_status
from ._site import robots_url, site_of
from ._sitetable import SiteState, SiteTable

__all__ = [
    "DISALLOW_ALL",
    "Decision",
    "Kind",
    "Lifetime",
    "SiteOutcome",
    "SiteState",
    "SiteTable",
    "cache_lifetime",
    "headers_lifetime",
    "kind_of_status",
    "robots_url",
    "site_of",
]
