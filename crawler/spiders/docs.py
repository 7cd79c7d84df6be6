"""The ``docs`` spider: every HTML page of one or more documentation sites."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Self
from urllib.parse import urldefrag, urljoin, urlsplit

from scrapy import signals
from scrapy.exceptions import DontCloseSpider, NotConfigured
from scrapy.http import Headers, HtmlResponse, Request
from scrapy.linkextractors import LinkExtractor
from scrapy.utils.misc import build_from_crawler

from crawler import signals as crawler_signals
from crawler.config import typed
from crawler.defaults import SETTINGS
from crawler.http import decoded_body, is_html
from crawler.identity import PageIdentity
from crawler.incremental.schedule import revisit_policy
from crawler.incremental.source import is_stored_source, second_reading, source_unchanged
from crawler.incremental.spiderport import PARSED_FIELDS, SpiderPort
from crawler.items import PageItem
from crawler.lib.css import NO_RULES
from crawler.lib.deephtml import PARSER_MAX_DEPTH, deeper_than, flatten_deep_html, tree_depth
from crawler.lib.markdown import DEFAULT_LINKS, MAX_DEPTH, check_links
from crawler.lib.mdnodes import page_title
from crawler.lib.pagetext import converter_id, page_markdown
from crawler.lib.sniff import better_encoding, binary_reason
from crawler.lib.urls import url_domain
from crawler.meta import (
    FLAG_DOWNLOAD_STOPPED,
    FLAG_RENDER_REPLAYED,
    META_DEPTH,
    META_LINKED_FROM,
    META_LISTED,
    META_RECHECK,
    Revalidation,
    revalidation,
)
from crawler.spiders.arguments import bool_arg, choice_arg, int_arg, split_arg, unknown_argument
from crawler.spiders.brokenlinks import BrokenLinks
from crawler.spiders.budget import PageBudget
from crawler.spiders.discovery import SITEMAP_MAX_BYTES, SitemapDiscovery
from crawler.spiders.failures import PageFailures
from crawler.spiders.listed import ListedPages
from crawler.spiders.nonhtml import NonHtmlStop
from crawler.spiders.requested import RequestedPages
from crawler.spiders.rules import CrawlRules
from crawler.spiders.scope import PathScope
from crawler.spiders.traps import TRAP_SETTINGS, TrapGuard
from crawler.stylesheets import SiteStylesheets

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from crawler.lib.css import HiddenRules
    from crawler.lib.maincontent import Selection


class DocsSpider(CrawlRules, SitemapDiscovery, PageFailures):
    """Crawls the HTML pages under the start URLs' paths, following links and sitemaps.

    ``scrapy crawl docs -a start_urls=URL[,URL...]``; its arguments are in docs/commands.md.
    Its bases say which URLs are the crawl's (:class:`~crawler.spiders.rules.CrawlRules`:
    a crawl stays under the path of each start URL unless ``-a scope=site`` or ``-a
    include=...`` says otherwise, and what it leaves out is never marked removed for not
    being reached), read robots.txt and the sitemaps
    (:class:`~crawler.spiders.discovery.SitemapDiscovery`), take the failed page requests
    (:class:`~crawler.spiders.failures.PageFailures`) and bound the downloads
    (:class:`~crawler.spiders.budget.PageBudget`).

    Depth, sitemap errors and allowed domains are checked here, not by Scrapy's
    equivalents, because the closing stage must know when a page may have been missed
    (nothing is then marked removed) and those drop it silently. A page answered by its
    stored response is not parsed again while its ``ParsedPage`` was made by this run's
    converter (``docs/parse_reused``).
    """

    name = "docs"
    #: how the markdown writes links (MARKDOWN_LINKS), and the converter that makes
    #: of it (each item says which)
    markdown_links = DEFAULT_LINKS
    converter = converter_id(DEFAULT_LINKS)
    #: the site stylesheets' rules, from the spider's opening (None before, or with
    #: MARKDOWN_SITE_STYLESHEETS off)
    stylesheets: SiteStylesheets | None = None

    def __init__(
        self,
        start_urls: str | list[str] | None = None,
        allowed_domains: str | list[str] | None = None,
        scope: str | None = None,
        max_depth: str | int | None = None,
        max_pages: str | int | None = None,
        include: str | list[str] | None = None,
        exclude: str | list[str] | None = None,
        sitemaps: str | bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        #: the arguments this spider ignores, one line each (ClosingStages counts them in
        #: the summary line and the run report)
        self.input_mistakes = [mistake for name in kwargs if (mistake := unknown_argument(name, type(self)))]
        for mistake in self.input_mistakes:
            self.logger.warning("%(mistake)s", {"mistake": mistake.line})
        self.start_urls = split_arg(start_urls)
        if not self.start_urls:
            raise ValueError("The docs spider needs -a start_urls=URL[,URL...]")
        for url in self.start_urls:
            if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).hostname:
                raise ValueError(f"start_urls must be http(s) URLs, got {url!r}")
        self.allowed_domains = split_arg(allowed_domains) or sorted(
            {urlsplit(url).hostname or "" for url in self.start_urls}
        )
        self.max_depth = int_arg("max_depth", max_depth)
        self.max_pages = int_arg("max_pages", max_pages)
        try:
            self.include = [re.compile(p) for p in split_arg(include)]
            self.exclude = [re.compile(p) for p in split_arg(exclude)]
        except re.error as exc:
            raise ValueError(f"Bad include/exclude pattern: {exc}") from None
        self.use_sitemaps = bool_arg("sitemaps", sitemaps)
        # the start URLs' paths, unless the whole site is asked for, or include patterns
        # say which pages (an explicit -a scope=path keeps it beside them)
        path_scope = (choice_arg("scope", scope, ("path", "site")) or ("site" if self.include else "path")) == "path"
        self.path_scope = PathScope(self.start_urls) if path_scope else None
        self.out_of_scope = {}
        self.shared_run = False
        #: every link of a page (its rules of the day are applied by :meth:`_allowed`,
        #: to the links of a page parsed now and of one parsed before alike)
        self.link_extractor = LinkExtractor()
        #: the pages recorded, the page requests out and the links held for ``max_pages``
        self.budget = PageBudget(self.max_pages, self._count_held)
        #: the URLs of the links followed so far, with the shallowest depth each was
        #: requested at (see :meth:`follow_links`), held compactly
        self.requested = RequestedPages()
        #: the sitemaps are read before any page is requested (the revisit schedule
        #: needs their lastmods)
        self.sitemaps_first = False
        #: the pages the sitemaps listed, waiting to be requested (as URLs)
        self.listed = ListedPages()
        #: all the spider asks of the crawl's cache and run (from_crawler: the crawl's)
        self.cache = SpiderPort(None)
        #: canonical URLs, each made once (from_crawler: the crawl's, shared with the middleware)
        self.identity = PageIdentity()
        #: stops page downloads declared not HTML at their headers (from_crawler: built)
        self.non_html_stop: NonHtmlStop | None = None
        #: the bounds on links followed by path and path pattern (from_crawler: the settings)
        self.traps = TrapGuard(SETTINGS["CRAWL_TRAP_MAX_QUERY_VARIANTS"], SETTINGS["CRAWL_TRAP_MAX_PER_PATTERN"])
        #: start URL -> what it answered, for each start URL that gave no page
        self.start_failures: dict[str, str] = {}
        #: the links to pages never seen that answered 404 or 410, for the run report
        self.broken_links = BrokenLinks(key=lambda url: self.identity.url_hash(url))  # one per page, any spelling
        #: known broken links answered with their 404 this run, not asked for (the revisit
        #: schedule's): url_hash -> (URL, depth, linking page); asked for at the end of a run
        #: that has not reached every page it knows (:meth:`spider_idle`)
        self.missing_replayed: dict[str, tuple[str, int, str | None]] = {}

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> Self:
        spider = super().from_crawler(crawler, *args, **kwargs)
        settings = typed(crawler.settings)
        spider.markdown_links = check_links(settings.get("MARKDOWN_LINKS"))
        spider.traps = TrapGuard(
            settings.getint("CRAWL_TRAP_MAX_QUERY_VARIANTS"), settings.getint("CRAWL_TRAP_MAX_PER_PATTERN")
        )
        site_stylesheets = SiteStylesheets.enabled(crawler.settings)
        spider.converter = converter_id(spider.markdown_links, site_stylesheets=site_stylesheets)
        # the revisit schedule reads the sitemaps' lastmods before any page is requested
        revisiting = revisit_policy(crawler.settings) is not None
        spider.sitemaps_first = revisiting and typed(crawler.settings).getbool("REVALIDATION_ENABLED")
        spider.cache = SpiderPort(crawler)
        spider.identity = PageIdentity.from_crawler(crawler)
        # a page request answered with a declared non-HTML type: not downloaded past its
        # headers (kept here: the signal holds its handler weakly)
        spider.non_html_stop = build_from_crawler(NonHtmlStop, crawler)
        crawler.signals.connect(spider.run_report, signal=crawler_signals.run_report)
        if site_stylesheets:
            crawler.signals.connect(spider.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(spider.spider_idle, signal=signals.spider_idle)
        crawler.signals.connect(spider.scheduler_empty, signal=signals.scheduler_empty)
        if spider.path_scope is not None:
            crawler.signals.connect(spider.request_scheduled, signal=signals.request_scheduled)
        spider.shared_run = settings.getbool("FRONTIER_ENABLED")
        if spider.max_pages and not crawler.settings.frozen:  # (frozen: a crawler built for a test)
            # Scrapy's CloseSpider extension closes the spider once max_pages pages
            # (items) are recorded (finish reason closespider_itemcount); the budget of
            # page requests (:meth:`page_request`) keeps the downloads to that many
            crawler.settings.set("CLOSESPIDER_ITEMCOUNT", spider.max_pages, priority="spider")
        return spider

    def spider_opened(self) -> None:
        """The site stylesheets' reader, built once the crawl runs (it downloads through
        the engine and counts in the stats, which the crawler has from then on)."""
        try:
            self.stylesheets = build_from_crawler(SiteStylesheets, self.crawler)
        except NotConfigured:  # (a setting changed since from_crawler read it)
            self.stylesheets = None

    # -- start ---------------------------------------------------------------

    async def start(self) -> AsyncIterator[Request]:
        if self.max_pages == 0:
            self._incomplete("max_pages")
            return
        sites = list(dict.fromkeys(f"{urlsplit(u).scheme}://{urlsplit(u).netloc}" for u in self.start_urls))
        if self.use_sitemaps and self.sitemaps_first:
            # the start URLs first (max_pages counts them first), then the sitemaps'
            # pages, as the downloader has room for them (the listed pages stay closed
            # meanwhile: start() feeds them, in the order listed, as before)
            starts = [self.page_request(url, 0) for url in self.start_urls]
            starts += self._recorded_first()
            await self.read_sitemaps(sites)
            for page in starts:
                if page is not None:
                    yield page
            async for listed in self.listed_start():
                yield listed
            self.listed.open = True
            return
        for url in self.start_urls:
            if (request := self.page_request(url, 0)) is not None:
                yield request
        for request in self._recorded_first():
            if request is not None:
                yield request
        if not self.use_sitemaps:
            # pages only a sitemap lists cannot be reached: none may be marked removed
            self._incomplete("sitemaps off")
            return
        for site in sites:
            for request in self.discovery_requests(site):
                yield request

    def _recorded_first(self) -> list[Request | None]:
        """With ``max_pages``, when the last crawl was bounded by it (it held pages
        back), the pages the cache recorded of the start URLs' sites come right after
        the start URLs (the budget goes to them first, the links found fill what is
        left): a recrawl checks the same pages, not whichever a run's timing reached
        first, which would be new pages, each an extractor call. With at least
        ``max_pages`` of them recorded, the run is bounded again (partial: a page asked
        for because it was recorded, not because a link reached it, must not hide a
        page gone from the site's links); with fewer, the budget may fit the site, and
        the next run, not bounded, asks for none. Nothing without ``max_pages`` (every
        page is reached anyway), after a crawl that fit in it, or with ``max_depth`` (a
        recorded page's depth is not known)."""
        if self.max_pages is None or self.max_depth is not None:
            return []
        if not self.cache.last_crawl_bounded("max_pages"):
            return []
        domains = list(dict.fromkeys(url_domain(url) for url in self.start_urls))
        recorded = self.cache.recorded_pages(domains, self.max_pages, self._allowed)
        if len(recorded) >= self.max_pages:
            self._incomplete("max_pages")
        requests = [self.page_request(url, 1) for url in recorded if url not in self.requested]
        if made := sum(1 for request in requests if request is not None):
            self.crawler.stats.set_value("docs/max_pages_recorded_first", made)
        return requests

    # -- pages ---------------------------------------------------------------

    async def parse(self, response: Response) -> AsyncIterator[PageItem | Request]:
        depth = response.meta.get(META_DEPTH, 0)
        if depth == 0 and response.meta.get("redirect_urls"):
            for request in self.start_redirected(response):
                yield request
        if response.meta.get(META_RECHECK):
            self._found_after_all(response)
        if not isinstance(response, HtmlResponse) or not is_html(response):
            self.crawler.stats.inc_value("docs/non_html_skipped")
            if FLAG_DOWNLOAD_STOPPED in response.flags:
                self._stopped(response)
            self.logger.info(
                "Skipped non-HTML response %(url)s (%(type)s)",
                {"url": response.url, "type": (response.headers.get("Content-Type") or b"?").decode("latin-1")},
            )
            return
        verdict = self._stored_as(response)
        if verdict is not None and is_stored_source(response.flags):
            parsed = self.cache.parsed_before(verdict, self.converter, response.url)
            if parsed is not None:
                for output in self._reuse(parsed.fields, parsed.links, depth):
                    yield output
                return
        binary = binary_reason(response.body)
        if binary is not None:
            # not a page, and its old record kept: a page that could not be read may hide
            # the pages only it links to, so nothing is removed this run (as for a failed page)
            self.crawler.stats.inc_value("docs/binary_skipped")
            self._incomplete("binary content served as HTML")
            self.logger.warning(
                "Skipped %(url)s: binary content served as HTML (%(reason)s); the crawl is partial",
                {"url": response.url, "reason": binary},
            )
            return
        if self.budget.spent():
            self._incomplete("max_pages")  # (checked again after the wait)
            return
        try:
            response = self._parseable(self._decoded(response))
            stylesheets = self.stylesheets.links(response) if self.stylesheets is not None else []
        except Exception as exc:  # noqa: BLE001 - a malformed page never stops the crawl
            self._malformed(response, exc)
            return
        # the only wait of a parse: the stylesheets this crawl has not read yet
        site_rules, complete = await self.stylesheets.rules(stylesheets) if self.stylesheets else (NO_RULES, True)
        # read without a stylesheet that may come back: not kept for reuse, so the
        # next crawl reads the page again (even on a 304) with it
        keep = verdict if complete else None
        for output in self._parse_page(response, keep, depth, site_rules):
            yield output

    def _stopped(self, response: Response) -> None:
        """Counts a non-HTML response whose download stopped at its headers
        (:class:`~crawler.spiders.nonhtml.NonHtmlStop`), and the body bytes its
        Content-Length declared (none counted without one)."""
        self.crawler.stats.inc_value("docs/non_html_stopped")
        declared = (response.headers.get("Content-Length") or b"").strip()
        if declared.isdigit():
            self.crawler.stats.inc_value("docs/non_html_bytes_not_downloaded", int(declared))

    def _parse_page(
        self, response: HtmlResponse, stored: Revalidation | None, depth: int, site_rules: HiddenRules
    ) -> Iterator[PageItem | Request]:
        """The page's item and the requests for its links, its text read with
        ``site_rules`` (what its site stylesheets hide); what it parsed into kept
        against ``stored``'s stored response, the one it is, when given."""
        try:
            title, content, selection = self._read(response.selector.root, response.url, site_rules)
            declared = response.xpath("//link[@rel='canonical']/@href").get()
        except Exception as exc:  # noqa: BLE001 - a malformed page never stops the crawl
            self._malformed(response, exc)
            return
        if self.budget.spent():
            self._incomplete("max_pages")
            return
        if selection.widened:
            # no line per page: the summary line counts them, `scrapy cache ls --widened` lists them
            self.crawler.stats.inc_value("docs/selection_widened")
        if selection.named_out:
            # words left out of the content container for a name: counted, listed by `scrapy cache ls --named-out`
            self.crawler.stats.inc_value("docs/named_out_pages")
            self.crawler.stats.inc_value("docs/named_out_words", selection.named_out)
        self.budget.counted()
        item = PageItem(
            url=response.url,
            canonical_url=self.identity.canonical(urljoin(response.url, declared) if declared else response.url),
            title=title,
            content=content,
            converter=self.converter,
            source_unchanged=source_unchanged(response.flags)
            or self._reads_as_before(response, title, content, site_rules),
            selection_widened=selection.widened,
            named_out=selection.named_out,
        )
        links = [link.url for link in self.link_extractor.extract_links(response)]
        if stored is not None:
            self._keep_parsed(response, stored, item, links)
        yield item
        yield from self.follow_links(links, depth, response.url)

    def _malformed(self, response: Response, exc: Exception) -> None:
        """A page it cannot convert: its old record is kept, and the pages only it links
        to may go unreached: nothing is marked removed this run (as for a failed page)."""
        self.crawler.stats.inc_value("docs/malformed")
        self._incomplete("malformed page")
        self.logger.warning("Could not parse %(url)s: %(exc)s; the crawl is partial", {"url": response.url, "exc": exc})

    # -- what a stored response parsed into ----------------------------------

    @staticmethod
    def _stored_as(response: HtmlResponse) -> Revalidation | None:
        """RevalidationMiddleware's verdict when it names the stored response
        ``response`` is (replayed from it, of its bytes, or just stored from it);
        ``None`` for a page a browser rendered (its DOM is not the stored response) or
        one the middleware did not store."""
        verdict = revalidation(response.meta)
        if verdict is None or verdict.stored is None:
            return None
        if FLAG_RENDER_REPLAYED in response.flags or "playwright" in response.flags:
            return None
        if response.meta.get("playwright") or verdict.stored.url != response.url:
            return None
        return verdict

    def _reuse(self, fields: dict[str, Any], links: list[str], depth: int) -> Iterator[PageItem | Request]:
        """The page as it was parsed from this stored response before: its item and its
        links (followed through this run's rules), without parsing and converting it
        again (``docs/parse_reused``). Its item leaves ``selection_widened`` and
        ``named_out`` unset: the parse is the one its record's fields came from."""
        if self.budget.spent():
            self._incomplete("max_pages")
            return
        self.crawler.stats.inc_value("docs/parse_reused")
        self.budget.counted()
        yield PageItem(
            url=fields["url"],
            canonical_url=fields["canonical_url"],
            title=fields["title"],
            content=fields["content"],
            converter=self.converter,
            source_unchanged=True,
        )
        yield from self.follow_links([link for link in links if isinstance(link, str)], depth, fields["url"])

    def _keep_parsed(self, response: HtmlResponse, stored: Revalidation, item: PageItem, links: list[str]) -> None:
        """Keep what ``stored``'s stored response parsed into, for the recrawls it answers again."""
        try:
            self.cache.keep_parsed(stored, self.converter, {name: getattr(item, name) for name in PARSED_FIELDS}, links)
        except Exception as exc:  # noqa: BLE001 - only a recrawl's shortcut is lost
            self.logger.warning("Could not keep what %(url)s parsed into: %(exc)s", {"url": response.url, "exc": exc})

    def _read(self, root: Any, url: str, site_rules: HiddenRules = NO_RULES) -> tuple[str, str, Selection]:
        """What a page says: its title, its markdown (this run's converter; what
        ``site_rules``, its site stylesheets', hide left out), and how its main content
        was found."""
        content, selection = page_markdown(root, url, links=self.markdown_links, site_rules=site_rules)
        return page_title(root), content, selection

    def _reads_as_before(self, response: HtmlResponse, title: str, content: str, site_rules: HiddenRules) -> bool:
        """Whether the response stored before this one, whose bytes differ (a nonce, a
        changing ETag, no validators), reads as this one under this run's converter
        (its title and markdown), with this one's stylesheet rules ``site_rules``:
        then the site did not change, only what the converter makes of it
        (``CONVERTER_UPGRADE``). Asked only while the page's stored text is another
        converter's (the first runs after an upgrade): a second conversion."""
        verdict = revalidation(response.meta)
        if verdict is None or verdict.previous is None or not second_reading(verdict, self.converter):
            return False
        previous = verdict.previous
        try:
            # (bounded as a sitemap, above DOWNLOAD_MAXSIZE: the page was within that when fetched)
            body = decoded_body(previous.body, previous.headers.get("Content-Encoding", ""), SITEMAP_MAX_BYTES)
            if body is None:
                return False
            headers = Headers({k: v for k, v in previous.headers.items() if k != "Content-Encoding"})
            before = HtmlResponse(previous.url, body=body, headers=headers)
            before_title, text, _ = self._read(before.selector.root, before.url, site_rules)
        except Exception:  # noqa: BLE001 - then it is not known to be the same
            return False
        return text == content and before_title == title

    def _decoded(self, response: HtmlResponse) -> HtmlResponse:
        """The response decoded in the encoding its body is in, when it declares another."""
        better = better_encoding(response.body, response.encoding, response.text)
        if better is None:
            return response
        self.crawler.stats.inc_value("docs/encoding_mismatch")
        self.logger.warning(
            "%(url)s declares %(declared)s but its body is not: read as %(actual)s",
            {"url": response.url, "declared": response.encoding, "actual": better},
        )
        return response.replace(encoding=better)

    def _parseable(self, response: HtmlResponse) -> HtmlResponse:
        """The response, its tags nested past what lxml parses left out when it is that
        deep (libxml2 drops the rest of such a page without a word)."""
        if not deeper_than(response.selector.root, MAX_DEPTH):  # the cheap check, every page
            return response
        depth = tree_depth(response.selector.root)
        self.crawler.stats.inc_value("docs/deep_html")
        self.logger.warning(
            "%(url)s nests elements %(depth)s deep: what is deeper than %(max)s is kept as plain text",
            {
                "url": response.url,
                "depth": depth if depth < PARSER_MAX_DEPTH else f"{PARSER_MAX_DEPTH}+",
                "max": MAX_DEPTH,
            },
        )
        if depth < PARSER_MAX_DEPTH:
            return response
        return response.replace(body=flatten_deep_html(response.text).encode("utf-8"), encoding="utf-8")

    def follow_links(self, urls: list[str], depth: int, linking: str | None = None) -> Iterator[Request]:
        """Requests for the links of a page at ``depth`` (absolute URLs, every link it
        holds) that this crawl's rules allow; ``linking``: that page's URL, kept with a
        link held for ``max_pages`` and requested later (a broken one is then named
        with the page that links it)."""
        if self.budget.spent():
            self._incomplete("max_pages")
            return
        if self.max_depth is not None and depth >= self.max_depth:
            if any(self._allowed(url) for url in urls):
                self._incomplete("max_depth")
            return
        requested = self.requested
        # a link to an anchor is a link to its page (a Sphinx index links one page
        # hundreds of times, each to another anchor): one URL, never a trap's count
        for url in dict.fromkeys(urldefrag(url)[0] for url in urls):
            # a URL this spider asked for already, at this depth or a shallower one, is a
            # duplicate Scrapy's filter would drop: no request is made for it (a site's
            # navigation puts hundreds of links on every page, the same on each); so is
            # one the crawl's scope left out
            if requested.get(url, depth + 2) <= depth + 1 or url in self.out_of_scope:
                continue
            # (a spelling known to be another page, /x/index.html of /x/, is that page's URL)
            url = self.cache.page_url(url)
            if requested.get(url, depth + 2) <= depth + 1:
                continue
            if not self._allowed(url):
                self.left_out(url, depth + 1)
                continue
            if url not in requested and (trap := self.traps.admit(url)) is not None:
                # a crawl trap (an endless calendar, a new URL per request): not followed,
                # and the run partial: what it hides is not marked removed
                self.crawler.stats.inc_value(f"docs/trap_{trap}")
                self._incomplete(f"crawl trap: links past {TRAP_SETTINGS[trap]} not followed")
                continue
            if (request := self.page_request(url, depth + 1, linking)) is not None:
                yield request

    def page_request(self, url: str, depth: int, linking: str | None = None) -> Request | None:
        """The request for the page ``url`` at ``depth``; ``None`` when ``max_pages``
        leaves no room for it: the pages recorded and the page requests still out
        reach it. The URL is then held (:meth:`spider_idle` may request it)."""
        url = self.cache.page_url(url)
        self.requested.note(url, depth)
        if not self.budget.admit(url, depth, linking):
            self._incomplete("max_pages")
            return None
        # (a URL requested before: Scrapy's duplicate filter drops it, nothing is downloaded)
        return Request(url, callback=self.parse, errback=self.failed, meta={META_DEPTH: depth})

    def _count_held(self, change: int) -> None:
        """The links held for ``max_pages`` are ``change`` more (or fewer)."""
        self.crawler.stats.inc_value("docs/max_pages_held", change)

    def spider_idle(self) -> None:
        """Nothing is in flight: the pages sitemaps listed that wait are requested
        (:meth:`request_listed`); with none, the known broken links replayed this run are
        asked for if a known page was not reached (:meth:`_recheck_missing`), and the
        links held for ``max_pages`` requested while there is room (:meth:`_request_held`)."""
        self.budget.idle()
        if self.request_listed():
            raise DontCloseSpider  # (pages a sitemap listed wait: the crawl is not done)
        rechecked = self._recheck_missing()
        if self._request_held() or rechecked:
            raise DontCloseSpider

    def _request_held(self) -> bool:
        """``max_pages``: every page request made has come to a page or to nothing (a
        404, a failure, a duplicate): the pages held are requested while fewer than
        ``max_pages`` pages were recorded, in the order found. Whether any was."""
        if not self.budget.waiting():
            return False
        engine = self.crawler.engine
        assert engine is not None
        for url, depth, linking in self.budget.release():
            request = self.page_request(url, depth)
            assert request is not None
            if linking is not None:
                request.meta[META_LINKED_FROM] = linking  # (engine.crawl: no spider middleware sets a Referer)
            engine.crawl(request)
        return True

    def _incomplete(self, reason: str) -> None:
        self.cache.mark_incomplete(reason)

    def listed_pages(self, urls: list[str]) -> list[str]:
        """The pages a sitemap lists (:meth:`parse_sitemap`) that wait to be requested,
        each URL as it will be: taken as requested at depth 1 from now on (a link to one
        is not followed, as if its request were made). None past ``max_depth`` 0."""
        if self.max_depth is not None and self.max_depth < 1:
            for url in urls:
                self.listed_page(url)  # (the run partial, for a page not requested)
            return []
        requested = self.requested
        waiting = []
        for url in urls:
            url = self.cache.page_url(url)
            requested.note(url, 1)
            waiting.append(url)
        return waiting

    def listed_page(self, url: str) -> Request | None:
        """The request for a page a sitemap lists (:meth:`parse_sitemap`), at depth 1."""
        if self.max_depth is not None and self.max_depth < 1:
            # a sitemap's page is at depth 1: past max_depth 0 (the start URLs alone)
            if urldefrag(url)[0] not in self.requested:
                self._incomplete("max_depth")
            return None
        if (request := self.page_request(url, 1)) is not None:
            request.meta[META_LISTED] = True  # (a known broken link listed is asked for)
        return request
