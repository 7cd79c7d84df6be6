"""Feature-hashing text vectors: deterministic, offline, no model to download.

Word unigrams and bigrams are hashed (SHA-256, not Python's salted ``hash``) into
``dimensions`` buckets with a sign bit, weighted ``1 + log(count)``, and the vector is
L2-normalized, so cosine similarity measures shared vocabulary. A lexical baseline,
not a semantic model: good for tests, demos and exact-phrase recall.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import re
from collections import Counter

TOKEN_RE = re.compile(r"\w+", re.UNICODE)


def tokens(text: str) -> list[str]:
    """Lower-case word unigrams, then bigrams.

    >>> tokens("Run pip, then run.")
    ['run', 'pip', 'then', 'run', 'run pip', 'pip then', 'then run']
    """
    words = TOKEN_RE.findall(text.lower())
    return words + [f"{a} {b}" for a, b in itertools.pairwise(words)]


def hashed_vector(text: str, dimensions: int = 256) -> list[float]:
    """The unit-length feature-hashing vector of ``text`` (all zeros for no words).

    >>> v = hashed_vector("install the package", 64)
    >>> len(v), round(sum(x * x for x in v), 6)
    (64, 1.0)
    >>> hashed_vector("", 8)
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    """
    if dimensions < 2:
        raise ValueError(f"dimensions must be at least 2, got {dimensions!r}")
    vector = [0.0] * dimensions
    for token, count in Counter(tokens(text)).items():
        digest = int.from_bytes(hashlib.sha256(token.encode("utf-8")).digest()[:8], "big")
        sign = 1.0 if digest & 1 else -1.0
        vector[(digest >> 1) % dimensions] += sign * (1.0 + math.log(count))
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm else vector
