"""The docs spider's rules of which URLs a crawl asks for: its hosts, its scope (the
start URLs' paths, :class:`~crawler.spiders.scope.PathScope`, or the include patterns)
and the exclude patterns; and what becomes of a URL outside the scope (a link, a
sitemap's entry, a page's redirect: counted, not requested, no error), and of a start
URL's redirect (the scope widened to where it leads).

:class:`CrawlRules` is a base class of :class:`~crawler.spiders.docs.DocsSpider`, as
:class:`~crawler.spiders.discovery.SitemapDiscovery` is: what it counts is the
spider's (``docs/out_of_scope``), and the closing stage asks the spider
(:meth:`CrawlRules.in_crawl_scope`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import scrapy
from scrapy.exceptions import IgnoreRequest

from crawler.meta import META_DEPTH, META_LISTED

if TYPE_CHECKING:
    import re
    from collections.abc import Iterator

    from scrapy.http import Request, Response

    from crawler.spiders.budget import PageBudget
    from crawler.spiders.scope import PathScope


class CrawlRules(scrapy.Spider):
    """Says whether a URL is the crawl's (:meth:`_allowed`, :meth:`in_crawl_scope`),
    counts those its path scope leaves out (:meth:`left_out`), drops a page's redirect
    out of it (:meth:`request_scheduled`, connected by the spider while it has a path
    scope), and widens it for a start URL's redirect (:meth:`start_redirected`)."""

    #: the spider's arguments: hosts, include and exclude patterns
    allowed_domains: list[str]
    include: list[re.Pattern[str]]
    exclude: list[re.Pattern[str]]
    #: the scope paths of the start URLs (None: their whole sites, ``-a scope=site``)
    path_scope: PathScope | None
    #: the URLs on the crawl's hosts the path scope left out, not requested: URL ->
    #: (its depth, listed by a sitemap); requested if a start URL's redirect widens it
    out_of_scope: dict[str, tuple[int, bool]]
    #: a shared-frontier run (its processes must agree on the scope: no widening)
    shared_run: bool
    #: the spider's ``max_pages`` budget
    budget: PageBudget

    def follow_links(self, urls: list[str], depth: int, linking: str | None = None) -> Iterator[Request]:
        raise NotImplementedError

    def listed_page(self, url: str) -> Request | None:
        raise NotImplementedError

    def _allowed(self, url: str) -> bool:
        """Whether this crawl's rules allow ``url``: its hosts, its scope (the start URLs'
        paths, or the include patterns), the exclude patterns."""
        if not self._on_hosts(url):
            return False
        if self.include and not any(p.search(url) for p in self.include):
            return False
        if self.path_scope is not None and not self.path_scope.admits(url):
            return False
        return not any(p.search(url) for p in self.exclude)

    def _on_hosts(self, url: str) -> bool:
        host = urlsplit(url).hostname or ""
        return any(host == d or host.endswith("." + d) for d in self.allowed_domains)

    def in_crawl_scope(self, url: str) -> bool:
        """Whether this crawl's rules allow ``url``: pages they leave out are not marked
        removed for not being reached (the closing stage asks), so the pages of a cache
        made with a wider scope (``-a scope=site``) outside the start URLs' paths stay."""
        return self._allowed(url)

    def left_out(self, url: str, depth: int, *, listed: bool = False) -> None:
        """``url`` (a link at ``depth``, a sitemap's entry, a redirect) is not requested:
        counted once a run (``docs/out_of_scope``) when the path scope leaves it out,
        on the crawl's hosts; neither an error nor a gap (the run stays complete)."""
        if url in self.out_of_scope or self.path_scope is None or self.path_scope.admits(url):
            return
        if not self._on_hosts(url):
            return
        self.out_of_scope[url] = (depth, listed)
        self.crawler.stats.inc_value("docs/out_of_scope")

    def request_scheduled(self, request: Request) -> None:
        """A page's redirect (an HTTP redirect, a meta refresh, a browser's move) out of the
        crawl's path scope is dropped before it is scheduled, as Scrapy's OffsiteMiddleware
        drops one off the site (``IgnoreRequest`` from this signal: no errback, no error);
        a start URL's is followed (:meth:`start_redirected`)."""
        depth = request.meta.get(META_DEPTH)
        if not depth or not request.meta.get("redirect_urls") or self.path_scope is None:
            return  # (not a page, a start URL's, or not a redirect)
        if self.path_scope.admits(request.url):
            return
        self.left_out(request.url, depth, listed=bool(request.meta.get(META_LISTED)))
        self.budget.came_to_nothing()
        self.logger.debug(
            "Redirect from %(origin)s to %(url)s, outside the crawl's scope: not followed",
            {"origin": request.meta["redirect_urls"][0], "url": request.url},
        )
        raise IgnoreRequest(f"Redirect outside the crawl's scope: {request.url}")

    def start_redirected(self, response: Response) -> Iterator[Request]:
        """A start URL redirected to ``response.url``: the crawl's scope covers where it
        led too (``/latest/`` -> ``/en/latest/``: both), and the URLs it left out so far
        that it now covers are requested. Not in a shared-frontier run, whose processes
        must agree on the scope: there a warning says to start where it leads."""
        if self.path_scope is None or self.path_scope.admits(response.url):
            return
        start = response.meta["redirect_urls"][0]
        if self.shared_run:
            self.logger.warning(
                "Start URL %(start)s redirected to %(url)s, outside the crawl's scope (%(scope)s): in a "
                "shared-frontier run the scope stays the start URLs' (start at %(url)s, or -a scope=site)",
                {"start": start, "url": response.url, "scope": self.path_scope},
            )
            return
        self.path_scope.add(response.url)
        self.logger.info(
            "Start URL %(start)s redirected to %(url)s: the crawl's scope is %(scope)s",
            {"start": start, "url": response.url, "scope": self.path_scope},
        )
        admitted = {url: place for url, place in self.out_of_scope.items() if self._allowed(url)}
        for url in admitted:
            del self.out_of_scope[url]
        if admitted:
            self.crawler.stats.inc_value("docs/out_of_scope", -len(admitted))
        for url, (depth, listed) in admitted.items():
            if listed:
                request = self.listed_page(url)
                if request is not None:
                    yield request
            else:
                yield from self.follow_links([url], depth - 1)

    def closed(self, reason: str) -> None:
        """How many URLs the path scope left out, said once at the end (Scrapy calls
        a spider's ``closed``)."""
        if self.out_of_scope and self.path_scope is not None:
            self.logger.info(
                "%(n)d URLs outside the crawl's scope (%(scope)s) not requested (docs/out_of_scope); "
                "-a scope=site crawls the whole site",
                {"n": len(self.out_of_scope), "scope": self.path_scope},
            )
