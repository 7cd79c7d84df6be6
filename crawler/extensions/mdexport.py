"""The folder of markdown files ``MARKDOWN_EXPORT_DIR``, kept in step after each run."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import NotConfigured

from crawler import signals as crawler_signals
from crawler.cache import CacheStorageError, cache_for
from crawler.config import typed
from crawler.mdfolder import MarkdownFolder
from crawler.support.plural import plural

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from crawler.cache.ports import ChangeReader, MarkdownStore

logger = logging.getLogger(__name__)


class MarkdownExport:
    """Keeps ``MARKDOWN_EXPORT_DIR`` a folder of markdown files, one per page with text
    (``DIR/<host>/<path>.md``, a front matter then the page's markdown, and
    ``DIR/index.md``: :mod:`crawler.lib.mdfiles`), as ``scrapy cache export --markdown
    DIR`` writes it. Once the run report is written (the ``run_reported`` signal), it
    writes the files of the run's new and changed pages, deletes those of its removed
    pages and updates the index: the work of the run's changes, not of the site's. Its
    first run (no ``DIR/index.md`` yet) writes every page.

    Off while ``MARKDOWN_EXPORT_DIR`` is empty. A directory that cannot be the export's
    (a file, not writable, an ``index.md`` of something else) stops the crawl at its
    start; a write that fails at the end is an error in the log and the stat
    ``mdexport/failed``: the cache and the run report are stored, untouched.
    """

    def __init__(self, folder: MarkdownFolder, stats: StatsCollector, crawler: Crawler) -> None:
        self.folder = folder
        self.stats = stats
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> MarkdownExport:
        directory = typed(crawler.settings).get("MARKDOWN_EXPORT_DIR") or ""
        if not directory:
            raise NotConfigured  # no message: Scrapy would warn of it on every crawl
        folder = MarkdownFolder(directory)
        folder.check()  # a ValueError: the crawl is not started
        assert crawler.stats is not None
        extension = cls(folder, crawler.stats, crawler)
        crawler.signals.connect(extension.run_reported, signal=crawler_signals.run_reported)
        return extension

    def run_reported(self, report: dict[str, Any], summary: str) -> None:
        store: MarkdownStore = cache_for(self.crawler).store  # all it asks of the store
        changes: ChangeReader = cache_for(self.crawler).store  # the run's change list, streamed
        try:
            done = self.folder.export_changes(store, changes.iter_run_changes(str(report.get("run_id", ""))))
        except (OSError, ValueError, CacheStorageError) as exc:
            self.stats.inc_value("mdexport/failed")
            logger.error(
                "The markdown export in %(dir)s was not brought in step with run %(run)s: %(error)s "
                "(`scrapy cache export --markdown %(dir)s` writes it whole)",
                {"dir": self.folder.root, "run": report.get("run_id"), "error": exc},
            )
            return
        self.stats.inc_value("mdexport/files_written", done.written)
        self.stats.inc_value("mdexport/files_removed", done.removed)
        logger.info(
            "Markdown export %(dir)s: %(written)s written, %(removed)d deleted, %(pages)s in its index",
            {
                "dir": self.folder.root,
                "written": plural(done.written, "file"),
                "removed": done.removed,
                "pages": plural(done.pages, "page"),
            },
        )
