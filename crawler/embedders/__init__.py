"""Embedders: what turns chunk texts into vectors for the vector store.

Any class works as ``EMBEDDER`` if it has string attributes ``name`` and ``version``
and a method ``embed(self, texts: list[str]) -> list[list[float]]`` (plain or
``async def``, one vector per text, in order), built with ``build_from_crawler``. A
plain ``embed`` runs in a worker thread unless ``blocking = False``; ``batch_size``
caps texts per call. Raise :class:`EmbeddingRejected` for a text refused for what it is
(over the token limit), so only its page stays unsynced; any other exception stops the
sync. (name, version) is part of every point: change either and every chunk is
re-embedded.
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
