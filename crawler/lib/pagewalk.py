"""One walk over a page's body: what each element holds, and what it is named.

The first step of the main-content selection (:mod:`crawler.lib.maincontent`). For every
element it counts characters by column (``VISIBLE``, ``LINKS``, ``CHROME``, ``CONTENT``,
``CONTROLS``, ``HINTED``), and notes the semantic containers, names of chrome
(:func:`name_hint`: a hint, never evidence on its own), furniture and headings that name
links.

Pure functions over an lxml tree; the tree is never modified.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lxml import etree

from crawler.lib.furniture import (
    MAX_FURNITURE_CHARS,
    READING_TIME_RE,
    is_call,
    is_dateline,
    is_furniture,
    is_read_also,
    is_related_heading,
    opens_credit,
)
from crawler.lib.lines import (
    CREDIT_LINE_CHARS,
    DATE_LINES,
    DOCUMENT_PARTS,
    IMAGE_CREDIT_CLASS_RE,
    NESTED_BLOCKS,
    NESTING_LINES,
    alone,
    attrib_class,
    credited,
    credits,
    in_a_run,
    is_button,
    nested_furniture,
)
from crawler.lib.nodes import (
    ASIDE_NOTE_RE,
    NEVER_TEXT_TAGS,
    Visibility,
    image_alt,
    text_of,
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
    "author": ("author[a-z]*", "autor[a-z]*", "byline", "bio", "about-the-author", "saboxplugin"),
    "related": (
        "related[a-z]*", "recommended", "recommendations?", "more-stories", "most-popular", "most-read",
        "read-next", "read-more", "also-read", "trending", "outbrain", "taboola", "yarpp",
        "crp", "lee-tambien", "veja-tambem", "mehr-zum-thema",
        "next-?(?:post|story|article|entry)s?", "prev(?:ious)?-?(?:post|story|article|entry)s?",
    ),
    "widget": (
        "share[a-z]*", "sharing", "sharedaddy", "shariff", "social[a-z]*", "addthis", "sociable", "teilen",
        "newsletter[a-z]*", "subscribe", "subscription", "signup", "sign-up", "optin", "donat[a-z]*",
        "cookie[a-z]*", "consent", "gdpr", "cmp", "banner", "promo", "promos", "promotion", "sponsored",
        "sponsor", "advert[a-z]*", "ads?", "adsense", "dfp", "popup", "modal", "overlay", "paywall",
        "abo", "abowerbung",
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
#: what a wrapper around the page holds: the page's title and a paragraph, or its main
WRAPPED_TEXT_XPATH = etree.XPath(
    "boolean(.//*[@role='main']) or (boolean(.//h1) and boolean(.//p[string-length(normalize-space(.)) >= 80]))"
)
#: a page with less text than this is never wrapped whole in a landmark
WRAPPER_CHARS = 400
#: the elements that may head a block, by their text
RELATED_TAGS = frozenset({"h2", "h3", "h4", "h5", "h6", "p", "span", "strong", "b", "a", "em"})
#: text-level elements: the scored root is never one of them
INLINE_TAGS = LEAF_TAGS | {"font", "big", "tt", "nobr", "strike", "bdi", "bdo", "dfn", "ins", "del"}
#: form controls: a block holding one is a widget (a form, a search box, a button bar)
CONTROL_TAGS = frozenset({"input", "select", "textarea", "button"})
#: too little prose to judge a page by: its own markup decides
SMALL_CHARS = 400
#: what ``measure_body`` counts for each element, in characters of stripped text
VISIBLE = 0  # all text a reader sees
LINKS = 1  # inside <a>
CHROME = 2  # inside page chrome
CONTENT = 3  # outside both: the content weight
CONTROLS = 4  # form controls inside (a count)
HINTED = 5  # content weight inside elements named like chrome that are not chrome
EMPTY = (0, 0, 0, 0, 0, 0)


def kept_chars(text: Sequence[int]) -> int:
    """Visible characters left once the chrome inside is left out."""
    return text[VISIBLE] - text[CHROME]


def prose_chars(text: Sequence[int]) -> int:
    """Visible characters outside links."""
    return text[VISIBLE] - text[LINKS]


def unlabelled_chars(text: Sequence[int]) -> int:
    """Content weight outside elements named like chrome: what the audit asks for."""
    return text[CONTENT] - text[HINTED]


def link_density(text: Sequence[int]) -> float:
    return text[LINKS] / text[VISIBLE] if text[VISIBLE] else 0.0


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
class Measured:
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


#: the blocks and lines that may be furniture by their words: never code, a list's
#: item, a definition or a table's cell (``image: nginx`` in YAML, "Last modified date"
#: in a reference)
FURNITURE_BLOCKS = frozenset({"div", "section", "aside", "header", "footer", "figure", "p", "span"})
FURNITURE_LINES = frozenset(
    {"p", "span", "strong", "b", "em", "i", "small", "a", "h2", "h3", "h4", "h5", "h6", "figcaption", "label", "time"}
)
#: the paragraphs that may be a call to subscribe, follow or support by their words
CALL_LINES = frozenset({"p", "strong", "b", "em", "i"})
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
    >>> line = html.fromstring('<p>By <a href="/ann">Ann Smith</a>      <time>Feb 8, 2020</time>      5 min read</p>')
    >>> _is_meta_line(line, 45, 9)
    True
    """
    dated = sum(len(text_of(time).strip()) for time in node.iter("time"))
    if not dated:
        return False
    if dated + links < 0.6 * chars:
        # what is left besides the date and the links: "By", a separator, a reading time
        text = READING_TIME_RE.sub("", " ".join(text_of(node).split()))
        if dated + links < 0.6 * len(text):
            return False
    return not in_a_run(node)  # (a changelog's dated lines are its text)


def _is_note(aside: _Element) -> bool:
    """Whether the ``<aside>`` ``aside`` is a note of the text (a footnote, an admonition)."""
    return aside.get("role") == "note" or ASIDE_NOTE_RE.search(aside.get("class") or "") is not None


def measure_body(body: _Element, visibility: Visibility) -> Measured:
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
            scripts = sum(len(text_of(code)) for code in body.iter("script", "style", "template"))
            whole = len(text_of(body).strip()) - scripts
        if whole < WRAPPER_CHARS or 2 * len(text_of(node).strip()) <= whole:
            return False
        if next(node.iter("main", "article"), None) is None and not WRAPPED_TEXT_XPATH(node):
            return False  # a big navigation or footer on a thin page: no text of its own
        visibility.wrappers.add(node)
        return True

    walker = etree.iterwalk(body, events=("start", "end", "comment"))
    for event, node in walker:
        if event == "comment":  # (no start or end: what follows it is its parent's text)
            tail = node.tail
            if tail:
                chars = len(tail.strip())
                if chars:
                    current[VISIBLE] += chars
                    current[CONTENT] += chars
            continue
        if event == "end":
            if flags.pop():
                inner, current = current, stack.pop()
                if inner[VISIBLE] or inner[CONTROLS]:
                    texts[node] = inner
                    for column in (VISIBLE, LINKS, CONTENT, CONTROLS):
                        current[column] += inner[column]
                    if (
                        inner[VISIBLE] <= MAX_FURNITURE_CHARS
                        and node is not body
                        and node.tag in FURNITURE_BLOCKS
                        and (
                            next(node.iter(*DOCUMENT_PARTS), None) is None
                            or not any(text_of(part).strip() for part in node.iter(*DOCUMENT_PARTS))
                        )  # (a share bar's list of icons holds no text)
                        and (
                            is_furniture(text := text_of(node))
                            or IMAGE_CREDIT_CLASS_RE.search(attrib_class(node))
                            or (is_dateline(text) and not in_a_run(node))
                        )
                    ):
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
                furniture.append(node)  # (kept only while short: see decide_chrome)
            hint, rule = _classify(tag, attrib)
            if hint and node is not body:
                hinted[node] = hint or "other"
            if rule:
                candidates.append((rule, node))
        else:
            if tag == "main" or tag == "article":
                candidates.append((tag, node))
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
            if len(node) and (tag == "figcaption" or "caption" in attrib_class(node)):  # its photo credit, apart
                furniture.extend(credits(node))
            if len(node) and tag in NESTING_LINES and next(node.iterdescendants(*NESTED_BLOCKS), None) is not None:
                furniture.extend(nested_furniture(node))  # (a <div> the parser left inside a <p> or <h2>)
            if len(node) and tag in ("p", "label", "span"):  # a form's fields in its paragraphs
                current[CONTROLS] += sum(1 for control in node.iter(*CONTROL_TAGS) if control.get("type") != "hidden")
            if chars and (
                (tag == "a" and is_button(node, text))
                or (chars <= MAX_FURNITURE_CHARS and tag in FURNITURE_LINES and is_furniture(text))
                or (chars > MAX_FURNITURE_CHARS and tag in CALL_LINES and is_call(text))
                or (
                    tag in DATE_LINES
                    and chars <= 60
                    and is_dateline(text)
                    and alone(node)
                    and (tag == "p" or not in_a_run(node))
                )
                or (
                    chars <= CREDIT_LINE_CHARS
                    and IMAGE_CREDIT_CLASS_RE.search(attrib_class(node))
                    and (chars <= MAX_FURNITURE_CHARS or opens_credit(text))
                )
                or (chars <= MAX_FURNITURE_CHARS and credited(node, text))
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
    return Measured(texts, candidates, hinted, furniture, related)


TITLE_XPATH = etree.XPath("(.//*[contains(concat(' ', normalize-space(@class), ' '), ' title ')])[1]")
