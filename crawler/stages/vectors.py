"""The vector sync stage: chunk-level sync of the pages into a vector store, after extraction."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Final

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.misc import build_from_crawler

from crawler.cache import cache_for
from crawler.cache.records import STATUS_REMOVED, utcnow
from crawler.choices import run_choices
from crawler.config import load_named, typed
from crawler.embedders import Embedder, check_embedder, embedder_key
from crawler.incremental.ledger import put_vectors, vectors_noted
from crawler.lib.chunking import point_id
from crawler.lib.hashing import sha256_hex
from crawler.vectors import Point, VectorStore, VectorStoreError
from crawler.vectors.sync import COUNTERS, EmbeddingError, PageInput, VectorSyncer

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping

    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings
    from scrapy.statscollectors import StatsCollector

    from crawler.cache.ports import PagePort
    from crawler.cache.records import VectorsRecord
    from crawler.stages import PageView, StageRun
    from crawler.vectors.sync import PagePlan

logger = logging.getLogger(__name__)

#: the page record key of a page's last sync
RECORD_KEY: Final = "vectors"


def build_embedder(crawler: Crawler) -> Embedder:
    path = typed(crawler.settings).get("EMBEDDER")
    cls = load_named("EMBEDDER", path)
    if not isinstance(cls, type):
        raise ValueError(f"EMBEDDER={path!r} is not a class but a {type(cls).__name__}")
    try:
        return check_embedder(build_from_crawler(cls, crawler))
    except TypeError as exc:
        raise ValueError(f"EMBEDDER={path!r}: {exc}") from None


def open_store(settings: BaseSettings) -> VectorStore:
    path = typed(settings).get("VECTOR_SYNC_STORE")
    cls = load_named("VECTOR_SYNC_STORE", path)
    if not callable(getattr(cls, "from_settings", None)):
        raise ValueError(f"VECTOR_SYNC_STORE={path!r} is not a vector store class with a from_settings(settings)")
    store = cls.from_settings(settings)
    if not isinstance(store, VectorStore):
        raise ValueError(f"VECTOR_SYNC_STORE={path!r} made a {type(store).__name__}, not a crawler.vectors.VectorStore")
    return store


def build_syncer(crawler: Crawler, store: VectorStore, *, force: bool | None = None) -> VectorSyncer:
    settings = typed(crawler.settings)
    return VectorSyncer(
        store,
        build_embedder(crawler),
        target=settings.getint("VECTOR_SYNC_CHUNK_SIZE"),
        batch_size=settings.getint("EMBEDDER_BATCH_SIZE"),
        force="vectors" in run_choices(crawler).redo if force is None else force,
    )


def sync_key(syncer: VectorSyncer) -> str:
    """What a page's points depend on besides its text: embedder, chunk size, store."""
    return sha256_hex(f"{embedder_key(syncer.embedder)}\0{syncer.target}\0{syncer.store.location}")


def input_hash(title: str, text: str) -> str:
    return sha256_hex(f"{title}\0{text}")


def synced(plan: PagePlan, key: str, text_hash: str | None = None) -> VectorsRecord:
    """The page record's note of its sync by ``plan`` (``text_hash``: its
    :func:`input_hash`, when known)."""
    return {
        "key": key,
        "input_hash": text_hash or input_hash(plan.page.title, plan.page.text),
        "points": len(plan.chunks),
        "synced_at": utcnow(),
    }


def deleted(key: str) -> VectorsRecord:
    """A removed page's points are gone from the store of ``key``: not looked up again."""
    return {"key": key, "points": 0, "deleted_at": utcnow()}


def mark_synced(docs: PagePort, plan: PagePlan, key: str) -> None:
    put_vectors(docs, plan.page.url_hash, synced(plan, key))


def mark_removed_deleted(docs: PagePort, url_hash: str, key: str) -> None:
    put_vectors(docs, url_hash, deleted(key))


def move_points(store: VectorStore, old_key: str, new_key: str) -> int | None:
    """Move the points of a page the migration of an older cache re-keyed (a cache made
    with another ``REQUEST_FINGERPRINTER_CLASS``) from ``old_key`` to ``new_key``,
    without embedding: each point's vector and payload are read and written under the
    new key's point id (``url_hash`` = ``new_key``), then the old points, and any other
    point under the new key, deleted. Returns how many points were moved; ``None`` when
    the store cannot read vectors (``get_points``): the old points are then deleted and
    the page is to be synced again."""
    old = store.page_points(old_key)
    if not old:
        return 0
    get_points = getattr(store, "get_points", None)
    if get_points is None:
        store.delete(list(old))
        return None
    moved = []
    for point in get_points(list(old)):
        payload = {**point.payload, "url_hash": new_key}
        new_id = point_id(new_key, str(payload.get("content_hash", "")), int(payload.get("occurrence", 0) or 0))
        moved.append(Point(new_id, point.vector, payload))
    store.upsert(moved)
    ids = {point.id for point in moved}
    store.delete([i for i in [*old, *store.page_points(new_key)] if i not in ids])
    return len(moved)


def move_rekeyed(store: VectorStore, url_hash: str, last: Mapping[str, Any]) -> dict[str, Any] | None:
    """The points of a page the migration re-keyed (its ``vectors`` record ``last``
    says ``moved_from``) moved to its key; returns its ``vectors`` record after the
    move, ``None`` when the points could not be moved (the page is synced again)."""
    if move_points(store, str(last["moved_from"]), url_hash) is None:
        return None
    return {name: value for name, value in last.items() if name != "moved_from"}


def rekeyed(record: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The ``vectors`` record of a page the migration re-keyed, else ``None``."""
    last = record.get(RECORD_KEY)
    return last if isinstance(last, dict) and last.get("moved_from") else None


def move_all_rekeyed(docs: PagePort, store: VectorStore) -> int:
    """``scrapy vectors verify --repair``: :func:`move_rekeyed` for every page that
    needs it; returns how many pages (their records are put, not committed)."""
    marked = [(url_hash, last) for url_hash, record in docs.iter_pages() if (last := rekeyed(record)) is not None]
    for url_hash, last in marked:
        put_vectors(docs, url_hash, move_rekeyed(store, url_hash, last))
    return len(marked)


def points_may_remain(record: dict[str, Any], key: str) -> bool:
    """A removed page whose points may still be in the store of ``key``: all but those
    whose points were deleted from it (a page's points are looked up in the store, not
    trusted to its record: a sync killed before the cache commit, or page records rebuilt
    from extraction files, leaves points without a record of them)."""
    last = record.get(RECORD_KEY) or {}
    return record.get("status") == STATUS_REMOVED and not (last.get("deleted_at") and last.get("key") == key)


class VectorSyncStage:
    """Keeps a vector store in step with the pages, one chunk at a time.

    After extraction, each page of the run whose cleaned content, title, embedder,
    chunk size or store changed since its last sync is chunked along its markdown
    (:mod:`crawler.lib.chunking`) and synced (:class:`crawler.vectors.sync.VectorSyncer`):
    only chunks with new text are embedded, a page's stale points are deleted after its
    new ones are written, and the points of removed pages are deleted after a complete
    crawl only. Adds a ``vector_sync`` section to the run report.

    Off by default: ``-s VECTOR_SYNC_ENABLED=True``. Store: Qdrant, local mode under
    the cache (default) or ``QDRANT_URL``; embedder: ``EMBEDDER``.
    """

    name = "vectors"

    def __init__(self, syncer: VectorSyncer, stats: StatsCollector, *, use_clean: bool = True) -> None:
        self.syncer = syncer
        self.stats = stats
        self.use_clean = use_clean
        self.key = sync_key(syncer)
        self.section: dict[str, Any] = {}
        self._run: StageRun | None = None
        #: url_hash -> input_hash of the pages planned (computed once, noted after their sync)
        self._hashes: dict[str, str] = {}

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> VectorSyncStage:
        settings = typed(crawler.settings)
        if not settings.getbool("VECTOR_SYNC_ENABLED"):
            # off by default: not a warning on every crawl (Scrapy warns for a message)
            logger.debug("VectorSyncStage is off: VECTOR_SYNC_ENABLED is False")
            raise NotConfigured
        if run_choices(crawler).dry_run:  # a dry run pays for nothing: no embeddings either
            raise NotConfigured("VectorSyncStage skipped: a dry run (no embeddings, no writes)")
        cache_for(crawler)  # opened (CacheOwner) first: a second crawl stops at its lock, not the store's
        store = open_store(crawler.settings)
        try:
            syncer = build_syncer(crawler, store)
        except BaseException:
            store.close()
            raise
        assert crawler.stats is not None
        stage = cls(syncer, crawler.stats, use_clean=settings.getbool("BOILERPLATE_ENABLED"))
        crawler.signals.connect(stage.engine_stopped, signal=signals.engine_stopped)
        return stage

    def plan(self, run: StageRun) -> list[tuple[PageView, PageInput]]:
        """The run's pages whose points may be out of step (the others are counted)."""
        self._run = run
        self.move_rekeyed(run)
        # an empty store (new, or moved aside) trusts no page's record of its last sync
        trust_records = self.syncer.store.count() > 0
        planned = []
        for url_hash in run.targets:
            view = run.pages.get(url_hash)
            if view is None or view.content is None:
                self.stats.inc_value("vector_sync/missing_content")
                logger.warning("No stored content for page %(h)s; its vectors are left as they are", {"h": url_hash})
                continue
            record = view.record
            page = PageInput(
                url_hash,
                record.get("url", ""),
                view.text,
                record.get("title", "") or "",
                record.get("domain", "") or "",
            )
            last = record.get("vectors")
            text_hash = self._hashes[url_hash] = input_hash(page.title, page.text)
            if (
                last is not None
                and not self.syncer.force
                and trust_records
                and last.get("key") == self.key
                and last.get("input_hash") == text_hash
            ):
                counts = self.syncer.counts
                counts["pages_unchanged"] += 1
                counts["chunks_unchanged"] += last["points"]
                counts["embedding_calls_saved"] += last["points"]
                continue
            planned.append((view, page))
        return planned

    def move_rekeyed(self, run: StageRun) -> None:
        """Once after the migration of an older cache that re-keyed pages: their points
        moved to their new keys (see :func:`move_points`), before any record is trusted."""
        pages = 0
        for batch in run.pages.batches(run.pages.store.iter_page_keys(), contents=False):
            for view in batch:
                last = rekeyed(view.record)
                if last is not None:
                    vectors_noted(view.record, move_rekeyed(self.syncer.store, view.url_hash, last))
                    view.changed()
                    pages += 1
        if pages:
            logger.info(
                "Moved the vector points of %(n)d page(s) re-keyed by the cache's migration to their new keys "
                "(no embedding)",
                {"n": pages},
            )

    def _feed(self, planned: Iterable[tuple[PageView, PageInput]]) -> Iterator[PageInput]:
        for _, page in planned:
            if self._run is not None and self._run.interrupted:
                # SIGINT/SIGTERM: the pages handed over finish, the rest wait for the next run
                self.stats.set_value("vector_sync/interrupted", 1)
                return
            yield page

    async def run(self, planned: list[tuple[PageView, PageInput]]) -> None:
        assert self._run is not None
        run = self._run
        views = {page.url_hash: view for view, page in planned}
        section: dict[str, Any] = {"embedder": embedder_key(self.syncer.embedder), "store": self.syncer.store.location}
        self.section = section

        def done(plan: PagePlan) -> None:
            view = views[plan.page.url_hash]
            vectors_noted(view.record, synced(plan, self.key, self._hashes.get(plan.page.url_hash)))
            view.changed()
            run.cache.wrote()

        try:
            await self.syncer.sync(self._feed(planned), done)
            self.sync_removed(run, section)
        except (EmbeddingError, VectorStoreError) as exc:
            self._error(section, str(exc))
        except Exception as exc:  # noqa: BLE001 - a store failure must not lose the run report
            self._error(section, f"{type(exc).__name__}: {exc}")
        finally:
            run.cache.commit()
            await self.syncer.close()

    def report(self, report: dict[str, Any]) -> None:
        section = self.section or {
            "embedder": embedder_key(self.syncer.embedder),
            "store": self.syncer.store.location,
        }
        if self.syncer.failed:
            section["failed"] = dict(self.syncer.failed)
        counts = self.syncer.counts
        for name in COUNTERS:
            if counts[name]:
                self.stats.inc_value(f"vector_sync/{name}", counts[name])
        section.update({name: counts[name] for name in COUNTERS})
        try:
            section["points"] = self.syncer.store.count()
        except Exception:  # noqa: BLE001 - the count is informative only
            section["points"] = None
        report["vector_sync"] = section
        logger.info(
            "Vector sync: %(new)d new, %(upd)d updated, %(same)d unchanged, %(deleted)d deleted chunks; "
            "%(calls)d embeddings (%(saved)d saved); %(points)s points",
            {
                "new": counts["chunks_new"],
                "upd": counts["chunks_updated"],
                "same": counts["chunks_unchanged"] + counts["chunks_moved"],
                "deleted": counts["chunks_deleted"],
                "calls": counts["embedding_calls"],
                "saved": counts["embedding_calls_saved"],
                "points": section["points"],
            },
        )

    def sync_removed(self, run: StageRun, section: dict[str, Any]) -> None:
        """Delete the points of removed pages after a complete crawl (``scrapy
        process``: of its domains); count them after a partial one."""
        kept = 0
        for batch in run.pages.batches(run.pages.store.iter_page_keys(), contents=False):
            for view in batch:
                if run.domain_filter is not None and view.record.get("domain") not in run.domain_filter:
                    continue
                if not points_may_remain(dict(view.record), self.key):
                    continue
                points = len(self.syncer.store.page_points(view.url_hash))
                if points and not run.complete:
                    kept += 1
                    continue
                if points:
                    self.syncer.delete_page(view.url_hash)
                vectors_noted(view.record, deleted(self.key))
                view.changed()
        if kept:
            section["removed_pages_kept"] = kept
            logger.info(
                "Incomplete crawl: the points of %(n)d removed page(s) are kept until a complete crawl",
                {"n": kept},
            )

    def _error(self, section: dict[str, Any], message: str) -> None:
        self.stats.inc_value("vector_sync/errors")
        section["error"] = message
        logger.error(
            "Vector sync stopped: %(error)s; pages not fully written keep their points, the next run syncs them",
            {"error": message},
        )

    def engine_stopped(self) -> None:
        self.syncer.store.close()
