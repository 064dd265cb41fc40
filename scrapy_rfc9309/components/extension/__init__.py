"""The extension: Crawl-delay per site, the close summary and the JSON report."""
