"""Per-site files: the site service that owns each site's robots.txt and tdmrep.json.

One ``SiteService`` per crawler (``_service``): the site table, one fetch per
site, the download loop both files share, their readers, deferral of
unreachable sites, each site's Crawl-delay in force, requests set aside,
and each request's one decision.
"""
