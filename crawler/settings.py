"""This project's Scrapy settings. The components' own settings fall back to their
defaults (crawler.defaults.SETTINGS, documented in docs/settings.md); override any
with ``-s NAME=value``."""

from pathlib import Path

from crawler import __version__

BOT_NAME = "crawler"
SPIDER_MODULES = ["crawler.spiders"]
NEWSPIDER_MODULE = "crawler.spiders"
# crawl (with plain start-up errors) and the package's commands, also when it is not installed
COMMANDS_MODULE = "crawler.commands"
ADDONS = {
    # RevalidationMiddleware (840), ContentHashPipeline (300), CacheOwner (400: opens and
    # closes the cache), ClosingStages (500), the RedirectAwareDupeFilter and CONCURRENT_ITEMS 8
    "crawler.addons.IncrementalAddon": 100,
    # off unless PLAYWRIGHT_ENABLED: then it sets the download handlers, the browser's
    # launch options and RenderMiddleware (540)
    "crawler.addons.playwright.PlaywrightAddon": 0,
}

USER_AGENT = f"incremental-docs-crawler/{__version__} (+https://docs.scrapy.org)"
ROBOTSTXT_OBEY = True
CONCURRENT_REQUESTS_PER_DOMAIN = 4
DOWNLOAD_DELAY = 0.25
# AutoThrottle is available: -s AUTOTHROTTLE_ENABLED=True adapts the delay to the server.
AUTOTHROTTLE_ENABLED = False
AUTOTHROTTLE_TARGET_CONCURRENCY = 2.0
# Scrapy's 1 GiB DOWNLOAD_MAXSIZE lets one endless response or gzip bomb take gigabytes
# of memory; no documentation page is near 32 MiB (the limit also caps the decompressed
# size; sitemaps, up to 50 MB by their protocol, get SITEMAP_MAX_BYTES per request)
DOWNLOAD_MAXSIZE = 32 * 1024 * 1024
DOWNLOAD_WARNSIZE = 8 * 1024 * 1024
# Scrapy's 180 s timeout made one unresponsive URL cost 9 minutes (3 attempts): 90 s now
DOWNLOAD_TIMEOUT = 30
RETRY_TIMES = 2  # retries after the first attempt (5xx, timeouts, lost connections)
FEED_EXPORT_ENCODING = "utf-8"
LOG_LEVEL = "INFO"
LOGSTATS_INTERVAL = 30.0  # seconds between progress lines while fetching and extracting (0: none)
LOG_VERSIONS: list[str] = []  # not at every start: `scrapy version -v` lists them

# Nothing listens on a port: no telnet console, no remote control (Scrapy 2.19).
TELNETCONSOLE_ENABLED = False
REMOTE_CONTROL_ENABLED = False
EXTENSIONS = {
    "scrapy.extensions.telnet.TelnetConsole": None,
    "scrapy.extensions.remote_control.RemoteControl": None,
    # progress with the requests known, rate and time left, instead of Scrapy's LogStats
    "scrapy.extensions.logstats.LogStats": None,
    "crawler.extensions.progress.CrawlProgress": 0,
}

# this repository's cache, wherever the crawl is started (the add-on's default is
# extracted-docs in the current directory)
EXTRACTED_DOCS_DIR = str(Path(__file__).resolve().parent.parent / "extracted-docs")

# JavaScript pages: -s PLAYWRIGHT_ENABLED=True (PlaywrightAddon; RENDER_* in docs/settings.md)
