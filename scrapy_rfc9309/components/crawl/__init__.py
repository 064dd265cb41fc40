"""The crawl path: the scheduler queues where requests wait, and the middleware that decides.

Requests of a site whose robots.txt is not settled wait in the queue (ours, or
Redis with scrapy-redis); the downloader middleware applies each request's
decision, and answers a SitemapSpider's robots.txt request from the copy
in force.
"""
