"""The outline check of bench.docs_sites: does every section of the gold reach the output?

Pure functions, no I/O. A page's score is one figure over all its words: a section of
a long page can be lost whole and the page still score 0.95. This check looks at each
section instead.

**A section** is a heading (an ``h1``-``h6`` element in the gold: inside the content
container, not dropped nor hidden, with at least one word) and the gold text after it,
in document order through the page's containers, up to the next heading of the same or
a higher level (``h2`` ends at the next ``h1`` or ``h2``; an ``h3`` inside it ends
there too). Sections nest: an ``h2``'s section holds its ``h3``s. One definition for
every generator: Haddock, GTK-Doc and Doxygen do not wrap their sections in an element
(Sphinx does, ``section``/``div.section``: the same text either way). A heading without
words (an icon) is not checked, and still ends the sections before it.

**Reached** means: the heading's words appear in a row in the output, and at least
:data:`SECTION_RECALL` of the section's 4-gram shingles are in the output's (counted by
position; a section under four words is compared word by word, as bench.quality does).
Otherwise the section is **dropped**.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from bench.docs_gold import GOLD, MARK, Site, labelled_text, tidy
from bench.quality import SHINGLE, tokens

if TYPE_CHECKING:
    from lxml.etree import _Element

HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
#: a section whose share of shingles found is below this is dropped
SECTION_RECALL = 0.95


@dataclass(frozen=True)
class Section:
    """One heading of the gold and its section: the gold's words ``start:end`` (the
    heading's first)."""

    heading: str
    level: int
    start: int
    end: int
    heading_words: tuple[str, ...]


@dataclass(frozen=True)
class Outline:
    """The gold's words and its sections."""

    words: list[str]
    sections: list[Section]


@dataclass(frozen=True)
class SectionCheck:
    """How much of one section an output holds."""

    heading: str
    level: int
    words: int
    recall: float
    heading_found: bool

    @property
    def dropped(self) -> bool:
        return not self.heading_found or self.recall < SECTION_RECALL


def gold_outline(site: Site, root: _Element) -> tuple[str, Outline] | None:
    """The page's gold text (bench.docs_gold.gold_text's) and its sections, in document
    order (a parent before its children); ``None`` when the page has no container. One
    walk gives both, so the check costs the benchmark little.

    >>> from lxml import html
    >>> site = Site("t", "g", "p", "f", content=("div.body",), drop=("a.headerlink",))
    >>> page = html.fromstring('<div><h1>Out</h1><div class="body"><h1>Guide<a class="headerlink">¶</a></h1>'
    ...     '<p>Intro.</p><h2>Install</h2><p>Run pip.</p><h3>Notes</h3><p>None.</p><h2>Use</h2>'
    ...     '<p>Call it.</p><h2 style="display:none">Hidden</h2><p>Tail.</p><h3><img src="i.png"></h3></div></div>')
    >>> from bench.docs_gold import gold_text
    >>> gold, outline = gold_outline(site, page)
    >>> gold == gold_text(site, page)
    True
    >>> [(s.heading, s.level, " ".join(outline.words[s.start : s.end])) for s in outline.sections]
    ... # doctest: +NORMALIZE_WHITESPACE
    [('Guide', 1, 'guide intro install run pip notes none use call it tail'),
     ('Install', 2, 'install run pip notes none'), ('Notes', 3, 'notes none'), ('Use', 2, 'use call it tail')]
    """
    containers = site.containers(root)
    if not containers:
        return None
    dropped, apart = site.dropped(root), site.set_apart(root)
    headings = [node for container in containers for node in container.iter(*HEADINGS)]
    marks = {node: str(index) for index, node in enumerate(headings)}
    # the gold text cut where each heading starts: a heading is a block, no word spans a cut
    pieces: list[list[str]] = [[]]
    cuts: list[_Element] = []
    for container in containers:
        for text, mark, state in labelled_text(container, dropped, apart=apart, marks=marks):
            if state == MARK:
                cuts.append(headings[int(mark)])
                pieces.append([])
            elif state == GOLD:
                pieces[-1].append(text)
        pieces[-1].append("\n")  # containers are apart, as in gold_text
    texts = ["".join(piece) for piece in pieces]
    words: list[str] = []
    starts = []  # where each piece's words start
    for text in texts:
        starts.append(len(words))
        words += tokens(text)
    # each heading's section ends where the next heading of its level or higher starts
    levels = [int(node.tag[1]) for node in cuts]
    ends = [len(words)] * len(cuts)
    open_: list[int] = []  # the headings whose section is still open
    for index, level in enumerate(levels):
        while open_ and levels[open_[-1]] >= level:
            ends[open_.pop()] = starts[index + 1]
        open_.append(index)
    sections = []
    for index, node in enumerate(cuts):
        heading = "".join(text for text, _, state in labelled_text(node, dropped, apart=apart) if state == GOLD)
        heading_words = tuple(tokens(heading))
        if heading_words:
            sections.append(
                Section(" ".join(heading.split()), levels[index], starts[index + 1], ends[index], heading_words)
            )
    return tidy("".join(texts)), Outline(words, sections)


def check_sections(outline: Outline, output: str) -> list[SectionCheck]:
    """How much of each section of ``outline`` ``output`` holds: the share of the
    section's shingles (by position) found in the output.

    >>> words = "install run pip to get it notes none".split()
    >>> outline = Outline(words, [Section("Install", 2, 0, 8, ("install",)), Section("Notes", 3, 6, 8, ("notes",))])
    >>> [(c.heading, c.words, round(c.recall, 2), c.heading_found, c.dropped) for c in check_sections(outline,
    ...     "## Install\\n\\nRun pip to get it. Notes")]
    [('Install', 8, 0.8, True, True), ('Notes', 2, 0.5, True, True)]
    >>> [c.dropped for c in check_sections(outline, "Run pip to get it. Notes none. Install")]
    [True, False]
    """
    out = tokens(output)
    out_shingles = {tuple(out[i : i + SHINGLE]) for i in range(len(out) - SHINGLE + 1)}
    out_words = set(out)
    joined = f" {' '.join(out)} "
    words = outline.words
    # found[i]: how many of the gold's shingles starting before word i are the output's
    found = [0]
    for i in range(len(words) - SHINGLE + 1):
        found.append(found[-1] + (tuple(words[i : i + SHINGLE]) in out_shingles))
    checks = []
    for section in outline.sections:
        start, end = section.start, section.end
        if end - start >= SHINGLE:
            recall = (found[end - SHINGLE + 1] - found[start]) / (end - start - SHINGLE + 1)
        else:
            recall = sum(word in out_words for word in words[start:end]) / (end - start)
        heading_found = f" {' '.join(section.heading_words)} " in joined
        checks.append(SectionCheck(section.heading, section.level, end - start, recall, heading_found))
    return checks
