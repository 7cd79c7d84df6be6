"""The default embedder: feature hashing, offline, deterministic."""

from __future__ import annotations

from typing import TYPE_CHECKING

from crawler.config import typed
from crawler.lib.featurehash import hashed_vector

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

DEFAULT_DIMENSIONS = 256


class HashingEmbedder:
    """Word unigrams and bigrams hashed into ``EMBEDDER_DIMENSIONS`` (default 256)
    buckets (:func:`crawler.lib.featurehash.hashed_vector`). Needs no download and no
    network; a lexical baseline for a first sync, tests and demos, to be replaced by a
    real model (:class:`crawler.embedders.openai_compat.OpenAIEmbedder`)."""

    name = "feature-hashing"
    blocking = False  # pure computation: runs inline

    def __init__(self, dimensions: int = DEFAULT_DIMENSIONS) -> None:
        if dimensions < 2:
            raise ValueError(f"EMBEDDER_DIMENSIONS must be at least 2 for {self.name}, got {dimensions!r}")
        self.dimensions = dimensions
        self.version = f"1-d{dimensions}"

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> HashingEmbedder:
        return cls(typed(crawler.settings).getint("EMBEDDER_DIMENSIONS") or DEFAULT_DIMENSIONS)

    def embed(self, texts: list[str]) -> list[list[float]]:
        return [hashed_vector(text, self.dimensions) for text in texts]
