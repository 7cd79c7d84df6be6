"""Where a page's main content is, on any page: with or without semantic markup.

One walk over ``<body>`` measures every element's text: all visible characters, those
inside links, and those inside page chrome (comment sections, related-story rails,
share bars, cookie banners, bylines, breadcrumbs, pagination... recognised by class,
id, role and aria attributes; short stand-alone links such as "Learn more" and lines
such as "Was this page helpful?"). Content weight is what remains: visible text
outside links and outside chrome. Then:

- the scored root is the deepest element holding most of the page's content weight,
  widened level by level to the siblings that continue it (its title block, the next
  section of a landing page, the second half of an article split by an ad);
- a semantic container (``<main>``, ``role=main``, ``articleBody``, an ``<article>``,
  ``#content``...) wins when it agrees with that: it holds the scored root and adds
  little besides, or it sits inside it and holds more than half of its weight. An
  empty or tiny ``<main>`` next to the article never wins;
- the page's title block (its one ``<h1>``), when it sits before the root, outside it,
  is joined to it;
- inside the chosen root, chrome is skipped: the :class:`Selection` carries the set of
  elements the writer leaves out;
- a root whose text is implausibly small against the page's is widened to ``<body>``,
  and a page whose text is nearly all named chrome (a forum thread of "comments") is
  sent whole.

Pure functions over an lxml tree (the one parsel built); the tree is never modified.
About a third of the markdown writer's time on a docs page.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lxml import etree

from crawler.lib.markdown import SKIP_TAGS, _is_hidden, _tag

if TYPE_CHECKING:
    from lxml.etree import _Element

#: class or id words of page chrome: a whole class token (or the id) made of one of
#: these, alone or with one or two words before it and anything after it ("post-comments",
#: "related-posts", "share-bar"), unless it ends in content words ("wy-nav-content")
#: or states a flag ("has-comments"); never matched on ``<article>``, ``<main>``...
CHROME_WORDS = (
    "comment(?!ary)[a-z]*", "disqus(?:_thread)?", "respond", "replies",
    "related[a-z]*", "recommended", "recommendations", "more-stories", "most-popular", "most-read",
    "read-next", "read-more", "also-read", "trending", "outbrain", "taboola",
    "share", "shares", "sharing", "sharedaddy", "social[a-z]*", "addthis", "sociable",
    "newsletter[a-z]*", "subscribe", "subscription", "signup", "sign-up", "optin",
    "cookie[a-z]*", "consent", "gdpr", "cmp",
    "banner", "promo", "promos", "promotion", "sponsored", "sponsor", "advert",
    "advertisement", "ads?", "adsense", "dfp",
    "breadcrumbs?", "breadcrumb-?trail", "crumbs?", "skip-?link", "skip-?to-?content", "skip",
    "pagination", "pager", "paging", "prev", "prevnext", "prev-next", "nextprev", "meta",
    "sidebar[a-z]*", "side-bar", "rail", "toolbar", "table-of-contents", "on-this-page",
    "nav", "navbar", "navigation", "menu", "masthead", "footer",
    "popup", "modal", "overlay", "tags", "tag-?list", "tag-?cloud", "tag-?filter", "filters?",
    "kicker", "eyebrow", "updated", "modified", "edit", "print-none", "noprint", "no-print", "hidden-print",
    "categor(?:y|ies)", "byline", "author", "dateline", "date", "time", "timestamp", "lastmod",
    "feedback", "support", "sr-only", "visually-hidden", "screen-reader-text", "announcement",
    "logos?", "logo-wall", "btn", "buttons?", "reviews?", "stars", "ratings?", "tax", "shipping", "delivery",
)  # fmt: skip
CHROME_RE = re.compile(
    r"^(?!(?:has|with|no|is|show|hide)[-_])(?!.*(?:content|body|main|article)$)"
    r"(?:[a-z0-9]+[-_]+){0,2}(?:" + "|".join(CHROME_WORDS) + r")(?:$|[-_])",
    re.IGNORECASE,
)
#: roles and aria labels of chrome
CHROME_ROLES = frozenset(
    {"navigation", "banner", "contentinfo", "complementary", "search", "dialog", "alertdialog", "menu", "menubar"}
)
CHROME_LABEL_RE = re.compile(r"breadcrumb|pagination|share|cookie|consent", re.IGNORECASE)
#: class tokens or ids that name the article body itself (a semantic hint)
CONTENT_HINT_RE = re.compile(
    r"^(?:(?:entry|post|article|story|page|blog|main|single)[-_]?(?:content|body|text)"
    r"|articlebody|article__body|article__content|story|post|entry|hentry|markdown-body|rst-content"
    r"|content[-_](?:main|body)|main[-_]?content|page[-_]?content)$",
    re.IGNORECASE,
)
#: elements never pruned as chrome by their class: a site's article often carries
#: "post has-comments"-like classes, and a table cell or list item named "date" is
#: part of its table or list
NEVER_CHROME_TAGS = frozenset(
    {
        "html", "body", "main", "article", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "code",
        "table", "thead", "tbody", "tr", "td", "th", "li", "dt", "dd", "caption", "figcaption",
    }
)  # fmt: skip
#: the text of a short block that is page furniture whatever its markup
FURNITURE_RE = re.compile(
    r"\s*(?:was this (?:page |article |section |answer )?(?:helpful|useful)|last (?:updated|modified|edited|reviewed)\b"
    r"|edit (?:this page|on github)\s*$|share (?:this|on)\b|print this page)",
    re.IGNORECASE,
)
#: elements measured whole (their text in one C call): text-level elements that
#: neither hold the page's layout nor carry its chrome
LEAF_TAGS = frozenset(
    {
        "p", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "a", "span", "b", "strong", "i", "em",
        "code", "small", "img", "br", "figcaption", "dt", "label", "time", "abbr", "sup", "sub",
        "cite", "blockquote", "address", "summary", "caption", "kbd", "var", "samp", "mark", "q", "u", "s",
    }
)  # fmt: skip
#: text-level elements: the scored root is never one of them
INLINE_TAGS = LEAF_TAGS | {"font", "big", "tt", "nobr", "strike", "bdi", "bdo", "dfn", "ins", "del"}
HEADING_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
#: an element holding this share of the page's content weight is the scored root
MAJORITY = 0.7
#: a sibling with this share of the root's content weight continues it
SIBLING_SHARE = 0.2
#: a root with fewer visible characters than this share of the page's is implausible...
SMALL_SHARE = 0.15
#: ... unless it has at least this many
SMALL_CHARS = 400


#: what ``_measure`` counts for each element, in characters of stripped text
VISIBLE = 0  # all text a reader sees
LINKS = 1  # inside <a>
CHROME = 2  # inside page chrome
CONTENT = 3  # outside both: the content weight
EMPTY = (0, 0, 0, 0)


def _kept(text: Sequence[int]) -> int:
    """Visible characters left once the chrome inside is pruned."""
    return text[VISIBLE] - text[CHROME]


def _prose(text: Sequence[int]) -> int:
    """Visible characters outside links."""
    return text[VISIBLE] - text[LINKS]


def _link_density(text: Sequence[int]) -> float:
    return text[LINKS] / text[VISIBLE] if text[VISIBLE] else 0.0


@dataclass(frozen=True)
class Selection:
    """The main content of a page: write ``root``, leaving out the elements in
    ``skip``. ``rule`` names what chose the main content (``main``, ``role-main``,
    ``hint``, ``article``, ``id``, ``scored``, ``body``; the root may be an ancestor of
    what it chose, joined to the page's title block, with the rest in ``skip``);
    ``fallback`` says that what was chosen looked implausibly small (or the page's text
    was nearly all chrome) and ``<body>`` was taken instead."""

    root: _Element
    skip: frozenset[_Element] = field(default_factory=frozenset)
    rule: str = "body"
    fallback: bool = False


def is_chrome(node: _Element) -> bool:
    """Whether ``node``'s class, id, role or aria label names page chrome.

    >>> from lxml import html
    >>> [is_chrome(html.fromstring(s)) for s in (
    ...     '<div class="post-comments">', '<div id="related-posts">', '<ul class="share">',
    ...     '<div role="navigation">', '<div class="entry-content">', '<div class="commentary">',
    ...     '<article class="post has-comments">', '<div class="wy-nav-content">')]
    [True, True, True, True, False, False, False, False]
    """
    tag = node.tag
    if not isinstance(tag, str):
        return False
    get = node.attrib.get
    return _is_chrome(tag, get("class", ""), get("id", ""), get("role", ""), get("aria-label", ""))


def _is_chrome(tag: str, classes: str, ident: str, role: str, label: str) -> bool:
    if tag in NEVER_CHROME_TAGS:
        return False
    if role and role.lower() in CHROME_ROLES:
        return True
    if label and CHROME_LABEL_RE.search(label):
        return True
    if ident and CHROME_RE.match(ident) and not CONTENT_HINT_RE.match(ident):
        return True
    if classes:
        tokens = classes.split()
        if any(CONTENT_HINT_RE.match(token) for token in tokens):
            return False
        return any(CHROME_RE.match(token) for token in tokens)
    return False


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


def _measure(
    body: _Element, exempt: frozenset[_Element] = frozenset()
) -> tuple[dict[_Element, list[int]], list[tuple[str, _Element]], list[_Element]]:
    """One walk over ``body``: the text each element holds (a list indexed by
    ``VISIBLE``, ``LINKS``, ``CHROME``, ``CONTENT``), the semantic
    candidates in document order, the chrome elements (outermost first; those in
    ``exempt`` are not chrome)."""
    texts: dict[_Element, list[int]] = {}
    candidates: list[tuple[str, _Element]] = []
    chrome_nodes: list[_Element] = []
    current = [0, 0, 0, 0]
    stack: list[list[int]] = []
    flags: list[int] = []  # per open element: 0 skipped or measured whole, else 1 walked | 2 chrome | 4 article
    chrome_depth = article_depth = 0
    walker = etree.iterwalk(body, events=("start", "end"))
    for event, node in walker:
        if event == "end":
            flag = flags.pop()
            if flag:
                if flag & 2:
                    chrome_depth -= 1
                if flag & 4:
                    article_depth -= 1
                inner, current = current, stack.pop()
                if inner[VISIBLE]:
                    texts[node] = inner
                    current[VISIBLE] += inner[VISIBLE]
                    current[LINKS] += inner[LINKS]
                    current[CHROME] += inner[CHROME]
                    current[CONTENT] += inner[CONTENT]
            tail = node.tail
            if tail and node is not body:
                chars = len(tail.strip())
                if chars:
                    current[VISIBLE] += chars
                    current[CHROME if chrome_depth else CONTENT] += chars
            continue
        tag = node.tag
        if not isinstance(tag, str) or (
            node is not body and (tag in SKIP_TAGS or tag == "footer" or (tag == "header" and not article_depth))
        ):
            walker.skip_subtree()
            flags.append(0)
            continue
        flag = 1
        items = node.items()
        if items:
            attrib = dict(items)
            if ("hidden" in attrib or "aria-hidden" in attrib or "style" in attrib) and _is_hidden(node):
                walker.skip_subtree()
                flags.append(0)
                continue
            chrome, rule = _classify(tag, attrib)
            if chrome and "id" in attrib and _heading_anchor(node, tag, attrib):
                chrome = False
            if chrome and node is not body and node not in exempt:
                flag |= 2
                if not chrome_depth:
                    chrome_nodes.append(node)
                chrome_depth += 1
            if rule and not chrome_depth:
                candidates.append((rule, node))
        elif (tag == "main" or tag == "article") and not chrome_depth:
            candidates.append((tag, node))
        if tag in LEAF_TAGS:  # its text at once, not node by node
            walker.skip_subtree()
            if len(node):  # with children: its text in one C call
                text = _text_of(node)
                chars = len(text.strip())
                links = chars if tag == "a" else sum(len(_text_of(anchor).strip()) for anchor in node.iter("a"))
            else:
                text = node.text or ""
                chars = len(text.strip())
                links = chars if tag == "a" else 0
            links = min(links, chars)
            if (
                chars
                and not chrome_depth
                and ((tag == "a" and _is_button(node, text)) or (chars < 60 and FURNITURE_RE.match(text)))
            ):
                chrome_nodes.append(node)
            measured = [chars, links, chars if chrome_depth else 0, 0 if chrome_depth else chars - links]
            if chars:
                texts[node] = measured
                current[VISIBLE] += chars
                current[LINKS] += links
                current[CHROME] += measured[CHROME]
                current[CONTENT] += measured[CONTENT]
            if flag & 2:
                chrome_depth -= 1
            flags.append(0)
            continue
        if tag == "article":
            flag |= 4
            article_depth += 1
        flags.append(flag)
        stack.append(current)
        current = [0, 0, 0, 0]
        text = node.text
        if text:
            chars = len(text.strip())
            if chars:
                current[VISIBLE] += chars
                current[CHROME if chrome_depth else CONTENT] += chars
    texts[body] = current
    return texts, candidates, chrome_nodes


#: where a link standing alone is a button ("Learn more", "Edit this page"), not
#: an entry of a list or a table
BUTTON_PARENTS = frozenset({"div", "section", "article", "main", "body", "header", "span"})


def _is_button(link: _Element, text: str) -> bool:
    """Whether ``link`` (whose text is ``text``) stands alone, outside a sentence,
    list or table, with at most four words: a call to action or a prev/next link.

    >>> from lxml import html
    >>> card = html.fromstring('<div><p>Fast imports.</p><a href="/f">Learn more</a></div>')
    >>> _is_button(card[1], "Learn more")
    True
    >>> inline = html.fromstring('<div>See <a href="/f">the guide</a> first.</div>')
    >>> _is_button(inline[0], "the guide")
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
    return len(text.split()) <= 4


SLUG_RE = re.compile(r"[^a-z0-9]+")


def _heading_anchor(node: _Element, tag: str, attrib: dict[str, str]) -> bool:
    """Whether ``node`` is chrome by its id alone and that id is the slug of the
    heading it starts with: a document section (docutils' ``<section
    id="related-projects">``), not a related-projects rail.

    >>> from lxml import html
    >>> section = html.fromstring('<section id="related-projects"><h2>Related projects</h2></section>')
    >>> _heading_anchor(section, "section", dict(section.items()))
    True
    >>> rail = html.fromstring('<div id="related"><h3>More stories</h3></div>')
    >>> _heading_anchor(rail, "div", dict(rail.items()))
    False
    """
    first = next(iter(node), None)
    if first is None or first.tag not in HEADING_TAGS:
        return False
    get = attrib.get
    if _is_chrome(tag, get("class", ""), "", get("role", ""), get("aria-label", "")):
        return False
    slug = SLUG_RE.sub("-", _text_of(first).lower()).strip("-")
    return slug == attrib["id"].lower()


def _text_of(node: _Element) -> str:
    """The text of ``node``'s subtree: the fastest way lxml has (``text_content()``
    is three times slower)."""
    return str(etree.tostring(node, method="text", encoding=str, with_tail=False))


_CLASSIFIED: dict[tuple[str, ...], tuple[bool, str | None]] = {}


def _classify(tag: str, attrib: dict[str, str]) -> tuple[bool, str | None]:
    """Whether an element with these attributes is chrome, and the semantic hint it
    carries (memoised: a site repeats its classes on every page)."""
    key = (
        tag,
        attrib.get("class", ""),
        attrib.get("id", ""),
        attrib.get("role", ""),
        attrib.get("aria-label", ""),
        attrib.get("itemprop", ""),
    )
    found = _CLASSIFIED.get(key)
    if found is None:
        found = (_is_chrome(*key[:5]), _semantic_rule(tag, *key[1:4], key[5]))
        if len(_CLASSIFIED) > 50_000:
            _CLASSIFIED.clear()
        _CLASSIFIED[key] = found
    return found


def _body(root: _Element) -> _Element:
    top = root.getroottree().getroot()
    if top.tag == "body":
        return top
    body = top.find("body")
    if body is None:
        body = top.find(".//body")
    return body if body is not None else top


def _is_ancestor(ancestor: _Element, node: _Element) -> bool:
    parent = node.getparent()
    while parent is not None:
        if parent is ancestor:
            return True
        parent = parent.getparent()
    return False


Texts = dict["_Element", list[int]]


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


def _with_siblings(node: _Element, body: _Element, texts: Texts) -> tuple[_Element, list[_Element]]:
    """``node``, widened to its parent with the siblings that continue it (readability's
    sibling rule), level by level while some do; the siblings that do not are left out.
    A sibling continues the node when it is prose of its own (``SIBLING_SHARE`` of the
    content weight, few links: the next section of a landing page, the second half of
    an article split by an ad), a part of the same sequence (the next ``<dl>`` of an
    index, the next section of a landing page), or the title block before it
    (the last heading sibling before the node and what lies between)."""
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
            if _tag(sibling) in HEADING_TAGS or (isinstance(sibling.tag, str) and sibling.find(".//h1") is not None):
                for between in range(back, index):
                    text = texts.get(siblings[between], EMPTY)
                    kept[between] = _link_density(text) < 0.5 and text[CHROME] < text[VISIBLE]
                break
        for position, sibling in enumerate(siblings):
            text = texts.get(sibling, EMPTY)
            if not kept[position] and (
                (text[CONTENT] >= SIBLING_SHARE * weight and _link_density(text) < 0.5)
                or (_kept(text) and _same_kind(sibling, node))  # the next <dl> of an index
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


#: elements that are a part of a sequence when a sibling of the same kind is
SEQUENCE_TAGS = frozenset({"dl", "ul", "ol", "table", "section", "article"})


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


def select_main_content(root: _Element) -> Selection:
    """The main content of the page whose tree holds ``root``.

    >>> from lxml import html
    >>> page = html.fromstring(
    ...     "<html><body><main></main><div class='wrap'><div class='story'><h1>Title</h1>"
    ...     "<p>" + "Words of the story. " * 20 + "</p></div>"
    ...     "<div class='related'><a href='/a'>Another story</a></div></div></body></html>")
    >>> selection = select_main_content(page)
    >>> selection.root.get("class"), selection.rule, selection.fallback
    ('story', 'hint', False)
    """
    body = _body(root)
    texts, candidates, chrome_nodes = _measure(body)
    page = texts.get(body, EMPTY)
    # chrome by its name that holds the page's prose (a "wy-nav-content-wrap" layout
    # wrapper) or its <main> is not chrome: measured again without it (a rail of
    # <article> teasers or a list of <article> comments stays chrome)
    exempt = frozenset(
        node
        for node in chrome_nodes
        if SMALL_CHARS <= _prose(texts.get(node, EMPTY)) > 0.5 * _prose(page) or node.find(".//main") is not None
    )
    if exempt:
        texts, candidates, chrome_nodes = _measure(body, exempt)
        page = texts.get(body, EMPTY)
    if page[CONTENT] < SMALL_CHARS and SMALL_CHARS <= _prose(page) > page[CONTENT] / SMALL_SHARE:
        # what is not chrome is a trifle beside the prose that is (a forum thread's posts
        # named "comment"): the whole body, or the page would send nothing
        return Selection(body, frozenset(), rule="body", fallback=bool(chrome_nodes))
    scored = _descend(body, texts, MAJORITY * page[CONTENT]) if page[CONTENT] else body
    scored_text = texts.get(scored, EMPTY)
    articles = sum(1 for rule, _node in candidates if rule == "article")
    for rule in RULE_ORDER:
        for candidate_rule, candidate in candidates:
            if candidate_rule != rule:
                continue
            text = texts.get(candidate, EMPTY)
            if candidate is scored or _is_ancestor(candidate, scored):
                # what it adds is not chrome: the rest of the page's main text, at most as
                # much again (a bare #main or #content id may wrap the whole layout: less)
                share = 0.25 if rule == "id" else 1.0
                agrees = _kept(text) - _kept(scored_text) <= share * _kept(scored_text) + 200
            elif _is_ancestor(scored, candidate):
                agrees = text[CONTENT] > 0.5 * scored_text[CONTENT]
            else:
                agrees = False
            if not agrees and page[CONTENT] < SMALL_CHARS:
                # too little prose to judge by (a page of links: an index, a table of
                # contents): the page's own markup
                agrees = bool(_kept(text)) and (rule != "article" or articles == 1)
            if agrees:
                return _finish(candidate, rule, texts, chrome_nodes, page)
    if page[CONTENT] < SMALL_CHARS:  # too little prose to score by, and no markup: all but chrome
        return _finish(body, "body", texts, chrome_nodes, page)
    node, left_out = _with_siblings(scored, body, texts)
    return _finish(node, "scored" if node is not body else "body", texts, chrome_nodes, page, left_out)


def _finish(
    node: _Element,
    rule: str,
    texts: Texts,
    chrome_nodes: list[_Element],
    page: Sequence[int],
    left_out: list[_Element] | None = None,
) -> Selection:
    """The selection of ``node`` with the chrome inside it left out, or ``<body>``'s
    when what is left of ``node`` is implausibly small against the page."""
    skip = set(left_out or ())
    skip.update(chrome for chrome in chrome_nodes if _is_ancestor(node, chrome))
    kept = _kept(texts.get(node, EMPTY)) - sum(_kept(texts.get(n, EMPTY)) for n in left_out or ())
    body = _body(node)
    if kept < SMALL_SHARE * _kept(page) and kept < SMALL_CHARS and node is not body:
        skip = {chrome for chrome in chrome_nodes if _is_ancestor(body, chrome)}
        return Selection(body, frozenset(skip), rule="body", fallback=True)
    title = _title_block(node, body, texts)
    if title is not None:
        node = _join(node, title, skip)
    return Selection(node, frozenset(skip), rule=rule)


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
    while parent is not None and parent is not body and not _is_ancestor(parent, node):
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
    """The nearest element holding both ``node`` and ``title``, with everything else
    in it added to ``skip``; returns that element."""
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
    keep = {id(a) for a in node_path}
    keep.update(id(a) for a in title_path[: title_path.index(common)])
    for path in (node_path[1:], title_path[1 : title_path.index(common)], [common]):
        for ancestor in path:
            skip.update(child for child in ancestor if id(child) not in keep and isinstance(child.tag, str))
    return common
