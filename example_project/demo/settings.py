"""Settings of the demo project: scrapy-rfc9309 enabled with its add-on, and the
crawler identified as robots should be (HTTP: The Definitive Guide ch. 9)."""

BOT_NAME = "demo"
SPIDER_MODULES = ["demo.spiders"]

# One line enables RFC 9309 robots.txt handling (and turns Scrapy's own off).
ADDONS = {"scrapy_rfc9309.Addon": 100}

# Identify the crawler: a product token of its own and a URL where site owners
# learn what it does and how to reach its operator; an e-mail in From too.
# Under Scrapy's default User-Agent, every Scrapy crawler looks the same.
USER_AGENT = "DemoBot/1.0 (+https://example.com/demobot)"
DEFAULT_REQUEST_HEADERS = {
    "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
    "Accept-Language": "en",
    "From": "crawler-operator@example.com",
}
# The product token robots.txt groups are matched against (RFC 9309 2.2.1).
# Without it, it is derived from USER_AGENT ("DemoBot" here as well).
ROBOTSTXT_USER_AGENT = "DemoBot"

# Honour Crawl-delay (not in RFC 9309, but widely used), at most 2 s.
ROBOTSTXT_CRAWL_DELAY = True
ROBOTSTXT_CRAWL_DELAY_MAX = 2

# The close summary lists the 5 rules that dropped the most requests;
# ROBOTSTXT_REPORT_FILE = "robots-report.json" would also write one JSON
# record per site at close (run_demo.py sets it on the command line).
ROBOTSTXT_SUMMARY_TOP_RULES = 5

CONCURRENT_REQUESTS = 8
TELNETCONSOLE_ENABLED = False
LOG_LEVEL = "DEBUG"  # the middleware says why each request was dropped at DEBUG
