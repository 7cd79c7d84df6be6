"""Which blocks of a page are its chrome: by evidence, never by a name alone.

The second step of the main-content selection (:mod:`crawler.lib.maincontent`), over what
:mod:`crawler.lib.pagewalk` measured. Recall first, because dropped text is never hashed:
a block is chrome only when its shape agrees with what its name hints
(:func:`chrome_shape`, ``HINT_SHAPES``), or when beside the article's core it is a
link-dense rail, a form or a stack of teasers (:func:`beside_core`). Never chrome: a
section whose id is its heading's slug, a block holding the title or ``<main>``, a
wrapper holding most of the page's text.

Pure functions over an lxml tree; the tree is never modified.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from crawler.lib.nodes import (
    HEADING_TAGS,
    tag_of,
    text_of,
    up_to,
)

if TYPE_CHECKING:
    from lxml.etree import _Element

from crawler.lib.lines import in_a_run
from crawler.lib.pagewalk import (
    CHROME,
    CONTENT,
    CONTROLS,
    EMPTY,
    HINTED,
    LINKS,
    SMALL_CHARS,
    TITLE_XPATH,
    VISIBLE,
    Measured,
    Texts,
    kept_chars,
    link_density,
    prose_chars,
)

#: how much prose a hinted block of each kind may hold and still be what its name says:
#: an author box, a comment section, a rail of teasers, a share or subscribe box
#: (the other kinds are chrome only by the shape every hinted block is asked for)
HINT_SHAPES = {"comment": 4000, "author": 1200, "related": 2000, "widget": 800}
#: a hinted block mostly links is chrome (a rail, a share bar, a tag list)
CHROME_LINK_DENSITY = 0.4
#: a hinted block with less prose than this, no paragraph and no heading, table, code or
#: list is a label: chrome (a byline, a date, "Share this")
SHORT_PROSE = 120
#: a hinted block with form controls and less prose than this is a widget
WIDGET_PROSE = 1000
SLUG_RE = re.compile(r"[^a-z0-9]+")


def _heading_anchor(node: _Element) -> bool:
    """Whether ``node``'s id is the slug of the heading it starts with (after anchor
    targets): a document section (docutils' ``<section id="related-projects">``), not a
    related-projects rail.

    >>> from lxml import html
    >>> section = html.fromstring('<section id="large-files"><span id="x"></span><h2>Large files</h2></section>')
    >>> _heading_anchor(section)
    True
    >>> rail = html.fromstring('<div id="related"><h3>More stories</h3></div>')
    >>> _heading_anchor(rail)
    False
    """
    ident = node.get("id")
    if not ident:
        return False
    for child in node:
        if tag_of(child) in HEADING_TAGS:
            slug = SLUG_RE.sub("-", text_of(child).lower()).strip("-")
            return bool(slug == ident.lower())
        if text_of(child).strip():
            return False
    return False


def _repeats(node: _Element, texts: Texts, *, links: bool = True) -> bool:
    """Whether ``node`` is (or holds, one or two levels down) a list of three or more
    alike items each with a link (``links``; any, for a comment thread): a comment
    thread, a stack of teasers.

    >>> from lxml import html
    >>> item = "<li class='comment'><a href='/u'>ann</a> Nice.</li>"
    >>> thread = html.fromstring("<div><ol>" + item * 3 + "</ol></div>")
    >>> _repeats(thread, {})
    True
    """
    for container in (node, *node, *(grandchild for child in node for grandchild in child)):
        children = [child for child in container if isinstance(child.tag, str)]
        if len(children) < 3:
            continue
        kinds: dict[tuple[str, str], int] = {}
        for child in children:
            if not links or child.find(".//a") is not None:
                key = (child.tag, (child.get("class") or "").split(" ", 1)[0])
                kinds[key] = kinds.get(key, 0) + 1
        if kinds and max(kinds.values()) >= max(3, 0.6 * len(children)):
            return True
    return False


#: a teaser card holds no more prose than this besides its linked heading
CARD_PROSE = 400


def _cards(node: _Element, texts: Texts, *, deep: bool = True) -> bool:
    """Whether ``node`` is (or holds, one or two levels down) two or more teaser cards
    side by side: elements each holding a heading whose text is a link, and a short
    excerpt at most (a grid of "more stories", a row of related posts).

    >>> from lxml import html
    >>> from crawler.lib.nodes import Visibility
    >>> from crawler.lib.pagewalk import measure_body
    >>> card = "<div class='card'><h3><a href='/a'>A story</a></h3><p>Its first lines.</p></div>"
    >>> grid = html.fromstring("<section><h2>Read further</h2><div>" + card * 2 + "</div></section>")
    >>> _cards(grid, measure_body(grid, Visibility()).texts)
    True
    """
    containers = (node, *node, *(grandchild for child in node for grandchild in child)) if deep else (node,)
    for container in containers:
        children = [child for child in container if isinstance(child.tag, str) and texts.get(child)]
        if len(children) < 2:
            continue
        cards = 0
        for child in children:
            heading = next(child.iter(*HEADING_TAGS), None)
            if heading is None or prose_chars(texts.get(child, EMPTY)) > CARD_PROSE:
                continue
            text = texts.get(heading)
            link = next(heading.iter("a"), None) if heading.tag != "a" else heading
            if (
                text is not None
                and text[VISIBLE]
                and text[LINKS] >= 0.8 * text[VISIBLE]
                and not (link is not None and (link.get("href") or "").startswith("#"))
            ):
                cards += 1  # (a heading linking back to the page's table of contents is no teaser's)
        if cards >= 2 and cards >= 0.6 * len(children):
            return True
    return False


#: a paragraph of this many characters is prose, not a label
PARAGRAPH_CHARS = 80


def _has_paragraph(node: _Element) -> bool:
    """Whether ``node`` holds a paragraph of prose (``PARAGRAPH_CHARS`` outside links).

    >>> from lxml import html
    >>> _has_paragraph(html.fromstring("<div><h3>Share this</h3><a href='/x'>Facebook</a></div>"))
    False
    """
    for paragraph in node.iter("p", "dd", "li", "blockquote"):
        chars = len(text_of(paragraph).strip())
        if (
            chars >= PARAGRAPH_CHARS
            and chars - sum(len(text_of(a).strip()) for a in paragraph.iter("a")) >= PARAGRAPH_CHARS
        ):
            return True
    return False


def _chrome_shape(node: _Element, kind: str, texts: Texts, protected: set[int]) -> str:
    """Whether the element ``node``, named like chrome of this ``kind``, is chrome:
    ``"shape"`` when its shape says so too (mostly links, a form with little prose, a
    short label with no heading, table, code or list, a list of linked items), ``"named"``
    when it holds no more prose than what its name says it is does (``HINT_SHAPES``: an
    author box, a comment section), ``""`` when it is not chrome."""
    if id(node) in protected:
        return ""
    text = texts.get(node)
    if text is None:
        return ""
    if _heading_anchor(node):
        return ""  # a document's section, whatever its id says
    prose = prose_chars(text)
    if link_density(text) >= CHROME_LINK_DENSITY:
        return "shape"
    if text[CONTROLS] and prose < WIDGET_PROSE:
        return "shape"
    if prose < SHORT_PROSE and not _has_paragraph(node) and _is_label(node) and not in_a_run(node):
        return "shape"  # (a label one of a run of alike siblings is a field: a grid's column header)
    if _repeats(node, texts, links=kind != "comment"):
        return "shape"
    return "named" if prose <= HINT_SHAPES.get(kind, 0) else ""


#: what a short label never holds: a heading of the text, a table, code, a list
DOCUMENT_PARTS = ("h2", "h3", "h4", "h5", "h6", "table", "pre", "ul", "ol", "dl")


def _is_label(node: _Element) -> bool:
    """Whether the short block ``node`` is a label (a byline, a date, "Share this"):
    it holds no heading, table, code or list.

    >>> from lxml import html
    >>> _is_label(html.fromstring("<div class='meta'>May 3, 2024</div>"))
    True
    >>> _is_label(html.fromstring("<div class='section-header'><h2>Installation</h2></div>"))
    False
    """
    return next(node.iter(*DOCUMENT_PARTS), None) is None


#: the class of a code block's wrapper: Doxygen's ``div.fragment``, Pygments' ``div.highlight``,
#: Sphinx's ``div.highlight-python``, Rouge's ``div.highlighter-rouge`` (a whole class, not a
#: word inside one: a post tagged ``tag-werkstatt-highlights`` is no code)
CODE_CLASS_RE = re.compile(r"(?:^|\s)(?:fragment|highlight(?:er-rouge|table)?|highlight-[\w-]+)(?:\s|$)")


def _is_code(node: _Element) -> bool:
    """Whether ``node`` is a code block (its spans are tokens, whatever their class).

    >>> from lxml import html
    >>> [_is_code(html.fromstring(f'<div class="{c}">x</div>')) for c in (
    ...     "highlight", "highlight-python notranslate", "fragment", "post tag-werkstatt-highlights")]
    [True, True, True, False]
    """
    tag = node.tag
    if tag in ("pre", "code"):
        return True
    classes = node.get("class")
    return bool(classes) and CODE_CLASS_RE.search(classes) is not None


def decide_chrome(body: _Element, measured: Measured) -> tuple[list[_Element], set[_Element]]:
    """The outermost chrome elements, and those of them that are chrome by their name
    (see :func:`_chrome_shape`). Their text moves from ``CONTENT`` to ``CHROME`` in every
    ancestor."""
    texts = measured.texts
    page = texts.get(body, EMPTY)
    protected: set[int] = set()
    titles = list(body.iter("h1", "main"))
    if not any(node.tag == "h1" for node in titles):
        titles.extend(TITLE_XPATH(body))  # no <h1>: an element named title (Doxygen's div.title)
    for node in titles:
        protected.update(id(ancestor) for ancestor in node.iterancestors())
    for rule, node in measured.candidates:
        if rule in ("main", "role-main", "hint"):
            protected.update(id(ancestor) for ancestor in node.iterancestors())
            protected.add(id(node))
    chrome: list[_Element] = []
    named: set[_Element] = set()
    inside: set[int] = set()
    for node, kind in measured.hinted.items():  # document order: an ancestor before its descendants
        if any(id(ancestor) in inside or _is_code(ancestor) for ancestor in node.iterancestors()):
            continue  # inside chrome already, or a token of highlighted code ("comment")
        text = texts.get(node, EMPTY)
        if kind in ("other", "layout") and (
            (prose_chars(text) > 0.5 * prose_chars(page) and prose_chars(text) >= SMALL_CHARS)
            or text[VISIBLE] > 0.5 * page[VISIBLE]
        ):
            continue  # a layout wrapper holding the page's text, or a table of contents that is all it has
        shape = _chrome_shape(node, kind, texts, protected)
        if shape:
            chrome.append(node)
            inside.add(id(node))
            if shape == "named":
                named.add(node)
    for heading in measured.related:
        if any(id(ancestor) in inside for ancestor in heading.iterancestors()):
            continue
        for block in _headed_blocks(heading, body, texts, protected):
            chrome.append(block)
            inside.add(id(block))
    chrome = [node for node in chrome if not any(id(ancestor) in inside for ancestor in node.iterancestors())]
    for node in chrome:
        measure = texts.get(node)
        if measure is None:
            continue
        visible, content = measure[VISIBLE] - measure[CHROME], measure[CONTENT]
        measure[CHROME], measure[CONTENT] = measure[VISIBLE], 0
        for ancestor in node.iterancestors():
            above = texts.get(ancestor)
            if above is not None:
                above[CHROME] += visible
                above[CONTENT] -= content
            if ancestor is body:
                break
    for node in measured.hinted:  # what is named like chrome and is not: the audit does not ask for it
        if id(node) in inside or any(id(ancestor) in inside for ancestor in node.iterancestors()):
            continue
        measure = texts.get(node)
        if measure is None or not measure[CONTENT]:
            continue
        inside.add(id(node))
        content = measure[CONTENT] - measure[HINTED]
        measure[HINTED] += content
        for ancestor in node.iterancestors():
            above = texts.get(ancestor)
            if above is not None:
                above[HINTED] += content
            if ancestor is body:
                break
    return chrome, named


#: a block under a heading that names links to other pages is chrome with this share of links
RELATED_LINK_DENSITY = 0.25


def _headed_blocks(heading: _Element, body: _Element, texts: Texts, protected: set[int]) -> list[_Element]:
    """The block that ``heading`` (whose text names links to other pages: "Related
    posts", "Mehr zum Thema") heads, when it is of the shape of such links: the widest
    element it starts (a rail, a box), else the heading and the siblings after it up to
    the next heading; ``[]`` when what it heads is prose, or a document's section.

    >>> from lxml import html
    >>> from crawler.lib.nodes import Visibility
    >>> from crawler.lib.pagewalk import measure_body
    >>> page = html.fromstring("<body><div><p>" + "Story. " * 80 + "</p><div class='box'><h3>Related posts</h3>"
    ...     "<ul><li><a href='/a'>One story</a></li><li><a href='/b'>Two stories</a></li></ul></div></div></body>")
    >>> measured = measure_body(page, Visibility())
    >>> [node.get("class") for node in _headed_blocks(measured.related[0], page, measured.texts, set())]
    ['box']
    """
    node = heading
    levels: list[_Element] = []
    while True:
        parent = node.getparent()
        if parent is None or parent is body or id(parent) in protected or parent.tag in ("main", "article"):
            break
        if (parent.text and parent.text.strip()) or not _starts(parent, node, texts):
            break
        node = parent
        levels.append(node)
    if levels:
        if any(_heading_anchor(level) for level in levels):
            return []
        own_links = len(heading.findall(".//a")) + (heading.tag == "a")
        for level in levels:  # the narrowest box it starts that holds links or teasers
            if len(level.findall(".//a")) - own_links >= 2 and (
                link_density(texts.get(level, EMPTY)) >= RELATED_LINK_DENSITY or _teasers(level, texts)
            ):
                return [level]
        if link_density(texts.get(node, EMPTY)) >= RELATED_LINK_DENSITY or _repeats(node, texts):
            return [node]
        if kept_chars(texts.get(node, EMPTY)) > kept_chars(texts.get(heading, EMPTY)):
            return []
        # the heading stands alone in its box ("Weitere Beiträge" above a grid): the next box
        after = next((sibling for sibling in node.itersiblings() if texts.get(sibling)), None)
        if (
            after is not None
            and not _heading_anchor(after)
            and (
                (link_density(texts[after]) >= RELATED_LINK_DENSITY and len(after.findall(".//a")) >= 2)
                or _teasers(after, texts)
            )
        ):
            return [node, after]
        return []
    # the heading among the article's blocks: it and the blocks after it, to the next heading
    parent = heading.getparent()
    if parent is None:
        return []
    if tag_of(heading) not in HEADING_TAGS:
        # a label line ("Lesen Sie auch:") and the lists of links right after it
        block = [heading]
        for sibling in heading.itersiblings():
            text = texts.get(sibling)
            if tag_of(sibling) not in LINK_LINES or text is None or link_density(text) < 0.5:
                break
            block.append(sibling)
        return block if len(block) > 1 else []
    level = tag_of(heading)
    block = [heading]
    for sibling in heading.itersiblings():
        tag = tag_of(sibling)
        if tag in HEADING_TAGS and (tag <= level or link_density(texts.get(sibling, EMPTY)) < 0.5):
            break  # the next section, or a sub-heading naming its own block (not a teaser's headline)
        if tag:
            block.append(sibling)
    if len(block) == 1:
        return []
    visible = sum(texts.get(node, EMPTY)[VISIBLE] for node in block[1:])
    links = sum(texts.get(node, EMPTY)[LINKS] for node in block[1:])
    return block if visible and links >= 0.5 * visible else []


#: what a label line that names links to other pages heads: lists and lines of links
LINK_LINES = frozenset({"ul", "ol", "p", "blockquote"})


def _starts(parent: _Element, node: _Element, texts: Texts) -> bool:
    """Whether ``node`` starts ``parent``: nothing with text comes before it but
    headings (a kicker above the heading: "Related", then "Read further")."""
    for child in parent:
        if child is node:
            return True
        if isinstance(child.tag, str) and texts.get(child) and tag_of(child) not in HEADING_TAGS:
            return False
    return False


def _teasers(node: _Element, texts: Texts) -> bool:
    """Whether ``node`` is a stack of linked teasers (or holds one, two levels down)."""
    return bool(node.find(".//a") is not None and (_cards(node, texts) or _repeats(node, texts)))


#: elements that are a part of a sequence when a sibling of the same kind is
SEQUENCE_TAGS = frozenset({"dl", "ul", "ol", "table", "section", "article", "li", "tr", "dt", "dd"})


def same_kind(one: _Element, other: _Element) -> bool:
    """Whether ``one`` and ``other`` are parts of one sequence: the same tag and the same
    first class ("section section--hero" and "section section--features"; a ``<div>``
    must have one).

    >>> from lxml import html
    >>> page = html.fromstring('<div><div class="section a"></div><div class="section b"></div>'
    ...     '<div class="col-8"></div><div class="col-4"></div><dl></dl><dl></dl></div>')
    >>> [same_kind(page[0], page[1]), same_kind(page[2], page[3]), same_kind(page[4], page[5])]
    [True, False, True]
    """
    if one.tag != other.tag:
        return False
    first = (one.get("class") or "").split()[:1]
    return first == (other.get("class") or "").split()[:1] and (bool(first) or one.tag in SEQUENCE_TAGS)


#: a teaser's headline link has at least this many characters (an image-only link is a
#: gallery's, a single word a tag's)
HEADLINE_CHARS = 15


def _thumbnail_teasers(node: _Element) -> bool:
    """Whether ``node`` is a run of three or more alike items each holding a
    thumbnail and a headline link: "more stories" with pictures.

    >>> from lxml import html
    >>> item = "<li class='t'><a href='/s'><img src='t.jpg' alt=''> A story of the day</a></li>"
    >>> _thumbnail_teasers(html.fromstring("<ul>" + item * 3 + "</ul>"))
    True
    >>> _thumbnail_teasers(html.fromstring("<ul>" + "<li><a href='/i.jpg'><img src='i.jpg'></a></li>" * 3 + "</ul>"))
    False
    """
    for container in (node,):
        children = [child for child in container if isinstance(child.tag, str)]
        if len(children) < 3:
            continue
        kinds: dict[tuple[str, str], int] = {}
        for child in children:
            if child.find(".//img") is None:
                continue
            if not any(len(text_of(link).strip()) >= HEADLINE_CHARS for link in child.iter("a")):
                continue
            key = (child.tag, (child.get("class") or "").split(" ", 1)[0])
            kinds[key] = kinds.get(key, 0) + 1
        if kinds and max(kinds.values()) >= max(3, 0.6 * len(children)):
            return True
    return False


def teaser_shaped(node: _Element, texts: Texts) -> bool:
    """Whether ``node`` is (or holds) teaser cards (:func:`_cards`) or is a run of
    thumbnails with their headlines (:func:`_thumbnail_teasers`)."""
    return _cards(node, texts) or _thumbnail_teasers(node)


def teaser_stacks(root: _Element, core: _Element | None, texts: Texts) -> list[_Element]:
    """The stacks of teasers inside ``root`` that do not hold ``core`` (the element
    holding most of the page's prose): teaser cards (a linked headline and a short
    excerpt, :func:`_cards`) or items each with a thumbnail and a headline link
    (:func:`_thumbnail_teasers`), holding less than a quarter of ``root``'s prose.
    Their shape is the evidence (a list of links alone, a document's index or table
    of contents, is not one)."""
    holding = {id(ancestor) for ancestor in core.iterancestors()} | {id(core)} if core is not None else set()
    bound = 0.25 * prose_chars(texts.get(root, EMPTY))
    found: list[_Element] = []
    stack = [child for child in root if isinstance(child.tag, str)]
    while stack:
        node = stack.pop()
        text = texts.get(node)
        if text is None or not text[LINKS] or text[CHROME] >= text[VISIBLE]:
            continue  # (chrome already)
        if (
            id(node) not in holding
            and not _heading_anchor(node)  # a document's section
            and prose_chars(text) <= bound
            and (_cards(node, texts, deep=False) or _thumbnail_teasers(node))
        ):
            found.append(node)
            continue
        stack.extend(child for child in node if isinstance(child.tag, str))
    return found


#: a block beside the page's text with this share of links is a rail of links
AROUND_LINK_DENSITY = 0.5


def beside_core(
    root: _Element, core: _Element, texts: Texts, hinted: dict[_Element, str] | None = None
) -> tuple[list[_Element], list[_Element], list[_Element]]:
    """The blocks of ``root`` beside ``core`` (the element holding most of its prose) that
    are chrome, in three lists: mostly links or linked teasers (breadcrumbs, prev/next,
    rails, tables of contents); named like chrome; and stacks of teasers with excerpts,
    which only the audit's bound keeps out. Blocks in sequence with the path to ``core``
    (the next section of a document) stay.

    >>> from lxml import html
    >>> from crawler.lib.nodes import Visibility
    >>> from crawler.lib.pagewalk import measure_body
    >>> main = html.fromstring("<main><div class='body'>" + "<p>" + "Prose words here. " * 30 + "</p></div>"
    ...     "<div class='more'><a href='/a'>Another story</a> <a href='/b'>And another one</a></div></main>")
    >>> texts = measure_body(main, Visibility()).texts
    >>> [node.get("class") for node in beside_core(main, main[0], texts)[0]]
    ['more']
    """
    hinted = hinted or {}
    found: list[_Element] = []
    named: list[_Element] = []
    shaped: list[_Element] = []
    for node, parent in up_to(core, root):
        for sibling in parent:
            if sibling is node or not isinstance(sibling.tag, str) or same_kind(sibling, node):
                continue
            text = texts.get(sibling)
            if text is None or not kept_chars(text):
                continue
            kind = hinted.get(sibling, "other")
            if kind != "other":  # named like chrome: chrome when its shape agrees (as anywhere)
                shape = _chrome_shape(sibling, kind, texts, set())
                if shape == "shape":
                    found.append(sibling)
                elif shape == "named":
                    named.append(sibling)
                continue
            if text[CONTROLS] and prose_chars(text) < WIDGET_PROSE:
                found.append(sibling)  # a form beside the article: subscribe, search, comment
                continue
            density = link_density(text)
            rail = len(sibling.findall(".//a")) >= 2  # (a heading with its permalink is no rail)
            if rail and density >= AROUND_LINK_DENSITY:
                found.append(sibling)
            elif rail and ((density >= 0.2 and _repeats(sibling, texts)) or _cards(sibling, texts)):
                shaped.append(sibling)  # teasers, by their shape: bounded as chrome by name is
    return found, named, shaped
