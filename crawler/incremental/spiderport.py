"""All a spider asks of the crawl's cache and run, in five narrow calls: what a stored
response was parsed into before (and keeping what it parses into now), the run being
partial, a sitemap's lastmod for the revisit schedule, and the pages recorded of a
site (a ``max_pages`` recrawl asks for those first).

The spider converts; the store stays behind this port. Without a cache (a spider built
alone, in a test) every call is a no-op.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from crawler.cache import peek_cache
from crawler.cache.records import STATUS_CHANGED, STATUS_NEW, STATUS_UNCHANGED, utcnow
from crawler.cache.responses import ParsedPage, parse_source
from crawler.identity import PageIdentity
from crawler.incremental.folding import directory_of, folded_into
from crawler.lib.urls import index_file_parent

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from scrapy.crawler import Crawler

    from crawler.cache import Cache
    from crawler.cache.ports import SpiderStore
    from crawler.cache.records import PageRecord
    from crawler.meta import Revalidation


#: how many distinct sitemap lastmods are each held once for all the pages they date
LASTMOD_VALUES_SHARED = 4096
#: the statuses of a page the cache holds (not removed)
RECORDED = (STATUS_NEW, STATUS_CHANGED, STATUS_UNCHANGED)


def _recorded(store: SpiderStore, domain: str, limit: int | None = None) -> Iterator[tuple[str, PageRecord]]:
    """The pages of ``domain`` the store holds, not removed (by status: each query reads
    at most ``limit`` rows, never a whole site's records when ``limit`` is given)."""
    for status in RECORDED:
        yield from store.query_pages(domain=domain, status=status, limit=limit)


def _every(url: str) -> bool:
    return True


def _first_recorded(store: SpiderStore, domain: str, count: int, wanted: Callable[[str], bool]) -> list[str]:
    """The first ``count`` URLs (by URL) of the pages of ``domain`` the store holds, not
    removed, that ``wanted`` admits. Each query reads at most ``rows`` rows, and ``rows``
    grows (x4) only while a status read that many and gave fewer than ``count`` wanted:
    never a whole site's records for the pages of one part of it."""
    rows = count
    while True:
        found: list[str] = []
        complete = True
        for status in RECORDED:
            read = list(store.query_pages(domain=domain, status=status, limit=rows))
            urls = [url for _, record in read if isinstance(url := record.get("url"), str) and wanted(url)]
            # this status's first `count` wanted are known when it gave them, or all it has
            complete = complete and (len(urls) >= count or len(read) < rows)
            found.extend(urls)
        if complete:
            return sorted(found)[:count]
        rows *= 4


class SpiderPort:
    """The crawl's cache as a spider sees it (:meth:`from_crawler`)."""

    def __init__(self, crawler: Crawler | None) -> None:
        self.crawler = crawler
        #: index file spelling -> the URL its page is requested as (None: its own)
        self._spellings: dict[str, str | None] = {}
        #: the first LASTMOD_VALUES_SHARED lastmod values noted, each held once: a
        #: sitemap's pages share a few dates (a build's), one string for all of them is
        #: 70 bytes a page less (not more: values all different are not kept twice)
        self._lastmod_values: dict[str, str] = {}

    def _cache(self) -> Cache | None:
        return None if self.crawler is None else peek_cache(self.crawler)

    def _store(self) -> SpiderStore | None:
        """All the spider asks of the store: what responses were parsed into."""
        cache = self._cache()
        return None if cache is None else cache.store

    def parsed_before(self, verdict: Revalidation | None, converter: str, url: str) -> ParsedPage | None:
        """What the stored response ``verdict`` names was parsed into, by ``converter``,
        from this very response at ``url``; ``None`` when the page must be parsed
        (nothing kept, another body, another converter, a damaged entry)."""
        store = self._store()
        if store is None or verdict is None or verdict.stored is None:
            return None
        try:
            parsed = store.get_parsed(verdict.url_hash)
        except Exception:  # noqa: BLE001 - a damaged entry: the page is parsed again
            return None
        if parsed is None or parsed.converter != converter or parsed.source_sha256 != parse_source(verdict.stored):
            return None
        fields = parsed.fields
        if not all(isinstance(fields.get(name), str) for name in PARSED_FIELDS) or fields["url"] != url:
            return None
        return parsed

    def keep_parsed(self, verdict: Revalidation, converter: str, fields: dict[str, Any], links: list[str]) -> None:
        """Keeps what the stored response of ``verdict`` parsed into (``fields``, every
        link), for the recrawls it answers again. A write that fails raises: only a
        recrawl's shortcut is lost, the caller says so."""
        cache = self._cache()
        if cache is None or verdict.stored is None:
            return
        page = ParsedPage(
            source_sha256=parse_source(verdict.stored),
            converter=converter,
            fields={name: fields[name] for name in PARSED_FIELDS},
            links=links,
            parsed_at=utcnow(),
        )
        store: SpiderStore = cache.store
        store.put_parsed(verdict.url_hash, page)
        cache.wrote()

    def mark_incomplete(self, reason: str) -> None:
        """This run did not reach every page it could have: nothing is marked removed."""
        cache = self._cache()
        if cache is not None:
            cache.run.mark_incomplete(reason)

    def recorded_pages(self, domains: list[str], limit: int, wanted: Callable[[str], bool] | None = None) -> list[str]:
        """The URLs of at most ``limit`` pages the cache recorded of ``domains`` (the
        hosts of a crawl's start URLs) and has not marked removed, that ``wanted``
        admits (the crawl's scope), by domain in the order given, then by URL: the same
        pages run after run. ``[]`` without a cache; a store that cannot be read gives
        ``[]`` (the crawl finds its pages by their links)."""
        store = self._store()
        urls: list[str] = []
        if store is None or limit <= 0:
            return urls
        try:
            for domain in domains:
                urls.extend(_first_recorded(store, domain, limit - len(urls), wanted or _every))
                if len(urls) >= limit:
                    break
        except Exception:  # noqa: BLE001 - a damaged index: the links find the pages
            return []
        return urls

    def unreached(self, in_scope: Callable[[str], bool]) -> bool:
        """Whether the cache has a page of the domains this run recorded, not marked
        removed, in the crawl's scope (``in_scope``), that this run has neither recorded
        nor found gone (yet): a page a complete run would mark removed for not being
        reached. False without a cache or in a partial run (it removes none); True when
        the store cannot be read (as if one were: the caller then checks rather than
        trusts)."""
        cache = self._cache()
        if cache is None:
            return False
        run = cache.run
        if run.incomplete_reasons:
            return False  # a partial run marks no page removed for not being reached
        store: SpiderStore = cache.store
        try:
            for domain in sorted(run.domains):
                for url_hash, record in _recorded(store, domain):
                    if url_hash not in run.seen and url_hash not in run.gone and in_scope(str(record.get("url", ""))):
                        return True
        except Exception:  # noqa: BLE001 - a damaged index: check rather than trust
            return True
        return False

    def last_crawl_bounded(self, reason: str) -> bool:
        """Whether the cache's last crawl (not a ``scrapy process``) was partial for
        ``reason`` (``max_pages``: its budget held pages back); False without a cache or
        a report, or when the reports cannot be read."""
        store = self._store()
        if store is None:
            return False
        try:
            reports = store.run_reports(20)
        except Exception:  # noqa: BLE001 - a damaged report: as without one
            return False
        last = next((r for r in reversed(reports) if r.get("kind", "crawl") == "crawl"), None)
        return last is not None and reason in (last.get("incomplete_reasons") or [])

    def page_url(self, url: str) -> str:
        """The URL to request for the page at ``url``: for an index file spelling an
        earlier crawl found to be its directory's page, the URL that page is recorded
        under (:func:`crawler.incremental.folding.folded_into`), so one page is one
        request; else ``url``. Asked once a run per spelling; a store that cannot be
        read leaves the URL as it is."""
        cache = self._cache()
        if cache is None or self.crawler is None or index_file_parent(url) is None:
            return url
        if url not in self._spellings:
            try:
                self._spellings[url] = folded_into(cache.store, PageIdentity.from_crawler(self.crawler), url)
            except Exception:  # noqa: BLE001 - a damaged record: the spelling is asked for
                self._spellings[url] = None
        return self._spellings[url] or url

    def note_lastmod(self, url: str, lastmod: Any) -> None:
        """A listed page's sitemap lastmod, for the revisit schedule (as the sitemap
        says it: only whether it moved counts); an index file spelling's is its
        directory page's too."""
        cache = self._cache()
        if cache is None or self.crawler is None or not isinstance(lastmod, str) or not lastmod.strip():
            return
        identity = PageIdentity.from_crawler(self.crawler)
        lastmods = cache.run.revisit.lastmods
        value = lastmod.strip()
        if (shared := self._lastmod_values.get(value)) is not None:
            value = shared
        elif len(self._lastmod_values) < LASTMOD_VALUES_SHARED:
            self._lastmod_values[value] = value
        lastmods[identity.url_hash(url)] = value
        directory = directory_of(identity, url)
        if directory is not None:
            lastmods.setdefault(directory[1], value)


#: the item fields a ParsedPage keeps: what parsing the page gave (the rest, depth,
#: fetch, converter, source_unchanged, is this request's)
PARSED_FIELDS = ("url", "canonical_url", "title", "content")
