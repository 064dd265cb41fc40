"""Page-level directives: the spider middleware and the HTTP cache policy.

The robots META tag, ``X-Robots-Tag``, ``Robots-Tag`` and usage signals of each response,
applied to what the spider yields (nofollow, noindex, declared purposes),
and noarchive applied to Scrapy's HTTP cache.
"""
