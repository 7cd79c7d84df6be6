"""``scrapy crawl``, with a plain message instead of a traceback when a crawl cannot start.

Scrapy's own command, unchanged but for one thing: a crawl refused at start (the cache
is locked by another crawl, a cache file is unreadable, a setting or a spider argument
is wrong, the spider's name is unknown, the browser that PLAYWRIGHT_ENABLED needs is
missing) logs one clear line and exits with status 1, touching nothing. A crawl whose cache writes failed (a
damaged file, a full disk) stops and exits with status 1 too. A robots.txt that could not
be downloaded is one line, not a traceback (at LOG_LEVEL=DEBUG, both). The crawl runs in
:mod:`crawler.crawlcli`, imported then: Scrapy imports every command at start.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy.commands.crawl import Command as ScrapyCrawlCommand

if TYPE_CHECKING:
    import argparse

logger = logging.getLogger(__name__)


class Command(ScrapyCrawlCommand):
    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if len(args) != 1:
            super().run(args, opts)  # Scrapy's usage errors
            return
        from crawler.config import scrapy_setting_error
        from crawler.crawlcli import quiet_start_up, run_crawler

        assert self.crawler_process
        assert self.settings is not None
        quiet_start_up(self.settings.get("LOG_LEVEL", "DEBUG"))
        spiders = sorted(self.crawler_process.spider_loader.list())
        if args[0] not in spiders:  # Scrapy's KeyError is a traceback
            logger.error(
                "Crawl not started: no spider named %(name)r (this project's: %(spiders)s)",
                {"name": args[0], "spiders": ", ".join(spiders) or "none"},
            )
            self.exitcode = 1
            return
        if (wrong := scrapy_setting_error(self.settings)) is not None:  # else Python's message alone
            logger.error("Crawl not started: %(error)s", {"error": wrong})
            self.exitcode = 1
            return
        crawler = self._create_crawler(args[0])
        self.exitcode = run_crawler(self.crawler_process, crawler, "Crawl", **opts.spargs)
