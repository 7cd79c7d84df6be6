"""Embedders for tests: they record every text they embed so tests count calls exactly."""

from __future__ import annotations

import os
import re
from typing import Any

from crawler.embedders import EmbeddingRejected
from crawler.lib.featurehash import hashed_vector


class CountingEmbedder:
    """Feature-hashing vectors (so searches work); appends one line per embedded text
    (``request number<TAB>text with newlines as spaces``) to the file named by
    ``TEST_EMBEDDER_LOG``; raises for a request holding a text that matches
    ``TEST_EMBEDDER_FAIL``; refuses (:class:`EmbeddingRejected`, as for a text over
    a model's limit) a request holding a text that matches ``TEST_EMBEDDER_REJECT``."""

    name = "counting"
    version = "1"
    blocking = False

    def __init__(
        self, log: str = os.devnull, fail: str = "", version: str = "1", dimensions: int = 64, reject: str = ""
    ) -> None:
        self.log = log
        self.fail = re.compile(fail) if fail else None
        self.reject = re.compile(reject) if reject else None
        self.version = version
        self.dimensions = dimensions
        self.requests = 0
        self.texts: list[str] = []

    @classmethod
    def from_crawler(cls, crawler: Any) -> CountingEmbedder:
        settings = crawler.settings
        return cls(
            settings.get("TEST_EMBEDDER_LOG") or os.devnull,
            settings.get("TEST_EMBEDDER_FAIL", ""),
            settings.get("TEST_EMBEDDER_VERSION", "1"),
            reject=settings.get("TEST_EMBEDDER_REJECT", ""),
        )

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.requests += 1
        if self.fail is not None and any(self.fail.search(text) for text in texts):
            raise RuntimeError("embedding service unavailable (on purpose)")
        if self.reject is not None and any(self.reject.search(text) for text in texts):
            raise EmbeddingRejected("input too long for the model (on purpose)")
        self.texts.extend(texts)
        with open(self.log, "a", encoding="utf-8") as handle:
            for text in texts:
                handle.write(f"{self.requests}\t{text.replace(chr(10), ' ')}\n")
        return [hashed_vector(text, self.dimensions) for text in texts]


def embedded(log) -> list[str]:
    """The texts embedded, as logged (one per line, newlines as spaces)."""
    if not log.exists():
        return []
    return [line.split("\t", 1)[1] for line in log.read_text(encoding="utf-8").splitlines() if line]
