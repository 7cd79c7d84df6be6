"""A page's block signature: what the domain boilerplate analysis needs of a page, made
once from its text and kept beside it (:mod:`crawler.lib.blockstats` counts pages by
their signatures, so a recrawl reads only the pages that changed).

A signature is the page's section and, per block in page order, the block's digest
(:func:`crawler.lib.boilerplate.block_digest`) and two flags: long (at least
``min_block_chars``) and a heading (a one-line ``# Title``). It depends on the
parameters it was made with (``min_block_chars``, ``loose``, ``position``, ``sections``);
:data:`SIGNATURE_VERSION` changes when what it holds does. Pure functions.
"""

from __future__ import annotations

import sys
from array import array
from itertools import chain
from typing import TYPE_CHECKING

from crawler.lib.blockkeys import is_heading, split_blocks
from crawler.lib.boilerplate import Params, block_digest, section_of

if TYPE_CHECKING:
    from collections.abc import Callable

#: the layout of :meth:`Signature.to_bytes`
SIGNATURE_VERSION = 1
#: a block's flags
LONG = 1
HEADING = 2


class Signature:
    """One page's blocks as the analysis sees them: ``digests`` and ``flags`` per block,
    in page order, and the page's ``section`` (None: none, or sections off)."""

    __slots__ = ("digests", "flags", "section")

    def __init__(self, section: str | None, digests: array[int], flags: bytes) -> None:
        if len(digests) != len(flags):
            raise ValueError(f"a signature needs one flag a block: {len(digests)} digests, {len(flags)} flags")
        self.section = section
        self.digests = digests
        self.flags = flags

    def distinct(self) -> set[int]:
        """The page's counted blocks (a block too short to count has digest 0)."""
        out = set(self.digests)
        out.discard(0)
        return out

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Signature) and (self.section, self.digests, self.flags) == (
            other.section,
            other.digests,
            other.flags,
        )

    def __hash__(self) -> int:
        return hash((self.section, self.digests.tobytes(), self.flags))

    def __repr__(self) -> str:
        return f"Signature({self.section!r}, {len(self.digests)} blocks)"

    def to_bytes(self) -> bytes:
        """``version, len(section), section, blocks`` then the digests (8 bytes each,
        little-endian) and the flags (a byte each).

        >>> s = Signature("blog", array("Q", [1, 2**64 - 1]), bytes([LONG, HEADING]))
        >>> Signature.from_bytes(s.to_bytes()) == s
        True
        """
        section = (self.section or "").encode("utf-8")
        digests = array("Q", self.digests)
        if sys.byteorder != "little":
            digests.byteswap()
        head = bytes([SIGNATURE_VERSION]) + len(section).to_bytes(2, "little") + section
        return head + len(self.flags).to_bytes(4, "little") + digests.tobytes() + bytes(self.flags)

    @classmethod
    def from_bytes(cls, data: bytes) -> Signature:
        """The signature :meth:`to_bytes` wrote; ``ValueError`` naming what is wrong
        for anything else (another version: make the page's signature again)."""
        if not data or data[0] != SIGNATURE_VERSION:
            found = data[0] if data else "nothing"
            raise ValueError(f"block signature of version {found}, expected {SIGNATURE_VERSION}")
        size = int.from_bytes(data[1:3], "little")
        start = 3 + size
        if len(data) < start + 4:
            raise ValueError(f"block signature truncated: {len(data)} bytes")
        blocks = int.from_bytes(data[start : start + 4], "little")
        start += 4
        if len(data) != start + 9 * blocks:
            raise ValueError(f"block signature of {len(data)} bytes, expected {start + 9 * blocks} for {blocks} blocks")
        digests = array("Q")
        digests.frombytes(data[start : start + 8 * blocks])
        if sys.byteorder != "little":
            digests.byteswap()
        section = data[3 : 3 + size].decode("utf-8") or None
        return cls(section, digests, data[start + 8 * blocks :])


def block_flags(block: str, params: Params) -> int:
    """A block's :data:`LONG` and :data:`HEADING` flags.

    >>> block_flags("# Notes", Params()), block_flags("x" * 50, Params()), block_flags("#tag", Params())
    (2, 1, 0)
    """
    return (LONG if len(block) >= params.min_block_chars else 0) | (
        HEADING if block[0] == "#" and is_heading(block) else 0
    )


def signature_blocks(
    url: str, text: str, params: Params, digest: Callable[[str], int] | None = None
) -> tuple[Signature, list[tuple[str, int]]]:
    """The page's signature, and its blocks' texts with their digests (``digest``: a
    caching :func:`block_digest`)."""
    digest = digest or (lambda block: block_digest(block, params))
    blocks = [(block, digest(block)) for block in split_blocks(text)]
    flags = bytes(block_flags(block, params) for block, _ in blocks)
    section = section_of(url) if params.sections else None
    return Signature(section, array("Q", [d for _, d in blocks]), flags), blocks


def signature(url: str, text: str, params: Params) -> Signature:
    """The signature of the page at ``url`` holding ``text``."""
    return signature_blocks(url, text, params)[0]


def edge_digests(sig: Signature, count_of: Callable[[int], int], own_below: int) -> set[int]:
    """The blocks of a page that sit at its edges, as ``DomainAnalyser.locate`` finds
    them, for every block, candidate or not (it counts only candidates, and only a
    candidate's count is ever read: the same counts). ``count_of``: pages of the domain
    holding a block; a block held by fewer than ``own_below`` is the page's own text."""
    digests, flags = sig.digests, sig.flags
    size = len(digests)
    first = first_long = size
    for i in range(size):
        flag = flags[i]
        if flag and count_of(digests[i]) < own_below:
            first = min(first, i)
            if not flag & HEADING:
                first_long = i
                break
    last = last_long = -1
    for i in range(size - 1, first - 1, -1):
        flag = flags[i]
        if flag and count_of(digests[i]) < own_below:
            last = max(last, i)
            if not flag & HEADING:
                last_long = i
                break
    out = set()
    for i in chain(range(first_long), range(max(last_long + 1, first_long), size)):
        flag = flags[i]
        if flag & LONG:
            if first <= i <= last:
                continue  # between the page's own text
        elif flag & HEADING:
            continue  # a short heading: the page's structure
        out.add(digests[i])
    return out
