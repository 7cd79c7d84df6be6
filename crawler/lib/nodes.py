"""What both the main-content selection and the markdown writer ask of an element.

Two questions are answered here, once, for both: is this element something a reader
sees (:class:`Visibility`), and is it the page's own chrome by its markup
(:func:`is_landmark`): its navigation, banner, footer and sidebar landmarks, the
search and dialog widgets, and the few ids and classes that real generators give
their chrome (Doxygen's search box and path bar). A word inside a class or id name
is not asked here: that is a hint for the selection to weigh, never evidence.

Pure functions over lxml elements; the tree is never modified.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from lxml import etree

from crawler.lib.css import NO_RULES, HiddenRules, page_rules

if TYPE_CHECKING:
    from collections.abc import Iterator

    from lxml.etree import _Element

#: elements that never hold text a reader reads: code, media, form controls, metadata
NEVER_TEXT_TAGS = frozenset(
    {
        "script", "style", "noscript", "template", "svg", "canvas", "iframe", "object",
        "embed", "link", "meta", "head", "title", "input", "select", "textarea", "button",
        "option", "datalist", "map", "audio", "video",
    }
)  # fmt: skip
#: landmark elements of page chrome (an ``aside`` only outside the page's article)
LANDMARK_TAGS = frozenset({"nav", "aside", "dialog", "search"})
#: every element whose subtree is left out whatever its context may be
SKIP_TAGS = NEVER_TEXT_TAGS | LANDMARK_TAGS
HEADING_LEVELS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
HEADING_TAGS = frozenset(HEADING_LEVELS)
BLOCK_TAGS = frozenset(
    {
        "address", "article", "blockquote", "body", "center", "dd", "details", "div",
        "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "header", "hgroup",
        "hr", "html", "li", "main", "ol", "p", "pre", "section", "summary", "table",
        "tbody", "td", "tfoot", "th", "thead", "tr", "ul",
    } | HEADING_TAGS
)  # fmt: skip
HIDDEN_STYLE_RE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
#: roles of chrome landmarks and widgets
CHROME_ROLES = frozenset({"navigation", "banner", "contentinfo", "search", "dialog", "alertdialog", "menu", "menubar"})
#: accessible names (``aria-label``) of chrome regions
CHROME_LABEL_RE = re.compile(r"breadcrumb|pagination|cookie|consent", re.IGNORECASE)
#: an ``<aside>`` that is a note of the page's text (Starlight's asides, docutils'
#: footnotes and topics), not a sidebar
ASIDE_NOTE_RE = re.compile(r"(?:^|\s)(?:starlight-aside|admonition|callout|footnote|footnote-list|topic)(?:\s|$)")
#: ids and classes that real generators give their chrome: Doxygen's search widget,
#: title area, menus, breadcrumb footer ("Generated on <date> by doxygen") and letter
#: badges (``span.icon``); rustdoc's "source" links, "Expand description" toggles, the
#: collapse-all button, the "Run" button, trait tooltips and the line-number column of
#: its source pages; Haddock's toggles shown only without scripts; Docsy's "Last
#: modified" line and the blocks a page does not print; WordPress's comment form; text for
#: screen readers only
GENERATOR_CHROME_IDS = frozenset(
    {
        "MSearchBox", "MSearchSelectWindow", "MSearchResultsWindow", "nav-path", "titlearea",
        "main-nav", "navrow1", "navrow2", "navrow3", "navrow4", "side-nav", "nav-tree", "toggle-all-docs",
    }
)  # fmt: skip
GENERATOR_CHROME_CLASS_RE = re.compile(
    r"(?:^|\s)(?:navpath|d-print-none|td-page-meta__lastmod|comment-respond"
    r"|sr-only|visually-hidden|screen-reader-text"
    r"|srclink|hideme|test-arrow|notable-traits-tooltiptext|hide-when-js-enabled)(?:\s|$)"
)
#: classes that are chrome on one tag only: a letter badge (Doxygen's ``span.icon``),
#: a line-number column on its own (rustdoc's ``pre.line-numbers``; Prism's code block
#: says its language beside it)
GENERATOR_CHROME_TAG_CLASSES = frozenset({("span", "icon"), ("pre", "line-numbers")})
#: a name a click handler passes (a class or an id it shows)
NAME_IN_SCRIPT_RE = re.compile(r"[A-Za-z][\w-]{3,}")
#: a carousel's slide, and a copy of one made for looping
SLIDE_RE = re.compile(r"slide|carousel", re.IGNORECASE)
CLONE_RE = re.compile(r"clone|duplicate", re.IGNORECASE)
#: Doxygen's li.footer, address.footer, hr.footer
FOOTER_CLASS_TAGS = frozenset({"li", "address", "hr"})
#: where a ``<header>`` or ``<aside>`` is part of the page's text, not of its chrome
ARTICLE_TAGS = frozenset({"article", "main"})


def tag_of(node: _Element) -> str:
    """The element's tag (lower case, as the HTML parser gives it); ``""`` for a comment
    or processing instruction."""
    tag = node.tag
    return tag if isinstance(tag, str) else ""


def text_of(node: _Element) -> str:
    """The text of ``node``'s subtree: the fastest way lxml has (``text_content()``
    is three times slower)."""
    return str(etree.tostring(node, method="text", encoding=str, with_tail=False))


def class_tokens(node: _Element) -> list[str]:
    classes = node.get("class")
    return classes.split() if classes else []


def is_ancestor(ancestor: _Element, node: _Element) -> bool:
    parent = node.getparent()
    while parent is not None:
        if parent is ancestor:
            return True
        parent = parent.getparent()
    return False


def up_to(node: _Element, root: _Element) -> Iterator[tuple[_Element, _Element]]:
    """``(node, parent)`` from ``node`` up to the child of ``root`` on its way (nothing
    when ``node`` is ``root``; up to the document's top when ``root`` is not above it).

    >>> from lxml import html
    >>> page = html.fromstring("<div><section><p>x</p></section></div>")
    >>> [(n.tag, p.tag) for n, p in up_to(page.find(".//p"), page)]
    [('p', 'section'), ('section', 'div')]
    """
    while node is not root:
        parent = node.getparent()
        if parent is None:
            return
        yield node, parent
        node = parent


def body_of(node: _Element) -> _Element:
    """The ``<body>`` of the tree holding ``node`` (its root when there is none)."""
    top = node.getroottree().getroot()
    if top.tag == "body":
        return top
    body = top.find("body")
    if body is None:
        body = top.find(".//body")
    return body if body is not None else top


def inside_article(node: _Element) -> bool:
    """Whether ``node`` is inside an ``<article>``, a ``<main>`` or ``role=main``: an
    aside there is the page's own (a note), not the site's."""
    return _inside(node, ARTICLE_TAGS)


#: where a header or footer belongs to a part of the text, not to the page
SECTIONING_TAGS = ARTICLE_TAGS | {"section", "blockquote", "figure"}


def _inside(node: _Element, tags: frozenset[str]) -> bool:
    """Whether ``node`` is inside an element of ``tags`` or ``role=main``."""
    parent = node.getparent()
    while parent is not None:
        if tag_of(parent) in tags or parent.get("role") == "main":
            return True
        parent = parent.getparent()
    return False


def is_landmark(node: _Element) -> bool:
    """Whether ``node`` is page chrome by its markup: a navigation, banner, footer or
    sidebar landmark, a search or dialog widget, generator chrome (see the module's
    docstring). A header or footer is the page's only at the page's level: inside the
    article or a section of it, it is that part's own (its title, its notes), and a footer
    inside a quote or figure is its attribution; an aside inside the article is a note:
    none of them is chrome.

    >>> from lxml import html
    >>> page = html.fromstring('<body><aside>Ads</aside><article><aside>A note</aside>'
    ...     '<blockquote><p>Q</p><footer>Ann</footer></blockquote><section><footer>v1.0</footer></section>'
    ...     '</article><footer>(c)</footer></body>')
    >>> [is_landmark(node) for node in page.iter("aside", "footer")]
    [True, False, False, False, True]
    """
    tag = tag_of(node)
    if not tag:
        return False
    if tag in LANDMARK_TAGS:
        if tag != "aside":
            return True
        if node.get("role") == "note" or ASIDE_NOTE_RE.search(node.get("class") or ""):
            return False
        return not inside_article(node)
    if tag in ("header", "footer") and not _inside(node, SECTIONING_TAGS):
        return True
    attrib = node.attrib
    if not attrib:
        return False
    get = attrib.get
    if tag == "a" and is_source_link(node):
        return True
    role = get("role")
    if role == "complementary":
        return not inside_article(node)
    key = (tag, role, get("aria-label"), get("id"), get("class"))
    found = _LANDMARKS.get(key)
    if found is None:
        found = _landmark_by_attributes(*key)
        if len(_LANDMARKS) > 50_000:
            _LANDMARKS.clear()
        _LANDMARKS[key] = found
    return found


#: where a link to the generator's view of an item's source code points (Haddock's
#: ``src/Data-List.html#foldr``, Sphinx viewcode's ``_modules/``, rustdoc's ``src/``)
SOURCE_HREF_RE = re.compile(r"(?:^|/)(?:src|_modules)(?:/|$)")
#: what such a link says: only that it is the source
SOURCE_TEXT_RE = re.compile(r"\s*\[?\s*(?:source|src)\s*\]?\s*", re.IGNORECASE)


def is_source_link(link: _Element) -> bool:
    """Whether the link ``link`` is the generator's button to an item's source code (its
    text says only "Source" and it points at a source view): a control beside a
    declaration, not a word of the text, as a permalink's ``#`` is not.

    >>> from lxml import html
    >>> [is_source_link(html.fromstring(a)) for a in (
    ...     '<a class="link" href="src/Data-List.html#foldr">Source</a>',
    ...     '<a href="../_modules/json.html#dumps">[source]</a>',
    ...     '<a href="https://github.com/x/y">source</a>', '<a href="src/x.html">the source code</a>',
    ...     '<a href="file:///usr/share/doc/ghc-doc/html/libraries/base-4.15.1.0/src">Source</a>')]
    [True, True, False, False, True]
    """
    href = link.get("href")
    if not href or SOURCE_HREF_RE.search(href) is None:
        return False
    return SOURCE_TEXT_RE.fullmatch(text_of(link)) is not None and link.find(".//img") is None


_LANDMARKS: dict[tuple[str, str | None, str | None, str | None, str | None], bool] = {}


def _landmark_by_attributes(
    tag: str, role: str | None, label: str | None, ident: str | None, classes: str | None
) -> bool:
    """Whether an element with these attributes is chrome by them alone (memoised: a
    site repeats its attributes on every page)."""
    if role and role.lower() in CHROME_ROLES:
        return True
    if label and CHROME_LABEL_RE.search(label):
        return True
    if ident is not None and ident in GENERATOR_CHROME_IDS:
        return True
    if classes is None:
        return False
    if GENERATOR_CHROME_CLASS_RE.search(classes):
        return True
    if (tag, classes.strip()) in GENERATOR_CHROME_TAG_CLASSES:
        return True
    return tag in FOOTER_CLASS_TAGS and "footer" in classes.split()


#: an alt text that says only where the image is: a path, a URL, a file name
FILE_ALT_RE = re.compile(
    r"(?:\.{0,2}/|[a-z][a-z0-9+.-]*:)\S*|\S+\.(?:png|jpe?g|gif|svg|webp|avif|bmp|ico|tiff?)", re.IGNORECASE
)


def image_alt(node: _Element) -> str:
    """The alt text of the image ``node``, on one line; ``""`` when it is only where
    the image is (some generators copy the ``src`` into the ``alt``).

    >>> from lxml import html
    >>> [image_alt(html.fromstring(f'<img alt="{alt}">')) for alt in (
    ...     "/p/2024/img-001.png", "img-001.PNG", "https://cdn.example/a", "TCP/IP stack", "Diagram")]
    ['', '', '', 'TCP/IP stack', 'Diagram']
    """
    alt = " ".join(node.get("alt", "").split())
    return "" if FILE_ALT_RE.fullmatch(alt) else alt


class Visibility:
    """What of a page a reader sees: everything but what its attributes (``hidden``,
    ``aria-hidden="true"``, an inline ``display: none``) or its stylesheets
    (:mod:`crawler.lib.css`) hide. What a reader opens is seen: the content of a
    ``<details>``, a tab panel, the target of a disclosure button (``aria-controls``
    with ``aria-expanded``), however a script hid it."""

    def __init__(
        self,
        rules: HiddenRules = NO_RULES,
        disclosed: frozenset[str] = frozenset(),
        wrappers: set[_Element] | None = None,
    ) -> None:
        self.rules = rules
        self.disclosed = disclosed
        #: landmarks, hidden elements and ``<noscript>`` found to hold most of the page's
        #: text (by the selection, which measures them): not excluded
        self.wrappers = wrappers if wrappers is not None else set()

    @classmethod
    def of(cls, root: _Element, site_rules: HiddenRules = NO_RULES) -> Visibility:
        """The visibility of the page holding ``root``: its own ``<style>`` rules with
        ``site_rules`` (its linked stylesheets'), and its disclosure targets."""
        top = root.getroottree().getroot()
        targets = {
            target
            for toggle in top.xpath("//*[@aria-controls and @aria-expanded]")
            for target in (toggle.get("aria-controls") or "").split()
        }
        for handler in top.xpath("//@onclick"):  # toggleInherit('pub_methods_classA'): Doxygen's rows
            targets.update(name for name in NAME_IN_SCRIPT_RE.findall(str(handler)) if "_" in name or "-" in name)
        return cls(page_rules(top).merged(site_rules), frozenset(targets))

    def excluded(self, node: _Element) -> bool:
        """Whether the markup excludes ``node`` from what a reader reads: a landmark of
        chrome (:func:`is_landmark`) or hidden, unless the selection found that it
        holds most of the page's text (``wrappers``: an unclosed ``<header>`` the parser
        wrapped around the page, a page hidden until a script shows it).

        >>> from lxml import html
        >>> header = html.fromstring("<header><a href='/'>Site</a></header>")
        >>> Visibility().excluded(header), Visibility(wrappers={header}).excluded(header)
        (True, False)
        """
        if not (is_landmark(node) or self.hidden(node)):
            return False
        return node not in self.wrappers

    def hidden(self, node: _Element) -> bool:
        """Whether ``node`` is hidden from a reader who opens what can be opened.

        >>> from lxml import html
        >>> page = html.fromstring('<div><p hidden>a</p><details><div style="display:none">b</div></details>'
        ...     '<p aria-hidden="true">c</p><p>d</p></div>')
        >>> [Visibility().hidden(p) for p in page.iter("p", "div")][1:]
        [True, False, True, False]
        """
        attrib = node.attrib
        if not attrib:
            if not self.rules:
                return False
        elif "hidden" in attrib or attrib.get("aria-hidden") == "true":
            return not self._disclosure(node)
        else:
            style = attrib.get("style")
            if style and HIDDEN_STYLE_RE.search(style):
                return not self._disclosure(node)
        if not (self.rules and self.rules.hides(node)):
            return False
        return not self._disclosure(node)

    def _disclosure(self, node: _Element) -> bool:
        """Whether hidden ``node`` is what a reader opens: a tab panel, the target of a
        disclosure button or of a click handler that names it, inside a ``<details>``,
        a carousel's slide that is not shown yet (``aria-hidden`` alone; not a clone made
        for looping).

        >>> from lxml import html
        >>> page = html.fromstring("<table><tr class='inherit_header pub_methods_A'>"
        ...     "<td onclick='toggleInherit(&#39;pub_methods_A&#39;)'>Inherited</td></tr>"
        ...     "<tr class='inherit pub_methods_A' style='display:none'><td>f()</td></tr></table>")
        >>> Visibility.of(page).hidden(page[1])
        False
        """
        if node.get("role") == "tabpanel":
            return True
        if (
            node.get("aria-hidden") == "true"
            and "hidden" not in node.attrib
            and SLIDE_RE.search(node.get("class") or "")
            and not CLONE_RE.search(node.get("class") or "")
            and not HIDDEN_STYLE_RE.search(node.get("style") or "")
        ):
            return True
        ident = node.get("id")
        if ident and ident in self.disclosed:
            return True
        classes = node.get("class")
        if classes and self.disclosed and not self.disclosed.isdisjoint(classes.split()):
            return True  # the rows a click handler names and shows
        return any(tag_of(ancestor) == "details" for ancestor in node.iterancestors())


VISIBLE = Visibility()
