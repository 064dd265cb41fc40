"""The ``scrapy robotstxt`` command: verdicts, page directives, lint and the store's reports.

Its answers come from the crawl's own decision (``sites._request_decision``)
with the project's policy.
"""
