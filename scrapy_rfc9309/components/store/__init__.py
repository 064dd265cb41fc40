"""The robots.txt store as one crawl uses it: look-ups, saves and leases off the reactor.

The store itself (SQLite, Redis) is ``scrapy_rfc9309.sites``'; this is the
crawl's side: a worker thread, batched look-ups, saves, and wake-ups when
another process settles a site.
"""
