"""Ways around the page inside its content container, known by their shape, not their
names: a **letter bar** before the page's title (links each named by one character:
Haddock's "A B C ... Z" above each page of its index) and a **closed drawer that
repeats the page** (a ``<details>`` a reader has not opened, linking to places in the
container, whose every word the container says outside its drawers: Haddock's synopsis
above the interface it summarises). Both leave the extractor's input: the first names
no content, and the second's words stay in the text it repeats, so their changes are
still hashed. A letter bar after the title is what the page offers (Sphinx's
``genindex.html``): it stays.

Pure functions over an lxml tree; the tree is never modified.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING

from lxml import etree

from crawler.lib.nodes import tag_of, text_of

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
    """The letter bars before the page's ``<h1>`` and the repeating closed drawers inside
    ``node``, outside ``skip``. A bar after the title is what the page offers (Sphinx's
    ``genindex.html``, a page of letters): it stays.

    >>> from lxml import html
    >>> bar = "".join(f'<li><a href="doc-index-{c}.html">{c}</a></li>' for c in "ABCDEFGHIJKL")
    >>> page = html.fromstring(f'<div><div id="alphabet"><ul>{bar}</ul></div>'
    ...     '<details><summary>Synopsis</summary><ul><li><a href="#v:lookup">lookup</a> :: Key -> Map -> Maybe'
    ...     '</li></ul></details><details><summary>Answer</summary><p>Only here.</p></details>'
    ...     '<details><summary>Is it a map?</summary><p>A map.</p></details>'
    ...     '<h1>Index</h1><p id="v:lookup">lookup :: Key -> Map -> Maybe. Finds a key in a map, or says it is not'
    ...     ' there.</p>'
    ...     '</div>')
    >>> [(n.tag, n.get("id")) for n in inner_navigation(page)]
    [('div', 'alphabet'), ('details', None)]
    >>> inner_navigation(html.fromstring(f"<div><h1>Index</h1><p>Pages by letter:</p><ul>{bar}</ul></div>"))
    []
    """
    skipped = set(skip)
    found: list[_Element] = []
    drawers: list[_Element] = []
    bars: list[_Element] = []
    walker = etree.iterwalk(node, events=("start",))
    for _event, element in walker:
        if element is node:
            continue
        tag = tag_of(element)
        if element in skipped:
            walker.skip_subtree()
        elif tag == "h1":
            found.extend(bars)  # (before the title: a way around the pages beside it)
            bars = []
        elif tag == "details" and element.get("open") is None:
            drawers.append(element)
            walker.skip_subtree()
        elif tag in BLOCKS and letter_bar(element):
            bars.append(element)
            walker.skip_subtree()
    if drawers:
        said = Counter(_words_of(node))  # (what the container says outside its closed drawers)
        for drawer in drawers:
            said -= Counter(_words_of(drawer))
        found.extend(drawer for drawer in drawers if _repeated(drawer, said) and _points_inside(drawer, node))
    return found


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


def _repeated(drawer: _Element, said: Counter[str]) -> bool:
    """Whether every word inside the closed ``drawer`` (its summary apart) is in ``said``
    (what the container says outside its closed drawers: two drawers never vouch for
    each other)."""
    summary = drawer.find("summary")
    inside = Counter(_words_of(drawer))
    if summary is not None:
        inside -= Counter(_words_of(summary))
    if not inside:
        return False
    return all(word in said for word in inside)


def _points_inside(drawer: _Element, node: _Element) -> bool:
    """Whether a link in ``drawer`` leads to a place in ``node`` outside it: the drawer
    is a way to the text it repeats (a synopsis), not a short answer ("Yes.") whose
    words happen to be on the page."""
    hrefs = {href[1:] for link in drawer.iter("a") if (href := link.get("href") or "").startswith("#") and href[1:]}
    if not hrefs:
        return False
    inside = set(drawer.iter())
    return any(
        value in hrefs
        for element in node.iter()
        if element not in inside
        for value in (element.get("id"), element.get("name"))
        if value
    )


def _words_of(node: _Element) -> list[str]:
    """The words of ``node``'s text, blocks apart (``text_of`` would join "Synopsis" and
    the line after it)."""
    return WORD_RE.findall(" ".join(node.itertext()).lower())
