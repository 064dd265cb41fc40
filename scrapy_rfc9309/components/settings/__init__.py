"""The settings of scrapy-rfc9309, read and checked in one place, once, at start-up.

Each module reads one part: the crawl's robots.txt settings (``_settings``),
kept per crawler with their warnings logged once (``_crawler_settings``), the
product tokens and declared purposes (``_agent_settings``), one value
(``_setting_values``), the store's and the cluster's
(``_store_settings``), what other components' settings mean for ours
(``_component_settings``), what the crawl tells (``_report_settings``), the
names of the settings (``_setting_names``), and starting a component
(``_start_up``). An invalid value stops the crawl at start-up naming the
setting.
"""
