"""A domain's boilerplate statistics kept between runs, updated with the pages that
changed: a recrawl that changed 1% of the pages reads 1% of the texts, and decides
exactly what :class:`crawler.lib.boilerplate.DomainAnalyser` decides in a full pass over
the same pages, read in ascending key order (tests/test_lib_blockstats.py).

:class:`DomainStats` holds the counts of a full pass (pages and blocks of the domain and
of each section, and how often each block sits at a page's edge) and takes pages out
and in by their :class:`~crawler.lib.blocksig.Signature`. What a page's edges are
depends on which of its blocks are its own text (on fewer than ``own_below`` pages of
the domain): when a block's count crosses ``own_below``, the unchanged pages holding it
are located again from their signatures; when ``own_below`` itself changes (a domain
under ``3 * min_pages`` pages), every page is. A decision's text is the block's text on
the second page holding it (in key order, as a full pass samples it): kept for every
block on at least ``own_below`` pages, and read from that page's text when it moves.
Pure code: the caller's :class:`PageSource` gives signatures and texts.
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Protocol

from crawler.lib.blockcounts import BlockCounts, array_parts, read_array
from crawler.lib.blockkeys import block_key, key_hash, split_blocks
from crawler.lib.blocksig import SIGNATURE_VERSION, Signature, edge_digests, signature_blocks
from crawler.lib.boilerplate import (
    EMPTIED_URLS_KEPT,
    Fingerprint,
    Params,
    block_digest,
    clean_blocks,
    decide_level,
    fingerprint_of,
    params_json,
    section_of,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable

    from crawler.lib.boilerplate import Decision

#: the layout and meaning of :meth:`DomainStats.to_bytes` (with the signatures')
STATS_VERSION = 1
MAGIC = b"BLKSTATS"


class PageSource(Protocol):
    """What the statistics read of the domain's stored pages, seldom: every page's
    signature (when a block's count crosses ``own_below``, a block's first two pages
    are to be found again, or cleaning is to be redone on pages holding a block whose
    decision changed) and a few pages' texts (a sample of a block)."""

    def signatures(self) -> Iterable[tuple[str, Signature]]:
        """``(key, signature)`` of every page of the domain now (the pages added in
        this update with their new signature, none removed), in any order."""
        ...

    def texts(self, keys: Collection[str]) -> Iterable[tuple[str, str]]:
        """``(key, text)`` of the pages of ``keys`` (the text the signature was made from)."""
        ...


def own_below(params: Params, pages: int) -> int:
    """Pages a block is on at most, less one, to be a page's own text.

    >>> own_below(Params(), 100), own_below(Params(), 9), own_below(Params(), 3)
    (5, 3, 2)
    """
    return max(2, min(params.min_pages, pages // 3))


class _Holders:
    """The first two pages (by key) holding a block, and its text on the second."""

    __slots__ = ("first", "lost", "sample", "sample_key", "second")

    def __init__(self, first: str = "", second: str = "", sample: str = "", sample_key: str = "") -> None:
        self.first = first  # "": not known, to be found (a scan)
        self.second = second
        self.sample = sample
        self.sample_key = sample_key  # the page the sample is from
        self.lost: set[str] | None = None  # of first and second, pages taken out

    def known(self) -> bool:
        return bool(self.first) and not self.lost

    def insert(self, key: str, block: str) -> None:
        if not self.first:
            return
        if self.lost:
            self.lost.discard(key)
        if key == self.first:
            return
        if key == self.second:
            self.sample, self.sample_key = block, key
            return
        if key < self.first:
            self.first, self.second = key, self.first
        elif key < self.second:
            self.second, self.sample, self.sample_key = key, block, key
        else:
            return
        if self.lost:
            self.lost &= {self.first, self.second}


class _Batch:
    """The changes since the last :meth:`DomainStats.commit`."""

    def __init__(self, full: bool, own_below: int) -> None:
        self.full = full  # from no page: every page is located at the commit
        self.own_below = own_below
        self.before: dict[int, int] = {}  # a block's count before the batch (not when full)
        self.added: dict[str, Signature] = {}  # not when full
        self.keys: set[str] = set()
        self.removed: set[str] = set()
        #: a block's text on the first two pages (by key) added holding it, met as its
        #: second page or later: a sample without reading a text back
        self.texts: dict[int, list[tuple[str, str]]] = {}


class DomainStats:
    """The block statistics of one domain; see the module's docstring. Use:

    - ``remove_page(key, signature)`` for a page gone or changed (its old signature),
      ``add_page(key, url, text)`` for a page new or changed (returns its signature, to
      keep beside its text); then ``commit(source)``;
    - ``decide(previous, previous_content)``: the fingerprint of a full pass;
    - ``pages_to_clean(source)``: the pages whose cleaned text may differ from the last
      one made (``None``: every page); ``clean(key, url, text)`` for each;
    - ``to_parts()`` (or ``to_bytes()``) to keep; ``DomainStats.from_bytes(data, params)`` to load (``None``
      for other parameters or another version: start again from no page).
    """

    def __init__(self, params: Params) -> None:
        self.params = params
        self.pages = 0
        self.blocks_total = 0
        self.section_pages: dict[str, int] = {}
        self.counts = BlockCounts()  # pages holding each block, of the domain and per section
        #: pages where each block sits at an edge (every block's, candidate or not)
        self.edges: dict[int, int] = {}
        self.section_edges: dict[str, dict[int, int]] = {}
        self.own_below = own_below(params, 0)  # the value the edges were counted with
        self.holders: dict[int, _Holders] = {}  # every block on at least own_below pages
        self.boilerplate: set[int] = set()
        self.section_boilerplate: dict[str, set[int]] = {}
        self.emptied: dict[str, str] = {}  # key -> URL of the pages kept whole
        self._batch: _Batch | None = None
        self._changed: set[str] | None = set()  # pages added at the last commit (None: all)
        self._decided: tuple[set[int], dict[str, set[int]]] | None = None  # before decide()
        self._digests: dict[int, int] = {}
        self._hex: dict[int, str] = {}
        #: the header of the bytes these statistics were loaded from (None: made here),
        #: and whether the counts and edges changed since (see :meth:`changed_parts`)
        self._kept_head: bytes | None = None
        self._arrays_changed = True

    # -- the changes

    def _digest(self, block: str) -> int:
        raw = hash(block)
        found = self._digests.get(raw)
        if found is None:
            # (the blocks met again are a page's chrome, a few dozen: most are a page's
            # own, met once; 2 ** 15 digests are about 4 MB held)
            if len(self._digests) >= 1 << 15:
                self._digests.clear()
            found = self._digests[raw] = block_digest(block, self.params)
        return found

    def _begin(self) -> _Batch:
        if self._batch is None:
            self._batch = _Batch(self.pages == 0, self.own_below)
        return self._batch

    def _count_before(self, digest: int) -> int:
        batch = self._batch
        if batch is not None and digest in batch.before:
            return batch.before[digest]
        return self.counts.get(digest)

    def _count_edges(self, sig: Signature, count_of: Callable[[int], int], ob: int, step: int) -> None:
        at_edge = edge_digests(sig, count_of, ob)
        levels = [self.edges]
        if sig.section is not None:
            levels.append(self.section_edges.setdefault(sig.section, {}))
        for edges in levels:
            for digest in at_edge:
                n = edges.get(digest, 0) + step
                if n:
                    edges[digest] = n
                else:
                    del edges[digest]

    def remove_page(self, key: str, sig: Signature) -> None:
        """Take out the page ``key`` as ``sig`` (its signature when last added)."""
        batch = self._begin()
        if key in batch.keys or key in batch.removed:
            raise ValueError(f"page {key!r} taken out after it was added or taken out in the same update")
        batch.removed.add(key)
        if self.params.position:
            self._count_edges(sig, self._count_before, batch.own_below, -1)
        seen = sig.distinct()
        self.pages -= 1
        self.blocks_total -= len(seen)
        section = sig.section
        if section is not None:
            self.section_pages[section] -= 1
            if not self.section_pages[section]:
                del self.section_pages[section]
        for digest in seen:
            try:
                count = self.counts.remove(digest, section)
            except KeyError:
                raise ValueError(f"page {key!r}: its signature holds a block the statistics do not count") from None
            batch.before.setdefault(digest, count)
            holders = self.holders.get(digest)
            if holders is not None:
                if key in (holders.first, holders.second):
                    holders.lost = (holders.lost or set()) | {key}
                if key == holders.sample_key:
                    holders.sample_key = ""  # from the page's old text
        self.emptied.pop(key, None)

    def add_page(self, key: str, url: str, text: str) -> Signature:
        """Count the page ``key`` at ``url`` holding ``text`` (a page new or changed; a
        changed page is taken out first); returns its signature, to keep."""
        batch = self._begin()
        if key in batch.keys:
            raise ValueError(f"page {key!r} added twice in the same update")
        batch.keys.add(key)
        sig, blocks = signature_blocks(url, text, self.params, self._digest)
        if not batch.full:
            batch.added[key] = sig
        seen = {digest: block for block, digest in blocks if digest}
        self.pages += 1
        self.blocks_total += len(seen)
        section = sig.section
        if section is not None:
            self.section_pages[section] = self.section_pages.get(section, 0) + 1
        counts, before, holders = self.counts, batch.before, self.holders
        for digest, block in seen.items():
            count = counts.add(digest, section)
            if not batch.full and digest not in before:
                before[digest] = count
            found = holders.get(digest)
            if found is not None:
                found.insert(key, block)
            elif count:
                texts = batch.texts.setdefault(digest, [])
                if len(texts) < 2 or key < texts[1][0]:
                    texts.append((key, block))
                    texts.sort()
                    del texts[2:]
        return sig

    def commit(self, source: PageSource) -> None:
        """Bring the edges and the blocks' samples up to date with the changes; reads
        ``source`` only when it must (see :class:`PageSource`)."""
        batch = self._batch or _Batch(False, self.own_below)
        counted = self._batch is not None  # (a page added or taken out)
        self._batch = None
        self._decided = None
        ob = own_below(self.params, self.pages)
        relocate = self.params.position and (batch.full or ob != batch.own_below)
        self._arrays_changed |= counted or relocate
        want: set[int] = set()
        crossing: set[int] = set()
        if batch.full or ob != batch.own_below:
            if batch.full:
                self.holders.clear()
            for digest, count in self.counts.multi.items():
                if count >= ob and digest not in self.holders:
                    self.holders[digest] = _Holders()
            for digest in [d for d, h in self.holders.items() if self.counts.get(d) < ob]:
                del self.holders[digest]
            want = {d for d, h in self.holders.items() if not h.known()}
        else:
            for digest, count_before in batch.before.items():
                count = self.counts.get(digest)
                holders = self.holders.get(digest)
                if count < ob:
                    if holders is not None:
                        del self.holders[digest]
                elif holders is None:
                    self.holders[digest] = _Holders()
                    want.add(digest)
                elif not holders.known():
                    want.add(digest)
                if self.params.position and (count_before < ob) != (count < ob):
                    crossing.add(digest)
        if relocate:
            self.edges, self.section_edges = {}, {}
        if relocate or want or crossing:
            self._scan(source, batch, ob, relocate, want, crossing)
        if self.params.position and not relocate:
            for sig in batch.added.values():
                self._count_edges(sig, self.counts.get, ob, +1)
        self.own_below = ob
        if batch.full:
            self.counts.compact()
        self._resample(source, batch)
        self._changed = None if batch.full else batch.keys

    def _scan(
        self, source: PageSource, batch: _Batch, ob: int, relocate: bool, want: set[int], crossing: set[int]
    ) -> None:
        """One pass over every page's signature: locate again the pages that must be
        (all, or the unchanged ones holding a block that crossed ``own_below``) and find
        the first two pages of the blocks in ``want``."""
        first: dict[int, list[str]] = {d: [] for d in want}
        count_now = self.counts.get
        pages = 0
        for key, sig in source.signatures():
            pages += 1
            if relocate:
                self._count_edges(sig, count_now, ob, +1)
            elif crossing and key not in batch.added and not crossing.isdisjoint(sig.digests):
                self._count_edges(sig, self._count_before_batch(batch), batch.own_below, -1)
                self._count_edges(sig, count_now, ob, +1)
            if want:
                for digest in want.intersection(sig.digests):
                    keys = first[digest]
                    if len(keys) < 2 or key < keys[1]:
                        keys.append(key)
                        keys.sort()
                        del keys[2:]
        if pages != self.pages:
            raise ValueError(f"the page source gave {pages} signatures, the statistics count {self.pages} pages")
        for digest, keys in first.items():
            if len(keys) < 2:
                raise ValueError(
                    f"block {digest:016x} counted on {self.counts.get(digest)} pages, found on {len(keys)}"
                )
            holders = self.holders[digest]
            holders.first, holders.second, holders.lost = keys[0], keys[1], None

    def _count_before_batch(self, batch: _Batch) -> Callable[[int], int]:
        before, counts = batch.before, self.counts

        def count_of(digest: int) -> int:
            found = before.get(digest)
            return counts.get(digest) if found is None else found

        return count_of

    def _resample(self, source: PageSource, batch: _Batch) -> None:
        """Each block's sample from its second page: from the texts added, else read."""
        wanted: dict[str, set[int]] = {}
        for digest, holders in self.holders.items():
            if holders.sample_key == holders.second:
                continue
            for key, block in batch.texts.get(digest, ()):
                if key == holders.second:
                    holders.sample, holders.sample_key = block, key
                    self._hex.pop(digest, None)
                    break
            else:
                wanted.setdefault(holders.second, set()).add(digest)
        if not wanted:
            return
        for key, text in source.texts(list(wanted)):
            digests = wanted.pop(key, set())
            found = {}
            for block in split_blocks(text):
                digest = self._digest(block)
                if digest in digests:
                    found[digest] = block  # the last of the page, as a full pass
            for digest in digests:
                if digest not in found:
                    raise ValueError(f"page {key!r}: its text lacks block {digest:016x} its signature holds")
                holders = self.holders[digest]
                holders.sample, holders.sample_key = found[digest], key
                self._hex.pop(digest, None)
        if wanted:
            raise ValueError(f"the page source gave no text for page(s) {sorted(wanted)!r}")

    # -- the decisions

    def _hash_of(self, digest: int) -> str:
        found = self._hex.get(digest)
        if found is None:
            found = self._hex[digest] = key_hash(block_key(self.holders[digest].sample, self.params.loose))
        return found

    def _decide_at(
        self, section: str | None, pages: int, previous: dict[str, set[str]], previous_content: dict[str, set[str]]
    ) -> list[tuple[int, Decision]]:
        if section is None:
            multi = self.counts.multi  # every block on own_below pages or more is on 2+
            counts: Iterable[tuple[int, int]] = ((d, multi[d]) for d in self.holders)
            edges: Mapping[int, int] = self.edges
        else:
            in_section = self.counts.sections.get(section, {})
            counts = ((d, in_section[d]) for d in self.holders if d in in_section)
            edges = self.section_edges.get(section, {})
        return decide_level(
            self.params,
            section,
            counts,
            edges,
            pages,
            previous.get(section or "", set()),
            previous_content.get(section or "", set()),
            _Samples(self.holders),
            self._hash_of,
        )

    def decide(
        self, previous: dict[str, set[str]] | None = None, previous_content: dict[str, set[str]] | None = None
    ) -> Fingerprint:
        """The fingerprint a full pass makes of the domain's pages now, given the
        boilerplate and content hashes of the last analysis (as ``DomainAnalyser``)."""
        if self._batch is not None:
            raise RuntimeError("DomainStats.decide() before commit(): the changes are not counted in yet")
        if self._decided is None:
            self._decided = (self.boilerplate, self.section_boilerplate)
        fingerprint, self.boilerplate, self.section_boilerplate = fingerprint_of(
            self.params,
            self.pages,
            self.blocks_total,
            self.section_pages,
            lambda section, pages: self._decide_at(section, pages, previous or {}, previous_content or {}),
            self._hash_of,
            self.counts.get,
            _Samples(self.holders),
        )
        return fingerprint

    # -- cleaning

    def _changed_blocks(self) -> Callable[[str | None], set[int]]:
        """Section -> blocks whose treatment on that section's pages changed at decide()."""
        old, old_sections = self._decided or (self.boilerplate, self.section_boilerplate)
        new, new_sections = self.boilerplate, self.section_boilerplate
        domain = old ^ new

        def changed(section: str | None) -> set[int]:
            if section is None or (section not in old_sections and section not in new_sections):
                return domain
            return (old | old_sections.get(section, set())) ^ (new | new_sections.get(section, set()))

        return changed

    def pages_to_clean(self, source: PageSource) -> set[str] | None:
        """The pages whose cleaned text may have changed since the last one made: those
        added at the last commit and those holding a block whose treatment changed at
        :meth:`decide` (only then can a page's cleaned text or ``emptied`` change);
        ``None``: every page (the statistics were made from no page)."""
        if self._changed is None:
            self._decided = None
            return None
        keys = set(self._changed)
        changed = self._changed_blocks()
        levels: set[str | None] = {None, *self.section_boilerplate}
        if self._decided is not None:
            levels.update(self._decided[1])
        if any(changed(level) for level in levels):
            for key, sig in source.signatures():
                if key not in keys and not changed(sig.section).isdisjoint(sig.digests):
                    keys.add(key)
        self._decided = None
        return keys

    def clean(self, key: str, url: str, text: str) -> tuple[str, int]:
        """``text`` without the boilerplate :meth:`decide` chose and the bytes removed,
        as ``DomainAnalyser.clean``; a page kept whole is counted in :attr:`emptied`."""
        boilerplate = self.boilerplate
        section = section_of(url) if self.section_boilerplate else None
        if section in self.section_boilerplate:
            boilerplate = boilerplate | self.section_boilerplate[section]
        if not boilerplate:
            self.emptied.pop(key, None)
            return text, 0
        blocks = [(block, self._digest(block)) for block in split_blocks(text)]
        clean, removed, emptied = clean_blocks(text, blocks, boilerplate, self.params)
        if emptied:
            self.emptied[key] = url
        else:
            self.emptied.pop(key, None)
        return clean, removed

    @property
    def pages_emptied(self) -> int:
        return len(self.emptied)

    def emptied_urls(self) -> list[str]:
        """The URLs of the first pages kept whole, by key (as a full pass lists them)."""
        return [self.emptied[key] for key in sorted(self.emptied)[:EMPTIED_URLS_KEPT]]

    # -- keeping

    def to_parts(self) -> list[bytes | memoryview]:
        """The statistics, to keep (after :meth:`commit`), as the parts of their bytes in
        order: the header, then each array's type and length and its items (the arrays'
        own memory, not copies). A store writes them one after the other (SQLite's by
        incremental blob writes): a 100,000-page domain's 6 MB are never copied into
        one buffer."""
        if self._batch is not None:
            raise RuntimeError("DomainStats.to_parts() before commit(): the changes are not counted in yet")
        names, arrays = self.counts.arrays()
        edged = sorted(self.section_edges)
        for edges in (self.edges, *(self.section_edges[s] for s in edged)):
            arrays += [array("Q", edges.keys()), array("I", edges.values())]
        head = self._head(names, edged)
        parts: list[bytes | memoryview] = [MAGIC + len(head).to_bytes(4, "little") + head]
        for values in arrays:
            parts += array_parts(values)
        return parts

    def to_bytes(self) -> bytes:
        """:meth:`to_parts` joined."""
        return b"".join(self.to_parts())

    def changed_parts(self) -> list[bytes | memoryview] | None:
        """:meth:`to_parts`, or ``None`` when they are the bytes these statistics were
        loaded from: no page counted in or out, the edges not made again, the header
        equal (the arrays, most of the bytes, are not written out just to compare)."""
        if self._batch is not None:
            raise RuntimeError("DomainStats.changed_parts() before commit(): the changes are not counted in yet")
        unchanged = not self._arrays_changed and self._kept_head is not None
        if unchanged and self._head(self.counts.names, sorted(self.section_edges)) == self._kept_head:
            return None
        return self.to_parts()

    def _head(self, names: list[str | None], edged: list[str]) -> bytes:
        header = {
            "version": STATS_VERSION,
            "signature_version": SIGNATURE_VERSION,
            "params": params_json(self.params),
            "pages": self.pages,
            "blocks_total": self.blocks_total,
            "own_below": self.own_below,
            "section_pages": self.section_pages,
            "sections": names,
            "edged_sections": edged,
            "holders": [[d, h.first, h.second, h.sample_key, h.sample] for d, h in self.holders.items() if h.known()],
            "boilerplate": sorted(self.boilerplate),
            "section_boilerplate": {s: sorted(ds) for s, ds in self.section_boilerplate.items()},
            "emptied": self.emptied,
        }
        return json.dumps(header, separators=(",", ":")).encode("utf-8")

    @classmethod
    def from_bytes(cls, data: bytes, params: Params) -> DomainStats | None:
        """The statistics :meth:`to_bytes` kept; ``None`` when they were made with other
        parameters or by another version (a full pass makes them again); ``ValueError``
        for bytes that are not statistics."""
        if not data.startswith(MAGIC) or len(data) < len(MAGIC) + 4:
            raise ValueError(f"not block statistics: {data[:16]!r}")
        size = int.from_bytes(data[len(MAGIC) : len(MAGIC) + 4], "little")
        start = len(MAGIC) + 4
        try:
            header = json.loads(data[start : start + size])
        except ValueError as e:
            raise ValueError(f"block statistics with an unreadable header: {e}") from None
        if (
            header.get("version") != STATS_VERSION
            or header.get("signature_version") != SIGNATURE_VERSION
            or header.get("params") != params_json(params)
        ):
            return None
        stats = cls(params)
        stats._kept_head, stats._arrays_changed = bytes(data[start : start + size]), False
        stats.pages, stats.blocks_total = header["pages"], header["blocks_total"]
        stats.own_below, stats.section_pages = header["own_below"], header["section_pages"]
        for digest, first, second, sample_key, sample in header["holders"]:
            stats.holders[digest] = _Holders(first, second, sample, sample_key)
        stats.boilerplate = set(header["boilerplate"])
        stats.section_boilerplate = {s: set(ds) for s, ds in header["section_boilerplate"].items()}
        stats.emptied = header["emptied"]
        view, start = memoryview(data), start + size

        def arrays() -> Iterator[array[int]]:
            nonlocal start
            while True:
                values, start = read_array(view, start)
                yield values

        read = arrays()
        stats.counts = BlockCounts.from_arrays(header["sections"], read)
        stats.edges = dict(zip(next(read), next(read), strict=True))
        for section in header["edged_sections"]:
            stats.section_edges[section] = dict(zip(next(read), next(read), strict=True))
        if start != len(data):
            raise ValueError(f"block statistics of {len(data)} bytes, {start} read")
        return stats


class _Samples(Mapping[int, str]):
    """digest -> its sample, over the holders (as ``decide_level`` reads samples)."""

    def __init__(self, holders: dict[int, _Holders]) -> None:
        self.holders = holders

    def __getitem__(self, digest: int) -> str:
        return self.holders[digest].sample

    def __iter__(self) -> Iterator[int]:
        return iter(self.holders)

    def __len__(self) -> int:
        return len(self.holders)
