"""The pages sitemaps list, waiting to be requested: kept as URLs, not as requests.

A 50,000-URL sitemap made 50,000 ``Request`` objects at once, all held in Scrapy's
scheduler (about 250 MB) and built before the next page could be requested. The docs
spider keeps a sitemap's pages here instead, as the URL strings it parsed (about
100 bytes a waiting URL), and makes
their requests a batch at a time as the crawl drains its queue
(:class:`~crawler.spiders.discovery.SitemapDiscovery`).
"""

from __future__ import annotations

from collections import deque


class ListedPages:
    """The URLs sitemaps listed and the crawl has not requested yet, in the order listed,
    each with the sitemap that listed it (the page that "links" it, as its ``Referer``
    would say). Closed (:attr:`open` False) while the sitemaps are read before any page
    is requested: then nothing is taken from it yet.

    >>> listed = ListedPages()
    >>> listed.add(["http://a/1", "http://a/2"], "http://a/sitemap.xml"); listed.add(["http://a/3"], None)
    >>> len(listed), listed.pop(), len(listed)
    (3, ('http://a/1', 'http://a/sitemap.xml'), 2)
    >>> [listed.pop(), listed.pop(), listed.pop()]
    [('http://a/2', 'http://a/sitemap.xml'), ('http://a/3', None), None]
    >>> listed.most
    3
    """

    def __init__(self) -> None:
        #: one entry per sitemap read: (its URL or None, the URLs it listed)
        self._lists: deque[tuple[str | None, list[str]]] = deque()
        #: the next URL to give of the first list
        self._next = 0
        self._waiting = 0
        #: the most URLs that waited at once
        self.most = 0
        #: whether URLs may be taken (the sitemaps are not being read first)
        self.open = True

    def __len__(self) -> int:
        return self._waiting

    def add(self, urls: list[str], linking: str | None) -> None:
        """``urls``, listed by the sitemap ``linking`` (None: not said), wait after those
        added before."""
        if urls:
            self._lists.append((linking, urls))
            self._waiting += len(urls)
            self.most = max(self.most, self._waiting)

    def pop(self) -> tuple[str, str | None] | None:
        """The first URL waiting and the sitemap that listed it, no longer waiting; None
        when none waits."""
        if not self._lists:
            return None
        linking, urls = self._lists[0]
        url = urls[self._next]
        self._next += 1
        self._waiting -= 1
        if self._next == len(urls):
            self._lists.popleft()
            self._next = 0
        return url, linking
