"""The chunk-level sync of pages into a vector store, shared by the crawl's VectorSyncStage
extension and ``scrapy vectors verify --repair``.

Only chunks whose content-derived id is missing (or made by another embedder) are
embedded. A page's new points are upserted before its stale ones are deleted, and a
page not fully written is left exactly as it was, so a failure never leaves a page half
synced (``pages_failed``; the sync stops). A text the embedder refuses
(:class:`crawler.embedders.EmbeddingRejected`) fails only its page. See
docs/vector-sync.md.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from crawler.cache.records import utcnow
from crawler.embedders import Embedder, EmbeddingRejected, check_embedder, embedder_key
from crawler.lib.chunking import Chunk, chunk_markdown
from crawler.vectors import Point

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from crawler.vectors import VectorStore

logger = logging.getLogger(__name__)

#: counters, in report order
COUNTERS = (
    "pages_synced", "pages_unchanged", "pages_failed", "pages_removed", "chunks_new", "chunks_updated",
    "chunks_unchanged", "chunks_moved", "chunks_deleted", "embedding_calls", "embedding_calls_saved",
    "embedding_requests",
)  # fmt: skip


class EmbeddingError(RuntimeError):
    """The embedder failed or returned something other than one vector per text."""


@dataclass
class PageInput:
    url_hash: str
    url: str
    text: str
    title: str = ""
    domain: str = ""


@dataclass
class PagePlan:
    page: PageInput
    chunks: list[Chunk]
    ids: list[str]
    existing: dict[str, dict[str, Any]]
    to_embed: list[int] = field(default_factory=list)
    updated: set[int] = field(default_factory=set)
    moved: list[int] = field(default_factory=list)
    orphans: list[str] = field(default_factory=list)
    vectors: dict[int, list[float]] = field(default_factory=dict)
    error: str = ""  # the embedder refused one of its texts: the page is left as it was

    @property
    def ready(self) -> bool:
        return bool(self.error) or len(self.vectors) == len(self.to_embed)


class VectorSyncer:
    """Syncs pages into ``store`` with ``embedder``; ``counts`` holds what it did."""

    def __init__(
        self,
        store: VectorStore,
        embedder: Embedder,
        *,
        target: int,
        batch_size: int,
        force: bool = False,
    ) -> None:
        embedder = check_embedder(embedder)
        if batch_size < 1:
            raise ValueError(f"EMBEDDER_BATCH_SIZE must be at least 1, got {batch_size!r}")
        try:
            chunk_markdown("", target)  # a bad target fails here, not on the first page
        except ValueError as exc:
            raise ValueError(f"VECTOR_SYNC_CHUNK_SIZE: {exc}") from None
        self.store = store
        self.embedder = embedder
        self.key = embedder_key(embedder)
        self.target = target
        self.batch_size = min(batch_size, int(getattr(embedder, "batch_size", batch_size) or batch_size))
        self.force = force
        self.counts: Counter[str] = Counter()
        #: url -> why, for pages left as they were because the embedder refused a text
        self.failed: dict[str, str] = {}
        self.is_async = inspect.iscoroutinefunction(embedder.embed)
        self.inline = not self.is_async and getattr(embedder, "blocking", True) is False

    # -- one page ----------------------------------------------------------------

    def plan(self, page: PageInput) -> PagePlan:
        chunks = chunk_markdown(page.text, self.target)
        ids = [chunk.point_id(page.url_hash) for chunk in chunks]
        existing = self.store.page_points(page.url_hash)
        plan = PagePlan(page, chunks, ids, existing)
        for index, (chunk, point_id) in enumerate(zip(chunks, ids, strict=True)):
            old = existing.get(point_id)
            if old is None:
                plan.to_embed.append(index)
            elif self.force or old.get("embedder") != self.key:
                plan.to_embed.append(index)
                plan.updated.add(index)
            elif any(old.get(k) != v for k, v in self._placement(page, chunk).items()):
                plan.moved.append(index)
        wanted = set(ids)
        plan.orphans = [point_id for point_id in existing if point_id not in wanted]
        return plan

    @staticmethod
    def _placement(page: PageInput, chunk: Chunk) -> dict[str, Any]:
        """Payload fields that can change while the chunk's text does not."""
        return {"url": page.url, "title": page.title, "domain": page.domain, "chunk_index": chunk.index}

    def payload(self, page: PageInput, chunk: Chunk) -> dict[str, Any]:
        return {
            **self._placement(page, chunk),
            "url_hash": page.url_hash,
            "heading_path": chunk.heading_path,
            "content_hash": chunk.content_hash,
            "occurrence": chunk.occurrence,
            "embedder": self.key,
            "indexed_at": utcnow(),
            "text": chunk.text,
        }

    def finish(self, plan: PagePlan) -> None:
        """Write a fully embedded page: new points first, then moved payloads, then
        (only then) delete its orphans."""
        page = plan.page
        points = [Point(plan.ids[i], plan.vectors[i], self.payload(page, plan.chunks[i])) for i in plan.to_embed]
        self.store.upsert(points)
        for i in plan.moved:
            self.store.set_payload(plan.ids[i], self._placement(page, plan.chunks[i]))
        self.store.delete(plan.orphans)
        written = len(plan.to_embed)
        self.counts["pages_synced"] += 1
        self.counts["chunks_updated"] += len(plan.updated)
        self.counts["chunks_new"] += written - len(plan.updated)
        self.counts["chunks_moved"] += len(plan.moved)
        self.counts["chunks_unchanged"] += len(plan.chunks) - written - len(plan.moved)
        self.counts["embedding_calls_saved"] += len(plan.chunks) - written
        self.counts["chunks_deleted"] += len(plan.orphans)
        if written or plan.orphans:
            logger.debug(
                "Vectors of %(url)s: %(w)d written, %(d)d deleted, %(k)d kept",
                {"url": page.url, "w": written, "d": len(plan.orphans), "k": len(plan.chunks) - written},
            )

    # -- many pages ----------------------------------------------------------------

    async def sync(self, pages: Iterable[PageInput], done: Callable[[PagePlan], None] | None = None) -> None:
        """Sync ``pages``; ``done(plan)`` after each page is fully written. Raises
        :class:`EmbeddingError` if the embedder fails, or the store's exception, after
        counting the pages left as they were (those not reached included) in
        ``pages_failed``."""
        waiting: list[PagePlan] = []
        queue: list[tuple[PagePlan, int]] = []
        remaining = iter(pages)

        def complete() -> None:
            while waiting and waiting[0].ready:
                plan = waiting[0]
                if plan.error:
                    self.reject(plan)
                else:
                    self.finish(plan)
                waiting.pop(0)  # only once written: a store failure counts it failed
                if done is not None and not plan.error:
                    done(plan)

        try:
            for page in remaining:
                try:
                    plan = self.plan(page)
                except Exception:
                    self.counts["pages_failed"] += 1
                    raise
                waiting.append(plan)
                queue.extend((plan, i) for i in plan.to_embed)
                while len(queue) >= self.batch_size:
                    batch, queue = queue[: self.batch_size], queue[self.batch_size :]
                    await self.embed(batch)
                complete()
            while queue:
                batch, queue = queue[: self.batch_size], queue[self.batch_size :]
                await self.embed(batch)
            complete()
        except Exception:
            self.counts["pages_failed"] += len(waiting) + sum(1 for _ in remaining)
            raise

    def reject(self, plan: PagePlan) -> None:
        """A page with a text the embedder refuses: left as it was, the sync goes on."""
        self.counts["pages_failed"] += 1
        self.failed[plan.page.url] = plan.error
        logger.warning(
            "Vectors of %(url)s left as they were: the embedder refused a chunk: %(error)s",
            {"url": plan.page.url, "error": plan.error},
        )

    async def embed(self, batch: list[tuple[PagePlan, int]]) -> None:
        batch = [(plan, i) for plan, i in batch if not plan.error]
        if not batch:
            return
        try:
            vectors = await self._embed(batch)
        except EmbeddingRejected as exc:
            if len(batch) == 1:
                plan, i = batch[0]
                plan.error = f"chunk {i}: {exc}" if str(exc) else f"chunk {i}: {type(exc).__name__}"
                return
            for one in batch:  # which text is refused? one by one
                await self.embed([one])
            return
        for (plan, i), vector in zip(batch, vectors, strict=True):
            plan.vectors[i] = [float(x) for x in vector]

    async def _embed(self, batch: list[tuple[PagePlan, int]]) -> list[Any]:
        texts = [plan.chunks[i].embed_text for plan, i in batch]
        self.counts["embedding_requests"] += 1
        try:
            vectors = await self.embed_texts(texts)
        except EmbeddingRejected:
            raise
        except Exception as exc:
            message = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            raise EmbeddingError(f"embedder {self.key} failed: {message}") from exc
        if not isinstance(vectors, list) or len(vectors) != len(texts):
            got = len(vectors) if isinstance(vectors, list) else type(vectors).__name__
            raise EmbeddingError(f"embedder {self.key} returned {got} vectors for {len(texts)} texts")
        self.counts["embedding_calls"] += len(texts)
        return vectors

    async def embed_texts(self, texts: list[str]) -> Any:
        """What the embedder returned for ``texts`` (in a thread if it blocks), unchecked."""
        if self.is_async:
            call = self.embedder.embed(texts)
            assert inspect.isawaitable(call)  # an async def embed
            return await call
        if self.inline:
            return self.embedder.embed(texts)
        return await asyncio.to_thread(self.embedder.embed, texts)

    def delete_page(self, url_hash: str) -> int:
        """Delete every point of a page (a removed page); returns how many."""
        ids = list(self.store.page_points(url_hash))
        self.store.delete(ids)
        self.counts["chunks_deleted"] += len(ids)
        self.counts["pages_removed"] += bool(ids)
        return len(ids)

    async def close(self) -> None:
        close = getattr(self.embedder, "close", None)
        if close is None:
            return
        result = close()
        if inspect.isawaitable(result):
            await result
