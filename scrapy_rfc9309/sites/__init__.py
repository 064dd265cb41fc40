"""The site table: what each site's robots.txt said, and for how long.

Pure, no Scrapy, the clock passed in: a site key (scheme, host, port; RFC 9309
2.3), the outcome of its robots.txt fetch (RFC 9309 2.3.1.1-2.3.1.4), its
lifetime (RFC 9309 2.4 and HTTP caching), and a table that runs one fetch per
site at a time and keeps outcomes until they expire; the store interface
that keeps them across runs and processes, with an archive, and its SQLite
backend (blocking calls: the Scrapy glue makes them off the reactor).
"""

from __future__ import annotations

from ._lifetime import Lifetime, cache_lifetime, headers_lifetime
from ._outcome import DISALLOW_ALL, Decision, Kind, SiteOutcome, kind_of_status
from ._site import robots_url, site_of
from ._sitetable import SiteState, SiteTable
from ._store import FetchRecord, RobotsStore, StoreError
from ._store_uri import open_store

__all__ = [
    "DISALLOW_ALL",
    "Decision",
    "FetchRecord",
    "Kind",
    "Lifetime",
    "RobotsStore",
    "SiteOutcome",
    "SiteState",
    "SiteTable",
    "StoreError",
    "cache_lifetime",
    "headers_lifetime",
    "kind_of_status",
    "open_store",
    "robots_url",
    "site_of",
]
