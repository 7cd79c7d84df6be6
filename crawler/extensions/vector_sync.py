"""Chunk-level sync of the crawled pages into a vector store, after extraction."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.misc import build_from_crawler, load_object

from crawler import signals as crawler_signals
from crawler.cache import cache_for
from crawler.cache.store import STATUS_REMOVED, utcnow
from crawler.config import typed
from crawler.embedders import DEFAULT_EMBEDDER, embedder_key
from crawler.lib.chunking import DEFAULT_TARGET
from crawler.lib.hashing import sha256_hex
from crawler.vectors import DEFAULT_STORE, VectorStoreError
from crawler.vectors.sync import COUNTERS, EmbeddingError, PageInput, VectorSyncer

if TYPE_CHECKING:
    from collections.abc import Iterator

    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings
    from scrapy.statscollectors import StatsCollector

    from crawler.cache import Cache
    from crawler.cache.store import DocStore
    from crawler.vectors import VectorStore
    from crawler.vectors.sync import PagePlan

logger = logging.getLogger(__name__)

#: the page record key of a page's last sync
RECORD_KEY = "vectors"


def build_embedder(crawler: Crawler) -> Any:
    path = typed(crawler.settings).get("EMBEDDER") or DEFAULT_EMBEDDER
    try:
        cls = load_object(path)
    except (ImportError, NameError, ValueError) as exc:
        raise ValueError(f"EMBEDDER={path!r} cannot be imported: {exc}") from exc
    return build_from_crawler(cls, crawler)


def open_store(settings: BaseSettings) -> VectorStore:
    path = typed(settings).get("VECTOR_SYNC_STORE") or DEFAULT_STORE
    try:
        cls = load_object(path)
    except (ImportError, NameError, ValueError) as exc:
        raise ValueError(f"VECTOR_SYNC_STORE={path!r} cannot be imported: {exc}") from exc
    store: VectorStore = cls.from_settings(settings)
    return store


def build_syncer(crawler: Crawler, store: VectorStore, *, force: bool | None = None) -> VectorSyncer:
    settings = typed(crawler.settings)
    return VectorSyncer(
        store,
        build_embedder(crawler),
        target=settings.getint("VECTOR_SYNC_CHUNK_SIZE", DEFAULT_TARGET),
        batch_size=settings.getint("EMBEDDER_BATCH_SIZE", 64),
        force=settings.getbool("VECTOR_SYNC_FORCE") if force is None else force,
    )


def sync_key(syncer: VectorSyncer) -> str:
    """What a page's points depend on besides its text: embedder, chunk size, store."""
    return sha256_hex(f"{embedder_key(syncer.embedder)}\0{syncer.target}\0{syncer.store.location}")


def page_text(content: dict[str, Any], use_clean: bool) -> str:
    """The text that is chunked: the cleaned content (without domain boilerplate)."""
    text = content.get("clean", content.get("text", "")) if use_clean else content.get("text", "")
    return text if isinstance(text, str) else ""


def input_hash(title: str, text: str) -> str:
    return sha256_hex(f"{title}\0{text}")


def mark_synced(docs: DocStore, plan: PagePlan, key: str) -> None:
    record = docs.get_page(plan.page.url_hash)
    if record is None:
        return
    record[RECORD_KEY] = {
        "key": key,
        "input_hash": input_hash(plan.page.title, plan.page.text),
        "points": len(plan.chunks),
        "synced_at": utcnow(),
    }
    docs.put_page(plan.page.url_hash, record)


class VectorSync:
    """Keeps a vector store in step with the crawl, one chunk at a time.

    After the extraction phase (the ``extraction_finished`` signal), each page of the
    crawl whose cleaned content, title, embedder, chunk size or store changed since
    its last sync is chunked along its markdown (:mod:`crawler.lib.chunking`) and
    synced (:class:`crawler.vectors.sync.VectorSyncer`): only chunks with new text are
    embedded, a page's stale points are deleted after its new ones are written, and
    the points of removed pages are deleted after a complete crawl only. Adds a
    ``vector_sync`` section to the run report.

    Off by default: ``-s VECTOR_SYNC_ENABLED=True``. Store: Qdrant, local mode under
    the cache (default) or ``QDRANT_URL``; embedder: ``EMBEDDER``.
    """

    def __init__(self, syncer: VectorSyncer, stats: StatsCollector, *, use_clean: bool = True) -> None:
        self.syncer = syncer
        self.stats = stats
        self.use_clean = use_clean
        self.key = sync_key(syncer)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> VectorSync:
        settings = typed(crawler.settings)
        if not settings.getbool("VECTOR_SYNC_ENABLED"):
            raise NotConfigured("VectorSync is off: VECTOR_SYNC_ENABLED is False")
        cache_for(crawler)  # the cache lock first: a second crawl stops there, not at the store's lock
        store = open_store(crawler.settings)
        try:
            syncer = build_syncer(crawler, store)
        except BaseException:
            store.close()
            raise
        assert crawler.stats is not None
        extension = cls(syncer, crawler.stats, use_clean=settings.getbool("BOILERPLATE_ENABLED", True))
        crawler.signals.connect(extension.extraction_finished, signal=crawler_signals.extraction_finished)
        crawler.signals.connect(extension.engine_stopped, signal=signals.engine_stopped)
        return extension

    def pages(self, cache: Cache) -> Iterator[PageInput]:
        """This crawl's pages whose points may be out of step (the others are counted)."""
        docs = cache.store
        for url_hash in list(cache.run.seen):
            record = docs.get_page(url_hash)
            content = docs.get_content(url_hash)
            if record is None or content is None:
                self.stats.inc_value("vector_sync/missing_content")
                logger.warning("No stored content for page %(h)s; its vectors are left as they are", {"h": url_hash})
                continue
            page = PageInput(
                url_hash,
                record.get("url", ""),
                page_text(content, self.use_clean),
                record.get("title", "") or "",
                record.get("domain", "") or "",
            )
            last = record.get(RECORD_KEY) or {}
            if (
                not self.syncer.force
                and last.get("key") == self.key
                and last.get("input_hash") == input_hash(page.title, page.text)
            ):
                counts = self.syncer.counts
                counts["pages_unchanged"] += 1
                counts["chunks_unchanged"] += int(last.get("points", 0))
                counts["embedding_calls_saved"] += int(last.get("points", 0))
                continue
            yield page

    def removed_pages(self, docs: DocStore) -> list[str]:
        return [
            url_hash
            for url_hash, record in docs.iter_pages()
            if record.get("status") == STATUS_REMOVED and record.get(RECORD_KEY)
        ]

    async def extraction_finished(self, cache: Cache, report: dict[str, Any]) -> None:
        docs = cache.store
        section: dict[str, Any] = {"embedder": embedder_key(self.syncer.embedder), "store": self.syncer.store.location}

        def done(plan: PagePlan) -> None:
            mark_synced(docs, plan, self.key)
            cache.wrote()

        try:
            await self.syncer.sync(self.pages(cache), done)
            removed = self.removed_pages(docs)
            if report.get("complete"):
                for url_hash in removed:
                    self.syncer.delete_page(url_hash)
                    record = docs.get_page(url_hash)
                    if record is not None:
                        record.pop(RECORD_KEY, None)
                        docs.put_page(url_hash, record)
                        cache.wrote()
            elif removed:
                section["removed_pages_kept"] = len(removed)
                logger.info(
                    "Incomplete crawl: the points of %(n)d removed page(s) are kept until a complete crawl",
                    {"n": len(removed)},
                )
        except (EmbeddingError, VectorStoreError) as exc:
            self._error(section, str(exc))
        except Exception as exc:  # noqa: BLE001 - a store failure must not lose the run report
            self._error(section, f"{type(exc).__name__}: {exc}")
        finally:
            cache.commit()
            await self.syncer.close()
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

    def _error(self, section: dict[str, Any], message: str) -> None:
        self.stats.inc_value("vector_sync/errors")
        section["error"] = message
        logger.error(
            "Vector sync stopped: %(error)s; pages not fully written keep their points, the next run syncs them",
            {"error": message},
        )

    def engine_stopped(self) -> None:
        self.syncer.store.close()
