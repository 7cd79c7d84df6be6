"""A generated corpus at the scale the original boilerplate algorithm was measured on:
about 12,000 pages, 120 MB of markdown, 250 domains, with the kinds of repeated blocks
real sites carry.

Deterministic (seeded). Each domain gets a boilerplate profile: a cookie banner (500 to
4,500 characters, as OneTrust's), a footer with a year and an address, a sidebar list,
a "related" grid, a newsletter box; some blocks carry per-page digits ("3 items in
cart", "© 2025"), some domains have a /blog/ section with its own author box. Page
bodies are paragraphs of words drawn from a vocabulary, unique per page.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

VOCAB = [
    "api",
    "client",
    "server",
    "request",
    "response",
    "token",
    "widget",
    "config",
    "install",
    "module",
    "package",
    "function",
    "method",
    "class",
    "object",
    "value",
    "field",
    "record",
    "index",
    "cache",
    "store",
    "page",
    "site",
    "domain",
    "crawl",
    "extract",
    "model",
    "prompt",
    "embed",
    "vector",
    "chunk",
    "search",
    "query",
    "filter",
    "sort",
    "limit",
    "offset",
    "error",
    "retry",
    "timeout",
    "network",
    "socket",
    "stream",
    "buffer",
    "file",
    "path",
    "folder",
    "archive",
    "release",
    "version",
    "update",
    "change",
    "fix",
    "feature",
    "option",
    "setting",
    "default",
    "enable",
    "disable",
    "start",
    "stop",
    "run",
    "build",
    "test",
    "deploy",
    "monitor",
    "log",
    "metric",
    "trace",
    "alert",
    "user",
    "account",
    "team",
    "project",
    "plan",
    "billing",
    "invoice",
    "payment",
    "region",
    "zone",
    "gear",
    "motor",
    "drive",
    "shaft",
    "bearing",
    "coupling",
    "torque",
    "speed",
    "ratio",
    "housing",
    "seal",
    "flange",
    "mount",
    "pump",
]


@dataclass
class Domain:
    name: str
    pages: int
    blocks: list[str]  # boilerplate blocks on every page
    partial: list[str]  # blocks on about half the pages
    blog_block: str | None
    body_chars: int


def _words(rng: random.Random, count: int) -> str:
    return " ".join(rng.choices(VOCAB, k=count))


def _paragraph(rng: random.Random, chars: int) -> str:
    text = _words(rng, max(8, chars // 7))
    return text[:1].upper() + text[1:] + "."


def make_domains(count: int = 250, total_pages: int = 12_000, seed: int = 7) -> list[Domain]:
    rng = random.Random(seed)
    weights = [rng.lognormvariate(0, 0.9) for _ in range(count)]
    scale = total_pages / sum(weights)
    domains = []
    for i in range(count):
        pages = max(1, round(weights[i] * scale))
        # the original measurement: 19.5% boilerplate overall, 70-90% on the worst domains
        share = rng.choices([0.0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 0.9], [12, 18, 22, 20, 13, 8, 4, 2, 1])[0]
        body_chars = rng.randint(4_000, 10_000)
        boiler_chars = int(body_chars * share / (1 - share))
        blocks = [
            f"© {{year}} {_words(rng, 2).title()} GmbH. Registered office: {rng.randint(1, 99)} "
            f"{_words(rng, 1).title()} Street, {_words(rng, 1).title()}. All rights reserved.",
            "Your cart: {cart} items. " + _paragraph(rng, 80),
        ]
        if boiler_chars > 1_000:  # a cookie banner, 500 to 4,500 characters (OneTrust's: 4,484)
            banner = min(boiler_chars - 300, rng.randint(500, 4_500))
            blocks.insert(0, "## Cookie settings\n\n" + _paragraph(rng, banner))
        if boiler_chars > 600:
            blocks.append("\n".join(f"- [{_words(rng, 2)}](/{_words(rng, 1)}/{n})" for n in range(rng.randint(5, 15))))
        while sum(len(b) for b in blocks) < boiler_chars:
            blocks.append("### Related\n\n" + _paragraph(rng, rng.randint(200, 1_500)))
        partial = [_paragraph(rng, 300) for _ in range(2)]
        blog = ("About the author: " + _paragraph(rng, 250)) if rng.random() < 0.3 else None
        domains.append(Domain(f"www.site{i:03d}.example", pages, blocks, partial, blog, body_chars))
    return domains


def pages_of(domain: Domain, seed: int = 11) -> Iterator[tuple[str, str]]:
    """``(url, markdown)`` of every page of ``domain``, generated on the fly."""
    rng = random.Random(f"{seed}-{domain.name}")
    for n in range(domain.pages):
        in_blog = domain.blog_block is not None and n % 3 == 0
        url = f"https://{domain.name}/{'blog' if in_blog else 'products'}/{n}"
        parts = [f"# {_words(rng, 4).title()}"]
        written = 0
        while written < domain.body_chars:
            paragraph = _paragraph(rng, rng.randint(200, 900))
            parts.append(paragraph)
            written += len(paragraph)
        for block in domain.blocks:
            parts.append(block.replace("{year}", str(2024 + n % 3)).replace("{cart}", str(n % 5)))
        if n % 2:
            parts.extend(domain.partial)
        if in_blog and domain.blog_block:
            parts.append(domain.blog_block)
        yield url, "\n\n".join(parts)


def corpus(domains: list[Domain]) -> list[tuple[Domain, list[tuple[str, str]]]]:
    return [(domain, list(pages_of(domain))) for domain in domains]
