"""Scrapy add-on: incremental recrawls for any Scrapy project, in one line.

``ADDONS = {"crawler.addons.IncrementalAddon": 100}`` installs the components and
the defaults of every setting of this project (:data:`SETTINGS`, the one place a
default is stated; docs/settings.md documents them).
"""

from __future__ import annotations

import copy
import warnings
from typing import TYPE_CHECKING, Any

from scrapy.settings import get_settings_priority
from scrapy.utils.misc import load_object

from crawler.config import DeprecatedSettingWarning
from crawler.lib.boilerplate import Params
from crawler.lib.chunking import DEFAULT_TARGET
from crawler.lib.markdown import DEFAULT_LINKS

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

#: every setting of this project's components with its default, set at the add-on's
#: priority: a project's, a spider's or the command line's value always wins.
#: Components and commands read them through :func:`crawler.config.typed`, which falls
#: back to these when a setting is unset (a command runs without the add-on). The
#: parameters of the library functions (the boilerplate analysis, the chunker, the
#: converter's links) are theirs, named here, not restated.
_BOILERPLATE = Params()
SETTINGS: dict[str, Any] = {
    # -- the extracted-docs cache
    "EXTRACTED_DOCS_DIR": "extracted-docs",  # relative to the current directory
    "EXTRACTED_DOCS_STORE": "crawler.cache.sqlite.SqliteDocStore",
    "EXTRACTED_DOCS_COMMIT_EVERY": 200,  # index writes between commits (also every 5 s)
    # the environment variable holding a server store's DSN (never the DSN itself here)
    "EXTRACTED_DOCS_DSN_ENV": "EXTRACTED_DOCS_DSN",
    # -- the shared frontier (scrapy-redis): N crawl processes of one run
    "FRONTIER_ENABLED": False,  # True: the scheduler and duplicate filter of the run, in Redis
    "FRONTIER_REDIS_URL_ENV": "FRONTIER_REDIS_URL",  # the environment variable holding the Redis URL
    "FRONTIER_RUN": "",  # the run's id, the same for every process of the run (required when enabled)
    "FRONTIER_LEASE_SECONDS": 30.0,  # a process whose lease expired without finishing is dead
    # -- RevalidationMiddleware
    "REVALIDATION_ENABLED": True,  # False: no conditional requests, no skipping, no replay
    "REVALIDATION_RECHECK_AFTER": 0.0,  # seconds; a page checked more recently is served from the cache
    "REVALIDATION_MAX_STORED_BYTES": 10 * 1024 * 1024,  # larger bodies are not kept for replay
    # -- the HTML to markdown converter (the docs spider)
    "MARKDOWN_LINKS": DEFAULT_LINKS,  # "text": links as their text; "urls": [text](url)
    "MARKDOWN_SITE_STYLESHEETS": True,  # text hidden by the site's own linked stylesheets is left out
    "CONVERTER_UPGRADE": "keep",  # pages that read differently only by a new converter: "keep" or "apply"
    # -- ContentHashPipeline
    "CONTENT_HASH_FIELDS": ["title", "content"],  # item fields that define content
    "CONTENT_HASH_URL_FIELD": "url",
    "CONTENT_HASH_CONTENT_FIELD": "content",  # the text the extractor reads, if a string
    # -- the processing after a crawl (ClosingStages, `scrapy process`), in order
    "PROCESSING_STAGES": [
        "crawler.stages.removal.RemovalStage",
        "crawler.stages.boilerplate.BoilerplateStage",
        "crawler.stages.extraction.ExtractionStage",
        "crawler.stages.vectors.VectorSyncStage",
        "crawler.stages.report.ReportStage",
    ],
    # -- what changed in a run, sent on once its report is written (ChangeFeeds, ChangesWebhook)
    "CHANGES_FEEDS": {},  # URI -> feed options, as FEEDS: the run's new, changed and removed pages
    "CHANGES_WEBHOOK_URL": "",  # empty: no webhook; else a POST of the run's summary and changes
    "CHANGES_WEBHOOK_TIMEOUT": 30.0,  # seconds for the POST, retries included: the crawl exits by then
    "CHANGES_WEBHOOK_RETRIES": 3,  # retries after connection errors, timeouts, 5xx
    # -- ExtractionStage
    "EXTRACTOR": "crawler.extractors.outline.OutlineExtractor",
    "EXTRACTOR_FORCE": False,  # True: re-extract every page
    "EXTRACTOR_MAX_AGE": 0.0,  # days; re-extract unchanged pages whose extraction is older (0: never)
    "EXTRACTOR_CONCURRENCY": 4,
    "EXTRACTOR_TIMEOUT": 120.0,  # seconds per call (LLMExtractor: per attempt)
    "EXTRACTOR_DRY_RUN": False,  # True: count the pages and tokens a run would send; call nothing
    "EXTRACTOR_PROGRESS_INTERVAL": 30.0,  # seconds between progress lines (0: none)
    "EXTRACTOR_PROGRESS_BAR": True,  # a progress bar on stderr when it is a terminal
    "EXTRACTOR_INTERRUPT_WAIT": 30.0,  # seconds calls in flight may finish after SIGINT/SIGTERM
    # -- LLMExtractor
    "LLM_BASE_URL": "https://api.openai.com/v1",  # any OpenAI-compatible endpoint
    "LLM_MODEL": "gpt-4o-mini",
    "LLM_API_KEY_ENV": None,  # None: OPENAI_API_KEY, for OpenAI only
    "LLM_SYSTEM_PROMPT": None,  # None: crawler.extractors.llm.DEFAULT_SYSTEM_PROMPT
    "LLM_PROMPT": None,  # None: crawler.extractors.llm.DEFAULT_PROMPT
    "LLM_SCHEMA": None,  # None: crawler.extractors.llm.DEFAULT_SCHEMA; "off": free text
    "LLM_RESPONSE_FORMAT": "json_schema",  # or "json_object", "text"
    "LLM_TEMPERATURE": 0.0,
    "LLM_MAX_TOKENS": 2048,  # per answer
    "LLM_REQUESTS_PER_MIN": 0,  # 0: no limit
    "LLM_TOKENS_PER_MIN": 0,  # 0: no limit
    "LLM_MAX_RETRIES": 5,
    "LLM_RETRY_BASE_DELAY": 1.0,  # seconds, doubled each retry
    "LLM_RETRY_MAX_DELAY": 120.0,  # seconds
    "LLM_INVALID_RETRIES": 1,
    "LLM_PRICES": {},  # model -> [input, output] USD per million tokens
    # -- BoilerplateStage
    "BOILERPLATE_ENABLED": True,
    "BOILERPLATE_THRESHOLD_PCT": _BOILERPLATE.threshold_pct,
    "BOILERPLATE_MIN_PAGES": _BOILERPLATE.min_pages,
    "BOILERPLATE_MIN_BLOCK_CHARS": _BOILERPLATE.min_block_chars,
    "BOILERPLATE_LOOSE_MATCH": _BOILERPLATE.loose,
    "BOILERPLATE_SECTIONS": _BOILERPLATE.sections,
    "BOILERPLATE_HYSTERESIS": _BOILERPLATE.hysteresis,
    "BOILERPLATE_POSITION": _BOILERPLATE.position,
    # -- VectorSyncStage (off by default)
    "VECTOR_SYNC_ENABLED": False,
    "VECTOR_SYNC_FORCE": False,
    "VECTOR_SYNC_CHUNK_SIZE": DEFAULT_TARGET,
    "VECTOR_SYNC_COLLECTION": "pages",
    "VECTOR_SYNC_STORE": "crawler.vectors.qdrant.QdrantVectorStore",
    "QDRANT_URL": "",  # empty: local mode in QDRANT_PATH
    "QDRANT_PATH": "",  # empty: EXTRACTED_DOCS_DIR/qdrant
    "QDRANT_API_KEY_ENV": "QDRANT_API_KEY",
    "QDRANT_TIMEOUT": 30,
    # -- embedders
    "EMBEDDER": "crawler.embedders.hashing.HashingEmbedder",
    "EMBEDDER_BATCH_SIZE": 64,
    "EMBEDDER_DIMENSIONS": 0,  # 0: the embedder's default
    "EMBEDDER_BASE_URL": "https://api.openai.com/v1",
    "EMBEDDER_MODEL": "text-embedding-3-small",
    "EMBEDDER_API_KEY_ENV": None,  # None: OPENAI_API_KEY, for OpenAI only
    "EMBEDDER_RATE_LIMIT_PER_MIN": 100,
    "EMBEDDER_MAX_RETRIES": 5,
    "EMBEDDER_TIMEOUT": 60.0,
    # -- RenderMiddleware (on with PLAYWRIGHT_ENABLED: PlaywrightAddon)
    "RENDER_DOMAINS": [],
    "RENDER_URL_PATTERNS": [],
    "RENDER_TRUST_RAW_HTML": True,  # unchanged raw HTML: reuse the last rendering
    "RENDER_WAIT_UNTIL": "networkidle",
    "RENDER_FORCE": False,  # True: render every page in scope again
    "RENDER_MAX_STORED_BYTES": 10 * 1024 * 1024,  # larger renderings are not kept for replay
    "RENDER_SCRIPT_DOMAINS": [],  # besides the page's host: whose failed scripts make a rendering untrusted
}

#: settings renamed, old name -> the new names its value now goes to (accepted with a
#: warning for one release)
RENAMED: dict[str, tuple[str, ...]] = {
    "DEDUP_ENABLED": ("REVALIDATION_ENABLED",),
    "DEDUP_RECHECK_AFTER": ("REVALIDATION_RECHECK_AFTER",),
    "DEDUP_MAX_STORED_BYTES": ("REVALIDATION_MAX_STORED_BYTES", "RENDER_MAX_STORED_BYTES"),
    "DEDUP_FORCE": ("EXTRACTOR_FORCE", "RENDER_FORCE"),
    "DEDUP_MAX_AGE": ("EXTRACTOR_MAX_AGE",),
}
#: what a warning about an old name adds, when its meaning changed
RENAMED_NOTES = {
    "DEDUP_ENABLED": (
        "; False no longer re-extracts every page (the extraction cache keeps working): "
        "EXTRACTOR_FORCE=True does that, RENDER_FORCE=True renders every page again"
    ),
}

#: the components, at their fixed priorities
DOWNLOADER_MIDDLEWARES = {
    # near the downloader, like HttpCacheMiddleware (900): it sees raw (compressed)
    # responses, its replayed pages go through decompression and redirects, and
    # below DownloaderStats (850) so that 304s are counted as 304s
    "crawler.middlewares.revalidation.RevalidationMiddleware": 840,
}
ITEM_PIPELINES = {"crawler.pipelines.content_hash.ContentHashPipeline": 300}
#: the stages of PROCESSING_STAGES, in order, when the spider closes
EXTENSIONS = {
    "crawler.extensions.closing.ClosingStages": 500,
    # off until CHANGES_FEEDS, CHANGES_WEBHOOK_URL are set
    "crawler.extensions.changefeeds.ChangeFeeds": 510,
    "crawler.extensions.webhook.ChangesWebhook": 520,
}
#: Scrapy's duplicate filter, plus: a redirect dropped as a duplicate of a request that
#: never reached a page (a redirect loop) is a warning and makes the run partial
DUPEFILTER_CLASS = "crawler.dupefilters.RedirectAwareDupeFilter"
#: FRONTIER_ENABLED: the run's scheduler and duplicate filter, its start requests made
#: once per run, each process a worker of the run (lease, closing, outcome)
FRONTIER = {
    "SCHEDULER": "crawler.frontier.scheduler.FrontierScheduler",
    "DUPEFILTER_CLASS": "crawler.frontier.dupefilter.RunDupeFilter",
}
FRONTIER_SPIDER_MIDDLEWARES = {"crawler.frontier.start.StartOncePerRun": 50}
FRONTIER_EXTENSIONS = {"crawler.frontier.worker.FrontierWorker": 100}


def renamed_message(old: str) -> str:
    """What the warning about the old setting name ``old`` says."""
    return f"{old} is deprecated: use {' and '.join(RENAMED[old])}{RENAMED_NOTES.get(old, '')}"


def apply_renamed_settings(settings: BaseSettings) -> None:
    """Give each renamed setting the user set (above the add-on's priority) to its new
    names, unless a new name is set at an equal or higher priority, with a
    :class:`crawler.config.DeprecatedSettingWarning` naming the new setting. The add-on
    calls it, and the commands that run without a crawl (``scrapy cache``...)."""
    addon = get_settings_priority("addon")
    for old, new_names in RENAMED.items():
        priority = settings.getpriority(old)
        if priority is None or priority <= addon:
            continue
        value = settings[old]
        for new in new_names:
            current = settings.getpriority(new)
            if current is None or current < priority:
                settings.set(new, value, priority)
        warnings.warn(renamed_message(old), DeprecatedSettingWarning, stacklevel=2)


class IncrementalAddon:
    """Incremental recrawls: unchanged pages cost a 304 and no extractor call.

    ``ADDONS = {"crawler.addons.IncrementalAddon": 100}`` in a Scrapy project's
    settings installs :class:`~crawler.middlewares.revalidation.RevalidationMiddleware`
    (840), :class:`~crawler.pipelines.content_hash.ContentHashPipeline` (300),
    :class:`~crawler.extensions.closing.ClosingStages` (500) and, when the project
    keeps Scrapy's default, the ``DUPEFILTER_CLASS``
    :class:`~crawler.dupefilters.RedirectAwareDupeFilter`; and the defaults of
    :data:`SETTINGS`. With ``FRONTIER_ENABLED``, the shared frontier's scheduler,
    duplicate filter, start middleware and worker extension (:data:`FRONTIER`). It
    never overrides a setting or a component priority the user set. Old setting
    names (``DEDUP_*``) still work, with a warning naming the new one.
    """

    def update_settings(self, settings: BaseSettings) -> None:
        for name, value in SETTINGS.items():
            # a copy each time: a component that changes its setting's value must not
            # change the table
            settings.set(name, copy.deepcopy(value), priority="addon")
        apply_renamed_settings(settings)
        components = [
            ("DOWNLOADER_MIDDLEWARES", DOWNLOADER_MIDDLEWARES),
            ("ITEM_PIPELINES", ITEM_PIPELINES),
            ("EXTENSIONS", EXTENSIONS),
        ]
        if (settings.getpriority("DUPEFILTER_CLASS") or 0) <= get_settings_priority("default"):
            settings.set("DUPEFILTER_CLASS", DUPEFILTER_CLASS, priority="addon")
        if settings.getbool("FRONTIER_ENABLED"):
            for name, value in FRONTIER.items():  # (over the add-on's own DUPEFILTER_CLASS too)
                settings.set(name, value, priority="addon")
            components += [("SPIDER_MIDDLEWARES", FRONTIER_SPIDER_MIDDLEWARES), ("EXTENSIONS", FRONTIER_EXTENSIONS)]
        for setting, paths in components:
            for path, priority in paths.items():
                _setdefault(settings, setting, path, priority)


def _setdefault(settings: BaseSettings, setting: str, path: str, priority: int) -> None:
    """``path`` in the component dict ``setting`` at ``priority``, unless the user named
    it (or a subclass of it, such as the old ``DedupMiddleware``) there already, by path
    or class, with their own priority or None to disable it. (Scrapy's
    ``setdefault_in_component_priority_dict`` with subclasses.) The setting keeps its
    priority."""
    cls = load_object(path)
    components = settings.getdict(setting)
    for named in components:
        loaded = load_object(named) if isinstance(named, str) else named
        if isinstance(loaded, type) and issubclass(loaded, cls):
            return
    components[path] = priority
    settings.set(setting, components, settings.getpriority(setting) or 0)
