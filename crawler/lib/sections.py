"""The invariant of the main-content selection: inside the page's content container, a
block that holds a section of the page's outline or a paragraph of prose stays.

The rules of :mod:`crawler.lib.chrome`, :mod:`crawler.lib.articleend` and
:mod:`crawler.lib.blockfilter` leave blocks out by their names, their words and their
shape. Names are hints written for news pages: ``id="s-built-in-filter-reference"``,
``<section id="related-objects">`` and ``div.comments`` are chapters of a framework's
guide. So the selection asks :func:`holds_text` of every block a rule would leave out of
its container and writes back the ones that hold text of the document. What leaves the
container is hidden, a landmark (an element or a layout name that says so: ``nav``,
``sidebar``, ``footer``), shaped like teasers, without a heading or prose, or, at the
close of the crawl, repeated across the domain (:mod:`crawler.lib.boilerplate`).

Pure functions over an lxml tree; the tree is never modified.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from crawler.lib.furniture import is_furniture, is_related_heading
from crawler.lib.nodes import HEADING_TAGS, NEVER_TEXT_TAGS, VISIBLE, Visibility, tag_of, text_of

if TYPE_CHECKING:
    from lxml.etree import _Element

#: a paragraph of this many characters outside links is prose, not a label
PROSE_CHARS = 80
#: a heading with text of its own below it: this many characters outside links
SECTION_CHARS = 40
#: the elements that are paragraphs of prose
PARAGRAPH_TAGS = frozenset({"p", "dd", "li", "blockquote"})
SLUG_RE = re.compile(r"[^a-z0-9]+")


@dataclass
class _Count:
    #: visible characters, those inside links, of headings of the outline, of prose paragraphs
    chars: int = 0
    links: int = 0
    headings: int = 0
    prose: bool = False
    #: the ids the page's own links point at (``href="#id"``); of headings anchored so
    targets: frozenset[str] | None = None
    anchored: int = 0
    #: characters outside links of teaser cards (a linked heading and its excerpt)
    teasers: int = 0


def _count(node: _Element, visibility: Visibility, count: _Count, in_link: bool = False) -> tuple[int, int]:
    """Adds what a reader sees of ``node``'s subtree to ``count``; returns its visible
    characters and those inside links."""
    chars = links = 0
    card = False  # a child is a heading whose text is a link: a teaser's excerpt is no section's text
    own = len((node.text or "").strip())
    chars += own
    linked = in_link or node.tag == "a"
    if linked:
        links += own
    for child in node:
        tag = tag_of(child)
        if tag and tag not in NEVER_TEXT_TAGS and not visibility.excluded(child):
            inner, inner_links = _count(child, visibility, count, linked)
            chars += inner
            links += inner_links
            card = card or (tag in HEADING_TAGS and inner > 0 and 2 * inner_links >= inner)
        tail = len((child.tail or "").strip())
        chars += tail
        if linked:
            links += tail
    tag = node.tag
    if tag in HEADING_TAGS and chars and 2 * links < chars:
        text = " ".join(text_of(node).split())
        if not (is_related_heading(text) or is_furniture(text)):
            count.headings += chars - links  # (a heading naming links to other pages is no section's)
            if count.targets is not None and _anchored(node, count.targets):
                count.anchored += chars - links
    elif tag in PARAGRAPH_TAGS and chars - links >= PROSE_CHARS:
        count.prose = True
    if card:
        count.teasers += chars - links
    return chars, links


def link_targets(root: _Element) -> frozenset[str]:
    """The ids the links of the page holding ``root`` point at inside it (``href="#id"``).

    >>> from lxml import html
    >>> sorted(link_targets(html.fromstring('<p><a href="#a">A</a><a href="#">top</a><a href="/b#c">B</a></p>')))
    ['a']
    """
    page = root.getroottree().getroot()
    return frozenset(href[1:] for href in page.xpath("//a/@href") if len(href) > 1 and href.startswith("#"))


def _anchored(heading: _Element, targets: frozenset[str]) -> bool:
    """Whether the page's own links point at ``heading`` (its id, an anchor inside it,
    or the id of the section it opens), or it holds its own permalink: a heading of a
    document's outline, as generators write them."""
    for link in heading.iter("a"):
        href = link.get("href") or ""
        if len(href) > 1 and href.startswith("#"):
            return True  # (a permalink: Sphinx's a.headerlink, Docusaurus' a.hash-link)
        if (link.get("id") or link.get("name")) in targets:
            return True
    if heading.get("id") in targets:
        return True
    parent = heading.getparent()
    return parent is not None and parent.get("id") in targets


def holds_text(
    block: _Element,
    visibility: Visibility = VISIBLE,
    *,
    prose: bool = True,
    targets: frozenset[str] | None = None,
) -> bool:
    """Whether ``block`` holds text of the document, whatever its class or id say: a
    paragraph of prose (``PROSE_CHARS`` outside links), or a heading of the page's
    outline (its text neither a link nor a name for links to other pages) with
    ``SECTION_CHARS`` of text outside links below it; or its id names its heading (a
    document's section: ``s-built-in-filter-reference``, ``section-3-related-objects``).

    >>> from lxml import html
    >>> holds_text(html.fromstring('<div id="s-comments"><h2>Comments</h2><p>Write {# x #}.</p>'
    ...     '<pre>{# a comment #} and more code here</pre></div>'))
    True
    >>> holds_text(html.fromstring('<div class="related"><h3>Related posts</h3><ul>'
    ...     '<li><a href="/a">A story of the day</a></li><li><a href="/b">Another one</a></li></ul></div>'))
    False
    >>> holds_text(html.fromstring('<div class="share"><p>Share this</p><script>var x = 1;</script></div>'))
    False
    """
    if section_id(block):
        return True
    count = _Count(targets=targets)
    chars, links = _count(block, visibility, count)
    own = chars - links - count.headings - count.teasers
    if count.anchored and own >= SECTION_CHARS:
        return True  # a section of the document's outline, whatever the block's name
    if not prose:
        return False
    return count.prose or (bool(count.headings) and own >= SECTION_CHARS)


def section_id(block: _Element) -> bool:
    """Whether ``block``'s id holds the slug of the heading it starts with, whatever
    comes before or after it: a document's section (docutils' ``section#related-objects``,
    Django's ``div#s-built-in-filter-reference``), not a rail named "related".

    >>> from lxml import html
    >>> section_id(html.fromstring('<div id="s-date-functions"><span id="x"></span><h2>Date functions</h2></div>'))
    True
    >>> section_id(html.fromstring('<div id="related"><h3>More stories</h3></div>'))
    False
    """
    ident = block.get("id")
    if not ident:
        return False
    for child in block:
        if tag_of(child) in HEADING_TAGS:
            slug = SLUG_RE.sub("-", text_of(child).lower()).strip("-")
            return len(slug) >= 3 and slug in SLUG_RE.sub("-", ident.lower())
        if text_of(child).strip():
            return False
    return False


def visible_words(block: _Element, visibility: Visibility = VISIBLE) -> int:
    """The words of ``block`` a reader sees (no script, hidden element or landmark).

    >>> from lxml import html
    >>> visible_words(html.fromstring('<div>Two words<script>x = 1</script><p hidden>no</p> <b>and three</b></div>'))
    4
    """
    words = len((block.text or "").split())
    for child in block:
        tag = tag_of(child)
        if tag and tag not in NEVER_TEXT_TAGS and not visibility.excluded(child):
            words += visible_words(child, visibility)
        words += len((child.tail or "").split())
    return words
