"""Readability's sibling rule: the scored root (the deepest element holding most of a
page's content weight, :mod:`crawler.lib.maincontent`) widened, level by level, to the
siblings that continue it, and the siblings that do not."""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING

from crawler.lib.chrome import PARAGRAPH_CHARS, same_kind
from crawler.lib.keepout import children_list
from crawler.lib.nodes import HEADING_TAGS, tag_of
from crawler.lib.pagewalk import CHROME, CONTENT, EMPTY, VISIBLE, Texts, kept_chars, link_density
from crawler.lib.sections import outline_heading

if TYPE_CHECKING:
    from lxml.etree import _Element

#: a sibling with this share of the root's content weight continues it
SIBLING_SHARE = 0.2


def with_siblings(
    node: _Element,
    body: _Element,
    texts: Texts,
    targets: frozenset[str],
    hinted: dict[_Element, str] | None = None,
    *,
    documentation: bool = False,
) -> tuple[_Element, list[_Element]]:
    """``node``, widened level by level to its parent while some siblings continue it
    (readability's sibling rule; each kind of continuation is commented below), and the
    siblings that did not: inside the chosen container, only :mod:`crawler.lib.keepout`
    may leave them out. A sibling named like chrome (``hinted``) continues it only as a
    part of the same sequence."""
    hinted = hinted or {}
    left_out: list[_Element] = []
    weight = texts.get(node, EMPTY)[CONTENT]
    chosen, chosen_left_out = node, 0  # the widest node some sibling continued
    while node is not body:
        parent = node.getparent()
        if parent is None:
            break
        siblings = list(parent)
        index = siblings.index(node)
        kept = [False] * len(siblings)
        kept[index] = True
        for back in range(index - 1, -1, -1):  # the last heading before the node
            sibling = siblings[back]
            if tag_of(sibling) in HEADING_TAGS or (isinstance(sibling.tag, str) and sibling.find(".//h1") is not None):
                for between in range(back, index):
                    text = texts.get(siblings[between], EMPTY)
                    kept[between] = link_density(text) < 0.5 and text[CHROME] < text[VISIBLE]
                break
        section = False  # after a heading this level keeps, after the node: its section follows
        # the kinds of block that repeat after the node (a sequence of documented members)
        kinds = Counter((s.tag, s.get("class")) for s in siblings[index + 1 :] if tag_of(s) not in HEADING_TAGS)
        # on a page of documentation, the kinds of heading the node holds (a summary
        # table's "Macros" heading)
        headings = {(h.tag, h.get("class")) for h in node.iter(*HEADING_TAGS)} if documentation else set()
        named = False  # the section follows a heading of a kind the node holds
        for position, sibling in enumerate(siblings):
            text = texts.get(sibling, EMPTY)
            # a heading of the page's outline (anchored; wrapped in its own link or not)
            outline = outline_heading(sibling, targets)
            heading = tag_of(sibling) in HEADING_TAGS or outline is not None
            if heading:
                section = False
            if not kept[position] and (
                (outline is not None and position > index)
                or (text[CONTENT] >= SIBLING_SHARE * weight and link_density(text) < 0.5 and sibling not in hinted)
                # the section of a heading kept after the node, when its kind of block
                # repeats (Doxygen's member documentation after its summary tables: a
                # heading and a prototype with its "Definition at line 259" each) or the
                # heading is of a kind the node holds ("Detailed Description" after the
                # tables headed "Macros", "Typedefs")
                or (
                    section
                    and text[CONTENT]
                    and (named or kinds[(sibling.tag, sibling.get("class"))] >= 2)
                    and link_density(text) < 0.5
                    and sibling not in hinted
                    and not is_column(sibling)
                )
                or (kept_chars(text) and same_kind(sibling, node))  # the next <dl> of an index
                or (documentation and children_list(sibling))  # the page's children (a package's modules)
                # on a page of documentation, a section wrapped with a heading of a kind the
                # node holds (DocBook's refnamediv and refsynopsisdiv beside its refsect1)
                or (
                    headings
                    and text[CONTENT]
                    and link_density(text) < 0.5
                    and sibling not in hinted
                    and not is_column(sibling)
                    and not headings.isdisjoint((h.tag, h.get("class")) for h in sibling.iter(*HEADING_TAGS))
                )
                # on a page of documentation, a block of text before the node that is not a
                # column of the layout (a module's description above its interface: Haddock's)
                or (
                    documentation
                    and position < index
                    and text[CONTENT]
                    and link_density(text) < 0.5
                    and sibling not in hinted
                    and not is_column(sibling)
                )
                # the text around a table or a code block: paragraphs of the same flow, and
                # a block of prose below or above it that is not a column of the layout
                or (text[CONTENT] and tag_of(sibling) in FLOW_TAGS and link_density(text) < 0.5)
                or (
                    text[CONTENT] >= PARAGRAPH_CHARS
                    and link_density(text) < 0.5
                    and sibling not in hinted
                    and not is_column(sibling)
                )
            ):
                kept[position] = True
            if heading and kept[position] and position > index:
                section = True
                # a heading of a kind the node holds opens a named section; another
                # heading inside such a section (a member's title) continues it
                shown = outline if outline is not None else sibling
                named = named or (shown.tag, shown.get("class")) in headings
            elif heading:
                named = False
        if sum(kept) == 1 and texts.get(parent, EMPTY)[CONTENT] > texts.get(node, EMPTY)[CONTENT]:
            break  # prose beside the node that does not continue it: the node stands alone
        for sibling, keep in zip(siblings, kept, strict=True):
            if keep:
                weight += texts.get(sibling, EMPTY)[CONTENT] if sibling is not node else 0
            elif isinstance(sibling.tag, str):  # an element (a comment is never written)
                left_out.append(sibling)
        node = parent
        if sum(kept) > 1:
            chosen, chosen_left_out = node, len(left_out)
        # else a wrapper holding nothing more: passed through, kept only if a sibling
        # further up continues the node (a layout table's cell stays the root)
    return chosen, left_out[:chosen_left_out]


#: class tokens of a layout's columns (Bootstrap, Foundation, Bulma, Tailwind grids)
COLUMN_RE = re.compile(
    r"^(?:col|column|columns|span\d+|grid__item|cell|(?:small|medium|large|xlarge)-\d+|w-\d+/\d+|(?:sm|md|lg|xl):w-)",
    re.IGNORECASE,
)


def is_column(node: _Element) -> bool:
    """Whether ``node`` is a column of the page's layout grid (``col-md-4``, ``large-4``).

    >>> from lxml import html
    >>> [is_column(html.fromstring(f'<div class="{c}">')) for c in ("col-md-4", "textblock", "large-4 columns")]
    [True, False, True]
    """
    return any(COLUMN_RE.match(token) for token in (node.get("class") or "").split())


#: the blocks of a text's own flow: a sibling of these beside the scored root continues it
FLOW_TAGS = frozenset({"p", "pre", "ul", "ol", "dl", "table", "blockquote", "h2", "h3", "h4", "h5", "h6"})
