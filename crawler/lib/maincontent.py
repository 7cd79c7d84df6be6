"""Where a page's main content is, on any page: with or without semantic markup.

Recall first: a block of visible text is left out only on positive evidence that it
is page chrome, because text that is dropped is never hashed and its changes are
never seen. One walk over ``<body>`` measures every element's text: all visible
characters, those inside links, the form controls it holds. What a reader does not
see and the page's own landmarks (navigation, banner, footer, sidebars: see
:mod:`crawler.lib.nodes`) are not measured at all. Then:

- **chrome by evidence**: an element whose class, id or accessible name holds a word of
  chrome (``comments``, ``related-posts``, ``share-bar``, ``newsletter``...) is only
  *hinted*; it is chrome when its shape says so too: mostly links (a rail of teasers,
  a share bar, a tag list), a form with little prose (a subscribe, comment or donation
  box), a repeated list of linked items (a comment thread, a "more stories" stack), or
  a short line without a heading (a byline, a date, "Share this"). A hinted block of
  prose, a section whose id is its heading's slug, a block holding the page's ``<h1>``
  or most of its text are never chrome. Short stand-alone furniture ("Was this page
  helpful?", "Photo: ..." credits, "Learn more" buttons) is left out by its text;
- **content weight** is the visible text outside links and outside chrome;
- the **scored root** is the deepest element holding most of the content weight,
  widened level by level to the siblings that continue it (its title block, the next
  section of a landing page, the second half of an article split by an ad);
- a **semantic container** (``<main>``, ``role=main``, ``articleBody``, an
  ``<article>``, ``#content``...) wins when it agrees with that: it holds the scored
  root and adds little besides, or sits inside it and holds more than half of its
  weight, or the page has too little prose to judge by; of several ``<article>`` each
  with its own ``<h1>`` (the next stories of an endless-scroll page), the page's own;
- the page's title block (its one ``<h1>``), when it sits before the root, outside it,
  is joined to it;
- **the audit**: what the selection leaves out of the page's content weight is
  measured; when it is more than ``AUDIT_CHARS`` and ``AUDIT_SHARE`` of what was
  selected, the selection is widened to the nearest ancestor that leaves out no more
  than that (``Selection.widened``, counted by the crawl), so a site whose markup
  defeats the selection is visible on its first crawl.

Pure functions over an lxml tree (the one parsel built); the tree is never modified.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import TYPE_CHECKING

from lxml import etree

from crawler.lib.furniture import MAX_FURNITURE_CHARS, is_furniture, is_read_also, is_related_heading
from crawler.lib.nodes import (
    ASIDE_NOTE_RE,
    HEADING_TAGS,
    NEVER_TEXT_TAGS,
    Visibility,
    body_of,
    image_alt,
    is_ancestor,
    tag_of,
    text_of,
)
from crawler.lib.nodes import (
    VISIBLE as ALL_VISIBLE,
)

if TYPE_CHECKING:
    from lxml.etree import _Element

#: words of chrome in a class or id, by the kind of chrome they name: a token made of
#: one of these, alone or after up to three words and before anything ("post-comments",
#: "related-posts", "share-bar"), unless it ends in content words ("wy-nav-content") or
#: states a flag ("has-comments"). A hint, never evidence on its own: see ``HINT_SHAPES``.
HINT_WORDS = {
    "comment": (
        "comment(?!ary)[a-z]*", "disqus(?:_thread)?", "respond", "replies", "reply", "reviews?", "ratings?", "stars",
    ),
    "author": ("author[a-z]*", "autor[a-z]*", "byline", "bio", "about-the-author"),
    "related": (
        "related[a-z]*", "recommended", "recommendations?", "more-stories", "most-popular", "most-read",
        "read-next", "read-more", "also-read", "trending", "outbrain", "taboola", "yarpp",
        "crp", "lee-tambien", "veja-tambem", "mehr-zum-thema",
    ),
    "widget": (
        "share[a-z]*", "sharing", "sharedaddy", "shariff", "social[a-z]*", "addthis", "sociable", "teilen",
        "newsletter[a-z]*", "subscribe", "subscription", "signup", "sign-up", "optin", "donat[a-z]*",
        "cookie[a-z]*", "consent", "gdpr", "cmp", "banner", "promo", "promos", "promotion", "sponsored",
        "sponsor", "advert[a-z]*", "ads?", "adsense", "dfp", "popup", "modal", "overlay", "paywall",
    ),
    "layout": (
        "breadcrumbs?", "breadcrumb-?trail", "crumbs?", "skip-?link", "skip-?to-?content", "skip",
        "pagination", "pager", "paging", "prev", "next", "prevnext", "prev-next", "nextprev",
        "sidebar[a-z]*", "side-bar", "rail", "toolbar", "on-this-page", "nav[a-z]*", "menu", "masthead", "footer",
    ),
    "other": (
        "meta", "header", "tags", "tag-?list", "tag-?cloud", "tag-?filter", "filters?",
        "kicker", "eyebrow", "updated", "modified", "edit", "print-none", "noprint", "no-print", "hidden-print",
        "categor(?:y|ies)", "dateline", "date", "time", "timestamp", "lastmod", "feedback", "support",
        "announcement", "widget", "logos?", "logo-wall", "btn", "buttons?", "tax", "shipping", "delivery",
        "teaser[a-z]*",
    ),
}  # fmt: skip
#: how much prose a hinted block of each kind may hold and still be what its name says:
#: an author box, a comment section, a rail of teasers, a share or subscribe box
#: (the other kinds are chrome only by the shape every hinted block is asked for)
HINT_SHAPES = {"comment": 4000, "author": 1200, "related": 2000, "widget": 800}
HINT_RE = re.compile(
    r"^(?!(?:has|with|no|is|show|hide)[-_])(?!.*(?:content|body|main|article|text)$)(?:[a-z0-9]+[-_]+){0,3}(?:"
    + "|".join(f"(?P<{kind}>{'|'.join(words)})" for kind, words in HINT_WORDS.items())
    + r")(?:$|[-_])",
    re.IGNORECASE,
)
#: the kinds in the order they are preferred when names say several
HINT_KINDS = tuple(HINT_WORDS)
CAMEL_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
#: class tokens or ids that name the article body itself (a semantic hint)
CONTENT_HINT_RE = re.compile(
    r"^(?:(?:entry|post|article|story|page|blog|main|single)[-_]?(?:content|body|text)"
    r"|articlebody|article__body|article__content|story|post|entry|hentry|markdown-body|rst-content"
    r"|content[-_](?:main|body)|main[-_]?content|page[-_]?content)$",
    re.IGNORECASE,
)
#: ARIA roles of parts of a document (a table's rows and cells, a heading, a list
#: item, a note): what an element says it is outranks what its class is called
CONTENT_ROLES = frozenset(
    {"row", "cell", "gridcell", "columnheader", "rowheader", "rowgroup", "table", "grid", "heading", "listitem", "note"}
)
#: elements never chrome by their names: a heading, code, a table or list part is part
#: of its document whatever it is called
NEVER_HINTED_TAGS = frozenset(
    {
        "html", "body", "main", "article", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "code",
        "table", "thead", "tbody", "tr", "td", "th", "li", "dt", "dd", "caption", "figcaption",
    }
)  # fmt: skip
#: elements measured whole (their text in one C call): text-level elements that
#: neither hold the page's layout nor carry its chrome
LEAF_TAGS = frozenset(
    {
        "p", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "a", "span", "b", "strong", "i", "em",
        "code", "small", "img", "br", "figcaption", "dt", "label", "time", "abbr", "sup", "sub",
        "cite", "blockquote", "address", "summary", "caption", "kbd", "var", "samp", "mark", "q", "u", "s",
    }
)  # fmt: skip
#: a page with less text than this is never wrapped whole in a landmark
WRAPPER_CHARS = 400
#: the elements that may head a block, by their text
RELATED_TAGS = frozenset({"h2", "h3", "h4", "h5", "h6", "p", "span", "strong", "b", "a", "em"})
#: text-level elements: the scored root is never one of them
INLINE_TAGS = LEAF_TAGS | {"font", "big", "tt", "nobr", "strike", "bdi", "bdo", "dfn", "ins", "del"}
#: form controls: a block holding one is a widget (a form, a search box, a button bar)
CONTROL_TAGS = frozenset({"input", "select", "textarea", "button"})
#: an element holding this share of the page's content weight is the scored root
MAJORITY = 0.7
#: a sibling with this share of the root's content weight continues it
SIBLING_SHARE = 0.2
#: too little prose to judge a page by: its own markup decides
SMALL_CHARS = 400
#: a hinted block mostly links is chrome (a rail, a share bar, a tag list)
CHROME_LINK_DENSITY = 0.4
#: a hinted block with less prose than this and no heading is chrome (a byline, a date)
SHORT_PROSE = 120
#: a hinted block with form controls and less prose than this is a widget
WIDGET_PROSE = 1000
#: the audit: the selection is widened when it leaves out more content weight than
#: this many characters and this share of what it selected
AUDIT_CHARS = 150
AUDIT_SHARE = 0.25

#: what ``_measure`` counts for each element, in characters of stripped text
VISIBLE = 0  # all text a reader sees
LINKS = 1  # inside <a>
CHROME = 2  # inside page chrome
CONTENT = 3  # outside both: the content weight
CONTROLS = 4  # form controls inside (a count)
HINTED = 5  # content weight inside elements named like chrome that are not chrome
EMPTY = (0, 0, 0, 0, 0, 0)


def _kept(text: Sequence[int]) -> int:
    """Visible characters left once the chrome inside is left out."""
    return text[VISIBLE] - text[CHROME]


def _prose(text: Sequence[int]) -> int:
    """Visible characters outside links."""
    return text[VISIBLE] - text[LINKS]


def _unlabelled(text: Sequence[int]) -> int:
    """Content weight outside elements named like chrome: what the audit asks for."""
    return text[CONTENT] - text[HINTED]


def _link_density(text: Sequence[int]) -> float:
    return text[LINKS] / text[VISIBLE] if text[VISIBLE] else 0.0


@dataclass(frozen=True)
class Selection:
    """The main content of a page: write the elements of ``before`` (a title block
    above it), then ``root``, leaving out the elements in ``skip``. ``rule`` names what
    chose the main content (``main``, ``role-main``, ``hint``, ``article``, ``id``,
    ``scored``, ``body``; the root may be an ancestor of what it chose, joined to the
    page's title block, with the rest in ``skip``). ``widened``: the audit found that
    the choice left out ``left_out`` characters of the page's content weight, and took
    an ancestor that holds them instead. ``left_out``: what the final selection leaves
    out of it (characters of visible text outside links and chrome)."""

    root: _Element
    skip: frozenset[_Element] = field(default_factory=frozenset)
    rule: str = "body"
    widened: bool = False
    left_out: int = 0
    before: tuple[_Element, ...] = ()


def name_hint(tag: str, classes: str, ident: str) -> str:
    """The kind of chrome an element's class or id names (``comment``, ``author``,
    ``related``, ``widget``, ``layout``, ``other``), ``""`` for none: a hint, not evidence.

    >>> [name_hint("div", c, "") for c in ("post-comments", "sectionRelated", "entry-content share",
    ...     "commentary", "has-sidebar", "wy-nav-content", "site-footer")]
    ['comment', 'related', '', '', '', '', 'layout']
    """
    if tag in NEVER_HINTED_TAGS:
        return ""
    names: list[str] = []
    if ident and not CONTENT_HINT_RE.match(ident):
        names.append(CAMEL_RE.sub("-", ident))
    if classes:
        tokens = classes.split()
        if any(CONTENT_HINT_RE.match(token) for token in tokens):
            return ""
        names.extend(CAMEL_RE.sub("-", token) for token in tokens)
    found = ""
    for name in names:
        match = HINT_RE.match(name)
        if match is not None:
            kind = match.lastgroup or ""
            if not found or HINT_KINDS.index(kind) < HINT_KINDS.index(found):
                found = kind
    return found


def _semantic_rule(tag: str, classes: str, ident: str, role: str, itemprop: str) -> str | None:
    """The semantic hint an element with these attributes carries, if any."""
    if tag in ("main", "article"):
        return tag
    if role == "main":
        return "role-main"
    if itemprop == "articleBody":
        return "hint"
    if ident in ("content", "main-content", "main"):
        return "id"
    if tag in ("div", "section") and (
        (ident and CONTENT_HINT_RE.match(ident)) or (classes and any(CONTENT_HINT_RE.match(t) for t in classes.split()))
    ):
        return "hint"
    return None


#: the order in which semantic hints are tried
RULE_ORDER = ("main", "role-main", "hint", "article", "id")

_CLASSIFIED: dict[tuple[str, ...], tuple[str, str | None]] = {}


def _classify(tag: str, attrib: dict[str, str]) -> tuple[str, str | None]:
    """The kind of chrome an element with these attributes is named like, and the
    semantic hint it carries (memoised: a site repeats its classes on every page)."""
    key = (
        tag,
        attrib.get("class", ""),
        attrib.get("id", ""),
        attrib.get("role", ""),
        attrib.get("itemprop", ""),
    )
    found = _CLASSIFIED.get(key)
    if found is None:
        hint = "" if key[3] in CONTENT_ROLES else name_hint(tag, key[1], key[2])
        found = (hint, _semantic_rule(tag, *key[1:4], key[4]))
        if len(_CLASSIFIED) > 50_000:
            _CLASSIFIED.clear()
        _CLASSIFIED[key] = found
    return found


Texts = dict["_Element", list[int]]


@dataclass
class _Measured:
    """What one walk over ``<body>`` found."""

    texts: Texts
    #: semantic candidates, in document order
    candidates: list[tuple[str, _Element]]
    #: elements named like chrome, with the kind their name says, in document order
    hinted: dict[_Element, str]
    #: short stand-alone furniture and buttons, by their text
    furniture: list[_Element]
    #: headings that name a block of links to other pages ("Related posts")
    related: list[_Element]


#: schema.org properties of an article's metadata, not of its text
META_ITEMPROPS = frozenset({"author", "datePublished", "dateModified", "dateCreated", "publisher", "keywords"})
#: a line no longer than this whose text is mostly a date and links is a byline or dateline
META_LINE_CHARS = 120


def _is_meta_line(node: _Element, chars: int, links: int) -> bool:
    """Whether the short line ``node`` (``chars`` characters, ``links`` of them in links)
    is a byline or a dateline: mostly a ``<time>`` and links ("By Ann Smith, 3 May 2025").

    >>> from lxml import html
    >>> line = html.fromstring('<p>By <a href="/ann">Ann Smith</a>, <time>3 May 2025</time></p>')
    >>> _is_meta_line(line, 26, 9)
    True
    """
    dated = sum(len(text_of(time).strip()) for time in node.iter("time"))
    return dated > 0 and dated + links >= 0.6 * chars


def _is_note(aside: _Element) -> bool:
    """Whether the ``<aside>`` ``aside`` is a note of the text (a footnote, an admonition)."""
    return aside.get("role") == "note" or ASIDE_NOTE_RE.search(aside.get("class") or "") is not None


def _measure(body: _Element, visibility: Visibility) -> _Measured:
    """One walk over ``body``: the text each element holds (a list indexed by
    ``VISIBLE``, ``LINKS``, ``CHROME`` (0 until chrome is decided), ``CONTENT``,
    ``CONTROLS``), what is never measured being left out (see the module's docstring)."""
    texts: Texts = {}
    candidates: list[tuple[str, _Element]] = []
    hinted: dict[_Element, str] = {}
    furniture: list[_Element] = []
    related: list[_Element] = []
    current = [0, 0, 0, 0, 0, 0]
    stack: list[list[int]] = []
    flags: list[bool] = []  # per open element: measured as a container (its own frame)
    whole = -1  # the page's text, in characters (measured when first needed)

    def wraps(node: _Element) -> bool:
        """Whether the excluded ``node`` holds most of the page's text: then it is no
        chrome, it is the page (an unclosed ``<header>``, a page hidden until a script
        shows it, a ``<noscript>`` around the page)."""
        nonlocal whole
        if whole < 0:
            whole = len(text_of(body).strip())
        if whole < WRAPPER_CHARS or 2 * len(text_of(node).strip()) <= whole:
            return False
        visibility.wrappers.add(node)
        return True

    walker = etree.iterwalk(body, events=("start", "end"))
    for event, node in walker:
        if event == "end":
            if flags.pop():
                inner, current = current, stack.pop()
                if inner[VISIBLE] or inner[CONTROLS]:
                    texts[node] = inner
                    for column in (VISIBLE, LINKS, CONTENT, CONTROLS):
                        current[column] += inner[column]
                    if inner[VISIBLE] <= MAX_FURNITURE_CHARS and node is not body and is_furniture(text_of(node)):
                        furniture.append(node)  # a caption's credit line, a "Share this:" box
            tail = node.tail
            if tail and node is not body:
                chars = len(tail.strip())
                if chars:
                    current[VISIBLE] += chars
                    current[CONTENT] += chars
            continue
        tag = node.tag
        if not isinstance(tag, str):
            walker.skip_subtree()
            flags.append(False)
            continue
        if node is not body:
            if tag in NEVER_TEXT_TAGS and not (tag == "noscript" and wraps(node)):
                if tag in CONTROL_TAGS and not visibility.hidden(node) and node.get("type") != "hidden":
                    current[CONTROLS] += 1
                walker.skip_subtree()
                flags.append(False)
                continue
            if visibility.excluded(node) and not wraps(node):
                walker.skip_subtree()
                flags.append(False)
                continue
        items = node.items()
        if items:
            attrib = dict(items)
            if attrib.get("itemprop") in META_ITEMPROPS:
                furniture.append(node)  # (kept only while short: see _decide_chrome)
            hint, rule = _classify(tag, attrib)
            if (hint or (tag == "aside" and not _is_note(node))) and node is not body:
                hinted[node] = hint or "other"
            if rule:
                candidates.append((rule, node))
        else:
            if tag == "main" or tag == "article":
                candidates.append((tag, node))
            elif tag == "aside":  # an aside inside the article: a note, or a rail
                hinted[node] = "other"
        if tag in LEAF_TAGS:  # its text at once, not node by node
            walker.skip_subtree()
            if len(node):  # with children: its text in one C call (and the alt texts of its images)
                text = text_of(node)
                chars = len(text.strip()) + sum(len(image_alt(image)) for image in node.iter("img"))
                links = chars if tag == "a" else sum(len(text_of(anchor).strip()) for anchor in node.iter("a"))
            elif tag == "img":
                text = image_alt(node)
                chars, links = len(text), 0
            else:
                text = node.text or ""
                chars = len(text.strip())
                links = chars if tag == "a" else 0
            links = min(links, chars)
            if len(node) and tag == "figcaption":  # its photo credit, apart from its caption
                furniture.extend(_credits(node))
            if len(node) and tag in ("p", "label", "span"):  # a form's fields in its paragraphs
                current[CONTROLS] += sum(1 for control in node.iter(*CONTROL_TAGS) if control.get("type") != "hidden")
            if chars and (
                (tag == "a" and _is_button(node, text))
                or (chars <= MAX_FURNITURE_CHARS and is_furniture(text))
                or (links >= 0.4 * chars and tag in ("p", "strong", "b") and is_read_also(text))
                or (len(node) and chars <= META_LINE_CHARS and _is_meta_line(node, chars, links))
            ):
                furniture.append(node)
            elif chars <= MAX_FURNITURE_CHARS and tag in RELATED_TAGS and is_related_heading(text):
                related.append(node)
            if chars:
                texts[node] = [chars, links, 0, chars - links, 0, 0]
                current[VISIBLE] += chars
                current[LINKS] += links
                current[CONTENT] += chars - links
            flags.append(False)
            continue
        flags.append(True)
        stack.append(current)
        current = [0, 0, 0, 0, 0, 0]
        text = node.text
        if text:
            chars = len(text.strip())
            if chars:
                current[VISIBLE] += chars
                current[CONTENT] += chars
    texts[body] = current
    furniture = [
        node
        for node in furniture
        if node.get("itemprop") not in META_ITEMPROPS or 0 < texts.get(node, EMPTY)[VISIBLE] <= META_LINE_CHARS
    ]
    return _Measured(texts, candidates, hinted, furniture, related)


#: class words of a photo credit inside a caption
CREDIT_CLASS_RE = re.compile(r"copyright|credit|photographer|bildnachweis|caption[-_]*source|img-author", re.IGNORECASE)


def _credits(caption: _Element) -> list[_Element]:
    """The photo credits inside the caption ``caption``: an element that says so by
    its words ("Foto: ...", "© ...", "Getty Images"), or by its class when it is short.

    >>> from lxml import html
    >>> caption = html.fromstring("<figcaption>A bridge. <span class='copyright'>Ann Smith</span></figcaption>")
    >>> [node.text for node in _credits(caption)]
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


#: where a link standing alone is a button ("Learn more", "Edit this page"), not
#: an entry of a list or a table
BUTTON_PARENTS = frozenset({"div", "section", "article", "main", "body", "header", "span"})


def _is_button(link: _Element, text: str) -> bool:
    """Whether ``link`` (whose text is ``text``) stands alone, outside a sentence,
    list or table, with at most four words that read as a call to action or a
    prev/next link; a name alone (an API item, ``DirEntryExt2``) is no button.

    >>> from lxml import html
    >>> card = html.fromstring('<div><p>Fast imports.</p><a href="/f">Learn more</a></div>')
    >>> _is_button(card[1], "Learn more")
    True
    >>> inline = html.fromstring('<div>See <a href="/f">the guide</a> first.</div>')
    >>> _is_button(inline[0], "the guide")
    False
    >>> item = html.fromstring('<div><a class="trait" href="t.html">DirEntryExt2</a></div>')
    >>> _is_button(item[0], "DirEntryExt2")
    False
    """
    parent = link.getparent()
    if parent is None or parent.tag not in BUTTON_PARENTS:
        return False
    tail = link.tail
    if tail and tail.strip():
        return False
    previous = link.getprevious()
    before = parent.text if previous is None else previous.tail
    if before and before.strip():
        return False
    if ITEM_LINK_CLASSES.intersection((link.get("class") or "").split()):
        return False
    return len(text.split()) <= 4 and IDENTIFIER_RE.search(text) is None


#: what names code, not an action: snake_case, camelCase, ``::``, a call
IDENTIFIER_RE = re.compile(r"\w_\w|[a-z][A-Z]|::|\(\)")
#: the classes rustdoc gives a link to an API item, by its kind
ITEM_LINK_CLASSES = frozenset(
    {
        "struct", "fn", "trait", "enum", "mod", "macro", "type", "constant", "primitive", "union",
        "keyword", "attr", "derive", "traitalias", "static", "externcrate", "foreigntype", "method", "tymethod",
    }
)  # fmt: skip


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


def _cards(node: _Element, texts: Texts) -> bool:
    """Whether ``node`` is (or holds, one or two levels down) two or more teaser cards
    side by side: elements each holding a heading whose text is a link, and a short
    excerpt at most (a grid of "more stories", a row of related posts).

    >>> from lxml import html
    >>> card = "<div class='card'><h3><a href='/a'>A story</a></h3><p>Its first lines.</p></div>"
    >>> grid = html.fromstring("<section><h2>Read further</h2><div>" + card * 2 + "</div></section>")
    >>> _cards(grid, _measure(grid, ALL_VISIBLE).texts)
    True
    """
    for container in (node, *node, *(grandchild for child in node for grandchild in child)):
        children = [child for child in container if isinstance(child.tag, str) and texts.get(child)]
        if len(children) < 2:
            continue
        cards = 0
        for child in children:
            heading = next(child.iter(*HEADING_TAGS), None)
            if heading is None or _prose(texts.get(child, EMPTY)) > CARD_PROSE:
                continue
            text = texts.get(heading)
            if text is not None and text[VISIBLE] and text[LINKS] >= 0.8 * text[VISIBLE]:
                cards += 1
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
    short label, a list of linked items), ``"named"`` when it holds no more prose than
    what its name says it is holds (``HINT_SHAPES``: an author box, a comment section),
    ``""`` when it is not chrome."""
    if id(node) in protected:
        return ""
    text = texts.get(node)
    if text is None:
        return ""
    prose = _prose(text)
    if _link_density(text) >= CHROME_LINK_DENSITY:
        return "shape"
    if text[CONTROLS] and prose < WIDGET_PROSE:
        return "shape"
    if _heading_anchor(node):
        return ""
    if (prose < SHORT_PROSE and not _has_paragraph(node)) or _repeats(node, texts, links=kind != "comment"):
        return "shape"
    return "named" if prose <= HINT_SHAPES.get(kind, 0) else ""


def _is_code(node: _Element) -> bool:
    """Whether ``node`` is a code block (its spans are tokens, whatever their class)."""
    tag = node.tag
    if tag in ("pre", "code"):
        return True
    classes = node.get("class")
    return bool(classes) and ("fragment" in classes or "highlight" in classes)


def _decide_chrome(body: _Element, measured: _Measured) -> tuple[list[_Element], set[_Element]]:
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
            (_prose(text) > 0.5 * _prose(page) and _prose(text) >= SMALL_CHARS) or text[VISIBLE] > 0.5 * page[VISIBLE]
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
    >>> page = html.fromstring("<body><div><p>" + "Story. " * 80 + "</p><div class='box'><h3>Related posts</h3>"
    ...     "<ul><li><a href='/a'>One story</a></li><li><a href='/b'>Two stories</a></li></ul></div></div></body>")
    >>> measured = _measure(page, ALL_VISIBLE)
    >>> [node.get("class") for node in _headed_blocks(measured.related[0], page, measured.texts, set())]
    ['box']
    """
    node = heading
    while True:
        parent = node.getparent()
        if parent is None or parent is body or id(parent) in protected or parent.tag in ("main", "article"):
            break
        first = next((child for child in parent if isinstance(child.tag, str) and texts.get(child)), None)
        if first is not node or (parent.text and parent.text.strip()):
            break
        node = parent
    if node is not heading:
        text = texts.get(node, EMPTY)
        if _heading_anchor(node):
            return []
        if _link_density(text) >= RELATED_LINK_DENSITY or _repeats(node, texts):
            return [node]
        return []
    # the heading among the article's blocks: it and the blocks after it, to the next heading
    parent = heading.getparent()
    if parent is None or tag_of(heading) not in HEADING_TAGS:
        return []
    level = tag_of(heading)
    block = [heading]
    for sibling in heading.itersiblings():
        tag = tag_of(sibling)
        if tag in HEADING_TAGS and tag <= level:
            break
        if tag:
            block.append(sibling)
    if len(block) == 1:
        return []
    visible = sum(texts.get(node, EMPTY)[VISIBLE] for node in block[1:])
    links = sum(texts.get(node, EMPTY)[LINKS] for node in block[1:])
    return block if visible and links >= 0.5 * visible else []


def _descend(body: _Element, texts: Texts, needed: float) -> _Element:
    """The deepest element holding at least ``needed`` content characters."""
    node = body
    while True:
        best = None
        for child in node:
            text = texts.get(child)
            if text is not None and text[CONTENT] >= needed:
                best = child
                break  # at most one child holds a majority
        if best is None or best.tag in INLINE_TAGS:  # a <font> holding the text is not a container
            return node
        node = best


def _with_siblings(
    node: _Element, body: _Element, texts: Texts, hinted: dict[_Element, str] | None = None
) -> tuple[_Element, list[_Element]]:
    """``node``, widened to its parent with the siblings that continue it (readability's
    sibling rule), level by level while some do; the siblings that do not are left out.
    A sibling continues the node when it is prose of its own (``SIBLING_SHARE`` of the
    content weight, few links: the next section of a landing page, the second half of
    an article split by an ad), a part of the same sequence (the next ``<dl>`` of an
    index, the next section of a landing page), or the title block before it
    (the last heading sibling before the node and what lies between). A sibling named
    like chrome (``hinted``) continues it only as a part of the same sequence."""
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
                    kept[between] = _link_density(text) < 0.5 and text[CHROME] < text[VISIBLE]
                break
        for position, sibling in enumerate(siblings):
            text = texts.get(sibling, EMPTY)
            if not kept[position] and (
                (text[CONTENT] >= SIBLING_SHARE * weight and _link_density(text) < 0.5 and sibling not in hinted)
                or (_kept(text) and _same_kind(sibling, node))  # the next <dl> of an index
                # the text around a table or a code block: paragraphs of the same flow, and
                # a block of prose below or above it that is not a column of the layout
                or (text[CONTENT] and tag_of(sibling) in FLOW_TAGS and _link_density(text) < 0.5)
                or (
                    text[CONTENT] >= PARAGRAPH_CHARS
                    and _link_density(text) < 0.5
                    and sibling not in hinted
                    and not _is_column(sibling)
                )
            ):
                kept[position] = True
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


def _is_column(node: _Element) -> bool:
    """Whether ``node`` is a column of the page's layout grid (``col-md-4``, ``large-4``).

    >>> from lxml import html
    >>> [_is_column(html.fromstring(f'<div class="{c}">')) for c in ("col-md-4", "textblock", "large-4 columns")]
    [True, False, True]
    """
    return any(COLUMN_RE.match(token) for token in (node.get("class") or "").split())


#: the blocks of a text's own flow: a sibling of these beside the scored root continues it
FLOW_TAGS = frozenset({"p", "pre", "ul", "ol", "dl", "table", "blockquote", "h2", "h3", "h4", "h5", "h6"})
#: elements that are a part of a sequence when a sibling of the same kind is
SEQUENCE_TAGS = frozenset({"dl", "ul", "ol", "table", "section", "article", "li", "tr", "dt", "dd"})


def _same_kind(one: _Element, other: _Element) -> bool:
    """Whether ``one`` and ``other`` are parts of one sequence: the same tag and the same
    first class ("section section--hero" and "section section--features"; a ``<div>``
    must have one).

    >>> from lxml import html
    >>> page = html.fromstring('<div><div class="section a"></div><div class="section b"></div>'
    ...     '<div class="col-8"></div><div class="col-4"></div><dl></dl><dl></dl></div>')
    >>> [_same_kind(page[0], page[1]), _same_kind(page[2], page[3]), _same_kind(page[4], page[5])]
    [True, False, True]
    """
    if one.tag != other.tag:
        return False
    first = (one.get("class") or "").split()[:1]
    return first == (other.get("class") or "").split()[:1] and (bool(first) or one.tag in SEQUENCE_TAGS)


def _own_story(candidates: list[tuple[str, _Element]], texts: Texts, root: _Element) -> _Element | None:
    """Of several ``<article>`` each holding its own ``<h1>`` (the next stories an
    endless-scroll page appends to its own), the page's: the one whose ``<h1>`` the
    page's ``<title>`` names, else the first."""
    stories = [
        node
        for rule, node in candidates
        if rule == "article" and texts.get(node, EMPTY)[CONTENT] and node.find(".//h1") is not None
    ]
    if len(stories) < 2 or any(is_ancestor(one, other) for one in stories for other in stories if one is not other):
        return None
    title = " ".join(" ".join(node.itertext()) for node in root.getroottree().getroot().iter("title")).lower()
    for story in stories:
        heading = next(story.iter("h1"))
        words = " ".join(text_of(heading).split()).lower()
        if words and words in " ".join(title.split()):
            return story
    return stories[0]


def select_main_content(root: _Element, visibility: Visibility = ALL_VISIBLE) -> Selection:
    """The main content of the page whose tree holds ``root``; ``visibility`` says
    what a reader sees of it (:meth:`crawler.lib.nodes.Visibility.of`).

    >>> from lxml import html
    >>> page = html.fromstring(
    ...     "<html><body><main></main><div class='wrap'><div class='story'><h1>Title</h1>"
    ...     "<p>" + "Words of the story. " * 20 + "</p></div>"
    ...     "<div class='related'><a href='/a'>Another story</a></div></div></body></html>")
    >>> selection = select_main_content(page)
    >>> selection.root.get("class"), selection.rule, selection.widened
    ('story', 'hint', False)
    """
    body = body_of(root)
    measured = _measure(body, visibility)
    chrome, named = _decide_chrome(body, measured)
    texts = measured.texts
    page = texts.get(body, EMPTY)
    skip_candidates = set(chrome)
    candidates = [
        (rule, node)
        for rule, node in measured.candidates
        if not any(ancestor in skip_candidates for ancestor in node.iterancestors())
    ]
    if page[CONTENT] < SMALL_CHARS and SMALL_CHARS <= _prose(page) > page[CONTENT] / 0.15:
        # what is not chrome is a trifle beside the prose that is (a forum thread's posts
        # named "comment"): the whole body, or the page would send nothing
        return _finish(body, "body", texts, [], page, visibility, widened=bool(chrome), named=named)
    story = _own_story(candidates, texts, body)
    if story is not None:
        return _finish(story, "article", texts, chrome + measured.furniture, page, visibility, named=named)
    scored = _descend(body, texts, MAJORITY * page[CONTENT]) if page[CONTENT] else body
    scored_text = texts.get(scored, EMPTY)
    articles = sum(1 for rule, _node in candidates if rule == "article")
    skipped = chrome + measured.furniture
    headings = [h1 for h1 in body.iter("h1") if texts.get(h1, EMPTY)[CONTENT]]
    title = headings[0] if len(headings) == 1 else None
    for rule in RULE_ORDER:
        for candidate_rule, candidate in candidates:
            if candidate_rule != rule:
                continue
            text = texts.get(candidate, EMPTY)
            if candidate is scored or is_ancestor(candidate, scored):
                # what it adds is not chrome: the rest of the page's main text, at most as
                # much again (a bare #main or #content id may wrap the whole layout: less)
                share = 0.25 if rule == "id" else 1.0
                agrees = _kept(text) - _kept(scored_text) <= share * _kept(scored_text) + 200
            elif is_ancestor(scored, candidate):
                agrees = text[CONTENT] > 0.5 * scored_text[CONTENT]
            else:
                agrees = False
            if not agrees and page[CONTENT] < SMALL_CHARS:
                # too little prose to judge by (a page of links: an index, a table of
                # contents): the page's own markup
                agrees = bool(_kept(text)) and (rule != "article" or articles == 1)
            if not agrees and rule in ("main", "role-main") and _kept(text):
                # the page's declared main content, short or mostly links: it stands when
                # it holds the page's title, or leaves out no more than the audit allows
                agrees = (title is not None and is_ancestor(candidate, title)) or not _audit_fails(
                    _unlabelled(page) - _unlabelled(text), text[CONTENT]
                )
            if agrees:
                core = scored if scored is not candidate and is_ancestor(candidate, scored) else None
                return _finish(
                    candidate, rule, texts, skipped, page, visibility, core=core, named=named, hinted=measured.hinted
                )
    if page[CONTENT] < SMALL_CHARS:  # too little prose to score by, and no markup: all but chrome
        return _finish(body, "body", texts, skipped, page, visibility, named=named)
    node, left_out = _with_siblings(scored, body, texts, measured.hinted)
    return _finish(
        node, "scored" if node is not body else "body", texts, skipped, page, visibility, left_out, named=named
    )


#: what chrome by its name alone may hold of the selection's text before the audit writes it
NAMED_CHARS = 600
NAMED_SHARE = 0.5
#: the same for a stack of teasers beside the article (API docs repeat their items too)
SHAPED_SHARE = 0.25
#: a block beside the page's text with this share of links is a rail of links
AROUND_LINK_DENSITY = 0.5


def _around(
    root: _Element, core: _Element, texts: Texts, hinted: dict[_Element, str] | None = None
) -> tuple[list[_Element], list[_Element], list[_Element]]:
    """The blocks of ``root`` beside ``core`` (the element holding most of its prose)
    that are mostly links or a stack of linked teasers: the breadcrumbs, prev/next
    links, "more stories" rails and tables of contents a ``<main>`` holds around its
    article; and, second, the blocks beside it named like chrome (``hinted``: an
    author box, a "more from" box) or shaped like a stack of teasers with their
    excerpts, which only the audit's bound on such chrome lets stay out. Parts of the
    same sequence as the path to ``core`` (the next section of a document) stay.

    >>> from lxml import html
    >>> main = html.fromstring("<main><div class='body'>" + "<p>" + "Prose words here. " * 30 + "</p></div>"
    ...     "<div class='more'><a href='/a'>Another story</a> <a href='/b'>And another one</a></div></main>")
    >>> texts = _measure(main, ALL_VISIBLE).texts
    >>> [node.get("class") for node in _around(main, main[0], texts)[0]]
    ['more']
    """
    hinted = hinted or {}
    found: list[_Element] = []
    named: list[_Element] = []
    shaped: list[_Element] = []
    node = core
    while node is not root:
        parent = node.getparent()
        if parent is None:
            break
        after = False
        for sibling in parent:
            if sibling is node:
                after = True
                continue
            if not isinstance(sibling.tag, str) or _same_kind(sibling, node):
                continue
            text = texts.get(sibling)
            if text is None or not _kept(text):
                continue
            if hinted.get(sibling, "other") != "other" and not _heading_anchor(sibling):
                named.append(sibling)
                continue
            if text[CONTROLS] and _prose(text) < WIDGET_PROSE:
                found.append(sibling)  # a form beside the article: subscribe, search, comment
                continue
            density = _link_density(text)
            rail = len(sibling.findall(".//a")) >= 2  # (a heading with its permalink is no rail)
            if rail and density >= AROUND_LINK_DENSITY:
                found.append(sibling)
            elif rail and ((density >= 0.2 and _repeats(sibling, texts)) or _cards(sibling, texts)):
                shaped.append(sibling)  # teasers, by their shape: bounded as chrome by name is
            elif after and _prose(text) < TRAILING_PROSE and not _has_heading_section(sibling):
                shaped.append(sibling)  # a short line after the article: a prompt, a notice
        node = parent
    return found, named, shaped


#: a block after the article with less prose than this is a prompt or a notice
TRAILING_PROSE = 200


def _has_heading_section(node: _Element) -> bool:
    """Whether ``node`` holds a heading followed by a paragraph: a section of a text."""
    heading = next(node.iter(*HEADING_TAGS), None)
    return heading is not None and heading.getnext() is not None


def _audit_fails(left_out: int, selected: int) -> bool:
    """Whether a selection that leaves out ``left_out`` characters of content weight
    and keeps ``selected`` left out too much (see the module's docstring).

    >>> _audit_fails(100, 0), _audit_fails(500, 3000), _audit_fails(500, 1000)
    (False, False, True)
    """
    return left_out > AUDIT_CHARS and left_out > AUDIT_SHARE * selected


def _finish(
    node: _Element,
    rule: str,
    texts: Texts,
    skipped: list[_Element],
    page: Sequence[int],
    visibility: Visibility,
    left_out: list[_Element] | None = None,
    *,
    widened: bool = False,
    core: _Element | None = None,
    named: set[_Element] | None = None,
    hinted: dict[_Element, str] | None = None,
) -> Selection:
    """The selection of ``node`` with the chrome inside it and the siblings in
    ``left_out`` left out, joined to its title block, audited: widened to an ancestor
    when it leaves out too much of the page's content weight."""
    body = body_of(node)
    text = texts.get(node, EMPTY)
    selected = text[CONTENT] - sum(texts.get(n, EMPTY)[CONTENT] for n in left_out or ())
    missed = _unlabelled(page) - _unlabelled(text) + sum(_unlabelled(texts.get(n, EMPTY)) for n in left_out or ())
    if _audit_fails(missed, selected) and node is not body:
        widened = True
        left_out = None
        for ancestor in node.iterancestors():
            node = ancestor
            text = texts.get(node, EMPTY)
            selected, missed = text[CONTENT], _unlabelled(page) - _unlabelled(text)
            if node is body or not _audit_fails(missed, selected):
                break
    skip = set(left_out or ())
    skip.update(chrome for chrome in skipped if is_ancestor(node, chrome))
    if core is not None and not widened:
        around, beside, shaped = _around(node, core, texts, hinted)
        skip.update(around, beside, shaped)
        named = (named or set()) | set(beside)
    else:
        shaped = []
    title = _title_block(node, body, texts)
    if title is not None:
        node = _join(node, title, skip)
    # chrome by its name, or by the shape of teasers, may not hold much of what the page
    # says: past the audit's bounds it is written, and the selection counts as widened
    selected = texts.get(node, EMPTY)[CONTENT]
    for group, share in ((named or set(), NAMED_SHARE), (set(shaped), SHAPED_SHARE)):
        dropped = [n for n in skip if n in group]
        if dropped and sum(_prose(texts.get(n, EMPTY)) for n in dropped) > max(NAMED_CHARS, share * selected):
            skip.difference_update(dropped)
            widened = True
    skip = {n for n in skip if not any(a in skip for a in n.iterancestors())}
    before = tuple(_title_outside(node, skip, visibility))
    written = _unlabelled(texts.get(node, EMPTY)) - sum(_unlabelled(texts.get(n, EMPTY)) for n in skip)
    missed = max(0, _unlabelled(page) - written - sum(_unlabelled(texts.get(n, EMPTY)) for n in before))
    return Selection(node, frozenset(skip), rule=rule, widened=widened, left_out=missed, before=before)


TITLE_XPATH = etree.XPath("(.//*[contains(concat(' ', normalize-space(@class), ' '), ' title ')])[1]")


def _title_block(node: _Element, body: _Element, texts: Texts) -> _Element | None:
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
        if text[VISIBLE] > limit or text[CHROME] or _link_density(text) > 0.3:
            break
        block, parent = parent, parent.getparent()
    return block if _precedes(block, node) else None


def _precedes(first: _Element, second: _Element) -> bool:
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


def _join(node: _Element, title: _Element, skip: set[_Element]) -> _Element:
    """The nearest element holding both ``node`` and ``title`` (which comes before it),
    with what it holds before the title and after ``node`` added to ``skip``: what
    lies between a title and its text (an intro paragraph above a table) is kept;
    returns that element.

    >>> from lxml import html
    >>> page = html.fromstring("<div><p>Top</p><div><h2 class='title'>T</h2></div><p>Intro</p>"
    ...     "<div id='t'><table></table></div><p>After</p></div>")
    >>> skip = set()
    >>> _join(page.get_element_by_id("t"), page.find(".//h2"), skip) is page
    True
    >>> sorted(node.text for node in skip)
    ['After', 'Top']
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
    title_branch = title_path[title_path.index(common) - 1] if common is not title else title

    def before_and_after(ancestor: _Element, first: _Element | None, last: _Element | None) -> None:
        """Skip the children of ``ancestor`` before ``first`` and after ``last``."""
        position = "before" if first is not None else "between"
        for child in ancestor:
            if child is first:
                position = "between"
            if position != "between" and isinstance(child.tag, str):
                skip.add(child)
            if child is last:
                position = "after"

    before_and_after(common, title_branch, node_path[-1])
    for below, ancestor in pairwise(node_path):  # after node, on its way up
        before_and_after(ancestor, None, below)
    title_below = title_path[: title_path.index(common)]
    for below, ancestor in pairwise(title_below):  # before the title
        before_and_after(ancestor, below, None)
    return common


def _title_outside(content: _Element, skip: set[_Element], visibility: Visibility) -> list[_Element]:
    """The page's title block when it stands above the main content ``content``
    rather than in it (Hugo themes put the title and its lead paragraph above the
    content's ``<div>``): the nearest visible ``<h1>`` before ``content``, outside page
    chrome, and the paragraphs right after it; nothing when ``content`` holds an ``<h1>``.

    >>> from lxml import html
    >>> page = html.fromstring("<body><header><h1>Site</h1></header><div class='c'><h1>Title</h1>"
    ...     "<p>Lead.</p><div id='content'><p>Text</p></div></div></body>")
    >>> [node.text for node in _title_outside(page.get_element_by_id("content"), set(), ALL_VISIBLE)]
    ['Title', 'Lead.']
    >>> _title_outside(page.find(".//div"), set(), ALL_VISIBLE)  # holds its own <h1>
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
