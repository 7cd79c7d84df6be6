"""Domain boilerplate: blocks of text that repeat across the pages of a site.

Pure functions, no storage or Scrapy dependency. :class:`DomainAnalyser` is what the
crawler runs: the counting rule of the original block-hash algorithm (a block on at
least :func:`boilerplate_threshold` of a domain's pages is boilerplate; its reference
implementation is ``bench/reference_boilerplate.py``) in streaming passes whose memory
grows with the number of *distinct* blocks, not the text, plus what that algorithm
lacks: loose matching (digits, dates, link targets), section-level boilerplate (every
``/blog/`` page), where a block sits in its page (chrome at the page's edges, short
lines included, goes; repeated text between the page's own text stays), hysteresis both
ways against flapping across recrawls, pages that cleaning would empty kept whole, and
the text of repeated blocks kept once per domain with what was decided about each and why.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from crawler.lib.blockkeys import block_key, has_digit, is_heading, key_hash, prose_length, split_blocks


def boilerplate_threshold(pages: int, threshold_pct: float, min_pages: int) -> int:
    """Pages a block must appear on: ``max(min_pages, floor(pages * threshold_pct))``.

    >>> boilerplate_threshold(10, 0.7, 5), boilerplate_threshold(100, 0.7, 5), boilerplate_threshold(3, 0.7, 5)
    (7, 70, 5)
    """
    return max(min_pages, math.floor(pages * threshold_pct + 1e-9))


@dataclass(frozen=True)
class Params:
    """Parameters of the analysis (the ``BOILERPLATE_*`` settings)."""

    threshold_pct: float = 0.7
    min_pages: int = 5
    min_block_chars: int = 50
    loose: bool = True  # digits, dates, month names and link targets do not count
    sections: bool = True  # also per first path segment (/blog/, /docs/...)
    hysteresis: float = 0.1  # boilerplate stays so down to threshold - hysteresis, content up to + hysteresis
    #: where a block sits counts: a repeated block at a page's start or end (before or
    #: after the page's own text) is chrome, short ones too; one between the page's own
    #: text is content. False: repetition alone, as the original block-hash algorithm.
    position: bool = True

    def __post_init__(self) -> None:
        if not 0 < self.threshold_pct <= 1:
            raise ValueError(f"BOILERPLATE_THRESHOLD_PCT must be in (0, 1], got {self.threshold_pct!r}")
        if self.min_pages < 2:
            raise ValueError(f"BOILERPLATE_MIN_PAGES must be at least 2, got {self.min_pages!r}")
        if self.min_block_chars < 1:
            raise ValueError(f"min_block_chars must be at least 1, got {self.min_block_chars!r}")
        if not 0 <= self.hysteresis < self.threshold_pct:
            raise ValueError(f"hysteresis must be in [0, threshold), got {self.hysteresis!r}")

    def block_length_rule(self) -> str:
        """What ``min_block_chars`` does, for a table's header: without ``position``,
        shorter blocks are never counted; with it, every block counts and the length
        only tells a short line from a long block.

        >>> Params().block_length_rule(), Params(position=False).block_length_rule()
        ('short lines under 50 chars', 'blocks >= 50 chars')
        """
        if self.position:
            return f"short lines under {self.min_block_chars} chars"
        return f"blocks >= {self.min_block_chars} chars"


def params_json(params: Params) -> dict[str, object]:
    """The parameters as a domain's record and its kept statistics hold them.

    >>> params_json(Params())["threshold_pct"]
    0.7
    """
    return {
        "threshold_pct": params.threshold_pct,
        "min_pages": params.min_pages,
        "min_block_chars": params.min_block_chars,
        "loose": params.loose,
        "sections": params.sections,
        "hysteresis": params.hysteresis,
        "position": params.position,
    }


def section_of(url: str) -> str | None:
    """The site section of a page: its first path segment when it has more than one.

    >>> section_of("https://a.com/blog/2025/post"), section_of("https://a.com/about"), section_of("https://a.com/")
    ('blog', None, None)
    """
    scheme_end = url.find("://")
    path_start = url.find("/", scheme_end + 3 if scheme_end >= 0 else 0)
    if path_start < 0:
        return None
    path = url[path_start:].partition("?")[0].partition("#")[0]
    segments = [s for s in path.split("/") if s]
    return segments[0] if len(segments) > 1 else None


def block_digest(block: str, params: Params) -> int:
    """The 64-bit digest a block is counted by (its loose key's), never 0; 0 for a block
    too short to count (under ``min_block_chars`` without ``position``)."""
    if params.position or len(block) >= params.min_block_chars:
        key = block_key(block, params.loose).encode("utf-8")
        return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "big") or 1
    return 0


#: URLs of pages kept whole that an analyser keeps, at most
EMPTIED_URLS_KEPT = 100

#: what was decided about a repeated block
BOILERPLATE = "boilerplate"
CONTENT = "content"


@dataclass(frozen=True)
class Decision:
    """What the analysis decided about one repeated block, at one level, and why."""

    hash: str
    section: str | None  # None: the domain level
    pages: int  # pages of the domain (or section) holding it
    edge_pages: int | None  # of those, pages where it sat at the page's start or end
    treated: str  # BOILERPLATE or CONTENT
    why: str
    text: str  # one original text of it

    def to_json(self) -> dict[str, object]:
        return {
            "hash": self.hash,
            "section": self.section,
            "pages": self.pages,
            "edge_pages": self.edge_pages,
            "treated": self.treated,
            "why": self.why,
            "text": self.text,
        }


@dataclass
class Fingerprint:
    """The result of the analysis of one domain."""

    params: Params
    pages_analysed: int
    blocks_total: int
    #: hashes of the domain's boilerplate blocks, and per section
    hashes: set[str] = field(default_factory=set)
    section_hashes: dict[str, set[str]] = field(default_factory=dict)
    #: hash -> (pages it appears on, one original text of it), for reports and facts
    blocks: dict[str, tuple[int, str]] = field(default_factory=dict)
    #: every repeated block's treatment (content blocks only with ``position``)
    decisions: list[Decision] = field(default_factory=list)
    skipped: bool = False  # fewer pages than min_pages: left alone

    @property
    def blocks_boilerplate(self) -> int:
        return len(self.hashes | set().union(*self.section_hashes.values()))

    @property
    def content_hashes(self) -> dict[str, set[str]]:
        """Level ("" = the domain) -> hashes of repeated blocks kept as content."""
        out: dict[str, set[str]] = {}
        for d in self.decisions:
            if d.treated == CONTENT:
                out.setdefault(d.section or "", set()).add(d.hash)
        return out


class DomainAnalyser:
    """Streaming passes over the pages of one domain.

    :meth:`add_page` counts on how many pages each block appears; with ``params.position``
    (:attr:`wants_positions`), :meth:`locate` counts how often each repeated block sits at
    the page's edges; :meth:`finish` decides; :meth:`clean` returns a page without its
    boilerplate. Blocks are counted by a 64-bit digest of their normalized text, so memory
    grows with the number of distinct blocks, not with the text. The rules (position,
    sections, hysteresis): docs/boilerplate.md. A page that cleaning would leave without
    text is kept whole (:attr:`pages_emptied`, :attr:`emptied`).
    """

    def __init__(
        self,
        params: Params,
        previous: dict[str, set[str]] | None = None,
        previous_content: dict[str, set[str]] | None = None,
    ) -> None:
        self.params = params
        #: hashes that were boilerplate at the last analysis ("" = the domain level)
        self.previous = previous or {}
        #: hashes of repeated blocks that were kept as content at the last analysis
        self.previous_content = previous_content or {}
        self.pages = 0
        self.blocks_total = 0
        self.section_pages: Counter[str] = Counter()
        self.counts: Counter[int] = Counter()
        self.section_counts: dict[str, Counter[int]] = {}
        self.located = 0
        self.edges: Counter[int] = Counter()
        self.section_edges: dict[str, Counter[int]] = {}
        #: pages kept whole because cleaning would have emptied them, and the URLs of
        #: the first EMPTIED_URLS_KEPT (memory stays bounded by distinct blocks)
        self.pages_emptied = 0
        self.emptied: list[str] = []
        self._candidates: set[int] | None = None
        self._own_below = 2
        self._section_candidates: dict[str, set[int]] = {}
        self._digest: dict[int, int] = {}  # hash(raw block) -> digest (0: too short)
        self._samples: dict[int, str] = {}  # digest -> raw text, for blocks seen twice
        self._boilerplate: set[int] = set()
        self._section_boilerplate: dict[str, set[int]] = {}
        self._hex: dict[int, str] = {}

    def _new_digest(self, block: str, raw_hash: int) -> int:
        """The digest of a block not met before (0: too short to count)."""
        digest = self._digest[raw_hash] = block_digest(block, self.params)
        return digest

    def _digests(self, text: str) -> list[tuple[str, int]]:
        get = self._digest.get
        new = self._new_digest
        out = []
        for block in split_blocks(text):
            raw_hash = hash(block)
            digest = get(raw_hash)
            out.append((block, new(block, raw_hash) if digest is None else digest))
        return out

    def add_page(self, url: str, text: str) -> None:
        self.pages += 1
        seen = {digest: block for block, digest in self._digests(text) if digest}
        # blocks met on an earlier page and not sampled yet: keep one text of each
        for digest in (seen.keys() & self.counts.keys()) - self._samples.keys():
            self._samples[digest] = seen[digest]
        self.blocks_total += len(seen)
        self.counts.update(seen.keys())  # not the dict itself: Counter's fast path
        if self.params.sections and (section := section_of(url)) is not None:
            self.section_pages[section] += 1
            self.section_counts.setdefault(section, Counter()).update(seen.keys())

    def _thresholds(self, pages: int) -> tuple[int, int, int]:
        return thresholds(self.params, pages)

    @property
    def wants_positions(self) -> bool:
        """Whether :meth:`locate` must see every page before :meth:`finish`."""
        return self.params.position and self.pages >= self.params.min_pages

    def locate(self, url: str, text: str) -> None:
        """Pass 2: count the repeated blocks of this page that sit at its edges."""
        if self._candidates is None:
            # own text: on fewer than min_pages pages, and on under a third of a small
            # domain's (a block on half of 9 pages is not a page's own)
            self._own_below = max(2, min(self.params.min_pages, self.pages // 3))
            keep = self._thresholds(self.pages)[0]
            self._candidates = {d for d, n in self.counts.items() if n >= keep}
            for name, pages in self.section_pages.items():
                if pages >= self.params.min_pages:
                    keep = self._thresholds(pages)[0]
                    self._section_candidates[name] = {d for d, n in self.section_counts[name].items() if n >= keep}
                    self.section_edges[name] = Counter()
        self.located += 1
        candidates = self._candidates
        section = section_of(url) if self._section_candidates else None
        in_section = self._section_candidates.get(section) if section is not None else None
        texts = split_blocks(text)
        size = len(texts)
        # digests only of the blocks read: a scan from each end never reaches the interior
        digests: list[int | None] = [None] * size
        get, new = self._digest.get, self._new_digest

        def digest_at(i: int) -> int:
            found = digests[i]
            if found is None:
                raw_hash = hash(texts[i])
                found = get(raw_hash)
                if found is None:
                    found = new(texts[i], raw_hash)
                digests[i] = found
            return found

        counts = self.counts
        min_chars = self.params.min_block_chars
        own_below = self._own_below
        # The edges: before the first and after the last block of the page's own text
        # (blocks on fewer than min_pages pages of the domain, and under a third of it). A long paragraph of it
        # bounds a short line; any of it (a page-specific heading too) a long block.
        first = first_long = size
        for i in range(size):
            block = texts[i]
            if (len(block) >= min_chars or block[0] == "#") and counts[digest_at(i)] < own_below:
                heading = block[0] == "#" and is_heading(block)
                if heading or len(block) >= min_chars:
                    first = min(first, i)
                    if not heading:
                        first_long = i
                        break
        last = last_long = -1
        for i in range(size - 1, first - 1, -1):
            block = texts[i]
            if (len(block) >= min_chars or block[0] == "#") and counts[digest_at(i)] < own_below:
                heading = block[0] == "#" and is_heading(block)
                if heading or len(block) >= min_chars:
                    last = max(last, i)
                    if not heading:
                        last_long = i
                        break
        at_edge = set()
        for i in (*range(first_long), *range(max(last_long + 1, first_long), size)):
            block, digest = texts[i], digest_at(i)
            if not (digest in candidates or (in_section is not None and digest in in_section)):
                continue
            if len(block) >= min_chars:
                if first <= i <= last:
                    continue  # between the page's own text
            elif block[0] == "#" and is_heading(block):
                continue  # a short heading: the page's structure
            at_edge.add(digest)
        self.edges.update(at_edge)
        if section is not None and in_section is not None:
            self.section_edges[section].update(at_edge)

    def _hash_of(self, digest: int) -> str:
        found = self._hex.get(digest)
        if found is None:
            sample = self._samples.get(digest, "")
            found = self._hex[digest] = key_hash(block_key(sample, self.params.loose))
        return found

    def _decide(
        self, section: str | None, counts: Counter[int], edges: Counter[int], pages: int
    ) -> list[tuple[int, Decision]]:
        return decide_level(
            self.params,
            section,
            counts.items(),
            edges,
            pages,
            self.previous.get(section or "", set()),
            self.previous_content.get(section or "", set()),
            self._samples,
            self._hash_of,
        )

    def _decide_at(self, section: str | None, pages: int) -> list[tuple[int, Decision]]:
        if section is None:
            return self._decide(None, self.counts, self.edges, pages)
        return self._decide(section, self.section_counts[section], self.section_edges.get(section, Counter()), pages)

    def finish(self) -> Fingerprint:
        p = self.params
        if self.pages >= p.min_pages and self.wants_positions and self.located != self.pages:
            raise RuntimeError(f"locate() saw {self.located} of {self.pages} pages: call it for every page first")
        fingerprint, self._boilerplate, self._section_boilerplate = fingerprint_of(
            p,
            self.pages,
            self.blocks_total,
            self.section_pages,
            self._decide_at,
            self._hash_of,
            self.counts.__getitem__,
            self._samples,
        )
        return fingerprint

    def clean(self, url: str, text: str) -> tuple[str, int]:
        """``text`` without the boilerplate blocks :meth:`finish` chose, and the bytes
        removed. Call after :meth:`finish`."""
        boilerplate = self._boilerplate
        section = section_of(url) if self._section_boilerplate else None
        if section in self._section_boilerplate:
            boilerplate = boilerplate | self._section_boilerplate[section]
        if not boilerplate:
            return text, 0
        clean, removed, emptied = clean_blocks(text, self._digests(text), boilerplate, self.params)
        if emptied:
            self.pages_emptied += 1  # almost nothing would be left: keep it whole
            if len(self.emptied) < EMPTIED_URLS_KEPT:
                self.emptied.append(url)
        return clean, removed

    def forget_emptied(self, before: int, url: str) -> None:
        """Take back the page :meth:`clean` just kept whole (``before``: the count before
        that call): its caller kept another input for it."""
        if self.pages_emptied > before:
            self.pages_emptied = before
            if self.emptied and self.emptied[-1] == url:
                self.emptied.pop()


def thresholds(params: Params, pages: int) -> tuple[int, int, int]:
    """Pages a block must be on to stay boilerplate, to become it, and to become it
    when it was content, at a level of ``pages`` pages."""
    p = params
    return (
        boilerplate_threshold(pages, p.threshold_pct - p.hysteresis, p.min_pages),
        boilerplate_threshold(pages, p.threshold_pct, p.min_pages),
        boilerplate_threshold(pages, min(1.0, p.threshold_pct + p.hysteresis), p.min_pages),
    )


def decide_level(
    params: Params,
    section: str | None,
    counts: Iterable[tuple[int, int]],
    edges: Mapping[int, int],
    pages: int,
    previous: set[str],
    previous_content: set[str],
    samples: Mapping[int, str],
    hash_of: Callable[[int], str],
) -> list[tuple[int, Decision]]:
    """What is decided about each block of one level (the domain, or a ``section``) of
    ``pages`` pages: ``counts`` (digest, pages holding it; those under the level's
    keep threshold are passed over), ``edges`` (digest -> pages where it sat at an
    edge; only a decided block's is read), the hashes that were boilerplate and content
    at the last analysis, one text of each repeated block and its stored hash."""
    p = params
    keep, needed, rise = thresholds(p, pages)
    where = f"section /{section}/" if section else "the domain"
    out = []
    for digest, count in counts:
        if count < keep:
            continue
        h = hash_of(digest)
        was = h in previous
        if not p.position:
            if count >= needed or (was and count >= keep):
                why = f"on {count} of {pages} pages of {where}" + ("" if count >= needed else ", held: was boilerplate")
                out.append((digest, Decision(h, section, count, None, BOILERPLATE, why, samples.get(digest, ""))))
            continue
        sample = samples.get(digest, "")
        short = len(sample) < p.min_block_chars
        if short and is_heading(sample):
            continue  # a repeated heading ("## Notes") is the page's structure
        edge = edges.get(digest, 0)
        treated = CONTENT
        if 2 * edge <= count:
            why = f"interior: between the page's own text on {count - edge} of {count} pages"
        elif section and not short:
            why = f"section text: repeated on the pages of {where} only, not site-wide"
        elif short and section and not has_digit(sample):
            why = f"short and the same on every page of {where}, not site-wide: kept"
        elif was:
            treated = BOILERPLATE
            why = f"edge: at the page's start or end on {edge} of {count} pages of {where}"
            if count < needed:
                why += f", held: was boilerplate (stays down to {keep} pages)"
        elif count < needed:
            why = f"below threshold: on {count} of {pages} pages of {where}, needs {needed}"
        elif h in previous_content and not short and count < rise:
            why = f"held: was content at the last analysis, becomes boilerplate at {rise} pages (on {count})"
        else:
            treated = BOILERPLATE
            why = f"edge: at the page's start or end on {edge} of {count} pages of {where}"
        out.append((digest, Decision(h, section, count, edge, treated, why, sample)))
    return out


def fingerprint_of(
    params: Params,
    pages: int,
    blocks_total: int,
    section_pages: Mapping[str, int],
    decide: Callable[[str | None, int], list[tuple[int, Decision]]],
    hash_of: Callable[[int], str],
    count_of: Callable[[int], int],
    samples: Mapping[int, str],
) -> tuple[Fingerprint, set[int], dict[str, set[int]]]:
    """The fingerprint of a domain of ``pages`` pages from what ``decide(section, pages)``
    decides at each level (``None``: the domain; then each section of at least
    ``min_pages`` pages, by name), and the digests of its boilerplate blocks, of the
    domain and by section (a domain's not repeated in its sections)."""
    p = params
    if pages < p.min_pages:
        return Fingerprint(p, pages, blocks_total, skipped=True), set(), {}
    fingerprint = Fingerprint(p, pages, blocks_total)
    domain = decide(None, pages)
    boilerplate = {d for d, decision in domain if decision.treated == BOILERPLATE}
    section_boilerplate: dict[str, set[int]] = {}
    fingerprint.decisions = [decision for _, decision in domain]
    listed = {d for d, _ in domain}
    for section, count in sorted(section_pages.items()):
        if count < p.min_pages:
            continue
        chosen = set()
        for digest, decision in decide(section, count):
            if digest in boilerplate:
                continue
            if decision.treated == BOILERPLATE:
                chosen.add(digest)
            elif digest in listed:
                continue  # content at the domain level too: listed there
            fingerprint.decisions.append(decision)
        if chosen:
            section_boilerplate[section] = chosen
    fingerprint.hashes = {hash_of(d) for d in boilerplate}
    fingerprint.section_hashes = {s: {hash_of(d) for d in ds} for s, ds in section_boilerplate.items()}
    for digest in boilerplate | set().union(*section_boilerplate.values()):
        fingerprint.blocks[hash_of(digest)] = (count_of(digest), samples.get(digest, ""))
    fingerprint.decisions.sort(key=lambda d: (d.treated != BOILERPLATE, -d.pages, d.section or "", d.hash))
    return fingerprint, boilerplate, section_boilerplate


def clean_blocks(
    text: str, blocks: list[tuple[str, int]], boilerplate: set[int] | frozenset[int], params: Params
) -> tuple[str, int, bool]:
    """``text`` (split into ``blocks``: each block's text and digest) without the
    ``boilerplate`` blocks, the bytes removed, and whether it was kept whole instead
    because cleaning would have emptied it (``position`` only)."""
    kept = []
    removed = 0
    for block, digest in blocks:
        if digest in boilerplate:
            removed += len(block.encode("utf-8"))
        else:
            kept.append(block)
    if not removed:
        return text, 0, False
    if params.position and would_empty(kept, blocks, params.min_block_chars):
        return text, 0, True
    return "\n\n".join(kept), removed, False


def would_empty(kept: list[str], blocks: list[tuple[str, int]], min_block_chars: int) -> bool:
    """Whether the text left outside headings (link targets not counted) is under
    ``min_block_chars`` and under a tenth of the page's (the usual page stops at
    its first paragraph)."""
    left = 0
    for block in kept:
        if not (block[0] == "#" and is_heading(block)):
            left += prose_length(block)
            if left >= min_block_chars:
                return False
    own = sum(prose_length(block) for block, _ in blocks if not (block[0] == "#" and is_heading(block)))
    return 10 * left < own


class Reread:
    """An iterable of ``(url, text)`` pages that makes them anew each time it is
    iterated (from a store, a generator): what :func:`analyse_pages` reads twice
    without holding every page.

    >>> pages = Reread(lambda: iter([("u", "text")]))
    >>> list(pages) == list(pages) == [("u", "text")]
    True
    """

    def __init__(self, make: Callable[[], Iterator[tuple[str, str]]]) -> None:
        self.make = make

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return self.make()


def analyse_pages(
    pages: Iterable[tuple[str, str]],
    params: Params,
    previous: dict[str, set[str]] | None = None,
    previous_content: dict[str, set[str]] | None = None,
) -> tuple[Fingerprint, DomainAnalyser]:
    """The passes before cleaning over ``(url, text)`` pairs (``pages`` is read twice
    with ``params.position``: a list, or an iterable that starts again); returns the
    fingerprint and the analyser whose :meth:`DomainAnalyser.clean` does the last pass."""
    analyser = DomainAnalyser(params, previous, previous_content)
    for url, text in pages:
        analyser.add_page(url, text)
    if analyser.wants_positions:
        for url, text in pages:
            analyser.locate(url, text)
    return analyser.finish(), analyser
