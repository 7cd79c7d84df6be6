"""Benchmark: the domain boilerplate analysis of a recrawl, by a full pass against the
statistics kept between runs (crawler.lib.blockstats), on one generated domain.

    python -m bench.blockstats                 # 30,000 pages, 1% edited
    python -m bench.blockstats --pages 2000    # a smoke run

The domain: pages of about 4 KB (a title, paragraphs of the page's own, the boilerplate
of a bench.corpus profile: a footer with a year, a cart line, links, a related box;
half the pages with two shared paragraphs, a third in /blog/ with an author box). A
recrawl edits ``--edited`` of the pages (new own paragraphs; with ``--note``, each also
gets a note the others edited share: its count crosses ``own_below``, the statistics
scan every page's signature). Timed, CPU seconds, one
core: the full pass as the stage runs it today (``analyse_pages`` then ``clean`` of every
page: three reads of every text), the statistics made from no page (``add_page`` every
page, ``commit``, ``decide``, ``clean`` every page), and the statistics updated with
the edited pages (their old signatures out, their new texts in, ``commit``,
``decide``, ``clean`` of the pages ``pages_to_clean`` names). The update's decisions are
checked equal to the full pass's. Memory: what the statistics hold once loaded
(tracemalloc), per distinct block, and the size of ``to_bytes``.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import random
import time
import tracemalloc
from typing import TYPE_CHECKING, Any

from bench.corpus import _paragraph, _words, make_domains
from crawler.lib.blockstats import DomainStats
from crawler.lib.boilerplate import Params, Reread, analyse_pages

if TYPE_CHECKING:
    from collections.abc import Collection, Iterator

    from crawler.lib.blocksig import Signature


class Site:
    """The generated domain: page ``n`` at version ``v``, made anew on demand."""

    def __init__(self, pages: int, seed: int = 3, note: bool = False) -> None:
        self.note = note
        # a profile of about 1 KB of boilerplate a page
        domain = min(make_domains(40, 4_000, salt=seed), key=lambda d: abs(sum(map(len, d.blocks)) - 1_000))
        self.blocks, self.partial = domain.blocks, domain.partial
        self.blog = domain.blog_block or "About the author: " + _paragraph(random.Random(seed), 250)
        self.pages = pages
        self.version = dict.fromkeys(range(pages), 0)
        self.texts = [self.make(n) for n in range(pages)]  # made once: the passes time reading, not making

    def edit(self, n: int) -> None:
        self.version[n] += 1
        self.texts[n] = self.make(n)

    def url(self, n: int) -> str:
        return f"https://docs.example/{'blog' if n % 3 == 0 else 'guide'}/{n}"

    def key(self, n: int) -> str:
        return hashlib.sha256(self.url(n).encode()).hexdigest()

    def text(self, n: int) -> str:
        return self.texts[n]

    def make(self, n: int) -> str:
        rng = random.Random(f"{n}-{self.version[n]}")
        parts = [f"# {_words(rng, 4).title()}"]
        written = 0
        while written < 2_500:
            paragraph = _paragraph(rng, rng.randint(200, 600))
            parts.append(paragraph)
            written += len(paragraph)
        parts += [block.replace("{year}", str(2024 + n % 3)).replace("{cart}", str(n % 5)) for block in self.blocks]
        if n % 2:
            parts += self.partial
        if n % 3 == 0:
            parts.append(self.blog)
        if self.note and self.version[n]:  # an edit that adds the same note to each page edited
            parts.insert(2, "Note: this page was revised for version 2 of the library; see the changelog.")
        return "\n\n".join(parts)

    def ordered(self) -> list[int]:
        """The pages by key: the order a full pass reads them in."""
        return sorted(range(self.pages), key=self.key)


class Source:
    """The PageSource a store would be: signatures kept, texts made again."""

    def __init__(self, site: Site, numbers: dict[str, int]) -> None:
        self.site, self.numbers = site, numbers
        self.sigs: dict[str, Signature] = {}
        self.texts_read = self.scans = 0

    def signatures(self) -> Iterator[tuple[str, Signature]]:
        self.scans += 1
        return iter(list(self.sigs.items()))

    def texts(self, keys: Collection[str]) -> Iterator[tuple[str, str]]:
        self.texts_read += len(keys)
        return ((key, self.site.text(self.numbers[key])) for key in keys)


def cpu(func: Any) -> tuple[float, Any]:
    gc.collect()
    start = time.process_time()
    result = func()
    return time.process_time() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=30_000)
    parser.add_argument("--edited", type=float, default=0.01, help="share of the pages a recrawl edits")
    parser.add_argument(
        "--note",
        action="store_true",
        help="each edit also adds one note, the same on every page edited: its count crosses own_below (a scan)",
    )
    parser.add_argument("--json", help="write the figures there too")
    args = parser.parse_args()
    params = Params()
    site = Site(args.pages, note=args.note)
    order = site.ordered()
    numbers = {site.key(n): n for n in order}
    source = Source(site, numbers)

    def full_pass() -> tuple[Any, int]:
        pages = Reread(lambda: ((site.url(n), site.text(n)) for n in order))
        fingerprint, analyser = analyse_pages(pages, params)
        removed = sum(analyser.clean(url, text)[1] for url, text in pages)
        return fingerprint, removed

    def build() -> DomainStats:
        stats = DomainStats(params)
        for n in order:
            source.sigs[site.key(n)] = stats.add_page(site.key(n), site.url(n), site.text(n))
        stats.commit(source)
        stats.decide()
        stats.pages_to_clean(source)
        for n in order:
            stats.clean(site.key(n), site.url(n), site.text(n))
        return stats

    full_s, (fingerprint, _) = cpu(full_pass)
    build_s, stats = cpu(build)
    blob = stats.to_bytes()
    gc.collect()
    tracemalloc.start()
    kept = DomainStats.from_bytes(blob, params)  # what an update holds before its changes
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del kept
    gc.collect()
    tracemalloc.start()
    as_dict = {int(d): c for d, c in stats.counts.items()}  # the domain's counts alone, as a dict
    dict_held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del as_dict
    distinct = len(stats.counts)
    repeated = len(stats.counts.multi)

    edited = random.Random(5).sample(range(args.pages), max(1, round(args.pages * args.edited)))
    previous = {"": set(fingerprint.hashes), **fingerprint.section_hashes}
    before = (source.scans, source.texts_read)

    def update() -> tuple[Any, int]:
        loaded = DomainStats.from_bytes(blob, params)
        assert loaded is not None
        for n in edited:
            key = site.key(n)
            loaded.remove_page(key, source.sigs[key])
            site.edit(n)
            source.sigs[key] = loaded.add_page(key, site.url(n), site.text(n))
        loaded.commit(source)
        decided = loaded.decide(previous)
        keys = loaded.pages_to_clean(source)
        assert keys is not None
        for key in keys:
            n = numbers[key]
            loaded.clean(key, site.url(n), site.text(n))
        return decided, len(keys)

    update_s, (decided, cleaned) = cpu(update)
    load_s, _ = cpu(lambda: DomainStats.from_bytes(blob, params))
    expected, _ = analyse_pages([(site.url(n), site.text(n)) for n in order], params, previous)
    assert [d.to_json() for d in decided.decisions] == [d.to_json() for d in expected.decisions]
    figures = {
        "pages": args.pages,
        "edited": len(edited),
        "note": args.note,
        "text_mb": round(sum(map(len, site.texts)) / 1e6, 1),
        "full_pass_s": round(full_s, 2),
        "stats_build_s": round(build_s, 2),
        "update_s": round(update_s, 3),
        "update_of_which_load_s": round(load_s, 3),
        "update_pages_cleaned": cleaned,
        "update_scans": source.scans - before[0],
        "update_texts_read_back": source.texts_read - before[1],
        "distinct_blocks": distinct,
        "repeated_blocks": repeated,
        "stats_memory_mb": round(held / 1e6, 1),
        "stats_bytes_per_distinct_block": round(held / distinct),
        "dict_bytes_per_distinct_block": round(dict_held / distinct),
        "stats_kept_bytes": len(blob),
        "decisions": len(decided.decisions),
    }
    print(
        f"{args.pages:,} pages ({figures['text_mb']} MB of text), {len(edited)} edited: full pass "
        f"{full_s:.2f} s, statistics from no page {build_s:.2f} s, update {update_s:.3f} s "
        f"({update_s / full_s:.1%} of the full pass; {cleaned} pages cleaned, {figures['update_scans']} "
        f"signature scans, {figures['update_texts_read_back']} texts read back)\n"
        f"statistics: {distinct:,} distinct blocks ({repeated:,} on 2+ pages), {held / 1e6:.1f} MB held "
        f"({held / distinct:.0f} B a block; a dict of the domain's counts alone: {dict_held / distinct:.0f} B), "
        f"{len(blob) / 1e6:.1f} MB kept"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=2)


if __name__ == "__main__":
    main()
