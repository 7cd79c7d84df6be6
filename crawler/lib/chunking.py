"""Markdown chunking for vector stores, with boundaries and IDs that survive edits.

Pure functions, no Scrapy or storage dependency. Boundaries are content-defined (whether
a chunk ends after a block depends on that block alone, :func:`split_run` for long runs)
and point IDs content-derived (page, chunk hash, occurrence; never position), so an
edit re-embeds only the chunk it lands in. See docs/vector-sync.md ("Chunking").
"""

from __future__ import annotations

import functools
import itertools
import re
import uuid
from dataclasses import dataclass, field

from crawler.lib.blocks import FENCE_RE, Block, split_blocks
from crawler.lib.hashing import normalize_text, sha256_hex

SENTENCE_RE = re.compile(r"(?<=[.!?])\s+")
#: words of a block that decide whether a chunk ends after it
KEY_WORDS = 8
#: a run of blocks without a content-defined boundary is cut at this many targets
MAX_FACTOR = 3

DEFAULT_TARGET = 1000


@dataclass
class Chunk:
    """One chunk of a page: its markdown text and the headings it sits under."""

    text: str
    heading_path: list[str] = field(default_factory=list)
    index: int = 0
    content_hash: str = ""
    occurrence: int = 0

    @property
    def embed_text(self) -> str:
        """The text embedded: the heading path, a blank line, the chunk's text."""
        if not self.heading_path:
            return self.text
        return " > ".join(self.heading_path) + "\n\n" + self.text

    def point_id(self, url_hash: str) -> str:
        return point_id(url_hash, self.content_hash, self.occurrence)


@functools.lru_cache(maxsize=1 << 16)
def boundary_draw(text: str) -> float:
    """A number in [0, 1) drawn from a hash of the block's first words."""
    key = " ".join(normalize_text(text).split()[:KEY_WORDS])
    return int(sha256_hex(key)[:16], 16) / float(1 << 64)


def boundary_score(text: str) -> float:
    """How strongly a chunk wants to end after this block: the lower, the stronger.
    A block is a boundary when its score is under ``1 / target``.

    >>> boundary_score("x" * 1000) < 1 / 1000
    True
    """
    return boundary_draw(text) / max(1, len(text))


def is_boundary(text: str, target: int) -> bool:
    """Does a chunk end after this block? Depends on the block alone: always for a
    block of ``target`` characters or more, else with probability
    ``len(text) / target`` by a hash of its first words.

    >>> is_boundary("x" * 1000, 1000)
    True
    >>> is_boundary("A short line.", 10**9)
    False
    """
    return len(text) >= target or boundary_draw(text) < len(text) / target


def split_long(block: Block, limit: int) -> list[str]:
    """Pieces of at most ``limit`` characters of a block too long for one chunk: a code
    block by lines, each piece fenced again; text by lines, then sentences, then words.

    >>> split_long(Block("code", "```py\\na = 1\\nb = 2\\n```"), 16)
    ['```py\\na = 1\\n```', '```py\\nb = 2\\n```']
    """
    if block.kind == "code":
        lines = block.text.split("\n")
        opening = lines[0]
        closing = lines[-1] if len(lines) > 1 and FENCE_RE.match(lines[-1]) else opening.strip()[:3]
        body = lines[1:-1] if len(lines) > 1 and FENCE_RE.match(lines[-1]) else lines[1:]
        room = max(1, limit - len(opening) - len(closing) - 2)
        return [f"{opening}\n{piece}\n{closing}" for piece in _pack(body, room, "\n")]
    units = block.text.split("\n")
    if any(len(unit) > limit for unit in units):
        units = [s for unit in units for s in SENTENCE_RE.split(unit)]
    if any(len(unit) > limit for unit in units):
        units = [w for unit in units for w in unit.split(" ")]
    return _pack(units, limit, "\n" if "\n" in block.text else " ")


def _pack(units: list[str], limit: int, sep: str) -> list[str]:
    pieces: list[str] = []
    current = ""
    for unit in units:
        while len(unit) > limit:  # a single word or line longer than the limit
            if current:
                pieces.append(current)
                current = ""
            pieces.append(unit[:limit])
            unit = unit[limit:]
        if current and len(current) + len(sep) + len(unit) > limit:
            pieces.append(current)
            current = unit
        else:
            current = f"{current}{sep}{unit}" if current else unit
    if current.strip():
        pieces.append(current)
    return pieces


def chunk_markdown(markdown: str, target: int = DEFAULT_TARGET) -> list[Chunk]:
    """The chunks of a page, in order, with heading paths, indexes, content hashes
    and occurrence numbers set. Chunks never cross a heading; a code block stays whole
    unless it is longer than ``3 * target``.

    >>> chunks = chunk_markdown("# Guide\\n\\nIntro.\\n\\n## Install\\n\\nRun pip.", 1000)
    >>> [(c.heading_path, c.text) for c in chunks]
    [(['Guide'], 'Intro.'), (['Guide', 'Install'], 'Run pip.')]
    """
    if target < 50:
        raise ValueError(f"chunk target size must be at least 50 characters, got {target!r}")
    limit = MAX_FACTOR * target
    chunks: list[Chunk] = []
    path: list[tuple[int, str]] = []
    run: list[str] = []

    def emit() -> None:
        titles = [title for _, title in path]
        chunks.extend(Chunk("\n\n".join(part), titles) for part in split_run(run, target, limit))
        run.clear()

    for block in split_blocks(markdown):
        if block.kind == "heading":
            emit()
            while path and path[-1][0] >= block.level:
                path.pop()
            path.append((block.level, block.text))
            continue
        for piece in [block.text] if len(block.text) <= limit else split_long(block, target):
            run.append(piece)
            if is_boundary(piece, target):
                emit()
    emit()
    return number_chunks(chunks)


def split_run(pieces: list[str], target: int, limit: int) -> list[list[str]]:
    """A run of pieces without a content-defined boundary, in chunks of at most
    ``limit`` characters: one chunk if it fits, else cut after its most
    boundary-like piece (the lowest :func:`boundary_score`, among cuts leaving
    ``target / 2`` characters or more on each side when there are such) and each side
    cut the same way. The cuts depend on the run's pieces, not on where it starts, so
    a piece inserted into a long run changes the chunk it lands in (and, when it
    tips a part over the limit or becomes the lowest score, one more) rather than
    shifting every later cut.

    >>> [[len(p) for p in part] for part in split_run(["a" * 60, "b" * 60, "c" * 60], 50, 150)]
    [[60], [60, 60]]
    """
    if not pieces:
        return []
    ends = list(itertools.accumulate(len(p) + 2 for p in pieces))  # ends[i]: size of pieces[:i+1] plus 2
    scores = [boundary_score(p) for p in pieces]

    def size(start: int, stop: int) -> int:  # of pieces[start:stop] joined by blank lines
        return ends[stop - 1] - (ends[start - 1] if start else 0) - 2

    parts: list[list[str]] = []
    todo = [(0, len(pieces))]  # a stack, not recursion: a run can have thousands of pieces
    while todo:
        start, stop = todo.pop()
        if stop - start == 1 or size(start, stop) <= limit:
            parts.append(pieces[start:stop])
            continue
        cuts = range(start + 1, stop)  # a cut before pieces[c]
        balanced = [c for c in cuts if min(size(start, c), size(c, stop)) >= target // 2]
        # ties (identical blocks) are cut nearest the middle
        best = min(
            balanced or cuts,
            key=lambda c: (scores[c - 1], abs(size(start, c) - size(c, stop))),
        )
        todo += [(best, stop), (start, best)]
    return parts


def number_chunks(chunks: list[Chunk]) -> list[Chunk]:
    """Set each chunk's index, content hash and occurrence among identical chunks."""
    seen: dict[str, int] = {}
    for index, chunk in enumerate(chunks):
        chunk.index = index
        chunk.content_hash = sha256_hex(normalize_text(chunk.embed_text))
        chunk.occurrence = seen.get(chunk.content_hash, 0)
        seen[chunk.content_hash] = chunk.occurrence + 1
    return chunks


def point_id(url_hash: str, content_hash: str, occurrence: int = 0) -> str:
    """A UUID (version 8, RFC 9562) from SHA-256 of the page, the chunk's content hash
    and its occurrence number: Qdrant takes UUIDs, not raw hex.

    Why not ``uuid.uuid5``: it hashes with SHA-1 under a namespace, so every point ID
    already stored in users' collections would change and every chunk be embedded again;
    version 8 is RFC 9562's form for a name hashed another way (``uuid.uuid8`` only
    comes with Python 3.14), and setting its version and variant bits is all it asks.

    >>> point_id("ab", "cd") == point_id("ab", "cd", 0) != point_id("ab", "cd", 1)
    True
    >>> made = uuid.UUID(point_id("ab", "cd"))
    >>> str(made) == point_id("ab", "cd"), made.version, made.variant == uuid.RFC_4122
    (True, 8, True)
    """
    digest = int(sha256_hex(f"{url_hash}\0{content_hash}\0{occurrence}")[:32], 16)
    digest &= ~(0xF000 << 64) & ~(0xC000 << 48)
    digest |= (0x8000 << 64) | (0x8000 << 48)
    return str(uuid.UUID(int=digest))
