"""The invariant of the main-content selection: inside the page's content container, a
block that holds a section of the page's outline or a paragraph of prose stays.

The other rules leave blocks out by names, words and shape, but names are hints written
for news pages (``<section id="related-objects">`` is a chapter of a framework's guide).
So the selection asks :func:`held` of every block a rule would leave out and writes back
those that hold text of the document.

Pure functions over an lxml tree; the tree is never modified.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lxml import etree

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
    #: the ids the page's own links point at (``href="#id"``)
    targets: frozenset[str]
    #: characters outside links of headings; whether a paragraph of prose was found
    headings: int = 0
    prose: bool = False
    #: characters of anchored headings, and sections whose id names their heading
    anchored: int = 0
    #: characters outside links of teaser cards (a linked heading and its excerpt)
    teasers: int = 0


@dataclass(frozen=True)
class Held:
    """What a block holds of the document (:func:`held`)."""

    #: a section of the page's outline
    outline: bool
    #: a paragraph of prose, or a heading with text below it
    text: bool


def _count(block: _Element, visibility: Visibility, count: _Count) -> tuple[int, int]:
    """Adds what a reader sees of ``block``'s subtree to ``count``; returns its visible
    characters and those inside links. One walk, no recursion: pages nest deep."""
    # a frame per open element: [characters, of them in links, holds a linked heading, in a link]
    frames: list[list[Any]] = []
    result = (0, 0)
    walker = etree.iterwalk(block, events=("start", "end"))
    for event, node in walker:
        tag = tag_of(node)
        if event == "start":
            if node is not block and (not tag or tag in NEVER_TEXT_TAGS or visibility.excluded(node)):
                walker.skip_subtree()
                frames.append([0, 0, False, False, False])  # (not seen: counts nothing)
                continue
            linked = tag == "a" or (bool(frames) and frames[-1][3])
            own = len((node.text or "").strip())
            frames.append([own, own if linked else 0, False, linked, True])
            continue
        chars, links, card, _linked, seen = frames.pop()
        if seen and node.get("id") and section_id(node):
            count.anchored += 1  # a section whose id names its heading
        if seen:
            if tag in HEADING_TAGS and chars:
                anchored = _anchored(node, count.targets)
                if (anchored or 2 * links < chars) and not _names_links(node):
                    # (a heading the page anchors is of its outline, whatever it links to:
                    # rustdoc's "impl Send for Vec"; one naming links to other pages is not)
                    count.headings += chars - links
                    count.anchored += chars if anchored else 0
            elif tag in PARAGRAPH_TAGS and chars - links >= PROSE_CHARS:
                count.prose = True
            if card:  # a child is a heading whose text is a link: a teaser's excerpt is no section's text
                count.teasers += chars - links
        if not frames:
            result = (chars, links)
            break
        parent = frames[-1]
        if seen:
            parent[0] += chars
            parent[1] += links
            parent[2] = parent[2] or (tag in HEADING_TAGS and chars > 0 and 2 * links >= chars)
        tail = len((node.tail or "").strip())
        parent[0] += tail
        if parent[3]:
            parent[1] += tail
    return result


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


def outline_heading(node: _Element, targets: frozenset[str]) -> _Element | None:
    """The heading of the page's outline that ``node`` is, or that it wraps alone (a link
    around it: Haddock's ``<a href="#g:1" id="g:1"><h1>Hashing</h1></a>``): one the page
    anchors, not naming links to other pages; else ``None``.

    >>> from lxml import html
    >>> page = html.fromstring('<div><a href="#g:1" id="g:1"><h1>Hashing</h1></a><h2>Plain</h2></div>')
    >>> outline_heading(page[0], link_targets(page)).text, outline_heading(page[1], link_targets(page))
    ('Hashing', None)
    """
    heading = node
    if tag_of(node) == "a" and len(node) == 1 and not (node.text or "").strip():
        heading = node[0]  # (the link is the heading's own anchor)
    if tag_of(heading) not in HEADING_TAGS or not _anchored(heading, targets) or _names_links(heading):
        return None
    return heading


def _names_links(heading: _Element) -> bool:
    """Whether ``heading`` names links to other pages or is furniture by its words: no
    heading of the document's outline."""
    text = " ".join(text_of(heading).split())
    return is_related_heading(text) or is_furniture(text)


def held(block: _Element, visibility: Visibility = VISIBLE, targets: frozenset[str] = frozenset()) -> Held:
    """What ``block`` holds of the document, whatever its class or id say, in one walk:
    a section of the page's outline (an anchored heading, a :func:`section_id` section, the
    body after an anchored heading), or text (a paragraph of ``PROSE_CHARS`` outside links,
    or a heading with ``SECTION_CHARS`` of such text below it).

    >>> from lxml import html
    >>> page = html.fromstring('<div><h2 id="enums"><a href="#enums">Enums</a></h2><div class="items">'
    ...     '<a href="a.html">Option</a></div><div id="s-comments"><h2>Comments</h2></div></div>')
    >>> held(page[1]), held(page[2]).outline, held(page[0][0]).outline
    (Held(outline=True, text=False), True, False)
    >>> held(html.fromstring('<div class="x"><h2>Comments</h2><p>Write {# x #}.</p>'
    ...     '<pre>{# a comment #} and more code here</pre></div>'))
    Held(outline=False, text=True)
    >>> held(html.fromstring('<div class="related"><h3>Related posts</h3><ul>'
    ...     '<li><a href="/a">A story of the day</a></li><li><a href="/b">Another one</a></li></ul></div>'))
    Held(outline=False, text=False)
    >>> held(html.fromstring('<div class="share"><p>Share this</p><script>var x = 1;</script></div>')).text
    False
    """
    count = _Count(targets)
    chars, links = _count(block, visibility, count)
    own = chars - links - count.headings - count.teasers
    text = count.prose or (bool(count.headings) and own >= SECTION_CHARS)
    if section_id(block) or count.anchored:
        return Held(True, text)
    previous = block.getprevious()
    while previous is not None and not (isinstance(previous.tag, str) and text_of(previous).strip()):
        previous = previous.getprevious()
    body = previous is not None and tag_of(previous) in HEADING_TAGS and outline_heading(previous, targets) is not None
    return Held(body, text)


def holds_text(block: _Element, visibility: Visibility = VISIBLE, targets: frozenset[str] = frozenset()) -> bool:
    """Whether ``block`` holds a section of the page's outline or text (:func:`held`)."""
    found = held(block, visibility, targets)
    return found.outline or found.text


#: a section's number before its heading's words ("4.1.5.", "F.42.2.", "2.3.")
NUMBERING_RE = re.compile(r"^\s*(?:[A-Z]|\d+)(?:\.\d+)*\.\s+")


def slug_words(text: str) -> list[str]:
    """The words of ``text`` as a slug has them (``"s-date-functions"``, ``"Date functions"``:
    ``["date", "functions"]`` after the prefix).

    >>> slug_words("breathe-section-title-related"), slug_words("Built-in filter reference")
    (['breathe', 'section', 'title', 'related'], ['built', 'in', 'filter', 'reference'])
    """
    return SLUG_RE.sub(" ", text.lower()).split()


def section_id(block: _Element) -> bool:
    """Whether ``block``'s id names the heading it starts with, whatever prefix, suffix or
    numbering either carries (docutils', Django's, DocBook's and Javadoc's sections), not a
    rail named "related". One common word names it beside a prefix of one or two letters
    (``s-comments``), or when the heading is numbered.

    >>> from lxml import html
    >>> section_id(html.fromstring('<div id="s-date-functions"><span id="x"></span><h2>Date functions</h2></div>'))
    True
    >>> section_id(html.fromstring('<div id="SQL-SYNTAX-COMMENTS"><div><h3>4.1.5. Comments</h3></div></div>'))
    True
    >>> section_id(html.fromstring('<div id="related"><h3>More stories</h3></div>'))
    False
    >>> section_id(html.fromstring('<div id="article-comments"><h3>Comments</h3></div>'))
    False
    >>> section_id(html.fromstring('<section id="comments"><h2>4 comments</h2></section>'))
    False
    """
    ident = block.get("id")
    if not ident:
        return False
    heading = _first_heading(block)
    if heading is None:
        return False
    text = text_of(heading)
    numbered = NUMBERING_RE.match(text) is not None  # (a numbered heading is a document's)
    words = slug_words(NUMBERING_RE.sub("", text))
    named = slug_words(ident)
    if not words or not named:
        return False
    short, long = (words, named) if len(words) <= len(named) else (named, words)
    for start in range(len(long) - len(short) + 1):
        if long[start : start + len(short)] == short:
            rest = long[:start] + long[start + len(short) :]
            return len(short) >= 2 or numbered or all(len(word) <= 2 and word.isalpha() for word in rest)
    return False


def _first_heading(block: _Element) -> _Element | None:
    """The heading ``block`` starts with (inside wrappers that hold nothing else before it)."""
    node = block
    while True:
        for child in node:
            if tag_of(child) in HEADING_TAGS:
                return child
            if text_of(child).strip():
                node = child
                break
        else:
            return None
        if tag_of(node) in HEADING_TAGS:
            return node


def visible_words(block: _Element, visibility: Visibility = VISIBLE) -> int:
    """The words of ``block`` a reader sees (no script, hidden element or landmark).

    >>> from lxml import html
    >>> visible_words(html.fromstring('<div>Two words<script>x = 1</script><p hidden>no</p> <b>and three</b></div>'))
    4
    """
    words = 0
    walker = etree.iterwalk(block, events=("start", "end"))
    for event, node in walker:
        if event == "start":
            tag = tag_of(node)
            if node is not block and (not tag or tag in NEVER_TEXT_TAGS or visibility.excluded(node)):
                walker.skip_subtree()
            else:
                words += len((node.text or "").split())
        elif node is not block:
            words += len((node.tail or "").split())
    return words
