"""The crawl's record (``ROBOTSTXT_RECORD_FILE``): each request decided, under which copy."""
