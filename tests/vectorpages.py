"""Generated documentation pages for the vector sync tests: deterministic, varied."""

from __future__ import annotations

import random

WORDS = [
    "the",
    "crawler",
    "fetches",
    "each",
    "page",
    "and",
    "stores",
    "its",
    "markdown",
    "so",
    "that",
    "a",
    "later",
    "run",
    "can",
    "compare",
    "content",
    "hashes",
    "chunk",
    "boundaries",
    "vectors",
    "embeddings",
    "qdrant",
    "collection",
    "payload",
    "index",
    "heading",
    "section",
    "install",
    "configure",
    "deploy",
    "request",
    "response",
    "cache",
    "extractor",
    "boilerplate",
    "domain",
    "sitemap",
]


def paragraph(rng: random.Random, words: tuple[int, int] = (12, 40)) -> str:
    text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(*words)))
    return text[0].upper() + text[1:] + "."


def paragraphs(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return [f"P{seed}-{i}: {paragraph(rng)}" for i in range(count)]


def page_markdown(title: str, paras: list[str], every: int = 12) -> str:
    """A page with an H1 and an H2 every ``every`` paragraphs."""
    out = [f"# {title}"]
    for i, text in enumerate(paras):
        if i and i % every == 0:
            out.append(f"## Part {i // every}")
        out.append(text)
    return "\n\n".join(out)


def reference_blocks(rng: random.Random, count: int) -> list[str]:
    """Reference-style page blocks: mostly short list items and paragraphs, a section
    heading now and then (long runs of small blocks without a chunk boundary)."""
    out = ["# Reference"]
    for i in range(count):
        kind = rng.random()
        if kind < 0.03:
            out.append(f"## Section {i}")
        elif kind < 0.6:
            out.append(f"- item {i}: " + paragraph(rng, (2, 8)))
        else:
            out.append(f"P{i} " + paragraph(rng, (5, 25)))
    return out
