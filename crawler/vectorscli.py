"""``scrapy vectors verify`` and ``search``: the vector store checked against the cache
(and repaired), or searched; an error said in one line (a wrong setting: 2; else 1)."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import TYPE_CHECKING

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
from crawler.support.plural import plural
from crawler.support.tables import table
from crawler.vectors import VectorStore, VectorStoreError
from crawler.vectors.sync import EmbeddingError
from crawler.vectors.verify import find_drift

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from scrapy.settings import Settings

    from crawler.vectors.sync import PageInput, PagePlan, VectorSyncer


def is_qdrant_error(exc: BaseException) -> bool:
    """An error of qdrant-client (imported only now: without the package's ``qdrant``
    extra there is none)."""
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


def open_syncer(settings: Settings) -> VectorSyncer:
    """The syncer of the crawl's settings, on its vector store (opened)."""
    store = open_store(settings)
    try:
        return build_syncer(Crawler(Spider, settings), store, force=False)
    except BaseException:
        store.close()
        raise


def verify(settings: Settings, opts: argparse.Namespace) -> int:
    use_clean = typed(settings).getbool("BOILERPLATE_ENABLED")
    # --repair writes sync markers: under the store's lock, no crawl at the same time
    with using_store(settings, changes=opts.repair) as store:
        docs = store
        syncer = open_syncer(settings)
        try:
            if opts.repair and move_all_rekeyed(docs, syncer.store):  # re-keyed by a migration: no embedding
                docs.commit()
            drift = find_drift(docs, syncer, use_clean=use_clean)
            repaired = False
            removed_deleted = 0
            if opts.repair and (drift.resync or drift.delete or drift.removed):
                key = sync_key(syncer)
                asyncio.run(repair(syncer, drift.resync, lambda plan: mark_synced(docs, plan, key)))
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


async def repair(syncer: VectorSyncer, pages: list[PageInput], done: Callable[[PagePlan], None]) -> None:
    try:
        await syncer.sync(pages, done)
    finally:
        await syncer.close()


def search(settings: Settings, opts: argparse.Namespace) -> int:
    if opts.limit < 1:
        raise UsageError("vectors search: --limit must be at least 1")
    syncer = open_syncer(settings)
    try:
        vectors = asyncio.run(embed(syncer, opts.query))
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


async def embed(syncer: VectorSyncer, text: str) -> list[list[float]]:
    try:
        result = await syncer.embed_texts([text])
    finally:
        await syncer.close()
    return list(result)


SUBCOMMANDS: dict[str, Callable[[Settings, argparse.Namespace], int]] = {"verify": verify, "search": search}


def run_subcommand(name: str, settings: Settings, opts: argparse.Namespace) -> int:
    """Sub-command ``name``'s exit status (a UsageError goes up to Scrapy, which prints
    the usage)."""
    try:
        return SUBCOMMANDS[name](settings, opts)
    except StoreSettingError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 2
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
        return 1
    except Exception as exc:
        if not is_qdrant_error(exc):
            raise
        # the server failed after it answered at start-up
        print(f"Error: the vector store failed: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
