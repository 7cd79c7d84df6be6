"""The run's change list as Scrapy feeds: ``CHANGES_FEEDS``, shaped like ``FEEDS``."""

from __future__ import annotations

import logging
from pathlib import Path, PureWindowsPath
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlparse

from scrapy.exceptions import NotConfigured
from scrapy.extensions.feedexport import FeedExporter
from scrapy.settings import Settings
from scrapy.utils.conf import feed_complete_default_values_from_settings
from scrapy.utils.python import without_none_values

from crawler import signals as crawler_signals
from crawler.cache import cache_for
from crawler.config import typed

if TYPE_CHECKING:
    from collections.abc import Iterable

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.extensions.feedexport import FeedSlot
    from scrapy.statscollectors import StatsCollector

    from crawler.cache.ports import ChangeReader

logger = logging.getLogger(__name__)

#: the fields of a change record, in order (the CSV columns)
CHANGE_FIELDS = ("run_id", "url", "url_hash", "status", "content_hash", "extraction_file")


class RunFeedExporter(FeedExporter):
    """Scrapy's :class:`~scrapy.extensions.feedexport.FeedExporter` on the feeds it is
    given instead of ``FEEDS``, writing one batch of records per run when told to
    (:meth:`export`), not the crawl's items: every format, storage, URI parameter
    (``%(time)s``, ``%(name)s``, plus ``%(run_id)s``) and feed option works as in ``FEEDS``."""

    def __init__(self, crawler: Crawler, feeds: dict[str, Any]) -> None:
        settings = Settings(crawler.settings.copy_to_dict())
        settings.set("FEEDS", feeds, priority="cmdline")
        settings.set("FEED_URI", None, priority="cmdline")
        # FeedExporter reads its feeds, storages and exporters from the settings it is given
        super().__init__(cast("Crawler", SimpleNamespace(settings=settings)))
        self.crawler = crawler
        self.run_id = ""

    def _get_uri_params(self, spider: Spider, uri_params_function: Any, slot: FeedSlot | None = None) -> dict[str, Any]:
        return {**super()._get_uri_params(spider, uri_params_function, slot), "run_id": self.run_id}

    async def export(self, spider: Spider, run_id: str, records: Iterable[dict[str, Any]]) -> int:
        """Write ``records`` (read as they are written) to every feed, as one crawl's
        items would be. Returns how many."""
        self.run_id = run_id
        self.slots = []
        self.open_spider(spider)
        count = 0
        for record in records:
            self.item_scraped(record, spider)
            count += 1
        for slot in list(self.slots):
            await self._close_slot(slot, spider)  # a failed store is logged and counted there
        self.slots = []
        return count


class ChangeFeeds:
    """Exports the change list of each run (new, changed and removed pages: read page
    by page from the store's ``changes`` table) through Scrapy's feed exports, once the
    run report is written. ``CHANGES_FEEDS`` has the shape of ``FEEDS`` (URI -> options: ``format``,
    ``fields``, ``store_empty``...), so the formats (``FEED_EXPORTERS``), storages
    (``FEED_STORAGES``: file, S3, GCS, FTP...) and URI parameters of Scrapy work as
    users know them; ``%(run_id)s`` names the run. Each record: :data:`CHANGE_FIELDS`.

    Off while ``CHANGES_FEEDS`` is empty. A feed Scrapy cannot write (unknown format
    or storage) stops the crawl at its start; a feed that fails at the end is an
    error in the log and the stat ``changefeeds/failed``: the cache and the run report
    are already stored, untouched.
    """

    def __init__(self, exporter: RunFeedExporter, stats: StatsCollector, crawler: Crawler) -> None:
        self.exporter = exporter
        self.stats = stats
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ChangeFeeds:
        feeds = typed(crawler.settings).getdict("CHANGES_FEEDS")
        if not feeds:
            raise NotConfigured  # no message: Scrapy would warn of it on every crawl
        # the change records' fields unless a feed names its own (FEED_EXPORT_FIELDS is for the items)
        feeds = {
            str(uri.absolute()) if isinstance(uri, Path) else str(uri): {"fields": list(CHANGE_FIELDS), **dict(o or {})}
            for uri, o in feeds.items()
        }
        check_feeds(crawler.settings, feeds)
        try:
            exporter = RunFeedExporter(crawler, feeds)
        except NotConfigured:  # Scrapy said why in the log
            raise ValueError(
                f"CHANGES_FEEDS: Scrapy cannot write these feeds (see the error above): {feeds!r}"
            ) from None
        assert crawler.stats is not None
        extension = cls(exporter, crawler.stats, crawler)
        crawler.signals.connect(extension.run_reported, signal=crawler_signals.run_reported)
        return extension

    async def run_reported(self, report: dict[str, Any], summary: str) -> None:
        run_id = str(report.get("run_id", ""))
        store: ChangeReader = cache_for(self.crawler).store  # all it asks of the store
        records = (
            {"run_id": run_id, **{k: change.get(k) for k in CHANGE_FIELDS[1:]}}
            for change in store.iter_run_changes(run_id)
        )
        spider = self.crawler.spider
        assert spider is not None
        try:
            count = await self.exporter.export(spider, run_id, records)
        except Exception as exc:  # noqa: BLE001 - a feed that cannot be opened or written (a file's directory unwritable...)
            self.stats.inc_value("changefeeds/failed")
            logger.error(
                "The change feed of run %(run)s was not written: %(error)s (the cache and the run report are stored)",
                {"run": run_id, "error": f"{type(exc).__name__}: {exc}"},
            )
            return
        self.stats.inc_value("changefeeds/records", count)


def check_feeds(settings: Any, feeds: dict[str, dict[str, Any]]) -> None:
    """A ``ValueError`` naming the feed of ``CHANGES_FEEDS`` whose format or storage
    scheme Scrapy has no component for (``FEED_EXPORTERS``, ``FEED_STORAGES``).

    >>> check_feeds(Settings(), {"changes.xyz": {}})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: CHANGES_FEEDS['changes.xyz']: unknown format 'xyz' (FEED_EXPORTERS has csv, ...)
    """
    exporters = sorted(without_none_values(settings.getwithbase("FEED_EXPORTERS")))
    storages = sorted(without_none_values(settings.getwithbase("FEED_STORAGES")))
    for uri, options in feeds.items():
        fmt = feed_complete_default_values_from_settings(options, settings, uri)["format"]
        if fmt not in exporters:
            raise ValueError(
                f"CHANGES_FEEDS[{uri!r}]: unknown format {fmt!r} (FEED_EXPORTERS has {', '.join(exporters)}; "
                "name one with the feed's 'format' option)"
            )
        scheme = urlparse(uri).scheme
        if scheme and scheme not in storages and not PureWindowsPath(uri).drive:
            raise ValueError(
                f"CHANGES_FEEDS[{uri!r}]: unknown storage scheme {scheme!r} (FEED_STORAGES has {', '.join(storages)})"
            )
