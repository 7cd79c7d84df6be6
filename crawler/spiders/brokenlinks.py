"""The broken links of a crawl: links to pages the cache never had that answered 404 or
410, each with the page that linked it (the request's ``Referer``), for the run report.

Every one is counted (stat ``docs/not_found_pages``, the report's ``links_broken``); the
first :data:`BROKEN_LINKS_LISTED` are listed (the report's ``broken_links``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from crawler.meta import META_LINKED_FROM

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.http import Request

#: the broken links a run report lists, the first found (all are counted)
BROKEN_LINKS_LISTED = 50


def linking_page(request: Request) -> str | None:
    """The page whose link ``request`` followed: ``meta["docs_linked_from"]`` (a link
    held for ``max_pages``, requested once the crawl was idle; a page a sitemap lists:
    that sitemap's URL), else its ``Referer`` header (set by Scrapy's
    RefererMiddleware); None for a start URL.

    >>> from scrapy import Request
    >>> linking_page(Request("http://a/x", headers={"Referer": "http://a/guide/"}))
    'http://a/guide/'
    >>> linking_page(Request("http://a/x", meta={"docs_linked_from": "http://a/"}))
    'http://a/'
    >>> linking_page(Request("http://a/x")) is None
    True
    """
    held = request.meta.get(META_LINKED_FROM)
    if isinstance(held, str):
        return held
    referer = request.headers.get("Referer")
    return referer.decode("latin-1") if referer else None


class BrokenLinks:
    """The broken links found so far, the first ``limit`` of them, in the order found;
    two spellings of one page (``/x/`` and ``/x``, by ``key``: the page's identity) are
    one broken link.

    >>> links = BrokenLinks(limit=1, key=lambda url: url.rstrip("/"))
    >>> links.note("http://a/x", 404, "http://a/"), links.note("http://a/x/", 404, "http://a/b")
    (True, False)
    >>> links.note("http://a/y", 410, None)
    True
    >>> links.listed()
    [{'url': 'http://a/x', 'status': 404, 'linked_from': 'http://a/'}]
    >>> links.forget("http://a/x/"), links.forget("http://a/x"), links.listed()
    (True, False, [])
    """

    def __init__(self, limit: int = BROKEN_LINKS_LISTED, key: Callable[[str], str] | None = None) -> None:
        self.limit = limit
        self.key = key or (lambda url: url)
        self._seen: set[str] = set()
        #: the listed ones by key
        self._found: dict[str, dict[str, Any]] = {}

    def note(self, url: str, status: int, linked_from: str | None) -> bool:
        """Notes a broken link; whether it is a new one (not another spelling of one noted)."""
        key = self.key(url)
        if key in self._seen:
            return False
        self._seen.add(key)
        if len(self._found) < self.limit:
            self._found[key] = {"url": url, "status": status, "linked_from": linked_from}
        return True

    def forget(self, url: str) -> bool:
        """A link noted broken answered with a page after all (a known broken link's
        404 was replayed, then it was asked for): no broken link. Whether it was one."""
        key = self.key(url)
        if key not in self._seen:
            return False
        self._seen.discard(key)
        self._found.pop(key, None)
        return True

    def listed(self) -> list[dict[str, Any]]:
        return list(self._found.values())
