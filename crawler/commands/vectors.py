"""``scrapy vectors``: check the vector store against the cache (and repair), search it."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import TYPE_CHECKING, Any, ClassVar

from scrapy import Spider
from scrapy.crawler import Crawler
from scrapy.exceptions import UsageError

from crawler.cache import CacheMissingError, StoreSettingError, using_store
from crawler.cache.errors import CacheCorruptError
from crawler.cache.lock import CacheLockedError
from crawler.config import typed
from crawler.lib.blockkeys import shorten
from crawler.stages.vectors import (
    build_syncer,
    mark_removed_deleted,
    mark_synced,
    move_all_rekeyed,
    open_store,
    sync_key,
)
from crawler.subcommands import SubCommands
from crawler.support.plural import plural
from crawler.support.tables import table
from crawler.vectors import VectorStore, VectorStoreError
from crawler.vectors.sync import EmbeddingError
from crawler.vectors.verify import find_drift

if TYPE_CHECKING:
    from collections.abc import Callable

    from crawler.vectors.sync import PageInput, PagePlan, VectorSyncer


def is_qdrant_error(exc: BaseException) -> bool:
    """An error of qdrant-client (imported only now: Scrapy imports every command at
    start; without the package's ``qdrant`` extra there is none)."""
    try:
        from qdrant_client.http.exceptions import ApiException
    except ImportError:
        return False

    return isinstance(exc, ApiException)


def check_dimensions(store: VectorStore, size: int) -> None:
    """Refuse a query whose vector size is not the collection's (another embedder)."""
    have = getattr(store, "vector_size", lambda: None)()
    if have is not None and have != size:
        raise ValueError(
            f"The vector store holds {have}-dimension vectors and EMBEDDER makes {size}: search with the "
            "crawl's settings (-s EMBEDDER=... -s EMBEDDER_DIMENSIONS=...)"
        )


class Command(SubCommands):
    requires_project = True
    requires_crawler_process = False
    default_settings: ClassVar[dict[str, Any]] = {"LOG_ENABLED": False}
    name = "vectors"
    subcommands: ClassVar[dict[str, str]] = {
        "verify": "compare the vector store with the cache (--repair: embed what is missing, delete the rest)",
        "search": "the chunks nearest to QUERY",
    }

    def add_subcommand_options(self, name: str, parser: argparse.ArgumentParser) -> None:
        if name == "verify":
            parser.add_argument("--repair", action="store_true")
        if name == "search":
            parser.add_argument("query")
            parser.add_argument("--limit", type=int, default=5)

    def short_desc(self) -> str:
        return "Check the vector store against the cache (and repair it), or search it"

    def long_desc(self) -> str:
        return (
            "verify [--repair]: compare each live page's expected chunk points (current settings and "
            "EMBEDDER) with the vector store: missing points, stale points, points of another embedder, "
            "points of pages the cache does not know; --repair embeds what is missing and deletes the "
            "rest, and the points of removed pages.  search QUERY [--limit N]: the nearest chunks.  Both "
            "take --json.  Use the settings of the crawl (-s EMBEDDER=... -s VECTOR_SYNC_CHUNK_SIZE=...)."
        )

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        name = self.subcommand(args, opts)
        sub = opts
        try:
            self.exitcode = getattr(self, f"do_{name}")(sub)
        except StoreSettingError as exc:
            print(f"Error: {exc}", file=sys.stderr)
            self.exitcode = 2
        except (
            CacheMissingError,
            CacheLockedError,
            CacheCorruptError,
            VectorStoreError,
            EmbeddingError,
            ValueError,
            OSError,
            ImportError,  # an optional part not installed: the message says which extra
        ) as exc:
            print(f"Error: {exc}", file=sys.stderr)
            self.exitcode = 1
        except Exception as exc:
            if not is_qdrant_error(exc):
                raise
            # the server failed after it answered at start-up
            print(f"Error: the vector store failed: {' '.join(str(exc).split())}", file=sys.stderr)
            self.exitcode = 1

    def _syncer(self) -> VectorSyncer:
        assert self.settings is not None
        store = open_store(self.settings)
        try:
            return build_syncer(Crawler(Spider, self.settings), store, force=False)
        except BaseException:
            store.close()
            raise

    def do_verify(self, opts: argparse.Namespace) -> int:
        assert self.settings is not None
        use_clean = typed(self.settings).getbool("BOILERPLATE_ENABLED")
        # --repair writes sync markers: under the store's lock, no crawl at the same time
        with using_store(self.settings, changes=opts.repair) as store:
            docs = store
            syncer = self._syncer()
            try:
                if opts.repair and move_all_rekeyed(docs, syncer.store):  # re-keyed by a migration: no embedding
                    docs.commit()
                drift = find_drift(docs, syncer, use_clean=use_clean)
                repaired = False
                removed_deleted = 0
                if opts.repair and (drift.resync or drift.delete or drift.removed):
                    key = sync_key(syncer)
                    asyncio.run(self._repair(syncer, drift.resync, lambda plan: mark_synced(docs, plan, key)))
                    syncer.store.delete(drift.delete)
                    syncer.counts["chunks_deleted"] += len(drift.delete)
                    for url_hash, ids in drift.removed.items():  # the cache says these pages are gone
                        syncer.store.delete(ids)
                        mark_removed_deleted(docs, url_hash, key)
                        removed_deleted += len(ids)
                    docs.commit()
                    repaired = bool(drift.resync or drift.delete) and not syncer.failed
                points = syncer.store.count()
            finally:
                syncer.store.close()
        counts = {k: syncer.counts[k] for k in ("chunks_new", "chunks_updated", "chunks_deleted", "embedding_calls")}
        if opts.json:
            print(
                json.dumps(
                    {
                        "ok": not drift.problems or repaired,
                        "problems": drift.problems,
                        "repaired": repaired,
                        "repair": counts if repaired else None,
                        "pages": drift.pages,
                        "points": points,
                        "removed_pages": len(drift.removed),
                        "removed_pages_points": drift.removed_points,
                        "removed_points_deleted": removed_deleted,
                        "not_repaired": syncer.failed,
                    },
                    indent=2,
                )
            )
        elif not drift.problems:
            print(f"The vector store agrees with the cache: {plural(drift.pages, 'page')}, {plural(points, 'point')}.")
        else:
            rows = [[p["kind"], shorten(p["target"], 60), p["detail"]] for p in drift.problems]
            print(table(["problem", "page", "detail"], rows))
            if repaired:
                print(
                    f"\nRepaired: {plural(counts['chunks_new'] + counts['chunks_updated'], 'point')} written "
                    f"({plural(counts['embedding_calls'], 'embedding')}), {counts['chunks_deleted']} deleted; "
                    f"{plural(points, 'point')}."
                )
            elif syncer.failed:
                for url, error in syncer.failed.items():
                    print(f"Not repaired: {url}: the embedder refused a text ({error})")
            else:
                print(f"\n{len(drift.problems)} problem(s): `scrapy vectors verify --repair` fixes them.")
        if drift.removed and not opts.json:
            if removed_deleted:
                print(f"Deleted the {removed_deleted} point(s) of {len(drift.removed)} removed page(s).")
            else:
                print(
                    f"Note: {drift.removed_points} point(s) of {len(drift.removed)} removed page(s) are kept until "
                    "the next complete crawl; `scrapy vectors verify --repair` deletes them now."
                )
        return 0 if not drift.problems or repaired else 1

    @staticmethod
    async def _repair(syncer: VectorSyncer, pages: list[PageInput], done: Callable[[PagePlan], None]) -> None:
        try:
            await syncer.sync(pages, done)
        finally:
            await syncer.close()

    def do_search(self, opts: argparse.Namespace) -> int:
        if opts.limit < 1:
            raise UsageError("vectors search: --limit must be at least 1")
        syncer = self._syncer()
        try:
            vectors = asyncio.run(self._embed(syncer, opts.query))
            check_dimensions(syncer.store, len(vectors[0]))
            hits = syncer.store.search(vectors[0], opts.limit)
        finally:
            syncer.store.close()
        others = sorted({str(p.get("embedder")) for _, _, p in hits} - {syncer.key})
        if others:
            raise ValueError(
                f"The points found were made by {', '.join(others)}, not by EMBEDDER {syncer.key}: search with "
                "the crawl's settings (-s EMBEDDER=... -s EMBEDDER_DIMENSIONS=...)"
            )
        if opts.json:
            print(json.dumps([{"id": i, "score": s, **payload} for i, s, payload in hits], indent=2))
        elif not hits:
            print("No points in the vector store.", file=sys.stderr)
            return 1
        else:
            for _, score, payload in hits:
                path = " > ".join(payload.get("heading_path") or [])
                print(f"{score:.3f}  {payload.get('url')}  [{path}]\n       {shorten(payload.get('text', ''), 100)}")
        return 0

    @staticmethod
    async def _embed(syncer: VectorSyncer, text: str) -> list[list[float]]:
        try:
            result = await syncer.embed_texts([text])
        finally:
            await syncer.close()
        return list(result)
