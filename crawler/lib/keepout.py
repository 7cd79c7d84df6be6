"""Which blocks the rules propose to leave out of the page's content container stay
out: one check for every rule (names, rails beside the core, teasers, furniture by its
words, the sibling rule, the learned step). A block holding a section of the page's
outline or prose stays (:mod:`crawler.lib.sections`); on a page of documentation, and
more on a documentation tool's, its title, its table of contents, its list of children
and what a name or a shape proposes stay too (see :func:`kept_out`).

Pure functions over an lxml tree; the tree is never modified.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from crawler.lib.chrome import WIDGET_PROSE, teaser_shaped
from crawler.lib.nodes import HEADING_LEVELS, HEADING_TAGS, Visibility, is_ancestor, tag_of, text_of, up_to
from crawler.lib.pagewalk import CONTROLS, EMPTY, SMALL_CHARS, VISIBLE, Texts, link_density, name_hint, prose_chars
from crawler.lib.sections import held, slug_words

if TYPE_CHECKING:
    from lxml.etree import _Element


def kept_out(
    node: _Element,
    blocks: set[_Element],
    texts: Texts,
    visibility: Visibility,
    furniture: Sequence[_Element],
    documentation: bool,
    targets: frozenset[str],
    *,
    generated: bool = False,
    beside: set[_Element] | frozenset[_Element] = frozenset(),
    rails: set[_Element] | frozenset[_Element] = frozenset(),
) -> list[_Element]:
    """The ``blocks`` proposed to leave the content container ``node`` that stay out.
    Whatever a rule says, a section of the page's outline stays, and on documentation
    (more on a tool's page) what the comments below name; ``beside``: what left only
    for not continuing the scored root; ``rails``: what left only for its shape beside
    the core. Lists holding more of the container than the little that stays are its
    body (a category page's cards): they stay."""
    if not blocks:
        return []
    worded = set(furniture)
    # (``generated``: the page of a documentation tool, where a name never takes its text.
    # Other pages with code blocks, blogs among them, keep the rules of names: dev F1 0.926
    # against 0.923)

    def stays_out(block: _Element) -> bool:
        text = texts.get(block, EMPTY)
        form = text[CONTROLS] and prose_chars(text) < WIDGET_PROSE  # (a widget, whatever heading it has)
        found = held(block, visibility, targets)
        if found.outline and not form:
            return False  # (a heading the page anchors is no button, whatever its words: Haddock's)
        if documentation and (tag_of(block) == "h1" or block.find(".//h1") is not None):
            return False  # (the page's title: rustdoc's, each word a link; Haddock's "Documentation")
        if generated and any(text_of(heading).strip() for heading in block.iter(*HEADING_TAGS)):
            return False  # (a section a documentation tool wrote, whatever its heading says: "Related Links")
        if generated and self_anchored(block):
            return False  # (an item a documentation tool wrote, whatever its words: Haddock's "copyright")
        if documentation and self_named(block):
            return False  # (a section's title whose id is its slug: Breathe's rubric "Related")
        if block in worded or teaser_shaped(block, texts):
            return True
        kind = chrome_kind(block)
        if kind:
            if documentation and found.text and not form:
                return False  # (prose never leaves for a name: Sphinx's aside.sidebar in the text)
            return not (generated and kind != "layout" and not form)
        # (on a documentation tool's page a block beside the core is its own, unless a bar
        # of letters: Javadoc's inheritance tree and class description beside the summaries)
        return (
            not found.text
            and not (documentation and block in beside)
            and not (generated and block in rails and _names_links(list(block.iter("a"))))
        )

    # (on documentation a list of the page's children stays: a package's modules; on any
    # page, a list nested in one that stays: a toctree's four sections under a chapter; on a
    # tool's page its table of contents: Haddock's, not Node's in a container chosen wide)
    out = [
        block
        for block in blocks
        if stays_out(block)
        and not (documentation and children_list(block))
        and not _in_children_list(block, node)
        and not (generated and contents_of(block, node))
    ]
    lists = [block for block in out if not named_like_chrome(block) and _link_list(block, texts)]
    if lists:
        stays = texts.get(node, EMPTY)[VISIBLE] - sum(texts.get(block, EMPTY)[VISIBLE] for block in out)
        if stays < SMALL_CHARS and sum(texts.get(block, EMPTY)[VISIBLE] for block in lists) > stays:
            out = [block for block in out if block not in lists]
    return out


#: a link into the page's own folder: a relative path (to a place on that page too), not up, not to a
#: place on this one
CHILD_HREF_RE = re.compile(r"(?![a-z][a-z0-9+.-]*:|/|\.\./|#)[^?#]+(?:#.*)?", re.IGNORECASE)
#: a list of this many links into the page's folder, and no more than a few elsewhere
CHILDREN = 5
#: the mean length of the names of the pages such a list links to
NAME_CHARS = 4


def children_list(block: _Element) -> bool:
    """Whether ``block`` is a list of links to the pages below the page's own: nearly all
    of them relative paths into its folder (a package's modules, a chapter's sections),
    not up to its parents nor to other sites (breadcrumbs, a rail of other stories).

    >>> from lxml import html
    >>> modules = "".join(f'<li><a href="Data-T{i}.html">Data.T{i}</a></li>' for i in range(6))
    >>> rail = "".join(f'<li><a href="/2024/05/story-{i}.html">Story {i}</a></li>' for i in range(6))
    >>> letters = "".join(f'<li><a href="doc-index-{c}.html">{c}</a></li>' for c in "ABCDEFG")
    >>> [children_list(html.fromstring(f"<ul>{items}</ul>")) for items in (modules, rail, letters)]
    [True, False, False]
    """
    links = list(block.iter("a"))
    children = [link for link in links if CHILD_HREF_RE.fullmatch(link.get("href") or "")]
    if len(children) < CHILDREN or len(children) < 0.9 * len(links):
        return False
    return _names_links(children)  # (a letter bar, "A B C", leads to the pages beside it)


def _in_children_list(block: _Element, node: _Element) -> bool:
    """Whether ``block`` is a list, or an item of one, nested in a list of the page's
    children inside ``node`` (four sections under a chapter of a table of contents that
    stays stay with it; a link named like chrome in it is not asked here: Node's
    ``a.nav-fs`` in the column of the container chosen wide)."""
    if tag_of(block) not in ("ul", "ol", "li"):
        return False
    return any(
        parent is not node and tag_of(parent) in ("ul", "ol") and children_list(parent)
        for _, parent in up_to(block, node)
    )


def self_named(block: _Element) -> bool:
    """Whether ``block``'s id ends with the slug of its whole text after a prefix of its
    own: a title as generators name them (Breathe's ``p#breathe-section-title-related``
    "Related"), not a box named by one word (``div#related``).

    >>> from lxml import html
    >>> [self_named(html.fromstring(p)) for p in ('<p id="breathe-section-title-related">Related</p>',
    ...     '<div id="related">Related</div>', '<p id="section-title-x">More stories</p>')]
    [True, False, False]
    """
    ident = block.get("id")
    if not ident:
        return False
    words = slug_words(text_of(block))
    named = slug_words(ident)
    return 0 < len(words) < len(named) and len(words) <= TITLE_WORDS and named[-len(words) :] == words


#: the most words of a title :func:`self_named` reads
TITLE_WORDS = 6


def self_anchored(block: _Element) -> bool:
    """Whether ``block`` holds an element with an id and its own permalink to it (an API
    item as documentation tools write it: Haddock's ``a#v:copyright`` and its ``#``).

    >>> from lxml import html
    >>> self_anchored(html.fromstring('<div><p><a id="v:copyright">copyright</a> :: Html'
    ...     '<a href="#v:copyright">#</a></p><p>Copyright sign.</p></div>'))
    True
    >>> self_anchored(html.fromstring('<div><a id="top"></a><p>(c) 2024</p></div>'))
    False
    """
    hrefs = {href[1:] for link in block.iter("a") if (href := link.get("href") or "").startswith("#")}
    return bool(hrefs) and any(element.get("id") in hrefs for element in block.iter())


def _names_links(links: list[_Element]) -> bool:
    """Whether ``links`` name what they lead to (``NAME_CHARS`` on the mean), not a
    letter bar's "A B C" or a pager's "1 2 3"."""
    return sum(len(text_of(link).strip()) for link in links) >= NAME_CHARS * len(links)


def contents_before(node: _Element, skip: set[_Element]) -> list[_Element]:
    """The table of contents of ``node`` right before it, outside it (Doxygen's
    ``div.toc`` beside its ``div.textblock``), written before it: the container is not
    widened for it (a wider one would hold the layout around).

    >>> from lxml import html
    >>> page = html.fromstring('<div><p>Site</p><ul><li><a href="#a">A</a></li><li><a href="#b">B</a></li></ul>'
    ...     '<div><h1 id="a">A</h1><h1 id="b">B</h1></div></div>')
    >>> [block.tag for block in contents_before(page[2], set())]
    ['ul']
    """
    previous = node.getprevious()
    while previous is not None and not (isinstance(previous.tag, str) and text_of(previous).strip()):
        previous = previous.getprevious()
    if previous is None or previous in skip or not contents_of(previous, node):
        return []
    return [previous]


def contents_of(block: _Element, node: _Element) -> bool:
    """Whether ``block`` is the table of contents of ``node``: two links or more, each to
    a place inside ``node``.

    >>> from lxml import html
    >>> page = html.fromstring('<div><ul><li><a href="#a">A</a></li><li><a href="#b">B</a></li></ul>'
    ...     '<div><h1 id="a">A</h1><h1><a id="b"></a>B</h1></div></div>')
    >>> contents_of(page[0], page[1]), contents_of(page[1], page[0])
    (True, False)
    """
    hrefs = [link.get("href") or "" for link in block.iter("a")]
    if len(hrefs) < 2 or not all(href.startswith("#") for href in hrefs):
        return False
    places = {value for element in node.iter() for value in (element.get("id"), element.get("name")) if value}
    return all(href[1:] in places for href in hrefs)


def _link_list(block: _Element, texts: Texts) -> bool:
    """Whether ``block`` is a list of links or of teaser cards."""
    return link_density(texts.get(block, EMPTY)) >= 0.5 or teaser_shaped(block, texts)


def chrome_kind(block: _Element) -> str:
    """The kind of chrome ``block``'s class or id names (a hint, never evidence), or ``""``."""
    return name_hint(block.tag, block.get("class") or "", block.get("id") or "")


def named_like_chrome(block: _Element) -> bool:
    """Whether ``block``'s class or id names a kind of chrome (a hint, never evidence)."""
    return bool(chrome_kind(block))


#: where a label is a field, not a heading
FIELD_TAGS = frozenset({"td", "th", "li", "dd", "dt", "table"})


def dangling(related: Sequence[_Element], node: _Element, skip: set[_Element], texts: Texts) -> list[_Element]:
    """The headings in ``related`` (they name links to other pages: "Mehr zum Thema:",
    "Popular videos") inside ``node`` whose block left nothing to write: no text of the
    selection follows them before the next heading or the selection's end (the links
    they named were left out, or never were text).

    >>> from lxml import html
    >>> page = html.fromstring("<div><p>Text</p><h3>Mehr zum Thema</h3><ul id='l'><li>a</li></ul>"
    ...     "<h3>Related posts</h3><p>Our own text</p></div>")
    >>> from crawler.lib.pagewalk import measure_body
    >>> from crawler.lib.nodes import Visibility
    >>> measured = measure_body(page, Visibility())
    >>> [h.text for h in dangling(measured.related, page, {page.get_element_by_id("l")}, measured.texts)]
    ['Mehr zum Thema']
    """
    found = []
    for heading in related:
        if heading in skip or not is_ancestor(node, heading):
            continue
        ancestors = list(heading.iterancestors())
        if any(a in skip or a.tag in FIELD_TAGS for a in ancestors):
            continue  # (left out already, or a field of a table or a list: Doxygen's "related" badge)
        if not _text_follows(heading, node, skip, texts):
            found.append(heading)
    return found


def _text_follows(heading: _Element, node: _Element, skip: set[_Element], texts: Texts) -> bool:
    """Whether some text of the selection ``node`` (without ``skip``) follows ``heading``
    before the next heading of its level or above (a heading below it is text of its block)."""
    level = HEADING_LEVELS.get(heading.tag, 7) if isinstance(heading.tag, str) else 7
    current: _Element | None = heading
    while current is not None and current is not node:
        if current.tail and current.tail.strip():
            return True
        for sibling in current.itersiblings():
            if isinstance(sibling.tag, str) and sibling not in skip:
                measure = texts.get(sibling)
                if measure is not None and measure[VISIBLE]:
                    if sibling.tag in HEADING_TAGS:
                        return HEADING_LEVELS[sibling.tag] > level
                    skipped = sum(texts.get(n, EMPTY)[VISIBLE] for n in skip if is_ancestor(sibling, n))
                    if measure[VISIBLE] > skipped:
                        return True
            if sibling.tail and sibling.tail.strip():
                return True
        current = current.getparent()
    return False
