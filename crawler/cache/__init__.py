"""The extracted-docs cache as one crawl sees it: the store, its lock, this run's state.

One owner opens it: the extension :class:`crawler.extensions.cache.CacheOwner` opens
the store and takes its writer lock (:meth:`StorePort.writer_lock`: the embedded
store's one writer, or a shared lock on a server store) when the crawl starts, commits
when the spider closes and closes it when the engine stops, as Scrapy's
HttpCacheMiddleware owns its storage. Every other component of the crawl looks the
same :class:`Cache` up with :func:`cache_for`, which never opens one. Commands open the
store with :func:`open_store` or :func:`using_store`.
"""

from __future__ import annotations

import logging
import os
import secrets
import time
import weakref
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, cast

from crawler.cache.errors import CacheCorruptError, CacheMissingError, CacheStorageError
from crawler.cache.lock import CacheLockedError
from crawler.cache.ports import DocStore
from crawler.cache.records import utcnow
from crawler.cache.runkeys import RunKeys, SeenPages
from crawler.config import load_named, typed
from crawler.defaults import SETTINGS
from crawler.incremental.revisit import RevisitRun

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from contextlib import AbstractContextManager

    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings
    from scrapy.statscollectors import StatsCollector

    from crawler.cache import ports
    from crawler.support.mistakes import Mistake

logger = logging.getLogger(__name__)

__all__ = [
    "Cache",
    "CacheCorruptError",
    "CacheLockedError",
    "CacheMissingError",
    "CacheNotOpenError",
    "CacheStorageError",
    "RunState",
    "StoreSettingError",
    "build_store",
    "cache_for",
    "open_store",
    "own_cache",
    "peek_cache",
    "store_factory",
    "using_store",
]


class StoreSettingError(ValueError):
    """``EXTRACTED_DOCS_STORE`` names nothing that can be imported, or no store."""


def store_factory(settings: BaseSettings) -> type[ports.DocStore]:
    """The store class ``EXTRACTED_DOCS_STORE`` names, checked to have every method of
    the ports and to declare what it can do (:func:`store_abilities`);
    :class:`StoreSettingError` saying what is wrong when it has not."""
    name = typed(settings).get("EXTRACTED_DOCS_STORE")
    try:
        factory = load_named("EXTRACTED_DOCS_STORE", name) if isinstance(name, str) else name
    except ValueError as exc:
        raise StoreSettingError(str(exc)) from None
    if not callable(factory):
        raise StoreSettingError(f"EXTRACTED_DOCS_STORE={name!r} is not a store class")
    missing = [attr for attr in store_methods() if not callable(getattr(factory, attr, None))]
    missing += [attr for attr in store_abilities() if not isinstance(getattr(factory, attr, None), bool)]
    if missing:
        raise StoreSettingError(f"EXTRACTED_DOCS_STORE={name!r} is not a store: it lacks {', '.join(missing)}")
    return cast("type[ports.DocStore]", factory)


def open_store(settings: BaseSettings, *, readonly: bool) -> ports.DocStore:
    """The store ``EXTRACTED_DOCS_STORE`` names, opened on ``EXTRACTED_DOCS_DIR`` for a
    command (``scrapy cache``, ``scrapy vectors``, ``scrapy boilerplate``, the cron
    wrapper): it never creates a cache. Raises :class:`StoreSettingError` for a
    store that cannot be loaded, :class:`CacheMissingError` when there is no cache
    there, :class:`CacheCorruptError` when it cannot be read. A command that changes
    the store opens it with ``readonly=False`` and holds ``store.lock()`` meanwhile."""
    return build_store(store_factory(settings), settings, readonly=readonly, create=False)


def build_store(
    factory: Callable[..., ports.DocStore], settings: BaseSettings, *, readonly: bool, create: bool
) -> ports.DocStore:
    """A store from its class: ``factory.from_settings(settings, readonly=, create=)``
    when the class has one (a store that reads more than a directory: a server's DSN),
    else ``factory(EXTRACTED_DOCS_DIR, readonly=, create=)``; as Scrapy's
    ``build_from_crawler`` looks for ``from_crawler``."""
    from_settings = getattr(factory, "from_settings", None)
    if callable(from_settings):
        return cast("ports.DocStore", from_settings(settings, readonly=readonly, create=create))
    return factory(typed(settings).get("EXTRACTED_DOCS_DIR"), readonly=readonly, create=create)


@contextmanager
def using_store(settings: BaseSettings, *, changes: bool = False) -> Iterator[ports.DocStore]:
    """:func:`open_store` for the length of a ``with`` block, closed after; with
    ``changes`` opened for writing and under the store's lock until it is closed
    (CacheLockedError, "Nothing was changed", when another process holds it)."""
    store = open_store(settings, readonly=not changes)
    closed = False
    try:
        with _locked(store) if changes else nullcontext():
            try:
                yield store
            finally:
                closed = True
                store.close()  # what is pending is written under the lock
    finally:
        if not closed:
            store.close()


@contextmanager
def _locked(store: ports.StorePort) -> Iterator[None]:
    try:
        lock = store.lock()
        lock.__enter__()
    except CacheLockedError as exc:
        raise CacheLockedError(f"{exc} Nothing was changed.") from None
    try:
        yield
    finally:
        lock.__exit__(None, None, None)


def store_methods() -> list[str]:
    """Every method of the store's ports (crawler.cache.ports): what a store class must have."""
    from crawler.cache import ports

    members = (vars(port).items() for port in ports.DocStore.__mro__ if port.__name__.endswith("Port"))
    return [name for items in members for name, value in items if not name.startswith("_") and callable(value)]


def store_abilities() -> list[str]:
    """What a store class declares it can do (:class:`~crawler.cache.ports.StorePort`'s
    flags, each a class attribute True or False)."""
    return ["concurrent_writers", "embedded"]


_CACHES: weakref.WeakKeyDictionary[Crawler, Cache] = weakref.WeakKeyDictionary()


def new_run_id() -> str:
    """Sortable by time (to the millisecond), unique: ``20261122T031700123Z-1a2b3c``."""
    now = datetime.now(UTC)
    return f"{now:%Y%m%dT%H%M%S}{now.microsecond // 1000:03d}Z-{secrets.token_hex(3)}"


@dataclass
class RunState:
    """What this run has seen so far; lives in memory for the run only.

    Each field has one writer while the crawl fetches (named at the field), and the
    stages read it at the close. A run is filled by one of three: a crawl (the
    middleware, the pipeline and the ledger it tells, as below); ``scrapy process`` (nothing fetched:
    ClosingStages sets ``domains`` from the live pages it processes); ``scrapy process
    --run`` (ClosingStages sets ``run_id``, ``seen``, ``gone``, ``domains``, ``forced``
    from what the run's crawl processes recorded, :meth:`ClosingStages.start_run`).
    ``incomplete_reasons`` and ``mistakes`` are the exceptions by design: any component
    adds a reason or a mistake, through :meth:`mark_incomplete` and :meth:`note_mistake`
    only (added once, never removed); ``revisit`` is a
    record of its own (:class:`RevisitRun`) that three components add to.
    """

    #: set when the run starts (ClosingStages: the run's id in ``scrapy process --run``)
    run_id: str = field(default_factory=new_run_id)
    started_at: str = field(default_factory=utcnow)
    #: url_hash of every page recorded this run, in order, and the status it was
    #: recorded with (``None``: recorded by another process of a shared run); written by
    #: the crawl's Ledger (an index file spelling folded into its directory page's
    #: record taken out again)
    #: (held compactly: 50 bytes a page, not 130)
    seen: SeenPages = field(default_factory=SeenPages)
    #: url_hash of pages whose request asked to be extracted again (``force_extraction``);
    #: written by ContentHashPipeline
    forced: set[str] = field(default_factory=set)
    #: pages the middleware found gone (404/410) this run; written by RevalidationMiddleware
    gone: set[str] = field(default_factory=set)
    #: index file spellings recorded as pages of their own by earlier runs, found this
    #: run to be their directory's page; written by the crawl's Ledger (the removal
    #: stage removes them, as it removes gone pages, in any run)
    folded_away: set[str] = field(default_factory=set)
    #: pages answered this run (a 200 stored, or a 304 replayed): another spelling of
    #: one of them is served from the cache, not asked for again; written and read by
    #: RevalidationMiddleware only
    fetched: RunKeys = field(default_factory=RunKeys)
    #: the domains of the pages recorded; written by the crawl's Ledger
    domains: set[str] = field(default_factory=set)
    #: reasons this crawl did not reach every page it could have: any component, through
    #: :meth:`mark_incomplete`
    incomplete_reasons: list[str] = field(default_factory=list)
    #: what the user asked that the crawl ignores, one line each (a misspelt setting or
    #: spider argument): ClosingStages notes them, from the settings and the spider's
    #: ``input_mistakes``, through :meth:`note_mistake`
    mistakes: list[Mistake] = field(default_factory=list)
    #: the signal (``"SIGINT"``, ``"SIGTERM"``) that interrupted the closing stage;
    #: written by ClosingStages only
    interrupted: str | None = None
    #: why the run failed as a whole, None when it did not: written at the close, by
    #: ReportStage (no page could be crawled), ClosingStages (a stage raised),
    #: ExtractionStage (the extractor became unavailable) and, in a shared-frontier run,
    #: FrontierWorker (the run's Redis was lost): the first reason kept
    failed: str | None = None
    #: the converter of this run's pages and what is done on its upgrade (``id``,
    #: ``upgrade``: the crawl's Ledger sets it at the first page that names one)
    converter: dict[str, str] = field(default_factory=dict)
    #: what the revisit schedule did, a record of its own: the sitemap lastmods (the
    #: spider), what was skipped or sampled and the validators seen
    #: (RevalidationMiddleware), what the checked pages showed (ContentHashPipeline)
    revisit: RevisitRun = field(default_factory=RevisitRun)

    def mark_incomplete(self, reason: str) -> None:
        if reason not in self.incomplete_reasons:
            self.incomplete_reasons.append(reason)

    def note_mistake(self, mistake: Mistake) -> None:
        if mistake not in self.mistakes:
            self.mistakes.append(mistake)


class Cache:
    """A locked, open store plus the current run's state."""

    def __init__(
        self,
        store: DocStore,
        lock: AbstractContextManager[None] | None = None,
        commit_every: int = SETTINGS["EXTRACTED_DOCS_COMMIT_EVERY"],
    ) -> None:
        self.store = store
        self.lock = lock
        self.run = RunState()
        self.commit_every = max(1, commit_every)
        self._writes = 0
        self._last_commit = time.monotonic()
        self.closed = False
        #: why writing the cache failed (the first failure); ``None`` while it works
        self.failed: str | None = None
        #: called once, with the message, when a write first fails (the crawl stops)
        self.on_write_failed: Callable[[str], None] | None = None
        #: the crawl's stats (set by the cache's owner): storage errors and unreadable
        #: entries are counted there
        self.stats: StatsCollector | None = None
        store.on_storage_error = self.storage_error
        store.on_read_error = self.read_error

    def read_error(self, table: str, key: str) -> None:
        """An entry of ``table`` could not be decoded (treated as missing)."""
        if self.stats is not None:
            self.stats.inc_value(f"cache/retrieve_error/{table}")

    def storage_error(self, kind: str, message: str) -> None:
        """The store failed to read or write: the run is partial (no page is marked
        removed for not being reached). A failed write also stops the crawl."""
        if self.stats is not None:
            self.stats.inc_value(f"cache/{kind}_error")
        self.run.mark_incomplete(f"cache {kind} failed: {message}")
        if kind != "write" or self.failed is not None:
            return
        self.failed = message
        logger.error("%(message)s; stopping the crawl, no page will be marked removed", {"message": message})
        if self.on_write_failed is not None:
            self.on_write_failed(message)

    @classmethod
    def open(
        cls,
        directory: str | os.PathLike[str],
        store_cls: str | type = SETTINGS["EXTRACTED_DOCS_STORE"],
        commit_every: int = SETTINGS["EXTRACTED_DOCS_COMMIT_EVERY"],
        settings: BaseSettings | None = None,
    ) -> Cache:
        """Open the store of ``directory`` (a store class with ``from_settings`` is
        built from ``settings`` instead) and take its writer lock
        (:meth:`StorePort.writer_lock`). Raises :class:`CacheLockedError` when another
        crawl holds it and :class:`CacheCorruptError` when it cannot be read;
        in both cases nothing in it is changed."""
        factory = load_named("EXTRACTED_DOCS_STORE", store_cls) if isinstance(store_cls, str) else store_cls
        if callable(getattr(factory, "from_settings", None)):
            from scrapy.settings import Settings

            store = build_store(factory, settings if settings is not None else Settings(), readonly=False, create=True)
        else:
            store = factory(directory)
        lock = store.writer_lock()
        try:
            lock.__enter__()
        except BaseException:
            store.close()
            raise
        return cls(store, lock, commit_every)

    def wrote(self, count: int = 1) -> None:
        """Count writes; commit every ``commit_every`` writes or 5 seconds."""
        self._writes += count
        if self._writes >= self.commit_every or time.monotonic() - self._last_commit > 5:
            self.commit()

    def commit(self) -> None:
        """Commit the store's pending writes. A failure is recorded (:attr:`failed`,
        the run marked incomplete, the crawl stopped), not raised: the crawl's
        components go on to a clean stop; the writes that failed stay pending and
        are tried once more at close (:meth:`close`)."""
        self._writes = 0
        self._last_commit = time.monotonic()
        if self.failed is not None:
            return  # the store is known to fail: tried once more at close only
        try:
            self.store.commit()
        except CacheStorageError as exc:
            if self.failed is None:  # a store that did not call on_storage_error
                self.storage_error("write", str(exc))

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            self.store.close()
        finally:
            if self.lock is not None:
                self.lock.__exit__(None, None, None)


def own_cache(crawler: Crawler, cache: Cache) -> None:
    """Make ``cache`` the crawl's (what :func:`cache_for` returns): called once per
    crawl, by the cache's owner (:class:`crawler.extensions.cache.CacheOwner`)."""
    if crawler in _CACHES:
        raise RuntimeError("The crawl's cache is open already: one CacheOwner per crawl")
    _CACHES[crawler] = cache


class CacheNotOpenError(RuntimeError):
    """A component asked for the crawl's cache and no :class:`CacheOwner` opened it."""


def cache_for(crawler: Crawler) -> Cache:
    """The crawl's cache, opened by its owner (:class:`crawler.extensions.cache.CacheOwner`)
    when the crawl started; :class:`CacheNotOpenError` when there is none."""
    cache = _CACHES.get(crawler)
    if cache is None:
        raise CacheNotOpenError(
            "The extracted-docs cache is not open: the extension crawler.extensions.cache.CacheOwner opens it "
            "when the crawl starts (IncrementalAddon installs it); EXTENSIONS must not turn it off"
        )
    return cache


def peek_cache(crawler: Crawler) -> Cache | None:
    """The crawl's cache if its owner opened it, else ``None``."""
    return _CACHES.get(crawler)
