"""The original block-hash boilerplate algorithm, function for function: the reference
the crawler's analyser (:class:`crawler.lib.boilerplate.DomainAnalyser`) is measured
against (``bench.boilerplate``) and checked against (``tests/test_lib_boilerplate.py``:
with ``Params(loose=False, sections=False, hysteresis=0.0, position=False)`` it decides
exactly as these functions do).

A block is text between blank lines, at least ``min_block_chars`` long; its hash is
the SHA-256 (16 hex chars) of its text with white space collapsed, lowercased. A block
on at least ``max(min_pages, floor(pages * threshold_pct))`` of a domain's pages is
boilerplate, and is removed from every page. All pages are held in memory.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from dataclasses import dataclass

BLOCK_SEPARATOR_RE = re.compile(r"\n\s*\n")
BLOCK_SEPARATOR_KEEP_RE = re.compile(r"(\n\s*\n)")
BLANK_RUN_RE = re.compile(r"\n{3,}")
WS_RE = re.compile(r"\s+")


@dataclass
class DomainFingerprintResult:
    boilerplate_hashes: list[str]
    pages_analyzed: int
    blocks_total: int
    blocks_boilerplate: int


def split_into_blocks(content: str, min_block_chars: int = 50) -> list[str]:
    """Blocks of ``content`` separated by blank lines, at least ``min_block_chars``
    long once stripped."""
    blocks = (block.strip() for block in BLOCK_SEPARATOR_RE.split(content))
    return [block for block in blocks if len(block) >= min_block_chars]


def hash_block(block: str) -> str:
    """SHA-256 (16 hex chars) of the block with white space collapsed, lowercased."""
    normalized = WS_RE.sub(" ", block).strip().lower()
    return hashlib.sha256(normalized.encode("utf-8")).hexdigest()[:16]


def compute_domain_fingerprint(
    pages: list[str], threshold_pct: float = 0.7, min_pages: int = 5, min_block_chars: int = 50
) -> DomainFingerprintResult:
    """The hashes of blocks found on at least ``max(min_pages, floor(pages *
    threshold_pct))`` pages. Domains with fewer than ``min_pages`` pages get no fingerprint."""
    if len(pages) < min_pages:
        return DomainFingerprintResult([], len(pages), 0, 0)
    counts: Counter[str] = Counter()
    blocks_total = 0
    for page in pages:
        hashes = {hash_block(block) for block in split_into_blocks(page, min_block_chars)}
        blocks_total += len(hashes)
        counts.update(hashes)
    needed = max(min_pages, math.floor(len(pages) * threshold_pct + 1e-9))
    boilerplate = sorted(h for h, n in counts.items() if n >= needed)
    return DomainFingerprintResult(boilerplate, len(pages), blocks_total, len(boilerplate))


def strip_boilerplate(content: str, boilerplate_hashes: set[str], min_block_chars: int = 50) -> tuple[str, int]:
    """``content`` without its boilerplate blocks, and the bytes (UTF-8) removed."""
    if not boilerplate_hashes:
        return content, 0
    parts = BLOCK_SEPARATOR_KEEP_RE.split(content)
    kept: list[str] = []
    removed = 0
    for part in parts:
        stripped = part.strip()
        if len(stripped) >= min_block_chars and hash_block(stripped) in boilerplate_hashes:
            removed += len(part.encode("utf-8"))
            continue
        kept.append(part)
    cleaned = BLANK_RUN_RE.sub("\n\n", "".join(kept)).strip("\n")
    return cleaned, removed
