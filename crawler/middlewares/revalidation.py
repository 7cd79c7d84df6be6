"""Downloader middleware: conditional requests, and unchanged pages served from the cache."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.http import Headers, Response
from scrapy.responsetypes import responsetypes

from crawler.cache import cache_for
from crawler.cache.records import STATUS_REMOVED, utcnow
from crawler.cache.responses import StoredResponse
from crawler.choices import run_choices
from crawler.config import typed
from crawler.http import HTML_TYPES, content_type, drop_validators
from crawler.identity import PageIdentity
from crawler.incremental.converter import stored_converter
from crawler.incremental.folding import folded_response, known_page, recorded_as, stored_as_directory
from crawler.incremental.revisit import VALIDATORS, RevisitPolicy, missing_links, older
from crawler.incremental.schedule import revisit_policy
from crawler.lib.urls import url_domain
from crawler.meta import (
    FLAG_DOWNLOAD_STOPPED,
    FLAG_DUPLICATE,
    FLAG_NOT_MODIFIED,
    FLAG_REVISIT_SKIPPED,
    FLAG_SAME_BODY,
    META_DEPTH,
    META_DONT_REVALIDATE,
    META_FORCE_EXTRACTION,
    META_FORCE_RENDER,
    META_LISTED,
    META_RECHECK,
    META_REVALIDATION,
    REPLAY_FLAGS,
    Revalidation,
    revalidation,
    wants,
)
from crawler.signals import run_recorded, run_report

if TYPE_CHECKING:
    from typing import Any

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from crawler.cache import Cache
    from crawler.cache.ports import RevalidationStore

logger = logging.getLogger(__name__)

#: Response headers kept with a stored body (enough to parse it and to revalidate).
STORED_HEADERS = ("Content-Type", "Content-Encoding", "Content-Language", "ETag", "Last-Modified")
#: headers a 304 carries that replace the stored ones (RFC 9111 section 4.3.4, as
#: HttpCacheMiddleware's ``_freshen_cached_response``): its new validators
FRESHENED_HEADERS = ("ETag", "Last-Modified")
#: Content types whose bodies are kept: pages and sitemaps.
STORED_TYPES = (
    b"text/html",
    b"application/xhtml+xml",
    b"application/xml",
    b"text/xml",
    b"application/gzip",
    b"application/x-gzip",
)
#: every stored validator sent (no revisit schedule)
ALL_VALIDATORS = frozenset(VALIDATORS)


class RevalidationMiddleware:
    """Makes recrawls download as little as possible.

    Known GETs carry their stored validators; a 304 is answered with the stored page
    (``revalidation_not_modified``) so the spider still parses it and follows its links.
    A page the revisit schedule says is not due is not requested at all: its stored
    response is replayed (``revalidation_revisit_skipped``). See docs/revisit.md.

    Installed by :class:`crawler.addons.IncrementalAddon` (840); off with
    ``REVALIDATION_ENABLED = False``. ``request.meta["dont_revalidate"] = True`` sends one
    request unconditionally; requests a browser renders are left alone.
    """

    def __init__(
        self,
        cache: Cache,
        identity: PageIdentity,
        stats: StatsCollector,
        *,
        max_stored_bytes: int,
        revisit: RevisitPolicy | None = None,
        redo_download: bool = False,
    ) -> None:
        self.cache = cache
        #: the store's methods this component calls (:mod:`crawler.cache.ports`)
        self.store: RevalidationStore = cache.store
        self.identity = identity
        self.stats = stats
        self.max_stored_bytes = max_stored_bytes
        #: ``-a redo=download``: every page requested without validators, none skipped
        self.redo_download = redo_download
        #: the revisit schedule deciding what is requested; None: every known page is
        self.revisit = None if redo_download else revisit
        #: the schedule learning from the pages requested (on a redo too); None: REVISIT_ENABLED is off
        self.learn = revisit
        #: domain -> its lastmod trust record, read once per run
        self._trust: dict[str, dict[str, Any] | None] = {}
        #: each host's known broken links (:meth:`_missing_map`)
        self._missing_read: dict[str, dict[str, dict[str, Any]]] = {}
        #: the known broken links not asked for again this run (url_hash)
        self._missing_skipped: set[str] = set()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RevalidationMiddleware:
        settings = typed(crawler.settings)
        if not settings.getbool("REVALIDATION_ENABLED"):
            raise NotConfigured("RevalidationMiddleware is off: REVALIDATION_ENABLED is False")
        assert crawler.stats is not None
        middleware = cls(
            cache_for(crawler),
            PageIdentity.from_crawler(crawler),
            crawler.stats,
            max_stored_bytes=settings.getint("REVALIDATION_MAX_STORED_BYTES"),
            revisit=revisit_policy(crawler.settings),
            redo_download="download" in run_choices(crawler).redo,
        )
        crawler.signals.connect(middleware.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(middleware.run_recorded, signal=run_recorded)
        crawler.signals.connect(middleware.run_report, signal=run_report)
        return middleware

    async def process_request(self, request: Request) -> Request | Response | None:
        # a redirect or a retry copies the request, and its verdict with it: a new one
        # is made here (the copy's validators, those of the URL it came from, dropped)
        copied = revalidation(request.meta)
        request.meta.pop(META_REVALIDATION, None)
        if request.method != "GET" or request.body:
            return None
        if request.meta.get("playwright"):
            # rendered by a browser (RenderMiddleware, scrapy-playwright): never
            # conditional, since a browser cannot use a 304, and the rendered DOM is
            # not the server's response to keep
            drop_validators(request.headers)
            return None
        if copied is not None and copied.conditional:
            drop_validators(request.headers)
        url_hash = self.identity.url_hash(request.url)
        if wants(request.meta, META_DONT_REVALIDATE):
            self.stats.inc_value("revalidation/unconditional")
            return None
        verdict = request.meta[META_REVALIDATION] = Revalidation(url_hash)
        stored = self.store.get_response(url_hash) or stored_as_directory(self.store, self.identity, request.url)
        if stored is None:
            folded = folded_response(self.store, self.identity, request.url, url_hash) if self.revisit else None
            if folded is not None and self._not_due(request, url_hash, folded):
                # an index file spelling the pipeline folded into its directory's page
                # (no response of its own is kept): that page's response, not due either
                verdict.status = "revisit_skipped"
                return self._replay(request, folded, FLAG_REVISIT_SKIPPED)
            # (a folded spelling is a page the cache has: never a known broken link)
            missing = self._missing(request, url_hash) if self.revisit is not None and folded is None else None
            if missing is not None:
                # a known broken link, not due: its 404 again, not a request
                verdict.status = "revisit_skipped"
                status = missing.get("status")
                return Response(
                    url=request.url,
                    status=status if status in (404, 410) else 404,
                    flags=[FLAG_REVISIT_SKIPPED],
                    request=request,
                )
            return None
        if url_hash in self.cache.run.fetched:
            # another spelling of a page answered this run (/guide/ and /guide?utm_source=x):
            # served as it was just answered, not asked for again (a first crawl sent
            # such requests conditionally and counted their 304s)
            self.stats.inc_value("revalidation/duplicate_spellings")
            verdict.status = "duplicate"
            return self._replay(request, stored, FLAG_DUPLICATE)
        if self.revisit is not None and self._not_due(request, url_hash, stored):
            verdict.status = "revisit_skipped"
            return self._replay(request, stored, FLAG_REVISIT_SKIPPED)
        sent = self._validators_sent(request.url, url_hash, stored)
        if stored.etag and "etag" in sent:
            request.headers[b"If-None-Match"] = stored.etag
            verdict.conditional = True
        if stored.last_modified and "last_modified" in sent:
            request.headers[b"If-Modified-Since"] = stored.last_modified
            verdict.conditional = True
        if verdict.conditional:
            self.stats.inc_value("revalidation/conditional_requests")
        # what a 200 is compared with, not read again (as HttpCacheMiddleware keeps
        # its cached response in meta): the same bytes mean the source did not change
        verdict.compared = stored
        return None

    async def process_response(self, request: Request, response: Response) -> Request | Response:
        verdict = revalidation(request.meta)
        if verdict is None:
            return response
        stored, verdict.compared = verdict.compared, None
        url_hash = verdict.url_hash
        if not REPLAY_FLAGS.isdisjoint(response.flags):
            return response
        if response.status == 304 and verdict.conditional:
            return self._not_modified(request, response, verdict, stored)
        if response.status in (404, 410):
            known = known_page(self.store, self.identity, url_hash, request.url)
            if known is not None:
                self.stats.inc_value("revalidation/gone")
                self.cache.run.gone.add(known)
                verdict.status = "gone"
            elif self.learn is not None and META_DEPTH in request.meta:
                self._note_missing(request.url, url_hash, response.status)
            return response
        if 200 <= response.status < 400 and self.learn is not None:
            # a page, or a redirect to one: a known broken link no longer
            domain = url_domain(request.url)
            if url_hash in self._missing_map(domain):
                self.cache.run.revisit.note_found(domain, url_hash)
        if verdict.status is None:
            verdict.status = "fetched"
        if response.status == 200 and content_type(response) in HTML_TYPES:
            self.stats.inc_value("revalidation/fetched")
        if response.status == 200 and self._storable(response):
            headers = {
                name: value.decode("latin-1")
                for name in STORED_HEADERS
                if (value := response.headers.get(name)) is not None
            }
            if stored is not None and self.learn is not None:
                # (whether the page changed, its content hash says: ContentHashPipeline)
                self.cache.run.revisit.note_validators(url_hash, stored.headers, headers)
            if stored is not None and stored.body == response.body:
                # the source is the one stored (a server without validators, or whose
                # validators change): the page can only read differently if the
                # converter did (ContentHashPipeline's CONVERTER_UPGRADE)
                self.stats.inc_value("revalidation/same_body")
                response = response.replace(flags=[*response.flags, FLAG_SAME_BODY])
            elif stored is not None:
                verdict.previous = stored
                record = self.store.get_page(url_hash)
                verdict.text_converter = None if record is None else stored_converter(record)
            now = utcnow()
            stored = StoredResponse(
                url=response.url,
                status=200,
                headers=headers,
                body=response.body,
                fetched_at=now,
                checked_at=now,
            )
            self.store.put_response(url_hash, stored)
            verdict.stored = stored
            self.stats.inc_value("revalidation/stored_responses")
            self.cache.run.fetched.add(url_hash)
            self.cache.wrote()
        return response

    def _not_due(self, request: Request, url_hash: str, stored: StoredResponse) -> bool:
        """Whether the revisit schedule skips this known page now, ``stored`` its stored
        response (when it was last checked, for a page the schedule has no history of
        yet); a sampled page is requested, and counted as such."""
        assert self.revisit is not None
        if wants(request.meta, META_FORCE_EXTRACTION) or wants(request.meta, META_FORCE_RENDER):
            return False
        # the page this URL is recorded as: its own, or its directory's (folded)
        key, record = recorded_as(self.store, self.identity, request.url, url_hash)
        if record is None or record.get("status") == STATUS_REMOVED:
            # no page recorded (a stored response alone), or one found gone: asked for
            return False
        revisit = self.cache.run.revisit
        state = record.get("revisit")
        decision, reason = self.revisit.decide(
            state if isinstance(state, dict) else None,
            self._host_trust(record.get("domain", "")),
            self._lastmod(request, url_hash, key),
            datetime.now(UTC),
            checked=stored.checked_at or stored.fetched_at,
        )
        if decision == "request":
            self.stats.inc_value(f"revisit/requested/{reason}")
            return False
        if self.revisit.sampled(revisit.draw(self.cache.run.run_id), key):
            self.stats.inc_value("revisit/sampled")
            revisit.sampled.add(key)
            return False
        self.stats.inc_value(f"revisit/skipped/{reason}")
        revisit.skipped.add(key)
        verified = state.get("verified_at") if state else stored.checked_at or stored.fetched_at
        revisit.oldest_verified = older(revisit.oldest_verified, verified)
        return True

    def _missing(self, request: Request, url_hash: str) -> dict[str, Any] | None:
        """The host's entry for this known broken link when the schedule does not ask
        for it again now (None: asked for: not known as broken, due, sampled, forced)."""
        assert self.revisit is not None
        meta = request.meta
        if wants(meta, META_RECHECK) and url_hash in self._missing_skipped:
            # replayed earlier this run, asked for before a run that missed a known page ends
            self._missing_skipped.discard(url_hash)
            self.cache.run.revisit.missing_skipped -= 1
            self.stats.inc_value("revisit/broken_link_skipped", -1)
            self.stats.inc_value("revisit/broken_link_requested/recheck")
        if not meta.get(META_DEPTH) or wants(meta, META_LISTED) or wants(meta, META_RECHECK):
            # robots.txt, sitemaps and start URLs (no depth) are asked for every run; a
            # link a sitemap lists may be a page now; a recheck is a request
            return None
        if self.cache.run.revisit.share is not None:
            # a shared run: the process that replays the link cannot know whether
            # another downloaded a changed page that now links only through it
            return None
        if wants(meta, META_FORCE_EXTRACTION) or wants(meta, META_FORCE_RENDER):
            return None
        entry = self._missing_map(url_domain(request.url)).get(url_hash)
        if not isinstance(entry, dict):
            return None
        decision, reason = self.revisit.decide(entry, None, None, datetime.now(UTC))
        if decision == "request":
            self.stats.inc_value(f"revisit/broken_link_requested/{reason}")
            return None
        if self.revisit.sampled(self.cache.run.revisit.draw(self.cache.run.run_id), url_hash):
            self.stats.inc_value("revisit/broken_link_requested/sampled")
            return None
        if url_hash not in self._missing_skipped:  # (two spellings of one missing page: one link)
            self._missing_skipped.add(url_hash)
            self.stats.inc_value("revisit/broken_link_skipped")
            self.cache.run.revisit.missing_skipped += 1
        return entry

    def _note_missing(self, url: str, url_hash: str, status: int) -> None:
        """A link to a page the cache never had answered ``status`` (404, 410): kept in
        its host's record with a schedule, as a page's, that grows while it stays missing."""
        assert self.learn is not None
        domain = url_domain(url)
        before = self._missing_map(domain).get(url_hash)
        state, _ = self.learn.checked(
            before if isinstance(before, dict) else None, changed=False, lastmod=None, now=datetime.now(UTC)
        )
        self.cache.run.revisit.note_missing(domain, url_hash, {"url": url, "status": status, **state})

    def _validators_sent(self, url: str, url_hash: str, stored: StoredResponse) -> frozenset[str]:
        """The stored validators a request sends (``VALIDATORS`` names): all, unless
        the revisit schedule leaves some out (a run downloading every page again, the
        sample that checks them, a host whose validator hid a change)."""
        sent: frozenset[str]
        reason: str | None
        if self.redo_download:
            sent, reason = frozenset(), "redo"
        elif self.learn is None:
            return ALL_VALIDATORS
        else:
            sent, reason = self.learn.validators(
                self._host_trust(url_domain(url)),
                run_id=self.cache.run.revisit.draw(self.cache.run.run_id),
                url_hash=url_hash,
            )
        held = (stored.etag and "etag" not in sent) or (stored.last_modified and "last_modified" not in sent)
        if reason is not None and held:
            self.stats.inc_value(f"revisit/unconditional/{reason}")
        return sent

    def _lastmod(self, request: Request, url_hash: str, key: str) -> str | None:
        """The page's lastmod in this run's sitemaps: listed under this URL, the page it
        is recorded as, or a URL that redirected here."""
        lastmods = self.cache.run.revisit.listed()
        for candidate in (url_hash, key, *(self.identity.url_hash(u) for u in request.meta.get("redirect_urls", []))):
            if candidate in lastmods:
                return lastmods[candidate]
        return None

    def _host_trust(self, domain: str) -> dict[str, Any] | None:
        """The host's trust as this run decides with it: read once per run (in a shared
        run, as the run's first process to ask read it: a process that closes and adds
        its observations does not change how the others decide)."""
        if domain not in self._trust:
            share = self.cache.run.revisit.share
            read = partial(self._stored_trust, domain)
            self._trust[domain] = read() if share is None else share.host_trust(domain, read)
        return self._trust[domain]

    def _missing_map(self, domain: str) -> dict[str, dict[str, Any]]:
        """The host's known broken links as the store held them when this run first
        asked (read once per run and host; apart from the trust :meth:`_host_trust`
        decides with, which is read when a page of the host is first decided)."""
        if domain not in self._missing_read:
            self._missing_read[domain] = missing_links(self._stored_trust(domain))
        return self._missing_read[domain]

    def _stored_trust(self, domain: str) -> dict[str, Any] | None:
        record = self.store.get_domain(domain) if domain else None
        trust = record.get("revisit") if isinstance(record, dict) else None
        return trust if isinstance(trust, dict) else None

    def run_recorded(self, cache: Cache, run: Any) -> None:
        """Adds this process's lastmod and validator observations to each host's trust
        record (the domain record's ``revisit``), in one update per host that no other
        process of a shared run can come between."""
        revisit = self.cache.run.revisit
        hosts = revisit.observed_hosts()
        for domain in hosts:
            self.store.update_domain(domain, partial(revisit.add_trust, domain))
            self.cache.wrote()
        if hosts:
            self.cache.commit()

    def run_report(self, cache: Cache, report: dict[str, Any]) -> None:
        """Adds ``revisit`` to the run report: requests saved, the sample and the miss
        rate it saw, the oldest check of a skipped page, the hosts whose lastmod is
        trusted and each host's change signals (as recorded at the end of this run)."""
        section = self.cache.run.revisit.section(enabled=self.learn is not None, skipping=self.revisit is not None)
        if self.learn is not None:
            # (read again: the run's observations are in)
            trust = {domain: self._stored_trust(domain) for domain in sorted(self.cache.run.domains)}
            section["trusted_hosts"] = [domain for domain, host in trust.items() if self.learn.trusted(host)]
            # each host's change signals: lastmod, ETag, Last-Modified (state and counts)
            section["signals"] = {domain: self.learn.signals(host) for domain, host in trust.items()}
        report["revisit"] = section

    def _not_modified(
        self, request: Request, response: Response, verdict: Revalidation, stored: StoredResponse | None
    ) -> Request | Response:
        """The stored page for a 304: ``stored``, what the request's validators came
        from (read once, in :meth:`process_request`)."""
        if stored is None:
            # the stored body vanished (a corrupt entry): fetch the page in full
            self.stats.inc_value("revalidation/stored_missing")
            logger.warning("304 for %(url)s but its stored body is unreadable; refetching", {"url": request.url})
            headers = request.headers.copy()
            drop_validators(headers)
            meta = {k: v for k, v in request.meta.items() if k != META_REVALIDATION}
            meta[META_DONT_REVALIDATE] = True
            return request.replace(headers=headers, meta=meta, dont_filter=True)
        if self._freshen(stored, response):
            # new validators are kept (the next request sends them); the check itself
            # is the page record's (its revisit state): rewriting (and compressing
            # again) the whole stored page for a timestamp would be waste
            self.store.put_response(verdict.url_hash, stored)
            self.cache.wrote()
        self.stats.inc_value("revalidation/not_modified")
        self.cache.run.fetched.add(verdict.url_hash)
        verdict.status = "not_modified"
        return self._replay(request, stored, FLAG_NOT_MODIFIED)

    def _freshen(self, stored: StoredResponse, response: Response) -> bool:
        """The 304's validators replace the stored ones (RFC 9111 section 4.3.4: a
        server may change a page's ETag while its representation stays the same, and
        answers the next conditional request with the new one); whether any changed."""
        changed = False
        for name in FRESHENED_HEADERS:
            value = response.headers.get(name)
            if value is None:
                continue
            text = value.decode("latin-1")
            if stored.headers.get(name) != text:
                stored.headers[name] = text
                changed = True
        if changed:
            self.stats.inc_value("revalidation/validators_freshened")
        return changed

    def _storable(self, response: Response) -> bool:
        # (a download stopped at its headers has no body to store)
        return (
            content_type(response) in STORED_TYPES
            and len(response.body) <= self.max_stored_bytes
            and FLAG_DOWNLOAD_STOPPED not in response.flags
        )

    @staticmethod
    def _replay(request: Request, stored: StoredResponse, flag: str) -> Response:
        verdict = revalidation(request.meta)
        if verdict is not None:
            verdict.stored = stored  # what the spider's reuse compares with, not read again
        headers = Headers(stored.headers)
        # the stored URL, not the request's spelling of it: relative links resolve as
        # they did when the page was fetched
        respcls = responsetypes.from_args(headers=headers, url=stored.url, body=stored.body)
        return respcls(
            url=stored.url,
            status=200,
            headers=headers,
            body=stored.body,
            flags=[flag],
            request=request,
        )

    def spider_closed(self) -> None:
        self.cache.commit()
