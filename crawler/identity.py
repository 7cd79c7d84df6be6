"""A page's identity: the crawler's request fingerprint of its canonical URL."""

from __future__ import annotations

import weakref
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from scrapy import Request

from crawler.lib.urls import canonical_url, index_file_parent

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.utils.request import RequestFingerprinterProtocol


_IDENTITIES: weakref.WeakKeyDictionary[Crawler, PageIdentity] = weakref.WeakKeyDictionary()


class PageIdentity:
    """Maps any spelling of a URL to ``(canonical_url, url_hash)``.

    ``url_hash`` is the hex request fingerprint (``crawler.request_fingerprinter``)
    of a GET of the canonical URL, so every spelling of one page (tracking
    parameters, fragment, default port, trailing slash) is one key. An index file name
    (``/docs/index.html``) is a key of its own: ContentHashPipeline records it as the
    directory's page only on evidence.
    """

    def __init__(self, fingerprinter: RequestFingerprinterProtocol) -> None:
        self.fingerprinter = fingerprinter
        self._cached = lru_cache(maxsize=65536)(self._identify)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> PageIdentity:
        """The crawl's one instance: the middleware and the pipeline share its cache."""
        identity = _IDENTITIES.get(crawler)
        if identity is None:
            assert crawler.request_fingerprinter is not None
            identity = _IDENTITIES[crawler] = cls(crawler.request_fingerprinter)
        return identity

    def _identify(self, url: str) -> tuple[str, str]:
        canonical = canonical_url(url)
        return canonical, self.fingerprinter.fingerprint(Request(canonical)).hex()

    def __call__(self, url: str) -> tuple[str, str]:
        return self._cached(url)

    def url_hash(self, url: str) -> str:
        return self._cached(url)[1]

    def directory_of(self, url: str) -> tuple[str, str] | None:
        """``(canonical_url, url_hash)`` of the directory page that ``url``, an index
        file spelling (``/docs/index.html``), may be on evidence; ``None`` for any other URL."""
        parent = index_file_parent(url)
        return None if parent is None else self._cached(parent)

    def spells(self, recorded: Any, url: str) -> bool:
        """Whether ``recorded`` (the URL a page record or a stored response was made
        from) is a spelling of ``url``: the evidence that a directory's record or
        response stands for an index file spelling (a cache made when index file names
        were folded, or a fold)."""
        return isinstance(recorded, str) and self.url_hash(recorded) == self.url_hash(url)
