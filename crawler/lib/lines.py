"""Which short lines of a page are furniture by their place and markup, whatever their
words: a link standing alone as a button, a photo credit in a caption or named by its
image, furniture the parser nested inside a text-level element, a line standing alone;
and whether an element is one of a run of alike siblings (an index, a changelog). Used
by the walk that measures a page (:mod:`crawler.lib.pagewalk`). Pure functions over an
lxml tree; the tree is never modified.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from crawler.lib.furniture import MAX_CALL_CHARS, MAX_FURNITURE_CHARS, is_call, is_furniture
from crawler.lib.nodes import text_of

if TYPE_CHECKING:
    from lxml.etree import _Element


#: what a block of furniture never holds
DOCUMENT_PARTS = ("pre", "code", "table", "ul", "ol", "dl", "li")


def in_a_run(node: _Element) -> bool:
    """Whether ``node`` is one of a run of alike siblings (the same tag and first class
    beside it, or one further for a classed element: the column of a two-column grid,
    which alternates with the other): an entry of an index, a changelog or a table, not
    a line on its own.

    >>> from lxml import html
    >>> log = html.fromstring("<div><p><a href='/1'>1.0</a> <time>May</time></p><p><a href='/2'>2.0</a></p></div>")
    >>> grid = html.fromstring('<div><div class="col-first">Tool</div><div class="col-last"> </div>'
    ...     '<div class="col-first">Plugin</div><div class="col-last">A plug-in.</div></div>')
    >>> in_a_run(log[0]), in_a_run(grid[0]), in_a_run(html.fromstring("<div><p>a</p><div>b</div></div>")[0])
    (True, True, False)
    """
    key = (node.tag, (node.get("class") or "").split(" ", 1)[0])
    reach = 2 if key[1] else 1  # (a paragraph two away, past a heading, is the article's next)
    for step in ("getprevious", "getnext"):
        sibling = getattr(node, step)()
        for _ in range(reach):
            if sibling is None:
                break
            if (sibling.tag, (sibling.get("class") or "").split(" ", 1)[0]) == key:
                return True
            sibling = getattr(sibling, step)()
    return False


def _grid_cell(node: _Element) -> bool:
    """Whether ``node`` is a cell of a grid of ``div``: a sibling of its tag is the head
    of its column (Javadoc's ``div.col-first`` under ``div.table-header.col-first``)."""
    column = (node.get("class") or "").split(" ", 1)[0]
    if not column:
        return False
    parent = node.getparent()
    return parent is not None and any(
        sibling is not node and sibling.tag == node.tag and column in (sibling.get("class") or "").split()[1:]
        for sibling in parent
    )


#: the lines that may be a date stamp on their own (never a heading: a changelog's)
DATE_LINES = frozenset({"p", "span", "small", "time", "em", "i", "b", "strong"})


def alone(node: _Element) -> bool:
    """Whether ``node`` stands alone: a paragraph, or an inline element with no text
    of a sentence right before or after it.

    >>> from lxml import html
    >>> item = html.fromstring("<li>from <strong>1 May 2023</strong> on</li>")
    >>> alone(item[0]), alone(html.fromstring("<div><time>1 May 2023</time></div>")[0])
    (False, True)
    """
    parent = node.getparent()
    if parent is not None and parent.tag in ("dd", "dt", "td", "th", "li"):
        return False  # a field of a list or a table ("Date: October 7, 2026")
    if node.tag == "p":
        return True
    tail = node.tail
    if tail and tail.strip():
        return False
    previous = node.getprevious()
    before = (parent.text if parent is not None else None) if previous is None else previous.tail
    return not (before and before.strip())


def attrib_class(node: _Element) -> str:
    return node.get("class") or ""


#: the attributes in which an image names who made it
CREDIT_ATTRIBUTES = ("data-credit", "data-copyright", "data-photographer")


def credited(line: _Element, text: str) -> bool:
    """Whether the short line ``line`` (whose text is ``text``) of a ``<figure>`` is the
    credit its image names (``<img data-credit="Judy Eddy/WENN.com">``).

    >>> from lxml import html
    >>> figure = html.fromstring('<figure><img data-credit="Ann Smith/dpa"><span>Ann Smith/dpa</span></figure>')
    >>> credited(figure[1], "Ann Smith/dpa"), credited(figure[1], "A bridge"), credited(figure[1], " ")
    (True, False, False)
    """
    parent = line.getparent()
    if parent is None or parent.tag != "figure":
        return False
    words = " ".join(text.split())
    return bool(words) and any(
        " ".join((image.get(name) or "").split()) == words for image in parent.iter("img") for name in CREDIT_ATTRIBUTES
    )


#: class words of an image's credit line wherever it stands (not "copyright": a
#: document's copyright notice is its text)
IMAGE_CREDIT_CLASS_WORDS = r"credit|photographer|bildnachweis|img-author|caption[-_]*source"


#: class words of a photo credit (inside a caption, or a short line anywhere)
CREDIT_CLASS_RE = re.compile(rf"copyright|{IMAGE_CREDIT_CLASS_WORDS}", re.IGNORECASE)


#: a line named like an image's credit that opens as one ("© imago images/IPON, Stefan
#: Boness/Ipon via www.imago-images.de") is one up to this long
CREDIT_LINE_CHARS = 160


IMAGE_CREDIT_CLASS_RE = re.compile(IMAGE_CREDIT_CLASS_WORDS, re.IGNORECASE)


def credits(caption: _Element) -> list[_Element]:
    """The photo credits inside the caption ``caption``: an element that says so by
    its words ("Foto: ...", "© ...", "Getty Images"), or by its class when it is short.

    >>> from lxml import html
    >>> caption = html.fromstring("<figcaption>A bridge. <span class='copyright'>Ann Smith</span></figcaption>")
    >>> [node.text for node in credits(caption)]
    ['Ann Smith']
    """
    found = []
    for node in caption.iterdescendants():
        if not isinstance(node.tag, str):
            continue
        text = text_of(node).strip()
        if not text or len(text) > MAX_FURNITURE_CHARS:
            continue
        if is_furniture(text) or CREDIT_CLASS_RE.search(node.get("class") or ""):
            found.append(node)
    return found


#: the blocks a text-level element may hold when its markup is broken (a ``<div>`` in a
#: ``<p>``, the parser nesting a ``<p>`` in a ``<p>`` through a ``<font>``)
NESTED_BLOCKS = ("p", "div", "h2", "h3", "h4", "h5", "h6")


#: the text-level elements the parser is seen to nest blocks in
NESTING_LINES = frozenset({"p", "span", "h2", "h3", "h4", "h5", "h6", "figcaption", "blockquote"})


def nested_furniture(leaf: _Element) -> list[_Element]:
    """The blocks inside the text-level element ``leaf`` (measured whole) that are
    furniture by their words as they would be standing alone: an "Advertisement" box
    inside a lead paragraph, "Foto: ..." under a text nested in another.

    >>> from lxml import html
    >>> lead = html.fromstring("<h2>The lead.<div class='ad'><h3>Advertisement</h3></div></h2>")
    >>> [node.tag for node in nested_furniture(lead)]
    ['div', 'h3']
    """
    found = []
    for node in leaf.iterdescendants(*NESTED_BLOCKS):
        text = text_of(node).strip()
        if (
            text
            and (
                (len(text) <= MAX_FURNITURE_CHARS and is_furniture(text))
                or (MAX_FURNITURE_CHARS < len(text) <= MAX_CALL_CHARS and node.tag == "p" and is_call(text))
            )
            and next(node.iter(*DOCUMENT_PARTS), None) is None
        ):
            found.append(node)
    return found


#: inline elements whose text beside a link makes it a word of a sentence
SENTENCE_TAGS = frozenset({"code", "span", "em", "strong", "b", "i", "tt", "kbd", "var", "samp", "sub", "sup", "abbr"})
#: where a link standing alone is a button ("Learn more", "Edit this page"), not
#: an entry of a list or a table
BUTTON_PARENTS = frozenset({"div", "section", "article", "main", "body", "header", "span"})


def is_button(link: _Element, text: str) -> bool:
    """Whether ``link`` (whose text is ``text``) stands alone, outside a sentence,
    list or table, with at most four words that read as a call to action or a
    prev/next link; a name alone (an API item, ``DirEntryExt2``) is no button.

    >>> from lxml import html
    >>> card = html.fromstring('<div><p>Fast imports.</p><a href="/f">Learn more</a></div>')
    >>> is_button(card[1], "Learn more")
    True
    >>> inline = html.fromstring('<div>See <a href="/f">the guide</a> first.</div>')
    >>> is_button(inline[0], "the guide")
    False
    >>> item = html.fromstring('<div><a class="trait" href="t.html">DirEntryExt2</a></div>')
    >>> is_button(item[0], "DirEntryExt2")
    False
    >>> code = html.fromstring('<div><code>v0.</code><a href="V.html"><code>lanewise</code></a><code>(A)</code></div>')
    >>> is_button(code[1], "lanewise")
    False
    """
    parent = link.getparent()
    if (parent is not None and (in_a_run(parent) or _grid_cell(parent))) or in_a_run(link):
        return False  # an entry of an index of links ("Parser", "Lexer"; a bar's "A B C"), not a button
    if parent is None or parent.tag not in BUTTON_PARENTS:
        return False
    tail = link.tail
    if tail and tail.strip():
        return False
    previous = link.getprevious()
    before = parent.text if previous is None else previous.tail
    if before and before.strip():
        return False
    for sibling in (previous, link.getnext()):
        if sibling is not None and sibling.tag in SENTENCE_TAGS and text_of(sibling).strip():
            return False  # (a word of a sentence in code: Javadoc's `v0.` lanewise `(ADD, v1)`)
    if ITEM_LINK_CLASSES.intersection((link.get("class") or "").split()):
        return False
    return len(text.split()) <= 4 and IDENTIFIER_RE.search(text) is None


#: what names code, not an action: snake_case, camelCase, ``::``, a call, a dotted name
IDENTIFIER_RE = re.compile(r"\w_\w|[a-z][A-Z]|::|\(\)|[a-z]\.[a-z]")


#: the classes rustdoc gives a link to an API item, by its kind
ITEM_LINK_CLASSES = frozenset(
    {
        "struct", "fn", "trait", "enum", "mod", "macro", "type", "constant", "primitive", "union",
        "keyword", "attr", "derive", "traitalias", "static", "externcrate", "foreigntype", "method", "tymethod",
    }
)  # fmt: skip
