"""Embedders: what turns chunk texts into vectors for the vector store.

Any class works as ``EMBEDDER`` if it has string attributes ``name`` and ``version``
and a method ``embed(self, texts: list[str]) -> list[list[float]]`` (plain or
``async def``) returning one vector per text, in order. It is built with Scrapy's
``build_from_crawler``, so ``from_crawler`` is optional. A plain ``embed`` runs in a
worker thread unless the class sets ``blocking = False``. An optional ``batch_size``
attribute caps the texts per call (default ``EMBEDDER_BATCH_SIZE``). An embedder
that refuses a text for what it is (over the model's token limit: HTTP 400, 413, 422)
raises :class:`EmbeddingRejected`: the sync then embeds that batch's texts one by one
and leaves only the pages of the refused texts unsynced; any other exception stops
the sync. The pair
(name, version) is part of every point: change either (another model, other
dimensions) and the next sync re-embeds every chunk.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from crawler.config import check_component

if TYPE_CHECKING:
    from collections.abc import Awaitable


class EmbeddingRejected(Exception):
    """The embedder refuses these texts (too long for the model...): retrying them
    will not help, other texts may still embed."""


@runtime_checkable
class Embedder(Protocol):
    """What the vector sync calls (see the module's docstring)."""

    name: str
    version: str

    def embed(self, texts: list[str]) -> list[list[float]] | Awaitable[list[list[float]]]: ...


def check_embedder(embedder: object) -> Embedder:
    """``embedder`` as an :class:`Embedder`; ``TypeError`` naming what it lacks."""
    check_component(embedder, "Embedder", "embed", "embed(self, texts) -> list of vectors")
    assert isinstance(embedder, Embedder)  # what check_component made sure of
    return embedder


def embedder_key(embedder: Embedder) -> str:
    """``name/version``: stored with every point."""
    return f"{embedder.name}/{embedder.version}"
