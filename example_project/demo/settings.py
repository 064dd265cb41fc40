"""Settings of the demo project: scrapy-rfc9309 enabled with its add-on."""

BOT_NAME = "demo"
SPIDER_MODULES = ["demo.spiders"]

# One line enables RFC 9309 robots.txt handling (and turns Scrapy's own off).
ADDONS = {"scrapy_rfc9309.Addon": 100}

# The User-Agent names the crawler; its product token "DemoBot" is what
# robots.txt groups are matched against (or set ROBOTSTXT_USER_AGENT).
USER_AGENT = "Mozilla/5.0 (compatible; DemoBot/1.0; +http://127.0.0.1/bot.html)"

# Honour Crawl-delay (not in RFC 9309, but widely used), at most 2 s.
ROBOTSTXT_CRAWL_DELAY = True
ROBOTSTXT_CRAWL_DELAY_MAX = 2

CONCURRENT_REQUESTS = 8
TELNETCONSOLE_ENABLED = False
LOG_LEVEL = "INFO"
