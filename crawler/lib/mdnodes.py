"""What the writer (:mod:`crawler.lib.markdown`) asks of an element before writing it:
whether it is skipped, a permalink, a badge, a "More..." link, a list laying out
sections; an element's flat text and a table's rows. Pure functions over an lxml tree;
the tree is never modified.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from lxml import etree

from crawler.lib.mdsyntax import WS_RE
from crawler.lib.nodes import BLOCK_TAGS, HEADING_LEVELS, NEVER_TEXT_TAGS, VISIBLE, Visibility, tag_of

if TYPE_CHECKING:
    from lxml.etree import _Element

HEADING_TAGS = HEADING_LEVELS

#: classes that make a block special: code without <pre> (Doxygen fragments, highlight
#: tables), tab sets without ARIA roles, admonitions
SPECIAL_CLASS_RE = re.compile(
    r"(?:^|\s)(fragment|highlighttable|lntable|sd-tab-set|tabbed-set|vp-code-group"
    r"|admonition|theme-admonition|custom-block|markdown-alert|alert|starlight-aside|headertitle|memproto)(?:\s|$)"
)
SPECIAL_KIND = {
    "fragment": "code", "highlighttable": "code", "lntable": "code",
    "sd-tab-set": "tabs", "tabbed-set": "tabs", "vp-code-group": "tabs",
    "headertitle": "title", "memproto": "signature",  # Doxygen's page title and function prototypes
}  # fmt: skip
SIGNATURE_SPACE_RE = re.compile(r"(?<=\()\s+|\s+(?=[),])")
ADMONITION_TITLE_RE = re.compile(
    r"admonition-?title|admonition-?heading|alert-heading|custom-block-title|markdown-alert-title"
    r"|starlight-aside__title",
    re.IGNORECASE,
)
ADMONITION_KINDS = frozenset(
    {
        "note", "tip", "hint", "info", "important", "warning", "caution", "danger", "error",
        "attention", "seealso", "success", "question", "example", "bug", "failure", "todo",
        "abstract", "quote",
    }
)  # fmt: skip

#: permalink anchors beside headings, definitions and captions (Sphinx and MkDocs
#: ``a.headerlink``, VitePress ``a.header-anchor``, Docusaurus ``a.hash-link``, Docsy, anchor.js)
PERMALINK_CLASS_RE = re.compile(
    r"(?:^|\s)(?:headerlink|header-anchor|hash-link|anchorjs-link|heading-anchor|td-heading-self-link"
    r"|sl-anchor-link)(?:\s|$)"
)


#: the whole text of an in-page anchor that is only a permalink glyph: pilcrow, section
#: sign, ``#``, link emoji, zero-width and icon-font (private use area) characters
PERMALINK_TEXT_RE = re.compile("[\\s\u00b6\u00a7#\u25c6\U0001f517\u200b\u2060\ufeff\ue000-\uf8ff]*")


#: characters a heading or title never shows as text: zero-width spaces, icon glyphs, pilcrows
HEADING_GLYPH_RE = re.compile("[\u00b6\u200b\u2060\ufeff\ue000-\uf8ff]")


def flat_text(node: _Element, skipped: Callable[[_Element], bool] | None = None) -> str:
    """The text of ``node``'s subtree as one line, without recursion: what is kept of
    content nested deeper than ``MAX_DEPTH`` (skipped elements stay out)."""
    skipped = skipped or is_skipped
    parts: list[str] = []
    walker = etree.iterwalk(node, events=("start", "end"))
    for event, element in walker:
        # a block's text is a word apart from its neighbours', and so is a badge's
        # (Doxygen's "inline" "constexpr" labels in a prototype: no space between them)
        block = tag_of(element) in BLOCK_TAGS or is_badge(element)
        if event == "start":
            if element is not node and (skipped(element) or (tag_of(element) == "a" and is_permalink(element))):
                walker.skip_subtree()
                continue
            if block:
                parts.append(" ")
            if element.text and isinstance(element.tag, str):
                parts.append(element.text)
        else:
            if block:
                parts.append(" ")
            if element is not node and element.tail:
                parts.append(element.tail)
    return WS_RE.sub(" ", "".join(parts)).strip()


def is_skipped(node: _Element, visibility: Visibility = VISIBLE) -> bool:
    """What is never written: comments, elements that hold no text a reader reads
    (scripts, styles, form fields), the page's chrome landmarks, what is hidden."""
    tag = tag_of(node)
    if not tag:
        return True
    if tag in NEVER_TEXT_TAGS:
        return node not in visibility.wrappers  # (a <noscript> holding the page is its text)
    return visibility.excluded(node)


#: classes of badges and labels a browser draws as boxes of their own, with no space
#: between them in the markup
BADGE_CLASS_RE = re.compile(r"(?:^|\s)(?:mlabel|badge|label|chip|pill|stab)(?:\s|$)")


def is_badge(node: _Element) -> bool:
    """A badge: a ``<span>`` a browser draws as a box of its own (:data:`BADGE_CLASS_RE`),
    not a highlighter's token (Prism's ``token label`` in ``return@forEach``).

    >>> from lxml import html
    >>> classes = ("mlabel", "token label", "labels", "stab unstable")
    >>> [is_badge(html.fromstring(f'<span class="{c}">x</span>')) for c in classes]
    [True, False, False, True]
    """
    classes = node.get("class") or ""
    return tag_of(node) == "span" and BADGE_CLASS_RE.search(classes) is not None and "token" not in classes.split()


#: the whole text of a link to a section with more of what is above it (Doxygen's
#: "More..." after each brief description, rustdoc's "Read more")
MORE_LINK_TEXTS = frozenset({"more...", "more…", "read more", "read more...", "read more…"})


def holds_blocks(node: _Element) -> bool:
    """Whether a custom element (``<starlight-tabs>``) holds blocks: then it is one,
    else it is text among text (``<relative-time>``).

    >>> from lxml import html
    >>> [holds_blocks(html.fromstring(s)) for s in ("<x-tabs><div><p>a</p></div></x-tabs>", "<x-time>Jan 3</x-time>")]
    [True, False]
    """
    return any(child is not node for child in node.iter(*BLOCK_TAGS, *HEADING_TAGS))


def layout_list(node: _Element) -> bool:
    """Whether the list ``node`` lays out sections rather than listing items: an item
    holds a heading or a table (Javadoc's ``ul.summary-list``, each item a section with
    its ``<h2>``). Its items are written as blocks, their headings as headings.

    >>> from lxml import html
    >>> [layout_list(html.fromstring(s)) for s in ("<ul><li><section><h2>Summary</h2><p>a</p></section></li></ul>",
    ...     "<ul><li><b>a</b> b</li><li><ul><li>c</li></ul></li></ul>")]
    [True, False]
    """
    return any(tag_of(item) == "li" and next(item.iter(*HEADING_TAGS, "table"), None) is not None for item in node)


def is_more_link(node: _Element) -> bool:
    """A link whose whole text is "More..." to a section (``#details``,
    ``struct.html#a1b2``): a pointer to text, not text.

    >>> from lxml import html
    >>> [is_more_link(html.fromstring(a)) for a in (
    ...     '<a href="#details">More...</a>', '<a href="x.html#m">Read more</a>',
    ...     '<a href="#opts">more</a>', '<a href="#details">More details</a>')]
    [True, True, False, False]
    """
    return "#" in (node.get("href") or "") and (node.text_content().strip().lower() in MORE_LINK_TEXTS)


def is_permalink(node: _Element) -> bool:
    """Whether the link ``node`` is a permalink anchor: an in-page link marked as
    one, or whose text is only a glyph (``¶``, ``#``, an icon, a zero-width space)."""
    href = node.get("href")
    if not href or not href.lstrip().startswith("#"):
        return False
    classes = node.get("class")
    if classes and PERMALINK_CLASS_RE.search(classes):
        return True
    return PERMALINK_TEXT_RE.fullmatch(node.text_content()) is not None and node.find(".//img") is None


def clean_heading(text: str) -> str:
    """``text`` on one line without the glyphs a heading shows but does not say.

    >>> clean_heading("  Install\u200b \uf0c1 ¶")
    'Install'
    """
    return WS_RE.sub(" ", HEADING_GLYPH_RE.sub("", text)).strip()


def int_attribute(node: _Element, name: str) -> int | None:
    value = node.get(name)
    if value is None:
        return None
    try:
        return int(value.strip())
    except ValueError:
        return None


def table_rows(table: _Element, skipped: Callable[[_Element], bool]) -> list[_Element]:
    """The rows of ``table`` itself (not of the tables in its cells), hidden ones left out."""
    rows: list[_Element] = []
    for child in table:
        tag = tag_of(child)
        if tag == "tr":
            rows.append(child)
        elif tag in ("thead", "tbody", "tfoot"):
            rows.extend(row for row in child if tag_of(row) == "tr")
    return [row for row in rows if not skipped(row)]


class TabLabels:
    """The labels of the tab lists met so far, for the tab panels after them: by the
    tab's id (``aria-labelledby``), else in order. A stack: a tab set inside a panel
    takes its own labels and leaves its parent's for the next panels."""

    def __init__(self) -> None:
        self.by_id: dict[str, str] = {}
        self.queues: list[list[str]] = []

    def add_list(self, tablist: _Element) -> None:
        tabs = [tab for tab in tablist.iter(etree.Element) if tab.get("role") == "tab"]
        controls = {tab.get("aria-controls") for tab in tabs}
        if len(controls) == 1 and None not in controls:
            # every tab shows one panel: filters of a table (Javadoc's "All Methods",
            # "Static Methods"), not the labels of panels
            self.queues.append([])
            return
        labels: list[str] = []
        for tab in tabs:
            label = clean_heading(tab.text_content())
            labels.append(label)
            if tab.get("id"):
                self.by_id[tab.get("id", "")] = label
        self.queues.append(labels)

    def label_for(self, panel: _Element) -> str:
        while self.queues and not self.queues[-1]:
            self.queues.pop()
        queue = self.queues[-1] if self.queues else []
        ref = (panel.get("aria-labelledby") or "").split()
        if ref and ref[0] in self.by_id:
            label = self.by_id[ref[0]]
            if queue and queue[0] == label:
                queue.pop(0)
            return label
        return queue.pop(0) if queue else ""


def page_title(root: _Element) -> str:
    """The page's title: ``<title>``, else the first ``<h1>`` (without its permalink).

    >>> from lxml import html
    >>> page_title(html.fromstring('<body><h1>Install<a class="headerlink" href="#i">¶</a></h1></body>'))
    'Install'
    """
    for node in root.xpath("//title"):
        text = clean_heading(node.text_content())
        if text:
            return text
    for node in root.xpath("//h1"):
        text = clean_heading(flat_text(node))
        if text:
            return text
    return ""
