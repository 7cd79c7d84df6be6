"""Scrapy add-on: incremental recrawls for any Scrapy project, in one line.

``ADDONS = {"crawler.addons.IncrementalAddon": 100}`` installs the components; it
writes no setting of this project: each component reads its settings through
:func:`crawler.config.typed`, whose defaults are stated once
(:data:`crawler.defaults.SETTINGS`; docs/settings.md documents them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.settings import get_settings_priority
from scrapy.utils.misc import load_object

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

#: the components, at their fixed priorities
DOWNLOADER_MIDDLEWARES = {
    # near the downloader, like HttpCacheMiddleware (900): it sees raw (compressed)
    # responses, its replayed pages go through decompression and redirects, and
    # below DownloaderStats (850) so that 304s are counted as 304s
    "crawler.middlewares.revalidation.RevalidationMiddleware": 840,
    # right after Scrapy's RobotsTxtMiddleware (100): robots.txt downloaded once per crawl process
    "crawler.middlewares.robots.RobotsTxtOnce": 101,
}
ITEM_PIPELINES = {"crawler.pipelines.content_hash.ContentHashPipeline": 300}
#: the stages of PROCESSING_STAGES, in order, when the spider closes
EXTENSIONS = {
    # the cache's one owner: opens it as the crawl starts (before the engine's
    # components), commits at spider_closed before ClosingStages, closes it at the end
    "crawler.extensions.cache.CacheOwner": 400,
    "crawler.extensions.closing.ClosingStages": 500,
    # off until CHANGES_FEEDS, CHANGES_WEBHOOK_URL, MARKDOWN_EXPORT_DIR are set
    "crawler.extensions.changefeeds.ChangeFeeds": 510,
    "crawler.extensions.webhook.ChangesWebhook": 520,
    "crawler.extensions.mdexport.MarkdownExport": 530,
    # every second: the requests' cancelled timers let go, the allocator's free pages given back
    "crawler.extensions.memory.MemorySweep": 600,
}
#: Scrapy settings the add-on sets where the project keeps Scrapy's default
SCRAPY_SETTINGS = {
    # Scrapy's duplicate filter, plus: a redirect dropped as a duplicate of a request that
    # never reached a page (a redirect loop) is a warning and makes the run partial
    "DUPEFILTER_CLASS": "crawler.dupefilters.RedirectAwareDupeFilter",
    # Scrapy starts CONCURRENT_ITEMS tasks for each response's output, whatever its size:
    # at its 100, for a page's one item and few links, 40% of an unchanged recrawl's CPU
    "CONCURRENT_ITEMS": 8,
}
#: FRONTIER_ENABLED: the run's scheduler and duplicate filter, its start requests made
#: once per run, each process a worker of the run (lease, closing, outcome)
FRONTIER = {
    "SCHEDULER": "crawler.frontier.scheduler.FrontierScheduler",
    "DUPEFILTER_CLASS": "crawler.frontier.dupefilter.RunDupeFilter",
}
FRONTIER_SPIDER_MIDDLEWARES = {"crawler.frontier.start.StartOncePerRun": 50}
FRONTIER_EXTENSIONS = {"crawler.frontier.worker.FrontierWorker": 100}


class IncrementalAddon:
    """Incremental recrawls: unchanged pages cost a 304 and no extractor call.

    ``ADDONS = {"crawler.addons.IncrementalAddon": 100}`` in a Scrapy project's
    settings installs :class:`~crawler.middlewares.revalidation.RevalidationMiddleware`
    (840), :class:`~crawler.middlewares.robots.RobotsTxtOnce` (101),
    :class:`~crawler.pipelines.content_hash.ContentHashPipeline` (300),
    :class:`~crawler.extensions.cache.CacheOwner` (400, the cache's one owner),
    :class:`~crawler.extensions.closing.ClosingStages` (500) and, where the project
    keeps Scrapy's default, :data:`SCRAPY_SETTINGS` (the ``DUPEFILTER_CLASS``
    :class:`~crawler.dupefilters.RedirectAwareDupeFilter`, ``CONCURRENT_ITEMS`` 8).
    With ``FRONTIER_ENABLED``, the shared frontier's scheduler, duplicate filter, start
    middleware and worker extension (:data:`FRONTIER`). It never overrides a setting or
    a component priority the user set.
    """

    def update_settings(self, settings: BaseSettings) -> None:
        components = [
            ("DOWNLOADER_MIDDLEWARES", DOWNLOADER_MIDDLEWARES),
            ("ITEM_PIPELINES", ITEM_PIPELINES),
            ("EXTENSIONS", EXTENSIONS),
        ]
        for name, value in SCRAPY_SETTINGS.items():
            if (settings.getpriority(name) or 0) <= get_settings_priority("default"):
                settings.set(name, value, priority="addon")
        if settings.getbool("FRONTIER_ENABLED"):
            for name, value in FRONTIER.items():  # (over the add-on's own DUPEFILTER_CLASS too)
                settings.set(name, value, priority="addon")
            components += [("SPIDER_MIDDLEWARES", FRONTIER_SPIDER_MIDDLEWARES), ("EXTENSIONS", FRONTIER_EXTENSIONS)]
        for setting, paths in components:
            for path, priority in paths.items():
                _setdefault(settings, setting, path, priority)


def _setdefault(settings: BaseSettings, setting: str, path: str, priority: int) -> None:
    """``path`` in the component dict ``setting`` at ``priority``, unless the user named
    it (or a subclass of it) there already, by path
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
