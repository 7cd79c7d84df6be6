"""A page's identity: a project-owned, versioned key of its canonical URL."""

from __future__ import annotations

import hashlib
import json
import weakref
from functools import lru_cache
from typing import TYPE_CHECKING

from w3lib.url import canonicalize_url, safe_url_string

from crawler.lib.urls import canonical_url

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

#: The version of :func:`page_key`. A cache records the version its keys were made
#: with; another version is a migration of the cache, never a silent re-keying.
IDENTITY_VERSION = "1"

_IDENTITIES: weakref.WeakKeyDictionary[Crawler, PageIdentity] = weakref.WeakKeyDictionary()


def page_key(canonical: str) -> str:
    """The cache key of the page at ``canonical`` (a canonical URL, see
    :func:`crawler.lib.urls.canonical_url`): the hex SHA-1 of a GET of that URL in
    the JSON form Scrapy's default request fingerprinter hashes (URL escaped as a
    ``Request`` escapes it, then canonicalized; no body, no headers).

    It is the project's own function: another ``REQUEST_FINGERPRINTER_CLASS`` (a
    plugin, a later Scrapy default) changes how Scrapy's scheduler tells requests
    apart, never a page's key. It gives the keys Scrapy's fingerprinter gave (the
    keys of caches made before it was the project's), so those caches keep theirs.

    >>> page_key("https://docs.example.com/guide")
    'b193fe24108631d40da4e02d57d573466636bba0'
    """
    data = {"body": "", "headers": {}, "method": "GET", "url": canonicalize_url(safe_url_string(canonical, "utf-8"))}
    return hashlib.sha1(json.dumps(data, sort_keys=True).encode()).hexdigest()  # a key, not a secret


class PageIdentity:
    """Maps any spelling of a URL to ``(canonical_url, url_hash)``.

    ``url_hash`` is :func:`page_key` of the canonical URL, so every spelling of one
    page (tracking parameters, fragment, default port, trailing slash) is one key. An
    index file name (``/docs/index.html``) is a key of its own: it is the directory's
    page only on evidence (:mod:`crawler.incremental.folding`).
    """

    version = IDENTITY_VERSION

    #: spellings whose identity is kept (each cache): a page's is asked for by the
    #: middleware, the spider and the pipeline within moments, a site's navigation links
    #: on every page; a spelling costs ~1.2 kB held (both caches), a miss ~35 us. Full
    #: from a few thousand pages on, so a larger site holds no more (issue 40: 16,384
    #: grew a crawl's memory by 8 MB from 10,000 to 100,000 pages, 65,536 by 30 MB)
    CACHED = 4096

    def __init__(self) -> None:
        self._canonical = lru_cache(maxsize=self.CACHED)(canonical_url)
        self._cached = lru_cache(maxsize=self.CACHED)(self._identify)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> PageIdentity:
        """The crawl's one instance: the middleware and the pipeline share its cache."""
        identity = _IDENTITIES.get(crawler)
        if identity is None:
            identity = _IDENTITIES[crawler] = cls()
        return identity

    def _identify(self, url: str) -> tuple[str, str]:
        canonical = self._canonical(url)
        return canonical, page_key(canonical)

    def __call__(self, url: str) -> tuple[str, str]:
        return self._cached(url)

    def canonical(self, url: str) -> str:
        """:func:`crawler.lib.urls.canonical_url` of ``url``, made once per spelling:
        the middleware, the spider and the pipeline each ask for the same page's."""
        return self._canonical(url)

    def url_hash(self, url: str) -> str:
        return self._cached(url)[1]
