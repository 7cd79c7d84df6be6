"""The defaults of every setting of this project, and their names: one table that
:func:`crawler.config.typed` falls back to when a setting is unset, for a crawl and a
command alike (the add-on writes none of them). docs/settings.md documents each; a
test checks that page against this table, and the names removed against REMOVED.

A leaf module, so that any layer (and every command, at start) reads a default without
importing the converter or the analyses whose parameters some defaults are: a test
checks those against the library's own (tests/test_addon_incremental.py)."""

from __future__ import annotations

from typing import Any

#: every setting of this project's components with its default
SETTINGS: dict[str, Any] = {
    # -- the extracted-docs cache
    "EXTRACTED_DOCS_DIR": "extracted-docs",  # relative to the current directory
    "EXTRACTED_DOCS_STORE": "crawler.cache.sqlite.SqliteDocStore",
    "EXTRACTED_DOCS_COMMIT_EVERY": 200,  # index writes between commits (also every 5 s)
    "EXTRACTED_DOCS_RECONNECT_SECONDS": 30.0,  # a server store's lost connection is tried again for this long
    # -- the shared frontier (scrapy-redis): N crawl processes of one run
    "FRONTIER_ENABLED": False,  # True: the scheduler and duplicate filter of the run, in Redis
    "FRONTIER_RUN": "",  # the run's id, the same for every process of the run (required when enabled)
    "FRONTIER_LEASE_SECONDS": 30.0,  # a process whose lease expired without finishing is dead
    # -- RevalidationMiddleware
    "REVALIDATION_ENABLED": True,  # False: no conditional requests, no skipping, no replay
    "REVALIDATION_MAX_STORED_BYTES": 10 * 1024 * 1024,  # larger bodies and renderings are not kept for replay
    # -- the revisit schedule (RevalidationMiddleware asks crawler.incremental.revisit)
    "REVISIT_ENABLED": False,  # True: known pages requested by their revisit schedule, not every run
    "REVISIT_MIN_INTERVAL": 1.0,  # days: the shortest wait before a page is checked again
    "REVISIT_MAX_STALENESS": 30.0,  # days: no page goes unchecked longer
    "REVISIT_SAMPLE": 0.02,  # the share of skipped pages requested anyway (the miss rate)
    "REVISIT_TRUST_EVIDENCE": 20,  # agreeing lastmods in a row before a host is trusted
    # -- the HTML to markdown converter (the docs spider)
    "MARKDOWN_LINKS": "text",  # "text": links as their text; "urls": [text](url)
    "MARKDOWN_SITE_STYLESHEETS": True,  # text hidden by the site's own linked stylesheets is left out
    # -- the docs spider's guard against crawl traps (0: no bound)
    "CRAWL_TRAP_MAX_QUERY_VARIANTS": 100,  # distinct query strings of one path followed
    "CRAWL_TRAP_MAX_PER_PATTERN": 1000,  # distinct URLs of one path pattern (numbers, dates as N) followed
    "CONVERTER_UPGRADE": "keep",  # pages that read differently only by a new converter: "keep" or "apply"
    # -- ContentHashPipeline
    "CONTENT_HASH_FIELDS": ["title", "content"],  # item fields that define content
    "CONTENT_HASH_CONTENT_FIELD": "content",  # the text the extractor reads, if a string
    # -- the processing after a crawl (ClosingStages, `scrapy process`), in order
    "PROCESSING_STAGES": [
        "crawler.stages.removal.RemovalStage",
        "crawler.stages.boilerplate.BoilerplateStage",
        "crawler.stages.extraction.ExtractionStage",
        "crawler.stages.vectors.VectorSyncStage",
        "crawler.stages.report.ReportStage",
    ],
    # what the stages hold of the pages at once (records and texts), in MB: a site larger than
    # that is read again a batch at a time each pass; the memory of the processing, not the site's
    "PROCESSING_MEMORY_MB": 48,
    # the most of a site's live pages one run may mark removed for not being reached (more: held)
    "REMOVAL_MAX_SHARE": 0.5,
    # -- what changed in a run, sent on once its report is written (ChangeFeeds, ChangesWebhook)
    "CHANGES_FEEDS": {},  # URI -> feed options, as FEEDS: the run's new, changed and removed pages
    "CHANGES_WEBHOOK_URL": "",  # empty: no webhook; else a POST of the run's summary and changes
    "CHANGES_WEBHOOK_TIMEOUT": 30.0,  # seconds for the POST, retries included: the crawl exits by then
    # -- the markdown export kept in step after each run (MarkdownExport)
    "MARKDOWN_EXPORT_DIR": "",  # empty: off; a folder of one markdown file per page (relative: to the current dir)
    # -- ExtractionStage
    "EXTRACTOR": "crawler.extractors.outline.OutlineExtractor",
    "EXTRACTOR_MAX_AGE": 0.0,  # days; re-extract unchanged pages whose extraction is older (0: never)
    "EXTRACTOR_CONCURRENCY": 4,
    "EXTRACTOR_TIMEOUT": 120.0,  # seconds per call (LLMExtractor: per attempt)
    "EXTRACTOR_INTERRUPT_WAIT": 30.0,  # seconds calls in flight may finish after SIGINT/SIGTERM
    # -- LLMExtractor
    "LLM_BASE_URL": "https://api.openai.com/v1",  # any OpenAI-compatible endpoint
    "LLM_MODEL": "gpt-4o-mini",
    "LLM_SYSTEM_PROMPT": None,  # None: crawler.extractors.llm.DEFAULT_SYSTEM_PROMPT
    "LLM_PROMPT": None,  # None: crawler.extractors.llm.DEFAULT_PROMPT
    "LLM_SCHEMA": None,  # None: crawler.extractors.llm.DEFAULT_SCHEMA; "off": free text
    "LLM_RESPONSE_FORMAT": "json_schema",  # or "json_object", "text"
    "LLM_TEMPERATURE": 0.0,
    "LLM_MAX_TOKENS": 2048,  # per answer
    "LLM_REQUESTS_PER_MIN": 0,  # 0: no limit
    "LLM_TOKENS_PER_MIN": 0,  # 0: no limit
    "LLM_MAX_RETRIES": 5,
    "LLM_PRICES": {},  # model -> [input, output] USD per million tokens
    # -- BoilerplateStage
    "BOILERPLATE_ENABLED": True,
    "BOILERPLATE_THRESHOLD_PCT": 0.7,
    "BOILERPLATE_MIN_PAGES": 5,
    # -- VectorSyncStage (off by default)
    "VECTOR_SYNC_ENABLED": False,
    "VECTOR_SYNC_CHUNK_SIZE": 1000,
    "VECTOR_SYNC_COLLECTION": "pages",
    "VECTOR_SYNC_STORE": "crawler.vectors.qdrant.QdrantVectorStore",
    "QDRANT_URL": "",  # empty: local mode in QDRANT_PATH
    "QDRANT_PATH": "",  # empty: EXTRACTED_DOCS_DIR/qdrant
    "QDRANT_TIMEOUT": 30,
    # -- embedders
    "EMBEDDER": "crawler.embedders.hashing.HashingEmbedder",
    "EMBEDDER_BATCH_SIZE": 64,
    "EMBEDDER_DIMENSIONS": 0,  # 0: the embedder's default
    "EMBEDDER_BASE_URL": "https://api.openai.com/v1",
    "EMBEDDER_MODEL": "text-embedding-3-small",
    "EMBEDDER_RATE_LIMIT_PER_MIN": 100,
    # -- RenderMiddleware (on with PLAYWRIGHT_ENABLED: PlaywrightAddon)
    "RENDER_DOMAINS": [],
    "RENDER_URL_PATTERNS": [],
    "RENDER_TRUST_RAW_HTML": True,  # unchanged raw HTML: reuse the last rendering
    "RENDER_WAIT_UNTIL": "networkidle",
    "RENDER_SCRIPT_DOMAINS": [],  # besides the page's host: whose failed scripts make a rendering untrusted
}


_REDO = "a one-run choice: scrapy crawl ... -a redo={step}"
_FIXED = "fixed at {value} (no one turned it)"
_BOILERPLATE_TRY = "fixed for crawls; scrapy boilerplate {option} shows what another value would do"
#: the settings this project no longer has, each with what replaces it: a settings file
#: or command line that still sets one is refused in one line (pre-1.0: no aliases)
REMOVED: dict[str, str] = {
    "EXTRACTED_DOCS_DSN_ENV": "the DSN is read from the environment variable EXTRACTED_DOCS_DSN",
    "FRONTIER_REDIS_URL_ENV": "the URL is read from the environment variable FRONTIER_REDIS_URL",
    "LLM_API_KEY_ENV": "the key is read from the environment variable LLM_API_KEY (or OPENAI_API_KEY for OpenAI)",
    "EMBEDDER_API_KEY_ENV": "the key is read from the environment variable EMBEDDER_API_KEY (or OPENAI_API_KEY)",
    "QDRANT_API_KEY_ENV": "the key is read from the environment variable QDRANT_API_KEY",
    "EXTRACTOR_FORCE": _REDO.format(step="extraction") + " (scrapy process --redo extraction)",
    "VECTOR_SYNC_FORCE": _REDO.format(step="vectors") + " (scrapy process --redo vectors)",
    "RENDER_FORCE": _REDO.format(step="render"),
    "REVISIT_VERIFY_ALL": _REDO.format(step="download"),
    "EXTRACTOR_DRY_RUN": "a one-run choice: scrapy crawl ... -a dry_run=true (scrapy process --dry-run)",
    "EXTRACTOR_PROGRESS_BAR": "the bar is drawn on a terminal while LOGSTATS_INTERVAL > 0",
    "EXTRACTOR_PROGRESS_INTERVAL": "the extraction phase's progress lines come every LOGSTATS_INTERVAL seconds"
    " (Scrapy's, of its stats lines; 0: none)",
    "RENDER_MAX_STORED_BYTES": "REVALIDATION_MAX_STORED_BYTES bounds stored renderings too",
    "CONTENT_HASH_URL_FIELD": "an item's URL is its field 'url'",
    "CHANGES_WEBHOOK_RETRIES": _FIXED.format(value=3),
    "LLM_RETRY_BASE_DELAY": _FIXED.format(value="1 s, doubled each retry, or the server's Retry-After"),
    "LLM_RETRY_MAX_DELAY": _FIXED.format(value="120 s"),
    "LLM_INVALID_RETRIES": _FIXED.format(value=1),
    "LLM_MAX_FAILED_PAGES": _FIXED.format(value=3),
    "EMBEDDER_MAX_RETRIES": _FIXED.format(value=5),
    "EMBEDDER_TIMEOUT": _FIXED.format(value="60 s"),
    "RENDER_SCRIPT_FAILED_RUNS": _FIXED.format(value=3),
    "RENDER_ASSET_CACHE_MAX_BYTES": _FIXED.format(value="32 MiB"),
    "BOILERPLATE_MIN_BLOCK_CHARS": _BOILERPLATE_TRY.format(option="--min-block-chars"),
    "BOILERPLATE_LOOSE_MATCH": _BOILERPLATE_TRY.format(option="--strict"),
    "BOILERPLATE_SECTIONS": _BOILERPLATE_TRY.format(option="--no-sections"),
    "BOILERPLATE_HYSTERESIS": _BOILERPLATE_TRY.format(option="--hysteresis"),
    "BOILERPLATE_POSITION": _BOILERPLATE_TRY.format(option="--no-position"),
}


#: the prefixes of this project's settings: a name with one of them that the project
#: does not define is a misspelling (PLAYWRIGHT_ is scrapy-playwright's, not checked)
PROJECT_PREFIXES = (
    "FRONTIER_",
    "REVALIDATION_",
    "REVISIT_",
    "DEDUP_",  # (the old names: a setting still named so is said to be unknown)
    "PROCESSING_",
    "EXTRACTED_DOCS_",
    "CONTENT_HASH_",
    "EXTRACTOR_",
    "LLM_",
    "BOILERPLATE_",
    "VECTOR_SYNC_",
    "QDRANT_",
    "EMBEDDER_",
    "RENDER_",
    "MARKDOWN_",
    "CONVERTER_",
    "CHANGES_",
    "CRAWL_TRAP_",
)

#: the prefixes of settings read by plugins that may be absent (their source is not
#: there to say their names): a name with one is never said to be unknown
OTHERS_PREFIXES = ("PLAYWRIGHT_", "REDIS_", "SCHEDULER_", "DUPEFILTER_")
