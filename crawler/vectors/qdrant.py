"""Qdrant as the vector store: local mode (embedded, a directory) or a server."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crawler.cache.lock import held_elsewhere
from crawler.config import install_hint, typed
from crawler.support.secrets import QDRANT_KEY_ENV, from_env
from crawler.vectors import PAYLOAD_FIELDS, Point, VectorStoreError

if TYPE_CHECKING:
    from collections.abc import Iterator

    from qdrant_client import QdrantClient
    from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)

#: payload fields a server indexes (local mode ignores payload indexes)
INDEXED_FIELDS = ("url", "url_hash", "content_hash")
SCROLL_PAGE = 1000
UPSERT_BATCH = 256


def local_store_locked(path: Path) -> bool:
    """Does another process hold qdrant-client's lock (an ``flock`` on ``.lock``)?"""
    return held_elsewhere(path / ".lock")


def check_server(client: QdrantClient, url: str) -> None:
    """Fail at start-up, in one line, when the server does not answer (or refuses the key)."""
    try:
        client.get_collections()
    except Exception as exc:  # noqa: BLE001 - connection refused, timeout, 401...: all one message
        client.close()
        detail = " ".join(str(exc).split()) or type(exc).__name__
        raise VectorStoreError(f"The Qdrant server QDRANT_URL={url} does not answer: {detail}") from None


class QdrantVectorStore:
    """One Qdrant collection (``VECTOR_SYNC_COLLECTION``), cosine distance.

    Without ``QDRANT_URL``: qdrant-client's local mode in ``QDRANT_PATH`` (default
    ``EXTRACTED_DOCS_DIR/qdrant``), no server needed; one process at a time, payload
    indexes ignored, meant for up to some 20,000 points. Here a page's points are
    found in an in-memory map of the collection built once per run. With
    ``QDRANT_URL``: that server (API key from the environment variable named by
    ``QDRANT_API_KEY_ENV``), with keyword payload indexes on ``url``, ``url_hash`` and
    ``content_hash``, and a page's points found by a filtered scroll.
    """

    def __init__(self, client: QdrantClient, collection: str, *, local: bool, location: str) -> None:
        self.client = client
        self.collection = collection
        self.local = local
        self.location = f"{location}#{collection}"
        self._exists: bool | None = None
        self._by_page: dict[str, dict[str, dict[str, Any]]] | None = None  # local mode: url_hash -> points
        self._owner: dict[str, str] = {}  # local mode: point id -> url_hash

    @classmethod
    def from_settings(cls, base: BaseSettings) -> QdrantVectorStore:
        try:
            from qdrant_client import QdrantClient
        except ModuleNotFoundError as exc:
            raise ImportError(f"The Qdrant vector store needs qdrant-client{install_hint(exc)}") from exc

        settings = typed(base)
        collection = settings.get("VECTOR_SYNC_COLLECTION")
        url = settings.get("QDRANT_URL")
        if url:
            timeout = settings.getint("QDRANT_TIMEOUT")
            # no version check (it only warns); one request says whether the server answers
            client = QdrantClient(
                url=url, api_key=from_env(QDRANT_KEY_ENV) or None, timeout=timeout, check_compatibility=False
            )
            check_server(client, url)
            return cls(client, collection, local=False, location=url)
        path = settings.get("QDRANT_PATH") or str(Path(settings.get("EXTRACTED_DOCS_DIR")) / "qdrant")
        in_use = VectorStoreError(
            f"The local Qdrant store {path} is in use by another process (local mode allows one at a "
            "time; a Qdrant server, QDRANT_URL, allows concurrent access)"
        )
        if local_store_locked(Path(path)):  # checked first: qdrant-client leaks files when it is
            raise in_use
        try:
            client = QdrantClient(path=path)
        except RuntimeError:  # locked since the check
            raise in_use from None
        except Exception as exc:  # noqa: BLE001 - whatever a broken folder raises, one clear line
            raise VectorStoreError(
                f"The local Qdrant store {path} (QDRANT_PATH) cannot be opened: {type(exc).__name__}: {exc}. "
                "Nothing was changed: restore it, or move it aside (the next crawl then embeds every page again)"
            ) from None
        return cls(client, collection, local=True, location=str(Path(path).resolve()))

    # -- reading -------------------------------------------------------------

    def exists(self) -> bool:
        if self._exists is None:
            self._exists = bool(self.client.collection_exists(self.collection))
        return self._exists

    def _scroll(self, scroll_filter: Any = None) -> Iterator[tuple[str, dict[str, Any]]]:
        from qdrant_client import models

        if not self.exists():
            return
        offset: Any = None
        while True:
            records, offset = self.client.scroll(
                self.collection,
                scroll_filter=scroll_filter,
                limit=SCROLL_PAGE,
                offset=offset,
                with_payload=models.PayloadSelectorExclude(exclude=["text"]),
                with_vectors=False,
            )
            for record in records:
                yield str(record.id), dict(record.payload or {})
            if offset is None:
                return

    def iter_points(self) -> Iterator[tuple[str, dict[str, Any]]]:
        return self._scroll()

    def page_points(self, url_hash: str) -> dict[str, dict[str, Any]]:
        from qdrant_client import models

        if self.local:
            if self._by_page is None:
                self._by_page = {}
                for point_id, payload in self._scroll():
                    self._remember(point_id, payload)
            return dict(self._by_page.get(url_hash, {}))
        match = models.FieldCondition(key="url_hash", match=models.MatchValue(value=url_hash))
        return dict(self._scroll(models.Filter(must=[match])))

    def get_points(self, ids: list[str]) -> list[Point]:
        """The points of ``ids`` with their vectors and whole payloads (those that exist)."""
        if not ids or not self.exists():
            return []
        found = self.client.retrieve(self.collection, ids=list(ids), with_payload=True, with_vectors=True)
        points = []
        for record in found:
            vector: Any = record.vector
            if isinstance(vector, dict):  # a named vector: this store writes unnamed ones only
                vector = next(iter(vector.values()), None)
            points.append(Point(str(record.id), list(vector or []), dict(record.payload or {})))
        return points

    def vector_size(self) -> int | None:
        """The collection's vector size (None: no collection yet)."""
        if not self.exists():
            return None
        size = getattr(self.client.get_collection(self.collection).config.params.vectors, "size", None)
        return int(size) if size is not None else None

    def count(self) -> int:
        return int(self.client.count(self.collection).count) if self.exists() else 0

    def search(self, vector: list[float], limit: int = 5) -> list[tuple[str, float, dict[str, Any]]]:
        if not self.exists():
            return []
        result = self.client.query_points(self.collection, query=vector, limit=limit, with_payload=True)
        return [(str(p.id), float(p.score), dict(p.payload or {})) for p in result.points]

    # -- writing -------------------------------------------------------------

    def _ensure(self, size: int) -> None:
        from qdrant_client import models

        if self.exists():
            have = self.vector_size()
            if have is not None and have != size:
                raise VectorStoreError(
                    f"Collection {self.collection!r} holds {have}-dimension vectors and the embedder makes "
                    f"{size}: set VECTOR_SYNC_COLLECTION to a new collection for this embedder"
                )
            return
        self.client.create_collection(
            self.collection, vectors_config=models.VectorParams(size=size, distance=models.Distance.COSINE)
        )
        if not self.local:  # local mode ignores payload indexes (and warns)
            for name in INDEXED_FIELDS:
                self.client.create_payload_index(self.collection, name, models.PayloadSchemaType.KEYWORD)
        self._exists = True

    def upsert(self, points: list[Point]) -> None:
        from qdrant_client import models

        if not points:
            return
        self._ensure(len(points[0].vector))
        for start in range(0, len(points), UPSERT_BATCH):
            batch = points[start : start + UPSERT_BATCH]
            self.client.upsert(
                self.collection,
                points=[models.PointStruct(id=p.id, vector=p.vector, payload=p.payload) for p in batch],
                wait=True,
            )
        for point in points:
            self._remember(point.id, point.payload)

    def set_payload(self, point_id: str, payload: dict[str, Any]) -> None:
        self.client.set_payload(self.collection, payload=payload, points=[point_id], wait=True)
        if self._by_page is not None and point_id in self._owner:
            self._by_page[self._owner[point_id]][point_id].update(payload)

    def delete(self, ids: list[str]) -> None:
        from qdrant_client import models

        if not ids or not self.exists():
            return
        self.client.delete(self.collection, points_selector=models.PointIdsList(points=list(ids)), wait=True)
        if self._by_page is not None:
            for point_id in ids:
                owner = self._owner.pop(point_id, None)
                if owner is not None:
                    self._by_page.get(owner, {}).pop(point_id, None)

    def _remember(self, point_id: str, payload: dict[str, Any]) -> None:
        if self._by_page is None or not self.local:
            return
        url_hash = str(payload.get("url_hash", ""))
        self._owner[point_id] = url_hash
        self._by_page.setdefault(url_hash, {})[point_id] = {k: payload[k] for k in PAYLOAD_FIELDS if k in payload}

    def close(self) -> None:
        self.client.close()
