"""The page's title block and the main content: where the title sits before the text
the selection chose (a docs theme's title band, a Hugo theme's title above the content's
``<div>``), and the element that holds both. Pure functions over an lxml tree; the tree
is never modified.
"""

from __future__ import annotations

from itertools import pairwise
from typing import TYPE_CHECKING

from crawler.lib.nodes import NEVER_TEXT_TAGS, Visibility, is_ancestor, tag_of, text_of
from crawler.lib.pagewalk import CHROME, CONTENT, EMPTY, TITLE_XPATH, VISIBLE, Texts, link_density

if TYPE_CHECKING:
    from lxml.etree import _Element


def title_block(node: _Element, body: _Element, texts: Texts) -> _Element | None:
    """The block holding the page's title (its one ``<h1>``, with a lead paragraph
    beside it) when it sits before ``node``, outside it (a docs theme's title band)."""
    if node is body or node.find(".//h1") is not None:
        return None
    headings = [h1 for h1 in body.iter("h1") if texts.get(h1, EMPTY)[CONTENT]]
    if not headings:  # no <h1> at all: an element named title (Doxygen's div.title)
        headings = [title for title in TITLE_XPATH(body) if 0 < texts.get(title, EMPTY)[CONTENT] < 200]
    if len(headings) != 1:
        return None
    block = headings[0]
    limit = max(600, 4 * texts[block][VISIBLE])
    parent = block.getparent()
    while parent is not None and parent is not body and not is_ancestor(parent, node):
        text = texts.get(parent, EMPTY)
        if text[VISIBLE] > limit or text[CHROME] or link_density(text) > 0.3:
            break
        block, parent = parent, parent.getparent()
    return block if precedes(block, node) else None


def precedes(first: _Element, second: _Element) -> bool:
    """Whether ``first`` comes before ``second`` in the document (neither inside the other)."""
    first_path = [first, *first.iterancestors()]
    position = {id(ancestor): at for at, ancestor in enumerate(first_path)}
    branch = second
    for ancestor in second.iterancestors():
        at = position.get(id(ancestor))
        if at is not None:
            return bool(at > 0 and ancestor.index(first_path[at - 1]) < ancestor.index(branch))
        branch = ancestor
    return False


def join_title(node: _Element, title: _Element, skip: set[_Element], after: list[_Element] | None = None) -> _Element:
    """The nearest element holding both ``node`` and ``title`` (which comes before it),
    with what it holds before the title added to ``skip``, and what it holds after
    ``node`` too, or to ``after`` when given (the caller judges it); what lies between a
    title and its text (an intro paragraph above a table) is kept; returns that element.

    >>> from lxml import html
    >>> page = html.fromstring("<div><p>Top</p><div><h2 class='title'>T</h2></div><p>Intro</p>"
    ...     "<div id='t'><table></table></div><p>After</p></div>")
    >>> skip = set()
    >>> join_title(page.get_element_by_id("t"), page.find(".//h2"), skip) is page
    True
    >>> sorted(node.text for node in skip)
    ['After', 'Top']
    >>> skip = set()
    >>> after = []
    >>> _ = join_title(page.get_element_by_id("t"), page.find(".//h2"), skip, after)
    >>> sorted(node.text for node in skip), [node.text for node in after]
    (['Top'], ['After'])
    """
    title_path = [title, *title.iterancestors()]
    on_title_path = {id(a) for a in title_path}
    node_path = [node]
    for ancestor in node.iterancestors():
        if id(ancestor) in on_title_path:
            common = ancestor
            break
        node_path.append(ancestor)
    else:
        return node
    for below, ancestor in pairwise(title_path[: title_path.index(common) + 1]):  # before the title
        for child in ancestor:
            if child is below:
                break
            if isinstance(child.tag, str):
                skip.add(child)
    for below, ancestor in pairwise([*node_path, common]):  # after node, on its way up
        passed = False
        for child in ancestor:
            if passed and isinstance(child.tag, str):
                if after is None:
                    skip.add(child)
                else:
                    after.append(child)
            passed = passed or child is below
    return common


def title_outside(content: _Element, skip: set[_Element], visibility: Visibility) -> list[_Element]:
    """The page's title block when it stands above the main content ``content``
    rather than in it (Hugo themes put the title and its lead paragraph above the
    content's ``<div>``): the nearest visible ``<h1>`` before ``content``, outside page
    chrome, and the paragraphs right after it; nothing when ``content`` holds an ``<h1>``.

    >>> from lxml import html
    >>> page = html.fromstring("<body><header><h1>Site</h1></header><div class='c'><h1>Title</h1>"
    ...     "<p>Lead.</p><div id='content'><p>Text</p></div></div></body>")
    >>> [node.text for node in title_outside(page.get_element_by_id("content"), set(), Visibility())]
    ['Title', 'Lead.']
    >>> title_outside(page.find(".//div"), set(), Visibility())  # holds its own <h1>
    []
    """
    if tag_of(content) == "h1" or content.find(".//h1") is not None:
        return []

    def left_out(node: _Element) -> bool:
        tag = tag_of(node)
        return not tag or tag in NEVER_TEXT_TAGS or node in skip or visibility.excluded(node)

    for h1 in reversed(content.xpath("preceding::h1")):
        node: _Element | None = h1
        while node is not None and not left_out(node):
            node = node.getparent()
        if node is None and text_of(h1).strip():
            block = [h1]
            for sibling in h1.itersiblings():
                if tag_of(sibling) != "p" or left_out(sibling):
                    break
                block.append(sibling)
            return block
    return []
