"""Benchmark: what the extractor reads on real documentation sites, built by their real
generators (Debian's documentation packages), scored against each generator's own
content container.

    python -m bench.docs_sites --root /work/docsites                 # every site, ours and trafilatura
    python -m bench.docs_sites --part dev                            # the sites a converter is tuned on
    python -m bench.docs_sites --site sphinx --limit 50 --no-reference
    python -m bench.docs_sites --json bench/results/docs_sites.json --worst 8
    python -m bench.docs_sites --site libstdcxx --page a01878.html --show   # ours, the gold, what was missed

The sites (bench.docs_gold.SITES: package, folder, container, what the container holds
that is not text): python3.11-doc (Sphinx), mkdocs-doc (MkDocs), rust-doc (rustdoc and
mdBook, two sites), doxygen-doc (Doxygen's manual and examples), libstdc++-12-doc
(Doxygen's API reference), postgresql-doc-15 (DocBook), git-doc (AsciiDoc), nodejs-doc
(Node's doc tool), sphinx-doc and breathe-doc (Sphinx, Sphinx + Breathe),
openjdk-17-doc (Javadoc), libgtk-3-doc (GTK-Doc), ghc-doc and libghc-pandoc-doc
(Haddock), python-sqlalchemy-doc (an older Sphinx theme, zzzeeksphinx); and the held-out
part: libglib2.0-doc (GTK-Doc) and libghc-lens-doc (Haddock, a library's package).
ghc-doc was held out until converter 10 measured it weakest and its pages were read;
libghc-pandoc-doc until two of its pages were read for converter 12, and SQLAlchemy's
until two were read for converter 13.

**Parts**: ``--part dev`` measures the sites a converter is tuned on, ``--part
held-out`` the others (``Site.held_out``): measured to see whether a change holds on
pages nobody looked at while making it; nobody tunes on them (reading their pages to
fix a miss makes them dev sites). ``--part all`` (the default): both.

**Pages**: every page of a site, but a fixed sample of 600 for rustdoc (29,800 pages
once redirects are left out), mdBook (1,470), libstdc++ (3,800), Javadoc (10,100) and
Haddock (1,870, the hyperlinked sources left out): the pages in the
order of the SHA-256 of their path, the first ``FLOOR`` of each kind (struct, fn, trait,
module, source... ; each book; class, file, group, namespace, source...), then the rest
in that order. ``--limit N`` keeps the first N of that order (a smaller fixed sample).

**Gold**: the visible text of the generator's container (bench.docs_gold.gold_text).
**Scoring** (bench.quality): both texts reduced to ``\\w+`` tokens, 4-gram shingles;
recall is the share of the gold's shingles found in the output, precision the share of
the output's found in the gold. Per site and extractor:

* recall: the mean over pages, and the micro figure (all shingles of the site at once);
* precision: the same, over the pages with a non-empty output;
* ``sent empty``: pages whose output is empty while the gold is not (the target is 0);
* ``rec<0.9``, ``prec<0.9``: pages below 0.9;
* ms/page: CPU time (``time.process_time``) of decoding, parsing and converting a page;
* ``sections``, ``sect. dropped``: the outline check (bench.docs_outline): each heading
  of the gold with the text up to the next heading of its level or higher is a section;
  it is dropped when its heading's words are not in the output in a row or less than
  95% of its shingles are. The sections ours dropped are listed (``--worst``: the N of
  lowest recall, then longest, per site; all of them in the JSON, ``dropped_sections``).

Pages without the container (``no container``) or with an empty gold are counted and
not scored. Both extractors run on the same bytes in the same process:

* ``ours``: the page decoded as Scrapy decodes a response (bench.real_pages.decoded) and
  converted as the docs spider converts it (bench.real_pages.ours_markdown), then its
  markdown read as plain text (:func:`plain_text`: list numbers, fence languages,
  heading marks are markup, not words);
* ``trafilatura`` 2.3.1 as its own benchmark runs it (bench.real_pages.trafilatura_extractor).

The worst pages of each site are listed with what was missed (the gold's text, by the
element it sits in) and what leaked (the output's text not in the gold, by where it is
on the page: outside the container, hidden, or not text).

**Packages**: ``--root`` is a folder with one unpacked package per folder
(``ROOT/PACKAGE/usr/share/doc/...``). By default, a cache folder that this command fills
when run as root (``apt-get download PACKAGE`` + ``dpkg -x``); otherwise it prints what to
run. Offline once the packages are there.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.docs_gold import GOLD, SITES, Site, gold_text, labelled_text
from bench.docs_outline import Outline, SectionCheck, check_sections, gold_outline
from bench.quality import SHINGLE, shingles, tokens
from bench.real_pages import decoded, markdown_text, with_reference
from crawler.lib.css import NO_RULES, HiddenRules, hidden_rules
from crawler.lib.pagetext import page_markdown

if TYPE_CHECKING:
    from lxml.etree import _Element

DEFAULT_ROOT = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "crawler-bench" / "debian-docs"
#: pages of each kind a sample takes first
FLOOR = 10
HEAD_BYTES = 8192
#: a page that only sends the browser to another (MkDocs, mdBook, rustdoc leave them for moved pages)
REDIRECT_RE = re.compile(r"<meta[^>]+http-equiv=[\"']?refresh", re.IGNORECASE)
#: a page below this recall or precision is listed
THRESHOLD = 0.9
#: the extractor whose misses and leaks are explained
OURS = "ours"

Extractor = Callable[[bytes, str], str]
#: a heading's mark and the number of a numbered heading (``# 7. Input and Output``)
HEADING_NUMBER_RE = re.compile(r"^(#{1,6}[ \t]+)(\d+)\.(?=[ \t])", re.MULTILINE)


def plain_text(markdown: str) -> str:
    r"""The words of ``markdown`` a reader reads: bench.real_pages.markdown_text. A
    heading's number is a word (markdown_text would take it for a list item's, after
    the heading mark).

    >>> plain_text("1. Run:\n\n   ```ini\n   [a]\n   ```\n\n## Next")
    'Run:\n\n\n[a]\n\n\nNext'
    >>> plain_text("# 7. Input and Output")
    '7. Input and Output'
    """
    return markdown_text(HEADING_NUMBER_RE.sub(r"\1\2\\.", markdown))


def ours(body: bytes, url: str, site_rules: HiddenRules = NO_RULES) -> str:
    """The converter on ``body`` as the docs spider runs it, as plain text; ``site_rules``:
    what the page's own stylesheets hide (the crawl fetches them once: see
    :func:`stylesheet_rules`)."""
    return plain_text(page_markdown(decoded(body, url).selector.root, url, site_rules=site_rules)[0])


_STYLESHEETS: dict[Path, HiddenRules] = {}


def stylesheet_rules(root: Any, file: Path) -> HiddenRules:
    """What the stylesheets the page links (files of its own site, next to it on disk)
    hide, as the crawl reads them (``MARKDOWN_SITE_STYLESHEETS``): Doxygen's
    ``doxygen.css`` hides its code tooltips (``div.ttc``)."""
    rules = NO_RULES
    for href in root.xpath("//link[contains(concat(' ', normalize-space(@rel), ' '), ' stylesheet ')]/@href"):
        path = (file.parent / str(href).split("?", 1)[0].split("#", 1)[0]).resolve()
        if path not in _STYLESHEETS:
            try:
                _STYLESHEETS[path] = hidden_rules(path.read_text(encoding="utf-8", errors="replace"))
            except OSError:
                _STYLESHEETS[path] = NO_RULES
        rules = rules.merged(_STYLESHEETS[path])
    return rules


# -- the packages --------------------------------------------------------------


def missing_packages(root: Path, sites: Iterable[Site]) -> list[str]:
    return sorted({site.package for site in sites if not (root / site.package / site.folder).is_dir()})


def fetch_packages(root: Path, packages: list[str]) -> None:
    """Download and unpack ``packages`` into ``root/PACKAGE`` (as root: ``apt-get
    download`` + ``dpkg -x``), else exit saying what to run."""
    commands = [f"cd {tempfile.gettempdir()} && apt-get download {' '.join(packages)}"] + [
        f"dpkg -x {tempfile.gettempdir()}/{package}_*.deb {root / package}" for package in packages
    ]
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise SystemExit(
            f"Missing under {root}: {', '.join(packages)}. Run as root (after apt-get update):\n  "
            + "\n  ".join(commands)
            + "\nor give --root a folder holding them unpacked (ROOT/PACKAGE/usr/share/doc/...)."
        )
    with tempfile.TemporaryDirectory() as folder:
        print(f"Fetching {', '.join(packages)} into {root}", file=sys.stderr)
        subprocess.run(["apt-get", "download", *packages], cwd=folder, check=True)
        for package in packages:
            (deb,) = Path(folder).glob(f"{package}_*.deb")
            (root / package).mkdir(parents=True, exist_ok=True)
            subprocess.run(["dpkg", "-x", str(deb), str(root / package)], check=True)
            version = subprocess.run(["dpkg-deb", "-f", str(deb), "Version"], capture_output=True, text=True)
            (root / package / "VERSION").write_text(version.stdout.strip() + "\n", encoding="utf-8")


def package_version(root: Path, package: str) -> str:
    """The version of the unpacked ``package``: the ``VERSION`` file written when it was
    fetched, else its Debian changelog's first line (libstdc++-12-doc ships none)."""
    written = root / package / "VERSION"
    if written.is_file():
        return written.read_text(encoding="utf-8").strip()
    for changelog in (root / package / "usr/share/doc").glob("*/changelog.Debian.gz"):
        with gzip.open(changelog, "rt", encoding="utf-8", errors="replace") as lines:
            match = re.match(r"\S+ \(([^)]+)\)", lines.readline())
        if match and changelog.parent.name == package:
            return match.group(1)
    return "unknown"


# -- the pages -----------------------------------------------------------------


@dataclass(frozen=True)
class Page:
    site: str
    #: the path under the site's folder
    path: str
    file: Path
    kind: str

    @property
    def url(self) -> str:
        return f"https://{SITES[self.site].package}.docs.invalid/{self.path}"


def path_hash(path: str) -> bytes:
    return hashlib.sha256(path.encode("utf-8")).digest()


def site_pages(site: Site, root: Path) -> list[Page]:
    """The pages of ``site``, in the order of the hash of their path: all of them, or
    the sample (:func:`sample`)."""
    folder = root / site.package / site.folder
    include = re.compile(site.include)
    pages = []
    for file in folder.rglob("*.html"):
        path = file.relative_to(folder).as_posix()
        if file.is_symlink() or not include.fullmatch(path):
            continue
        with file.open("rb") as stream:
            head = stream.read(HEAD_BYTES).decode("utf-8", "replace")
        if (site.marker and site.marker not in head) or REDIRECT_RE.search(head):
            continue
        pages.append(Page(site.name, path, file, site.kind(path, head)))
    pages.sort(key=lambda page: path_hash(page.path))
    return pages if site.sample is None else sample(pages, site.sample)


def sample(pages: list[Page], size: int, floor: int = FLOOR) -> list[Page]:
    """``size`` of ``pages`` (in hash order): the first ``floor`` of each kind, then the
    others in their order; the result keeps that order (more than ``size`` pages when
    the kinds need more).

    >>> pages = [Page("s", f"p{i}", Path(), "rare" if i == 7 else "common") for i in range(10)]
    >>> [page.path for page in sample(pages, 3, floor=1)]
    ['p0', 'p1', 'p7']
    """
    taken: Counter[str] = Counter()
    chosen = set()
    for index, page in enumerate(pages):
        if taken[page.kind] < floor:
            taken[page.kind] += 1
            chosen.add(index)
    for index in range(len(pages)):
        if len(chosen) >= size:
            break
        chosen.add(index)
    return [page for index, page in enumerate(pages) if index in chosen]


# -- scoring -------------------------------------------------------------------


@dataclass(frozen=True)
class Overlap:
    """The shingles an output shares with the gold (bench.quality.score's figures, with
    the counts a micro average needs)."""

    common: int
    output_shingles: int
    gold_shingles: int
    output_words: int
    gold_words: int

    @property
    def precision(self) -> float:
        return self.common / self.output_shingles if self.output_shingles else 0.0

    @property
    def recall(self) -> float:
        return self.common / self.gold_shingles if self.gold_shingles else 0.0


def shingle_size(output_words: list[str], gold_words: list[str]) -> int:
    """4, or 1 when either text is shorter than 4 words (as bench.quality.score)."""
    return SHINGLE if min(len(output_words), len(gold_words)) >= SHINGLE else 1


def overlap(output: str, gold: str) -> Overlap:
    """How ``output`` compares to ``gold``.

    >>> o = overlap("# Title\\n\\none two three four five six", "Title one two three four")
    >>> o.common, o.output_shingles, o.gold_shingles, o.precision, o.recall
    (2, 4, 2, 0.5, 1.0)
    """
    out_words, gold_words = tokens(output), tokens(gold)
    size = shingle_size(out_words, gold_words)
    out_set, gold_set = shingles(out_words, size), shingles(gold_words, size)
    return Overlap(len(out_set & gold_set), len(out_set), len(gold_set), len(out_words), len(gold_words))


@dataclass
class PageResult:
    site: str
    path: str
    kind: str
    extractor: str
    gold_words: int
    output_words: int
    common: int
    output_shingles: int
    gold_shingles: int
    precision: float
    recall: float
    ms: float
    error: str = ""
    #: the gold's sections (bench.docs_outline) and those the output dropped
    sections: int = 0
    sections_dropped: int = 0

    @property
    def sent_empty(self) -> bool:
        return self.output_words == 0 and self.gold_words > 0


@dataclass
class Unscored:
    """Pages of a site that were not scored, and why."""

    no_container: list[str] = field(default_factory=list)
    empty_gold: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class DroppedSection:
    """A section of the gold that ours dropped (bench.docs_outline)."""

    site: str
    path: str
    heading: str
    level: int
    words: int
    recall: float
    heading_found: bool

    @classmethod
    def of(cls, page: Page, check: SectionCheck) -> DroppedSection:
        return cls(page.site, page.path, check.heading, check.level, check.words, round(check.recall, 4),
                   check.heading_found)  # fmt: skip

    def describe(self) -> str:
        missing = "" if self.heading_found else ", heading missing"
        return (
            f"- {self.site}/{self.path}: h{self.level} {self.heading!r}: {self.words} words, "
            f"recall {self.recall:.2f}{missing}"
        )


@dataclass
class Run:
    results: list[PageResult] = field(default_factory=list)
    unscored: dict[str, Unscored] = field(default_factory=dict)
    pages: dict[str, int] = field(default_factory=dict)
    #: what ours missed and leaked on each page, by ``(site, path)``
    diagnoses: dict[tuple[str, str], Diagnosis] = field(default_factory=dict)
    #: the sections ours dropped, every page's
    dropped_sections: list[DroppedSection] = field(default_factory=list)


def page_gold(page: Page, body: bytes) -> tuple[str | None, _Element]:
    root = decoded(body, page.url).selector.root
    return gold_text(SITES[page.site], root), root


def page_outline(page: Page, body: bytes) -> tuple[str | None, Outline, _Element]:
    """:func:`page_gold` and the gold's sections (bench.docs_outline), from one walk."""
    root = decoded(body, page.url).selector.root
    found = gold_outline(SITES[page.site], root)
    return (None, Outline([], []), root) if found is None else (*found, root)


def run(pages: list[Page], extractors: dict[str, Extractor]) -> Run:
    """Every extractor on every page, scored against the page's gold; what ``ours``
    missed and leaked on each page (:func:`diagnose`)."""
    result = Run()
    for index, page in enumerate(pages, 1):
        if index % 200 == 0:
            print(f"{index}/{len(pages)} pages", file=sys.stderr)
        result.pages[page.site] = result.pages.get(page.site, 0) + 1
        unscored = result.unscored.setdefault(page.site, Unscored())
        body = page.file.read_bytes()
        gold, outline, root = page_outline(page, body)
        if gold is None:
            unscored.no_container.append(page.path)
            continue
        if not tokens(gold):
            unscored.empty_gold.append(page.path)
            continue
        for name, extract in extractors.items():
            error = ""
            start = time.process_time()
            try:
                if name == OURS:
                    output = ours(body, page.url, stylesheet_rules(root, page.file))
                else:
                    output = extract(body, page.url)
            except Exception as exc:  # noqa: BLE001 - a crash is a full miss, and the run goes on
                error = f"{type(exc).__name__}: {exc}"
                print(f"{name} failed on {page.site}/{page.path}: {error}", file=sys.stderr)
                output = ""
            ms = (time.process_time() - start) * 1000
            dropped = [check for check in check_sections(outline, output) if check.dropped]
            if name == OURS:
                result.diagnoses[(page.site, page.path)] = diagnose(SITES[page.site], root, output)
                result.dropped_sections += [DroppedSection.of(page, check) for check in dropped]
            o = overlap(output, gold)
            result.results.append(
                PageResult(
                    page.site, page.path, page.kind, name, o.gold_words, o.output_words, o.common,
                    o.output_shingles, o.gold_shingles, round(o.precision, 4), round(o.recall, 4), round(ms, 2), error,
                    len(outline.sections), len(dropped),
                )
            )  # fmt: skip
    return result


def summary(results: list[PageResult]) -> dict[str, Any]:
    """The figures of one extractor on a set of pages."""
    said = [r for r in results if r.output_words]
    gold = sum(r.gold_shingles for r in results)
    sent = sum(r.output_shingles for r in said)
    return {
        "pages": len(results),
        "recall": round(statistics.mean(r.recall for r in results), 4) if results else 0.0,
        "recall_micro": round(sum(r.common for r in results) / gold, 4) if gold else 0.0,
        "precision": round(statistics.mean(r.precision for r in said), 4) if said else 0.0,
        "precision_micro": round(sum(r.common for r in said) / sent, 4) if sent else 0.0,
        "sent_empty": sum(r.sent_empty for r in results),
        "recall_below": sum(r.recall < THRESHOLD for r in results),
        "precision_below": sum(r.precision < THRESHOLD for r in said),
        "words_ratio": round(sum(r.output_words for r in results) / max(1, sum(r.gold_words for r in results)), 3),
        "ms_per_page": round(statistics.mean(r.ms for r in results), 2) if results else 0.0,
        "errors": sum(bool(r.error) for r in results),
        "sections": sum(r.sections for r in results),
        "sections_dropped": sum(r.sections_dropped for r in results),
    }


def summaries(result: Run, by_kind: bool = False) -> dict[str, dict[str, dict[str, Any]]]:
    """Per site (or ``site/kind``) and extractor: :func:`summary`."""
    groups: dict[str, dict[str, list[PageResult]]] = {}
    for r in result.results:
        key = f"{r.site}/{r.kind}" if by_kind else r.site
        groups.setdefault(key, {}).setdefault(r.extractor, []).append(r)
    return {key: {name: summary(rows) for name, rows in by_name.items()} for key, by_name in groups.items()}


def table(figures: dict[str, dict[str, dict[str, Any]]], run_: Run | None = None) -> str:
    lines = [
        "| site | extractor | pages | recall mean | recall micro | precision mean | precision micro "
        "| sent empty | rec<0.9 | prec<0.9 | words/gold | ms/page | sections | sect. dropped |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for key, by_name in figures.items():
        for name, f in by_name.items():
            lines.append(
                f"| {key} | {name} | {f['pages']} | {f['recall']:.3f} | {f['recall_micro']:.3f} | {f['precision']:.3f} "
                f"| {f['precision_micro']:.3f} | {f['sent_empty']} | {f['recall_below']} | {f['precision_below']} "
                f"| {f['words_ratio']:.2f} | {f['ms_per_page']:.1f} | {f['sections']} | {f['sections_dropped']} |"
            )
    if run_ is not None:
        for site, unscored in run_.unscored.items():
            if unscored.no_container or unscored.empty_gold:
                lines.append(
                    f"\n{site}: not scored: {len(unscored.no_container)} without the container "
                    f"{unscored.no_container[:5]}, {len(unscored.empty_gold)} with an empty gold "
                    f"{unscored.empty_gold[:5]}"
                )
    return "\n".join(lines)


# -- what a page missed and leaked ---------------------------------------------


@dataclass
class Diagnosis:
    """Where the words ours missed sit in the gold, and where the words it sent that
    are not gold come from on the page."""

    #: gold words not covered by any shared shingle, by the element they sit in
    missed: Counter[str]
    #: the longest runs of missed gold words
    missed_runs: list[str]
    #: output words not covered by a gold shingle, by where the run was found on the page
    leaked: Counter[str]
    leaked_runs: list[str]


def _uncovered(words: list[str], other: set[tuple[str, ...]], size: int) -> list[bool]:
    """For each of ``words``: whether no shingle of ``size`` holding it is in ``other``."""
    covered = [False] * len(words)
    if size == 1 or len(words) < size:
        return [(word,) not in other for word in words]
    for start in range(len(words) - size + 1):
        if tuple(words[start : start + size]) in other:
            for i in range(start, start + size):
                covered[i] = True
    return [not c for c in covered]


def _runs(flags: list[bool]) -> list[tuple[int, int]]:
    """The ``(start, end)`` of each run of true flags, longest first."""
    out, start = [], None
    for i, flag in enumerate([*flags, False]):
        if flag and start is None:
            start = i
        elif not flag and start is not None:
            out.append((start, i))
            start = None
    return sorted(out, key=lambda run: run[0] - run[1])


def _excerpt(words: list[str], start: int, end: int, most: int = 16) -> str:
    text = " ".join(words[start : min(end, start + most)])
    return f"{text} ... ({end - start} words)" if end - start > most else text


def diagnose(site: Site, root: _Element, output: str, runs: int = 3) -> Diagnosis:
    """What ``output`` missed of the page's gold and what it sent besides."""
    containers = site.containers(root)
    dropped, apart = site.dropped(root), site.set_apart(root)
    gold_words: list[str] = []
    gold_labels: list[str] = []
    for container in containers:
        for text, label, state in labelled_text(container, dropped, apart=apart):
            if state == GOLD:
                found = tokens(text)
                gold_words += found
                gold_labels += [label] * len(found)
    out_words = tokens(output)
    size = shingle_size(out_words, gold_words)
    missed = _uncovered(gold_words, shingles(out_words, size), size)
    leaked = _uncovered(out_words, shingles(gold_words, size), size)
    missed_by = Counter(label for label, flag in zip(gold_labels, missed, strict=True) if flag)
    # where a leaked run is on the page: the first place its first shingle is found
    page_words: list[str] = []
    page_where: list[str] = []
    body = root.find("body")
    for text, label, state in labelled_text(body if body is not None else root, dropped, set(containers), apart):
        found = tokens(text)
        page_words += found
        page_where += [where_label(state, label)] * len(found)
    first: dict[tuple[str, ...], int] = {}
    for i in range(len(page_words) - size + 1):
        first.setdefault(tuple(page_words[i : i + size]), i)
    first_word: dict[str, int] = {}
    for i, word in enumerate(page_words):
        first_word.setdefault(word, i)
    # where each leaked word is on the page: through the first place a shingle holding it is found
    leaked_where: list[str] = []
    for i, flag in enumerate(leaked):
        where = ""
        for start in range(max(0, i - size + 1), min(i, len(out_words) - size) + 1) if flag else ():
            position = first.get(tuple(out_words[start : start + size]))
            if position is not None:
                where = page_where[position + i - start]
                break
        if flag and not where and out_words[i] in first_word:  # the word alone: a guess, marked ~
            where = "~" + page_where[first_word[out_words[i]]]
        leaked_where.append(where or ("not on the page" if flag else ""))
    leaked_by = Counter(where for where in leaked_where if where)
    leaked_runs = []
    for start, end in _runs(leaked):
        # a run of words from several places is told by its first word's place
        leaked_runs.append(f"[{leaked_where[start]}] {_excerpt(out_words, start, end)}")
        if len(leaked_runs) == runs:
            break
    missed_runs = [f"[{gold_labels[start]}] {_excerpt(gold_words, start, end)}" for start, end in _runs(missed)[:runs]]
    return Diagnosis(missed_by, missed_runs, leaked_by, leaked_runs)


def where_label(state: str, label: str) -> str:
    """Where a word is on the page: its state and the element it sits in.

    >>> where_label("not text [div.ttc]", "div.ttname"), where_label("hidden [span.x]", "span.x")
    ('not text [div.ttc] div.ttname', 'hidden [span.x]')
    """
    state = state or "gold"
    return state if not label or state.endswith(f"[{label}]") else f"{state} {label}"


def worst(result: Run, site: str, count: int) -> list[PageResult]:
    """Ours' pages of ``site`` below the threshold, lowest recall (then precision) first."""
    ours = [r for r in result.results if r.site == site and r.extractor == "ours"]
    low = [r for r in ours if r.recall < THRESHOLD or (r.output_words and r.precision < THRESHOLD)]
    return sorted(low, key=lambda r: (min(r.recall, r.precision if r.output_words else 1.0), r.path))[:count]


def worst_sections(result: Run, site: str | None = None, count: int | None = None) -> list[DroppedSection]:
    """The sections ours dropped (of ``site``, else of every site): the lowest recall
    first (a section lost whole before one half sent), then the longest."""
    found = [s for s in result.dropped_sections if site is None or s.site == site]
    return sorted(found, key=lambda s: (s.recall, -s.words, s.site, s.path, s.heading))[:count]


def explain(page: Page) -> tuple[str, str, Diagnosis]:
    """Ours' markdown, the gold and the diagnosis of one page."""
    body = page.file.read_bytes()
    gold, root = page_gold(page, body)
    output = page_markdown(root, page.url, site_rules=stylesheet_rules(root, page.file))[0]
    return output, gold or "", diagnose(SITES[page.site], root, plain_text(output))


ID_RE = re.compile(r"#[^\s\].]+")


def causes(result: Run, site: str, most: int = 8) -> dict[str, list[tuple[str, int, int]]]:
    """Over the pages of ``site``: the elements ours' missed words sit in and the places
    its leaked words come from, as ``(label, words, pages)``, most words first (ids
    made ``#id``: a section's id is its heading's words)."""
    tallies: dict[str, tuple[Counter[str], Counter[str]]] = {
        "missed": (Counter(), Counter()),
        "leaked": (Counter(), Counter()),
    }
    for (name, _), diagnosis in result.diagnoses.items():
        if name != site:
            continue
        for kind, counts in (("missed", diagnosis.missed), ("leaked", diagnosis.leaked)):
            words, pages = tallies[kind]
            page_labels: set[str] = set()
            for label, count in counts.items():
                general = ID_RE.sub("#id", label)
                words[general] += count
                page_labels.add(general)
            pages.update(page_labels)
    return {
        kind: [(label, count, pages[label]) for label, count in words.most_common(most)]
        for kind, (words, pages) in tallies.items()
    }


def describe(r: PageResult, diagnosis: Diagnosis) -> str:
    head = (
        f"- {r.site}/{r.path} ({r.kind}): recall {r.recall:.2f}, precision {r.precision:.2f}, "
        f"{r.output_words}/{r.gold_words} words" + (" SENT EMPTY" if r.sent_empty else "")
    )
    lines = [head]
    if diagnosis.missed:
        lines.append(f"    missed: {dict(diagnosis.missed.most_common(4))}")
        lines += [f"      {run}" for run in diagnosis.missed_runs]
    if diagnosis.leaked:
        lines.append(f"    leaked: {dict(diagnosis.leaked.most_common(4))}")
        lines += [f"      {run}" for run in diagnosis.leaked_runs]
    return "\n".join(lines)


def show(page: Page) -> None:
    output, gold, diagnosis = explain(page)
    o = overlap(plain_text(output), gold)
    print(f"# {page.site}/{page.path} ({page.kind}) {page.file}")
    print(f"recall {o.recall:.3f}, precision {o.precision:.3f}, {o.output_words} words sent, {o.gold_words} gold")
    print("\n## ours\n")
    print(output)
    print("\n## gold\n")
    print(gold)
    print("\n## missed (gold words in no shared shingle, by element)\n")
    print(dict(diagnosis.missed.most_common(10)))
    print("\n".join(diagnosis.missed_runs))
    print("\n## leaked (words sent in no gold shingle, by where they are on the page)\n")
    print(dict(diagnosis.leaked.most_common(10)))
    print("\n".join(diagnosis.leaked_runs))


# -- the command ---------------------------------------------------------------


PARTS = ("all", "dev", "held-out")


def in_part(site: Site, part: str) -> bool:
    """Whether ``site`` is measured in ``part`` (``all``, ``dev``, ``held-out``)."""
    return part == "all" or site.held_out == (part == "held-out")


def find_page(sites: list[Site], root: Path, wanted: str) -> Page:
    for site in sites:
        folder = root / site.package / site.folder
        path = Path(wanted)
        relative = path.resolve().relative_to(folder.resolve()).as_posix() if path.is_absolute() else wanted
        if path.is_absolute() and not path.resolve().is_relative_to(folder.resolve()):
            continue
        file = folder / relative
        if file.is_file():
            head = file.read_bytes()[:HEAD_BYTES].decode("utf-8", "replace")
            return Page(site.name, relative, file, site.kind(relative, head))
    raise SystemExit(f"No page {wanted!r} in {', '.join(site.name for site in sites)} under {root}")


PAGE_COLUMNS = ("site", "path", "kind", "extractor", "gold_words", "output_words", "common", "output_shingles",
                "gold_shingles", "ms", "error", "sections", "sections_dropped")  # fmt: skip


def results_json(payload: dict[str, Any], results: list[PageResult]) -> str:
    """``payload`` as JSON, with every page's figures under ``pages`` as rows of
    :data:`PAGE_COLUMNS`, one a line (recall = common / gold_shingles, precision =
    common / output_shingles)."""
    head = json.dumps({**payload, "pages": {"columns": PAGE_COLUMNS, "rows": []}}, indent=1)
    rows = ",\n".join(json.dumps([getattr(r, column) for column in PAGE_COLUMNS], ensure_ascii=False) for r in results)
    return head.removesuffix("]\n }\n}") + ("\n" + rows if rows else "") + "\n ]\n }\n}\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT, help=f"unpacked packages (default {DEFAULT_ROOT})")
    parser.add_argument("--site", action="append", choices=list(SITES), help="this site only (repeatable)")
    parser.add_argument(
        "--part",
        choices=PARTS,
        default="all",
        help="the dev sites (tune on these), the held-out ones (never tuned on), or all (default)",
    )
    parser.add_argument("--limit", type=int, help="at most N pages per site (the first of the hash order)")
    parser.add_argument("--no-reference", action="store_true", help="ours alone (no trafilatura)")
    parser.add_argument("--by-kind", action="store_true", help="also a table per kind of page")
    parser.add_argument("--worst", type=int, default=5, help="list ours' N worst pages of each site (default 5)")
    parser.add_argument("--json", type=Path, help="write the figures and every page's scores here")
    parser.add_argument("--page", help="one page: its path under the site's folder (with --site) or on disk")
    parser.add_argument("--show", action="store_true", help="with --page: ours, the gold, what was missed and leaked")
    args = parser.parse_args(argv)

    sites = [SITES[name] for name in args.site or SITES if in_part(SITES[name], args.part)]
    if not sites:
        raise SystemExit(f"No site of {args.site} is in the {args.part} part")
    missing = missing_packages(args.root, sites)
    if missing:
        fetch_packages(args.root, missing)
    if args.page:
        page = find_page(sites, args.root, args.page)
        if args.show:
            show(page)
        else:
            result = run([page], {"ours": ours})
            print(table(summaries(result), result))
        return 0

    extractors = with_reference(ours, args.no_reference)
    pages: list[Page] = []
    for site in sites:
        found = site_pages(site, args.root)
        pages += found[: args.limit] if args.limit else found
    result = run(pages, extractors)
    figures = summaries(result)
    print(table(figures, result))
    if args.by_kind:
        print("\n" + table(summaries(result, by_kind=True)))
    for site in sites:
        found_causes = causes(result, site.name)
        print(f"\n{site.name}: ours' missed words by element (words, pages): {found_causes['missed']}")
        print(f"{site.name}: ours' leaked words by origin (words, pages): {found_causes['leaked']}")
        listed = worst(result, site.name, args.worst)
        if listed:
            print(f"{site.name}: worst pages of ours")
        for r in listed:
            print(describe(r, result.diagnoses[(r.site, r.path)]))
        sections = worst_sections(result, site.name, args.worst)
        if sections:
            print(f"{site.name}: worst sections ours dropped")
        for section in sections:
            print(section.describe())
    if args.json:
        payload = {
            "root": str(args.root),
            "part": args.part,
            "versions": {site.package: package_version(args.root, site.package) for site in sites},
            "sites": {
                site.name: {
                    "generator": site.generator, "package": site.package, "folder": site.folder,
                    "content": site.content, "drop": site.drop, "sample": site.sample, "held_out": site.held_out,
                    "pages": result.pages.get(site.name, 0), **asdict(result.unscored.get(site.name, Unscored())),
                    "notes": site.notes,
                }
                for site in sites
            },
            "figures": figures,
            "by_kind": summaries(result, by_kind=True),
            "causes": {site.name: causes(result, site.name, most=20) for site in sites},
            "worst": {site.name: [
                describe(r, result.diagnoses[(r.site, r.path)]) for r in worst(result, site.name, args.worst)
            ] for site in sites},
            # every section ours dropped, worst first (what a converter change is compared on)
            "dropped_sections": {
                site.name: [asdict(s) for s in worst_sections(result, site.name)] for site in sites
            },
        }  # fmt: skip
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(results_json(payload, result.results), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
