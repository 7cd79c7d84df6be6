"""How many pages of a domain, and of each of its sections, hold each block: compact for
the blocks on one page (most are a page's own paragraphs), which sit in two sorted arrays
(the digest, 8 bytes, and the section, 2 bytes) rather than a dict (about 100 bytes an
entry). Blocks on two pages or more are in dicts, with their count per section. Pure
code, used by :mod:`crawler.lib.blockstats`.
"""

from __future__ import annotations

import sys
from array import array
from bisect import bisect_left
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator


class BlockCounts:
    """Digest -> pages holding it, of the domain and per section (``None``: a page
    without one, counted for the domain only)."""

    #: blocks newly on one page held in a dict before they are merged into the arrays
    #: (or a quarter of the arrays, if more): a first pass over 100,000 pages meets some
    #: 600,000 such blocks, about 45 MB as a dict, 6 MB in the arrays
    COMPACT_AT = 1 << 16

    def __init__(self) -> None:
        self.multi: dict[int, int] = {}  # blocks on 2+ pages
        self.sections: dict[str, dict[int, int]] = {}  # of those, pages per section
        self.names: list[str | None] = [None]  # section id -> name (0: none)
        self._ids: dict[str | None, int] = {None: 0}
        # blocks on one page: sorted digests and their page's section id, and the changes
        # since the arrays were last made (merged by compact())
        self.single = array("Q")
        self.single_section = array("H")
        self.added: dict[int, int] = {}  # digest -> section id
        self.dropped: set[int] = set()  # digests of ``single`` that are not on one page now

    def _id(self, section: str | None) -> int:
        found = self._ids.get(section)
        if found is None:
            if len(self.names) > 0xFFFF:
                raise ValueError(f"more than {0xFFFF} sections in one domain")
            found = self._ids[section] = len(self.names)
            self.names.append(section)
        return found

    def _single(self, digest: int) -> int | None:
        """The section id of the page of a block on one page; None if it is not."""
        found = self.added.get(digest)
        if found is not None or digest in self.dropped:
            return found
        i = bisect_left(self.single, digest)
        if i < len(self.single) and self.single[i] == digest:
            return self.single_section[i]
        return None

    def get(self, digest: int) -> int:
        found = self.multi.get(digest)
        if found is not None:
            return found
        return 0 if self._single(digest) is None else 1

    __getitem__ = get

    def _unsingle(self, digest: int) -> None:
        if self.added.pop(digest, None) is None:
            self.dropped.add(digest)

    def add(self, digest: int, section: str | None) -> int:
        """One more page (in ``section``) holds ``digest``; returns the count before."""
        count = self.multi.get(digest)
        if count is None:
            other = self._single(digest)
            if other is None:
                self.added[digest] = self._id(section)
                if len(self.added) >= max(self.COMPACT_AT, len(self.single) >> 2):
                    self.compact()
                return 0
            self._unsingle(digest)
            count = 1
            if other:
                name = self.names[other]
                assert name is not None
                self.sections.setdefault(name, {})[digest] = 1
        self.multi[digest] = count + 1
        if section is not None:
            in_section = self.sections.setdefault(section, {})
            in_section[digest] = in_section.get(digest, 0) + 1
        return count

    def remove(self, digest: int, section: str | None) -> int:
        """One page (in ``section``) less holds ``digest``; returns the count before."""
        count = self.multi.get(digest)
        if count is None:
            if self._single(digest) is None:
                raise KeyError(digest)
            self._unsingle(digest)
            return 1
        if section is not None:
            in_section = self.sections[section]
            if in_section[digest] > 1:
                in_section[digest] -= 1
            else:
                del in_section[digest]
                if not in_section:
                    del self.sections[section]
        if count > 2:
            self.multi[digest] = count - 1
            return count
        del self.multi[digest]
        left: str | None = None  # the section of the page left holding it
        for name, in_section in self.sections.items():
            if in_section.pop(digest, None) is not None:
                left = name
                if not in_section:
                    del self.sections[name]
                break
        self.added[digest] = self._id(left)  # (a digest of the arrays stays in dropped)
        return 2

    def section_count(self, section: str, digest: int) -> int:
        """Pages of ``section`` holding a block on 2+ pages of the domain."""
        return self.sections.get(section, {}).get(digest, 0)

    def __len__(self) -> int:
        return len(self.multi) + len(self.single) - len(self.dropped) + len(self.added)

    def items(self) -> Iterator[tuple[int, int]]:
        """Every block and its count (blocks on one page last)."""
        yield from self.multi.items()
        dropped = self.dropped
        for digest in self.single:
            if digest not in dropped and digest not in self.added:
                yield digest, 1
        for digest in self.added:
            yield digest, 1

    def compact(self) -> None:
        """Merge the blocks added to and dropped from one page into the arrays: one pass
        into new arrays of the final size (the old ones and the new, no third copy: a
        100,000-page domain's are 6 MB)."""
        if not self.added and not self.dropped:
            return
        single, sections = self.single, self.single_section
        skip = sorted(bisect_left(single, digest) for digest in self.dropped)  # (each is in single)
        size = len(single) - len(skip) + len(self.added)
        new_d, new_s = array("Q", [0]) * size, array("H", [0]) * size
        with (
            memoryview(single) as old_d,
            memoryview(sections) as old_s,
            memoryview(new_d) as out_d,
            memoryview(new_s) as out_s,
        ):
            at = start = 0  # where the next entry goes; the next entry of the old arrays
            next_skip = iter([*skip, len(single)])
            skipped = next(next_skip)

            def copy_to(stop: int) -> None:
                """The old entries from ``start`` to ``stop`` copied, the dropped ones left out."""
                nonlocal at, start, skipped
                while start < stop:
                    end = min(stop, skipped)
                    out_d[at : at + end - start] = old_d[start:end]
                    out_s[at : at + end - start] = old_s[start:end]
                    at += end - start
                    start = end
                    if start == skipped < stop:
                        start, skipped = start + 1, next(next_skip)

            for digest, section in sorted(self.added.items()):
                copy_to(bisect_left(single, digest, start))
                new_d[at], new_s[at] = digest, section
                at += 1
            copy_to(len(single))
        if at != size:
            raise AssertionError(f"BlockCounts.compact: {at} entries written of {size}")
        self.single, self.single_section = new_d, new_s
        self.added, self.dropped = {}, set()

    def arrays(self) -> tuple[list[str | None], list[array[int]]]:
        """The section names, and the arrays to keep, in order: the single digests and
        sections (the counts' own, not copies), the multi digests and counts, then per
        named section its digests and counts (see :func:`array_parts`)."""
        self.compact()
        for name in self.sections:
            self._id(name)  # a section of blocks on 2+ pages only
        arrays = [self.single, self.single_section]
        for counts in (self.multi, *(self.sections.get(name or "", {}) for name in self.names[1:])):
            arrays += [array("Q", counts.keys()), array("I", counts.values())]
        return self.names, arrays

    @classmethod
    def from_arrays(cls, names: list[str | None], arrays: Iterator[array[int]]) -> BlockCounts:
        counts = cls()
        counts.names = list(names)
        counts._ids = {name: i for i, name in enumerate(names)}
        counts.single, counts.single_section = next(arrays), next(arrays)
        counts.multi = dict(zip(next(arrays), next(arrays), strict=True))
        for name in names[1:]:
            in_section = dict(zip(next(arrays), next(arrays), strict=True))
            if in_section and name is not None:
                counts.sections[name] = in_section
        return counts


def array_parts(values: array[int]) -> tuple[bytes, memoryview]:
    """``values`` as kept (little-endian): its type code and length (8 bytes), then its
    items (the array's own memory, not a copy, on a little-endian machine)."""
    if sys.byteorder != "little":
        values = array(values.typecode, values)
        values.byteswap()
    return values.typecode.encode() + len(values).to_bytes(8, "little"), memoryview(values).cast("B")


def read_array(view: memoryview, start: int) -> tuple[array[int], int]:
    """The array :func:`array_parts` made at ``start``, and where the next starts."""
    if len(view) < start + 9:
        raise ValueError("block statistics truncated")
    typecode = chr(view[start])
    if typecode not in "QHI":
        raise ValueError(f"block statistics: an array of type {typecode!r}")
    values = array(typecode)
    size = int.from_bytes(view[start + 1 : start + 9], "little")
    end = start + 9 + size * values.itemsize
    if len(view) < end:
        raise ValueError("block statistics truncated")
    values.frombytes(view[start + 9 : end])
    if sys.byteorder != "little":
        values.byteswap()
    return values, end
