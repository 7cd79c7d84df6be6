"""The vector store protocol the sync talks to, and the points it holds.

The default implementation is :class:`crawler.vectors.qdrant.QdrantVectorStore`
(qdrant-client's local mode under the cache directory, or a Qdrant server); another
backend only has to implement :class:`VectorStore` and be named in the
``VECTOR_SYNC_STORE`` setting.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from collections.abc import Iterator


#: payload fields every point carries (and ``text``, left out of listings)
PAYLOAD_FIELDS = (
    "url", "url_hash", "domain", "title", "chunk_index", "heading_path", "content_hash",
    "occurrence", "embedder", "indexed_at",
)  # fmt: skip


@dataclass
class Point:
    id: str
    vector: list[float]
    payload: dict[str, Any]


class VectorStoreError(RuntimeError):
    """The vector store cannot be opened or refuses a write; the message says why."""


@runtime_checkable
class VectorStore(Protocol):
    """Points with a vector and a payload, found by id and by the payload's ``url_hash``.

    Listings return each point's payload without its ``text``. The collection is
    created by the first :meth:`upsert`, with that vector size."""

    #: where the points live (path or URL, and collection): part of each page's sync key
    location: str

    def page_points(self, url_hash: str) -> dict[str, dict[str, Any]]: ...
    def iter_points(self) -> Iterator[tuple[str, dict[str, Any]]]: ...
    def count(self) -> int: ...
    def upsert(self, points: list[Point]) -> None: ...
    def set_payload(self, point_id: str, payload: dict[str, Any]) -> None: ...
    def delete(self, ids: list[str]) -> None: ...
    def search(self, vector: list[float], limit: int = 5) -> list[tuple[str, float, dict[str, Any]]]: ...
    def close(self) -> None: ...
