"""Project settings. Every setting of this project's components is listed here with
its default; README.md documents them. Override any with ``-s NAME=value``."""

from pathlib import Path

from crawler.stages import DEFAULT_STAGES

BOT_NAME = "crawler"
SPIDER_MODULES = ["crawler.spiders"]
NEWSPIDER_MODULE = "crawler.spiders"
COMMANDS_MODULE = "crawler.commands"
ADDONS = {
    # off unless PLAYWRIGHT_ENABLED: then it sets the download handlers, the browser's
    # launch options and RenderMiddleware (540)
    "crawler.addons.playwright.PlaywrightAddon": 0,
}

USER_AGENT = "incremental-docs-crawler/0.1 (+https://docs.scrapy.org)"
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
LOGSTATS_INTERVAL = 30.0  # seconds between progress lines while fetching (0: none)
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
    # the stages of PROCESSING_STAGES, in order, when the spider closes
    "crawler.extensions.closing.ClosingStages": 500,
}
DOWNLOADER_MIDDLEWARES = {
    # near the downloader, like HttpCacheMiddleware (900): it sees raw (compressed)
    # responses, its replayed pages go through decompression and redirects, and
    # below DownloaderStats (850) so that 304s are counted as 304s
    "crawler.middlewares.dedup.DedupMiddleware": 840,
}
# Scrapy's duplicate filter, plus: a redirect dropped as a duplicate of a request that
# never reached a page (a redirect loop) is a warning and makes the run partial
DUPEFILTER_CLASS = "crawler.dupefilters.RedirectAwareDupeFilter"
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
DEDUP_MAX_STORED_BYTES = 10 * 1024 * 1024  # larger bodies (and renderings) are not kept for replay
DEDUP_MAX_AGE = 0  # days; re-extract unchanged pages whose extraction is older (0: never)

# -- the HTML to markdown converter (crawler.lib.markdown) --------------------------
MARKDOWN_LINKS = "text"  # "text": links as their text, images as their alt text; "urls": [text](url)
# a new converter (or MARKDOWN_LINKS) changes the text of pages whose site did not:
# "keep" their stored text (counted and reported, not extracted again); "apply": store
# the new text, and extract those pages again
CONVERTER_UPGRADE = "keep"

# -- ContentHashPipeline --------------------------------------------------------
CONTENT_HASH_FIELDS = ["title", "content"]  # item fields that define content
CONTENT_HASH_URL_FIELD = "url"
CONTENT_HASH_CONTENT_FIELD = "content"  # the text the extractor reads, if a string

# -- the processing after a crawl (and `scrapy process`) ----------------------------
# in order; leave one out to turn it off (the vector sync also needs VECTOR_SYNC_ENABLED,
# the boilerplate analysis BOILERPLATE_ENABLED); the report stage writes the run report: last
PROCESSING_STAGES = list(DEFAULT_STAGES)  # removal, boilerplate, extraction, vectors, report

# -- ExtractionStage ------------------------------------------------------------
EXTRACTOR = "crawler.extractors.outline.OutlineExtractor"
EXTRACTOR_CONCURRENCY = 4
EXTRACTOR_TIMEOUT = 120.0  # seconds per call (LLMExtractor: per attempt)
EXTRACTOR_DRY_RUN = False  # True: count the pages and tokens a run would send; call nothing
EXTRACTOR_PROGRESS_INTERVAL = 30.0  # seconds between progress lines in the log (0: none)
EXTRACTOR_PROGRESS_BAR = True  # a progress bar on stderr when it is a terminal
EXTRACTOR_INTERRUPT_WAIT = 30.0  # seconds calls in flight may finish after SIGINT/SIGTERM (a 2nd: at once)

# -- LLMExtractor (EXTRACTOR = "crawler.extractors.llm.LLMExtractor") ------------
LLM_BASE_URL = "https://api.openai.com/v1"  # any OpenAI-compatible endpoint
LLM_MODEL = "gpt-4o-mini"
LLM_API_KEY_ENV = None  # the environment variable holding the key (None: OPENAI_API_KEY, for OpenAI only)
LLM_SYSTEM_PROMPT = None  # None: crawler.extractors.llm.DEFAULT_SYSTEM_PROMPT
LLM_PROMPT = None  # the user message; {url} and {content} replaced (None: "URL: {url}\n\n{content}")
LLM_SCHEMA = None  # JSON schema (dict, JSON text or file path); None: DEFAULT_SCHEMA; "off": free text
LLM_RESPONSE_FORMAT = "json_schema"  # or "json_object" (schema in the prompt), "text"
LLM_TEMPERATURE = 0.0
LLM_MAX_TOKENS = 2048  # per answer
LLM_REQUESTS_PER_MIN = 0  # 0: no limit
LLM_TOKENS_PER_MIN = 0  # prompt + max answer tokens per minute; 0: no limit
LLM_MAX_RETRIES = 5  # on 429, 5xx, timeouts and connection errors
LLM_RETRY_BASE_DELAY = 1.0  # seconds, doubled each retry (Retry-After wins when sent)
LLM_RETRY_MAX_DELAY = 120.0  # seconds, the longest wait between two attempts
LLM_INVALID_RETRIES = 1  # answers that are not JSON valid for the schema, asked again
LLM_PRICES: dict[str, list[float]] = {}  # model -> [input, output] USD per million tokens

# -- BoilerplateStage --------------------------------------------------------------
BOILERPLATE_ENABLED = True  # False: the extractor reads each page's content as it is
BOILERPLATE_THRESHOLD_PCT = 0.7  # a block on >= 70% of a domain's pages is boilerplate...
BOILERPLATE_MIN_PAGES = 5  # ...and on at least 5 pages; smaller domains are left alone
BOILERPLATE_MIN_BLOCK_CHARS = 50  # shorter blocks count only as chrome at a page's start or end
BOILERPLATE_LOOSE_MATCH = True  # blocks differing only in digits, dates, link targets match
BOILERPLATE_SECTIONS = True  # also per section (first path segment: /blog/, /docs/...)
BOILERPLATE_HYSTERESIS = 0.1  # boilerplate stays so down to 60%, content stays so up to 80%
BOILERPLATE_POSITION = True  # repeated blocks at a page's start or end are chrome, between its own text content

# -- VectorSyncStage (off by default) --------------------------------------------------
VECTOR_SYNC_ENABLED = False  # True: sync each page's chunks into the vector store after extraction
VECTOR_SYNC_FORCE = False  # True: re-embed every chunk of the crawled pages
VECTOR_SYNC_CHUNK_SIZE = 1000  # target chunk size in characters (a chunk is cut at 3x)
VECTOR_SYNC_COLLECTION = "pages"
VECTOR_SYNC_STORE = "crawler.vectors.qdrant.QdrantVectorStore"
QDRANT_URL = ""  # empty: local mode in QDRANT_PATH, no server
QDRANT_PATH = ""  # empty: EXTRACTED_DOCS_DIR/qdrant
QDRANT_API_KEY_ENV = "QDRANT_API_KEY"  # the environment variable holding the server's key
QDRANT_TIMEOUT = 30  # seconds per server request

# -- embedders ------------------------------------------------------------------
EMBEDDER = "crawler.embedders.hashing.HashingEmbedder"  # offline; or ...openai_compat.OpenAIEmbedder
EMBEDDER_BATCH_SIZE = 64  # texts per embedding request
EMBEDDER_DIMENSIONS = 0  # 0: the embedder's default (256 for feature hashing, the model's own)
EMBEDDER_BASE_URL = "https://api.openai.com/v1"  # OpenAIEmbedder: any OpenAI-compatible endpoint
EMBEDDER_MODEL = "text-embedding-3-small"
EMBEDDER_API_KEY_ENV = None  # the environment variable holding the key (None: OPENAI_API_KEY, for OpenAI only)
EMBEDDER_RATE_LIMIT_PER_MIN = 100  # requests per minute (0: no limit)
EMBEDDER_MAX_RETRIES = 5  # 429, 5xx and connection errors, with exponential backoff
EMBEDDER_TIMEOUT = 60.0  # seconds per request

# -- PlaywrightAddon and RenderMiddleware (JavaScript pages) ----------------------
PLAYWRIGHT_ENABLED = False  # True: pages in scope are rendered by the system Chromium
PLAYWRIGHT_LAUNCH_OPTIONS: dict[str, object] = {}  # executable_path found at Debian's paths unless given
RENDER_DOMAINS: list[str] = []  # render only pages of these hosts (and subdomains)...
RENDER_URL_PATTERNS: list[str] = []  # ...or whose URL matches one of these regexes; both empty: every page
RENDER_TRUST_RAW_HTML = True  # unchanged raw HTML (304 or same bytes): reuse the last rendering
RENDER_WAIT_UNTIL = "networkidle"  # when a rendering is taken: commit, domcontentloaded, load, networkidle
