"""Project settings. Every setting of this project's components is listed here with
its default; README.md documents them. Override any with ``-s NAME=value``."""

from pathlib import Path

BOT_NAME = "crawler"
SPIDER_MODULES = ["crawler.spiders"]
NEWSPIDER_MODULE = "crawler.spiders"
COMMANDS_MODULE = "crawler.commands"
ADDONS = {
    # off unless PLAYWRIGHT_ENABLED: then it sets the download handlers, the browser's
    # launch options and RenderMiddleware (580)
    "crawler.addons.playwright.PlaywrightAddon": 0,
}

USER_AGENT = "incremental-docs-crawler/0.1 (+https://docs.scrapy.org)"
ROBOTSTXT_OBEY = True
CONCURRENT_REQUESTS_PER_DOMAIN = 4
DOWNLOAD_DELAY = 0.25
# AutoThrottle is available: -s AUTOTHROTTLE_ENABLED=True adapts the delay to the server.
AUTOTHROTTLE_ENABLED = False
AUTOTHROTTLE_TARGET_CONCURRENCY = 2.0
FEED_EXPORT_ENCODING = "utf-8"
LOG_LEVEL = "INFO"

# Nothing listens on a port: no telnet console, no remote control (Scrapy 2.19).
TELNETCONSOLE_ENABLED = False
REMOTE_CONTROL_ENABLED = False
EXTENSIONS = {
    "scrapy.extensions.telnet.TelnetConsole": None,
    "scrapy.extensions.remote_control.RemoteControl": None,
    "crawler.extensions.extraction.ExtractionStage": 500,
    "crawler.extensions.boilerplate.DomainBoilerplate": 510,
}
DOWNLOADER_MIDDLEWARES = {
    # near the downloader, like HttpCacheMiddleware (900): it sees raw (compressed)
    # responses, its replayed pages go through decompression and redirects, and
    # below DownloaderStats (850) so that 304s are counted as 304s
    "crawler.middlewares.dedup.DedupMiddleware": 840,
}
ITEM_PIPELINES = {
    "crawler.pipelines.content_hash.ContentHashPipeline": 300,
}

# -- the extracted-docs cache ---------------------------------------------------
EXTRACTED_DOCS_DIR = str(Path(__file__).resolve().parent.parent / "extracted-docs")
EXTRACTED_DOCS_STORE = "crawler.cache.sqlite.SqliteDocStore"
EXTRACTED_DOCS_COMMIT_EVERY = 200  # index writes between commits (also every 5 s)

# -- DedupMiddleware ------------------------------------------------------------
DEDUP_ENABLED = True  # False: no conditional requests, no skipping, every page extracted
DEDUP_FORCE = False  # True: re-extract every page (downloads stay conditional)
DEDUP_RECHECK_AFTER = 0  # seconds; a page checked more recently is served from the cache
DEDUP_MAX_STORED_BYTES = 10 * 1024 * 1024  # larger bodies are not kept for replay
DEDUP_MAX_AGE = 0  # days; re-extract unchanged pages whose extraction is older (0: never)

# -- ContentHashPipeline --------------------------------------------------------
CONTENT_HASH_FIELDS = ["title", "content"]  # item fields that define content
CONTENT_HASH_URL_FIELD = "url"
CONTENT_HASH_CONTENT_FIELD = "content"  # the text the extractor reads, if a string

# -- ExtractionStage ------------------------------------------------------------
EXTRACTOR = "crawler.extractors.outline.OutlineExtractor"
EXTRACTOR_CONCURRENCY = 4
EXTRACTOR_TIMEOUT = 120.0  # seconds per call

# -- DomainBoilerplate ------------------------------------------------------------
BOILERPLATE_ENABLED = True  # False: the extractor reads each page's content as it is
BOILERPLATE_THRESHOLD_PCT = 0.7  # a block on >= 70% of a domain's pages is boilerplate...
BOILERPLATE_MIN_PAGES = 5  # ...and on at least 5 pages; smaller domains are left alone
BOILERPLATE_MIN_BLOCK_CHARS = 50  # shorter blocks (headings, short lines) never count
BOILERPLATE_LOOSE_MATCH = True  # blocks differing only in digits, dates, link targets match
BOILERPLATE_SECTIONS = True  # also per section (first path segment: /blog/, /docs/...)
BOILERPLATE_HYSTERESIS = 0.1  # boilerplate stays so until its share drops below 60%

# -- PlaywrightAddon and RenderMiddleware (JavaScript pages) ----------------------
PLAYWRIGHT_ENABLED = False  # True: pages in scope are rendered by the system Chromium
PLAYWRIGHT_LAUNCH_OPTIONS: dict[str, object] = {}  # executable_path found at Debian's paths unless given
RENDER_DOMAINS: list[str] = []  # render only pages of these hosts (and subdomains)...
RENDER_URL_PATTERNS: list[str] = []  # ...or whose URL matches one of these regexes; both empty: every page
RENDER_TRUST_RAW_HTML = True  # unchanged raw HTML (304 or same bytes): reuse the last rendering
RENDER_WAIT_UNTIL = "networkidle"  # when a rendering is taken: commit, domcontentloaded, load, networkidle
