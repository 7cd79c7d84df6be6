"""The old name of :mod:`crawler.middlewares.revalidation`, kept for one release so that
``DOWNLOADER_MIDDLEWARES`` naming ``crawler.middlewares.dedup.DedupMiddleware`` still works."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

from crawler.config import DeprecatedSettingWarning
from crawler.middlewares.revalidation import RevalidationMiddleware

if TYPE_CHECKING:
    from scrapy.crawler import Crawler


class DedupMiddleware(RevalidationMiddleware):
    """Deprecated: :class:`crawler.middlewares.revalidation.RevalidationMiddleware`."""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RevalidationMiddleware:
        warnings.warn(
            "crawler.middlewares.dedup.DedupMiddleware is deprecated: use "
            "crawler.middlewares.revalidation.RevalidationMiddleware (or ADDONS = "
            '{"crawler.addons.IncrementalAddon": 100}, which installs it)',
            DeprecatedSettingWarning,
            stacklevel=2,
        )
        return super().from_crawler(crawler)
