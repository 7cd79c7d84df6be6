"""scrapy-playwright's download handler, one per crawl for both http and https.

Scrapy builds a download handler for each scheme of ``DOWNLOAD_HANDLERS``. Two of
scrapy-playwright's (``http`` and ``https``) each start a Playwright driver (a node
process of about 100 MB) when the engine starts, and each launches a browser of its own
for the pages of its scheme. :class:`PlaywrightDownloadHandler` is built once per crawl
and serves both: one driver, one browser, one browser context. Only imported when
``PLAYWRIGHT_ENABLED`` is on (``PlaywrightAddon`` names it in ``DOWNLOAD_HANDLERS``).
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from scrapy_playwright.handler import ScrapyPlaywrightDownloadHandler

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

#: the crawl's handler, for the next scheme that asks
_BUILT: weakref.WeakKeyDictionary[Crawler, PlaywrightDownloadHandler] = weakref.WeakKeyDictionary()


class PlaywrightDownloadHandler(ScrapyPlaywrightDownloadHandler):  # type: ignore[misc]
    """scrapy-playwright's handler, one instance for every scheme of a crawl."""

    _closed = False

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> PlaywrightDownloadHandler:
        handler = _BUILT.get(crawler)
        if handler is None:
            handler = _BUILT[crawler] = cls(crawler)
        return handler

    async def close(self) -> None:
        """Closed once, though Scrapy closes it for each scheme it serves."""
        if not self._closed:
            self._closed = True
            await super().close()
