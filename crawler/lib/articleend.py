"""Where an article ends, and what follows it that is not the article.

A step of the main-content selection (:mod:`crawler.lib.maincontent`) on general pages:
the next stories of an endless-scroll page, related rails, share bars and comment forms
follow the article's text inside the element chosen for it. The article's end is known
by the page's own evidence: its **last paragraph of prose** (``ARTICLE_CHARS`` outside
links, few links; the selection holding at least two such). After it, a block is left
out only when its shape says it is not the article's text (:func:`after_the_end`): a
stack of teaser cards or of thumbnails with their headlines
(:func:`crawler.lib.chrome.teaser_shaped`), a form with little prose (a comment or
subscribe box), or a rail: two or more links to other pages by headlines (three words or
more; not an anchor of the page, a URL written out, a picture, a name such as a
function's or "Facebook") that hold half its text, not written as a list in a line ("see
A, B and C"). What is not shaped so is looked into, block by block. Never judged: a list
(``ul``, ``ol``, ``dl``: an index, a "See also" list of links), a table, code, a section
whose heading is a target of the page's own links (a document's "References"). The
article's last short paragraphs, a signature, a closing question, a one-link "source"
line stay (recall first: text that is dropped is never hashed).

Pure functions over an lxml tree; the tree is never modified.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from crawler.lib.chrome import WIDGET_PROSE, teaser_shaped
from crawler.lib.furniture import is_box_label
from crawler.lib.nodes import HEADING_TAGS, tag_of, text_of, up_to
from crawler.lib.pagewalk import CONTROLS, EMPTY, VISIBLE, Texts, link_density, name_hint, prose_chars

if TYPE_CHECKING:
    from collections.abc import Collection

    from lxml.etree import _Element

#: a paragraph of the article: this much prose outside links, at most this share of links
ARTICLE_CHARS = 100
ARTICLE_LINK_DENSITY = 0.3
#: a block after the article's end with this share of links (two links or more) is a rail
TRAIL_LINK_DENSITY = 0.5
#: a link to another page counts when it has this many words (a headline)
HEADLINE_WORDS = 3
#: a link whose words are its URL (a reference, not a link to another story)
URL_TEXT_RE = re.compile(r"(?:https?://|www\.)", re.IGNORECASE)
#: never judged after the article's end, nor what holds them: tables and code
CODE_TAGS = frozenset({"table", "pre", "code"})
#: lists after the article's end (an index, a "See also" list of links): a rail only
#: when shaped like teasers, never looked into
LIST_TAGS = frozenset({"ul", "ol", "dl"})


def last_paragraph(root: _Element, skip: Collection[_Element], texts: Texts) -> _Element | None:
    """The last paragraph of prose of ``root`` outside ``skip``, when it holds two or
    more (one paragraph is no article to end).

    >>> from lxml import html
    >>> from crawler.lib.nodes import Visibility
    >>> from crawler.lib.pagewalk import measure_body
    >>> page = html.fromstring("<div><p>" + "Prose. " * 20 + "</p><p id='end'>" + "More prose. " * 10
    ...     + "</p><p>Short.</p></div>")
    >>> last_paragraph(page, (), measure_body(page, Visibility()).texts).get("id")
    'end'
    """
    found = []
    for paragraph in root.iter("p"):
        text = texts.get(paragraph)
        if text is None or prose_chars(text) < ARTICLE_CHARS or link_density(text) > ARTICLE_LINK_DENSITY:
            continue
        if paragraph in skip or any(ancestor in skip for ancestor in paragraph.iterancestors()):
            continue
        found.append(paragraph)
    return found[-1] if len(found) >= 2 else None


def _holds_code(node: _Element) -> bool:
    """Whether ``node`` is or holds a table or code: never judged after the end."""
    return tag_of(node) in CODE_TAGS or next(node.iterdescendants(*CODE_TAGS), None) is not None


def _sectioned(node: _Element) -> bool:
    """Whether ``node`` holds a heading that is a target of the page's own links (its
    ``id``, or a permalink in it): a document's section ("References", "See also"),
    kept whole."""
    for heading in node.iter(*HEADING_TAGS):
        if heading.get("id") or any((a.get("href") or "").startswith("#") for a in heading.iter("a")):
            return True
    return False


def _outgoing_chars(node: _Element) -> tuple[int, int]:
    """The characters and the count of ``node``'s links to other pages by their words:
    not an anchor on the page (``#…``, a heading's permalink), not a link written as its
    URL (a reference), not a picture's link."""
    chars = count = 0
    for link in node.iter("a"):
        href = (link.get("href") or "").strip()
        words = " ".join(text_of(link).split())
        if not href or href.startswith(("#", "javascript:", "mailto:")) or URL_TEXT_RE.match(words):
            continue
        if len(words.split()) < HEADLINE_WORDS:
            continue  # a name (a function, a type, a person, "Facebook"), not a headline
        if next(link.iter("img"), None) is not None:
            continue
        chars += len(words)
        count += 1
    return chars, count


def _inline_list(node: _Element, count: int) -> bool:
    """Whether the ``count`` links of ``node`` are written as a list in a line ("A, B
    and C"): a reference's "See also", not a rail of stories."""
    between = "".join((link.tail or "") for link in node.iter("a"))
    return between.count(",") >= count - 1


def _trailing(node: _Element, texts: Texts) -> bool:
    """Whether ``node``, after the article's end, is shaped like what follows an article."""
    text = texts.get(node, EMPTY)
    if not text[VISIBLE]:
        return False
    if text[CONTROLS] and prose_chars(text) < WIDGET_PROSE:
        return True  # a comment or subscribe form
    if sum(1 for _ in node.iter("a")) >= 2 and teaser_shaped(node, texts):
        return True  # teaser cards, thumbnails and their headlines
    if tag_of(node) == "footer" and text[VISIBLE] <= LABELLED_CHARS and _meta_footer(node) and not _prose(node, texts):
        return True  # the article's own footer of metadata: its author, dates, feed ("Updated: 6 December 2019")
    if tag_of(node) in LIST_TAGS or next(node.iterdescendants(*LIST_TAGS), None) is not None:
        return False  # a list of links: an index, a table of contents, "See also"
    chars, count = _outgoing_chars(node)
    visible = len(" ".join(text_of(node).split()))
    # a rail of headlines (not "see A, B and C", a list written in a line)
    return count >= 2 and chars >= TRAIL_LINK_DENSITY * visible and not _inline_list(node, count)


#: a box under a label that names it as about the article holds no more than this
LABELLED_CHARS = 300
#: link relations of an article's metadata (its author, its tags, its licence)
META_RELS = frozenset({"author", "tag", "license", "category", "bookmark"})


def _meta_footer(node: _Element) -> bool:
    """Whether the footer ``node`` is made of metadata: a date (``<time>``), an
    ``<address>``, or links to the author, tags or licence. A footer of sentences (a
    correction, a thanks, a known issue) is the article's text.

    >>> from lxml import html
    >>> _meta_footer(html.fromstring("<footer>Updated <time>6 December 2019</time></footer>"))
    True
    >>> _meta_footer(html.fromstring("<footer><p>Correction, 4 May: it went in 3.8.</p></footer>"))
    False
    """
    if next(node.iter("time", "address"), None) is not None:
        return True
    return any(META_RELS.intersection((link.get("rel") or "").lower().split()) for link in node.iter("a"))


def _named_as_box(block: _Element) -> bool:
    """Whether ``block`` or its parent is named as page furniture (a hint of
    :func:`crawler.lib.pagewalk.name_hint`: ``author-box``, ``post-tags``, ``entry-meta``):
    with a box's label and shape, the third sign that a labelled box is about the article.
    A section headed "Contact" or "Tags" in a page's own text carries no such name."""
    for node in (block, block.getparent()):
        if node is not None and name_hint(tag_of(node), node.get("class") or "", node.get("id") or ""):
            return True
    return False


def _first_line(node: _Element) -> str:
    """The text of the first element of ``node`` that holds text of its own (``node``'s
    label, when it has one), on one line."""
    for element in node.iter():
        if isinstance(element.tag, str) and element.text and element.text.strip():
            return " ".join(text_of(element).split())
    return ""


def _labelled(block: _Element, texts: Texts) -> list[_Element]:
    """``block`` and what it labels, when ``block`` (after the article's end) starts with
    a label that names a box about the article (:func:`crawler.lib.furniture.is_box_label`:
    "Über den Autor", "Kontakt:", "ERSCHIENEN IN", "Tags"), ``block`` or its parent is
    named as furniture (:func:`_named_as_box`) and its shape agrees: short
    lines, no paragraph of prose, no more than ``LABELLED_CHARS`` in all; a label standing
    alone takes the short lines after it up to the next heading. ``[]`` otherwise.

    >>> from lxml import html
    >>> from crawler.lib.nodes import Visibility
    >>> from crawler.lib.pagewalk import measure_body
    >>> page = html.fromstring("<div class='author'><div>Kontakt:</div><p>Jan Koch<br>Tel. 4</p><h2>Next</h2></div>")
    >>> [node.tag for node in _labelled(page[0], measure_body(page, Visibility()).texts)]
    ['div', 'p']
    """
    text = texts.get(block, EMPTY)
    if not text[VISIBLE] or text[VISIBLE] > LABELLED_CHARS:
        return []
    label = _first_line(block)
    if not label or not is_box_label(label) or not _named_as_box(block):
        return []
    boxed = [block]
    if " ".join(text_of(block).split()) == label:  # the label alone: the short lines after it
        chars = text[VISIBLE]
        for sibling in block.itersiblings():
            if not isinstance(sibling.tag, str) or not texts.get(sibling, EMPTY)[VISIBLE]:
                continue
            if tag_of(sibling) in HEADING_TAGS:
                break
            chars += texts[sibling][VISIBLE]
            boxed.append(sibling)
    else:
        chars = text[VISIBLE]
    if chars > LABELLED_CHARS or any(
        _holds_code(node) or _prose(node, texts) or (node is not block and prose_chars(texts[node]) >= ARTICLE_CHARS)
        for node in boxed
    ):
        return []
    return boxed


def _prose(node: _Element, texts: Texts) -> bool:
    """Whether ``node`` is or holds a paragraph of prose (``ARTICLE_CHARS`` outside links)."""
    paragraphs = node.iter("p", "li", "dd", "blockquote")
    return any(prose_chars(texts.get(paragraph, EMPTY)) >= ARTICLE_CHARS for paragraph in paragraphs)


def after_the_end(root: _Element, skip: Collection[_Element], texts: Texts) -> tuple[list[_Element], list[_Element]]:
    """The blocks of ``root`` after its article's last paragraph of prose
    (:func:`last_paragraph`) that are shaped like what follows an article (see the
    module's docstring), outermost first; the others are looked into, lists, tables and
    code never; nothing when ``root`` holds fewer than two paragraphs of prose. Second:
    the boxes about the article there, known by their label and their shape
    (:func:`_labelled`: "Über den Autor", "Kontakt:", "Tags"), with the lines they label.

    >>> from lxml import html
    >>> from crawler.lib.nodes import Visibility
    >>> from crawler.lib.pagewalk import measure_body
    >>> story = "<p>" + "Words of the story. " * 8 + "</p>"
    >>> page = html.fromstring("<article>" + story * 2 + "<p>The end.</p><div class='more'>"
    ...     "<a href='/a'>Another story of the day</a> <a href='/b'>And one more story</a></div>"
    ...     "<ul><li><a href='/c'>A list of links</a></li><li><a href='/d'>stays</a></li></ul></article>")
    >>> [node.get("class") for node in after_the_end(page, (), measure_body(page, Visibility()).texts)[0]]
    ['more']
    """
    end = last_paragraph(root, skip, texts)
    if end is None:
        return [], []
    following: list[_Element] = []
    for node, _parent in up_to(end, root):
        following.extend(sibling for sibling in node.itersiblings() if isinstance(sibling.tag, str))
    found: list[_Element] = []
    stack = list(reversed(following))
    boxes: list[_Element] = []
    taken: set[_Element] = set()  # the lines a label took with it
    while stack:
        block = stack.pop()
        if block in skip or block in taken or _holds_code(block) or _sectioned(block):
            continue
        labelled = _labelled(block, texts)
        if labelled:
            boxes.extend(labelled)  # a box about the article: its author, a contact, its tags
            taken.update(labelled)
        elif _trailing(block, texts):
            found.append(block)
        elif tag_of(block) not in LIST_TAGS:
            stack.extend(reversed([child for child in block if isinstance(child.tag, str)]))
    return found, boxes
