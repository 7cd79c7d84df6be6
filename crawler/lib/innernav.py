"""Ways around the page inside its content container, known by their shape, not their
names: a **letter bar** at the container's start (links each named by one character:
Haddock's "A B C ... Z" above each page of its index) and a **closed drawer that
repeats the page** (a ``<details>`` a reader has not opened, linking to places in the
container, whose every word the container says outside its drawers and nearly every
line in its order: Haddock's synopsis above the interface it summarises). Both leave the
extractor's input: the first names no content, and the second's words stay in the text
it repeats, so their changes are still hashed. A letter bar after the page's first words
is what the page offers (Sphinx's ``genindex.html``), and so is one with nothing after
it: they stay.

Pure functions over an lxml tree; the tree is never modified.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from lxml import etree

from crawler.lib.nodes import tag_of, text_of, up_to

if TYPE_CHECKING:
    from collections.abc import Iterable

    from lxml.etree import _Element

#: a letter bar has at least this many links, this share of them one character long
BAR_LINKS = 10
BAR_SHARE = 0.9
#: what may stand between a bar's links: separators, no word
SEPARATORS_RE = re.compile(r"[\s|·•,/\-\u2013\u2014\[\]()]*")
WORD_RE = re.compile(r"\w+")
#: where a bar or a drawer can be
BLOCKS = ("ul", "ol", "div", "p", "nav", "table", "details", "span", "td")


def inner_navigation(node: _Element, skip: Iterable[_Element] = ()) -> list[_Element]:
    """The letter bars at the start of ``node`` and the repeating closed drawers inside
    it, outside ``skip``. A bar after the page's first words (Sphinx's ``genindex.html``:
    its title and "Index pages by letter:") is what the page offers, and so is one with
    nothing after it: they stay.

    >>> from lxml import html
    >>> bar = "".join(f'<li><a href="doc-index-{c}.html">{c}</a></li>' for c in "ABCDEFGHIJKL")
    >>> page = html.fromstring(f'<div><div id="alphabet"><ul>{bar}</ul></div>'
    ...     '<details><summary>Synopsis</summary><ul><li><a href="#v:lookup">lookup</a> :: Key -> Map -> Maybe'
    ...     '</li></ul></details><details><summary>Answer</summary><p>Only here.</p></details>'
    ...     '<details><summary>Is it a map?</summary><p>A map.</p></details>'
    ...     '<p>Index</p><p id="v:lookup">lookup :: Key -> Map -> Maybe. Finds a key in a map, or says it is not'
    ...     ' there.</p>'
    ...     '</div>')
    >>> [(n.tag, n.get("id")) for n in inner_navigation(page)]
    [('div', 'alphabet'), ('details', None)]
    >>> [inner_navigation(html.fromstring(f"<div>{page}</div>")) for page in (
    ...     f"<h1>Index</h1><p>Pages by letter:</p><ul>{bar}</ul>", f"<ul>{bar}</ul>")]
    [[], []]
    """
    skipped = set(skip)
    found = _bars_at_start(node, skipped)
    closed = [drawer for drawer in node.iter("details") if drawer.get("open") is None]
    drawers = [
        drawer
        for drawer in closed
        if drawer not in skipped
        and not any(
            parent is not node and (tag_of(parent) == "details" or parent in skipped)
            for _, parent in up_to(drawer, node)
        )
        and any((link.get("href") or "").startswith("#") for link in drawer.iter("a"))
    ]
    if drawers:
        said = _said(node, closed)
        ways = [drawer for drawer in drawers if _points_inside(drawer, said.places_of)]
        found.extend(drawer for drawer in ways if _repeated(drawer, said))
    return found


def _bars_at_start(node: _Element, skipped: set[_Element]) -> list[_Element]:
    """The letter bars ``node`` starts with (before any word, ``skipped`` apart), when a
    word follows them."""
    bars: list[_Element] = []
    walker = etree.iterwalk(node, events=("start", "end"))
    for event, element in walker:
        if event == "end":
            if element is not node and element.tail and WORD_RE.search(element.tail):
                return bars
            continue
        if element is not node and (element in skipped or tag_of(element) == "details"):
            if tag_of(element) == "details" and element not in skipped:
                return bars  # (a drawer's summary is a word said)
            walker.skip_subtree()
        elif element is not node and tag_of(element) in BLOCKS and letter_bar(element):
            bars.append(element)
            walker.skip_subtree()
        elif element.text and WORD_RE.search(element.text):
            return bars
    return []  # (nothing after them: the bars are what the page offers)


def letter_bar(block: _Element) -> bool:
    """Whether ``block`` is only links named by one character each (``BAR_LINKS`` or
    more; a few such as "All" among them) with separators between them, not a list of
    numbered pages past nine.

    >>> from lxml import html
    >>> letter_bar(html.fromstring("<p>" + " | ".join(f'<a href="#{c}">{c}</a>' for c in "abcdefghijk") + "</p>"))
    True
    >>> letter_bar(html.fromstring("<ul>" + "".join(f'<li><a href="{n}.html">{n}</a></li>' for n in range(1, 12))
    ...     + "</ul>")), letter_bar(html.fromstring("<ul><li><a href='a.html'>Alpha</a></li></ul>"))
    (False, False)
    """
    links = list(block.iter("a"))
    if len(links) < BAR_LINKS:
        return False
    labels = [text_of(link).strip() for link in links]
    if sum(1 for label in labels if len(label) == 1) < BAR_SHARE * len(labels):
        return False
    between = text_of(block)
    for label in labels:
        between = between.replace(label, "", 1)
    return SEPARATORS_RE.fullmatch(between) is not None


class _Said:
    """The words the container says outside its closed drawers, in order, where each is
    said, and the ids of its places (``places_of``)."""

    def __init__(self, words: list[str], places_of: set[str]) -> None:
        self.words = words
        self.places_of = places_of
        self.places: dict[str, list[int]] = {}
        for place, word in enumerate(words):
            self.places.setdefault(word, []).append(place)

    def says(self, line: list[str]) -> bool:
        """Whether ``line``'s words are said in its order, from one place of its first
        word, within ``WINDOW`` times its length (a declaration's arguments may have
        their notes between them: "writeEPUB2 :: ... -> Pandoc  Document to convert")."""
        reach = WINDOW * len(line) + 4
        for start in self.places.get(line[0], ()):
            end = min(len(self.words), start + reach)
            at = start + 1
            for word in line[1:]:
                while at < end and self.words[at] != word:
                    at += 1
                if at >= end:
                    break
                at += 1
            else:
                return True
        return False


#: how far a repeated line's words may spread, in times its length
WINDOW = 3
#: the share of a repeating drawer's lines that may be said out of their order
UNSAID_LINES = 0.1
#: the elements whose own words are a line of a drawer
LINE_TAGS = frozenset({"li", "p", "dt", "dd", "td", "th", "pre", "div", "tr"})


def _said(node: _Element, drawers: list[_Element]) -> _Said:
    """What ``node`` says outside its closed ``drawers``, and the ids of its places there."""
    leave = set(drawers)
    words: list[str] = []
    places: set[str] = set()
    walker = etree.iterwalk(node, events=("start", "end"))
    for event, element in walker:
        if event == "start":
            if element in leave:
                walker.skip_subtree()
                continue
            for value in (element.get("id"), element.get("name")):
                if value:
                    places.add(value)
            if element.text:
                words.extend(_words(element.text))
        elif element is not node and element.tail:
            words.extend(_words(element.tail))
    return _Said(words, places)


def _repeated(drawer: _Element, said: _Said) -> bool:
    """Whether the closed ``drawer`` (its summary apart) repeats ``said`` (what the
    container says outside its closed drawers: two drawers never vouch for each other):
    every word of it is said, and all but ``UNSAID_LINES`` of its lines are said with
    their words in their order (an instance's ``try :: ParsecParser a`` is not its
    class's ``try :: m a``; a synopsis's ``newtype Compose f g a = Compose`` names the
    constructor the interface lists under its notes)."""
    lines = [line for line in _lines(drawer) if line]
    if not lines or any(word not in said.places for line in lines for word in line):
        return False
    return sum(1 for line in lines if not said.says(line)) <= UNSAID_LINES * len(lines)


def _lines(drawer: _Element) -> list[list[str]]:
    """The words of each line of ``drawer``: the text of an element of ``LINE_TAGS`` that
    is not in a line below it."""
    lines: list[list[str]] = []
    for element in drawer.iter(*LINE_TAGS):
        own: list[str] = _words(element.text or "")
        for child in element:
            if tag_of(child) not in LINE_TAGS and tag_of(child) not in ("ul", "ol", "table", "dl", "details"):
                own.extend(_words_of(child))
            own.extend(_words(child.tail or ""))
        lines.append(own)
    return lines


def _points_inside(drawer: _Element, places: set[str]) -> bool:
    """Whether a link in ``drawer`` leads to one of ``places`` (the ids of the container
    outside its closed drawers): the drawer is a way to the text it repeats (a synopsis),
    not a short answer ("Yes.") whose words happen to be on the page."""
    return any((href := link.get("href") or "").startswith("#") and href[1:] in places for link in drawer.iter("a"))


def _words_of(node: _Element) -> list[str]:
    """The words of ``node``'s text, blocks apart (``text_of`` would join "Synopsis" and
    the line after it)."""
    return _words(" ".join(node.itertext()))


def _words(text: str) -> list[str]:
    return WORD_RE.findall(text.lower())
