"""HTML to markdown: the main content of a page, as the extractor should read it.

Pure functions over an lxml tree (what ``response.selector.root`` holds); the tree is
never modified. Whatever cannot change what a reader sees is left out: scripts, styles,
comments, hidden elements, form fields, navigation, asides, page header and footer,
query strings of image URLs (cache busters). Blocks are separated by one blank line,
which is what the domain boilerplate analysis splits on.

Links are written as their text alone (``links="text"``, the default: fewer tokens, and
a move of the link targets to another host changes nothing), or as ``[text](url)``
(``links="urls"``) with the URL a reader would follow: resolved against the page's
URL, its trailing slash and fragment kept, only tracking parameters dropped. The
converter's identity (:func:`converter_id`) names its version and link mode: what the
cache compares to tell a page changed by the converter from a page changed by its site.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, urldefrag, urlencode, urljoin, urlsplit, urlunsplit

from lxml import etree

from crawler.lib.urls import is_tracking_param

if TYPE_CHECKING:
    from lxml.etree import _Element

    from crawler.lib.maincontent import Selection

#: the converter's version: raised whenever a change of this module changes the
#: markdown of some page (version 1: links canonicalized, before the link modes)
CONVERTER_VERSION = "2"
#: how links are written: their text only, or ``[text](url)``
LINK_MODES = ("text", "urls")
DEFAULT_LINKS = "text"
#: the converter of caches older than converter ids (their records have none)
LEGACY_CONVERTER = "markdown/1;links=urls"


def converter_id(links: str = DEFAULT_LINKS) -> str:
    """The identity of the markdown this module writes with these options: what a page
    record keeps, so a new converter is told from a page that changed.

    >>> converter_id("urls")
    'markdown/2;links=urls'
    """
    return f"markdown/{CONVERTER_VERSION};links={check_links(links)}"


def check_links(links: str) -> str:
    """``links`` when it is a link mode, else ``ValueError`` naming the setting."""
    if links not in LINK_MODES:
        raise ValueError(f"MARKDOWN_LINKS must be one of {', '.join(LINK_MODES)}, got {links!r}")
    return links


#: Elements whose whole subtree never reaches the markdown.
SKIP_TAGS = frozenset(
    {
        "script", "style", "noscript", "template", "svg", "canvas", "iframe", "object",
        "embed", "link", "meta", "head", "title", "nav", "aside", "input", "select",
        "textarea", "button", "option", "datalist", "dialog", "map", "audio", "video",
        "search",
    }
)  # fmt: skip
HEADING_TAGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
BLOCK_TAGS = frozenset(
    {
        "address", "article", "blockquote", "body", "center", "dd", "details", "div",
        "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "header", "hgroup",
        "hr", "html", "li", "main", "ol", "p", "pre", "section", "summary", "table",
        "tbody", "td", "tfoot", "th", "thead", "tr", "ul",
    } | set(HEADING_TAGS)
)  # fmt: skip
HIDDEN_STYLE_RE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
LANG_CLASS_RE = re.compile(r"(?:^|\s)(?:language|lang|highlight-source|highlight)-([\w+#.-]+)")
#: what a class name says when there is no language (Sphinx ``highlight-default``)
NO_LANGUAGE = frozenset({"default", "none"})
#: ids and classes of generator chrome: Doxygen's search widget, title area, menus and
#: breadcrumb footer ("Generated on <date> for X by doxygen", new on every rebuild);
#: Docsy's "Last modified" line and the blocks a page does not print (feedback, edit links);
#: WordPress's comment form
SKIP_IDS = frozenset(
    {
        "MSearchBox", "MSearchSelectWindow", "MSearchResultsWindow", "nav-path", "titlearea",
        "main-nav", "navrow1", "navrow2", "navrow3", "navrow4", "side-nav", "nav-tree",
    }
)  # fmt: skip
SKIP_CLASS_RE = re.compile(
    r"(?:^|\s)(?:navpath|d-print-none|td-page-meta__lastmod|comment-respond"
    # text for screen readers only ("Section titled ...", "Terminal window", "(opens in a new tab)")
    r"|sr-only|visually-hidden|screen-reader-text)(?:\s|$)"
)
#: an ``<aside>`` that is a note of the page's text (Starlight's asides), not a sidebar
ASIDE_NOTE_RE = re.compile(r"(?:^|\s)(?:starlight-aside|admonition|callout)(?:\s|$)")
FOOTER_CLASS_TAGS = frozenset({"li", "address", "hr"})  # Doxygen's li.footer, address.footer, hr.footer
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
#: line-number gutters inside or beside code (Pygments/Sphinx/MkDocs ``linenos``, Doxygen
#: ``lineno``, Prism ``line-numbers-rows``, VitePress ``line-numbers-wrapper``, Chroma ``lnt``/``ln``)
GUTTER_CLASS_RE = re.compile(
    r"(?:^|\s)(?:linenos|lineno|linenodiv|line-numbers-rows|line-numbers-wrapper|highlight-line-number|lnt|ln)"
    r"(?:\s|$)"
)
#: what makes code more than the text of its highlighting spans: line breaks, line
#: elements and what is left out (tags, found in C), and these words in its markup (found
#: by ``in``; a false alarm costs time, not text): a code block without them is taken
#: whole, many times faster than a walk over its spans
CODE_LAYOUT_TAGS = tuple(BLOCK_TAGS | SKIP_TAGS | {"br", "img"})
HIDING_MARKERS = ("hidden", "display", "visibility")
GUTTER_MARKERS = ("lineno", "line-number", "lnt", 'ln"', "ln ")
CODE_LAYOUT_MARKERS = ("token-line", "highlight-line", "block", *GUTTER_MARKERS, *HIDING_MARKERS)
#: what lines of code (Prism token-lines) may not hold for their text to be taken whole
LINE_BREAKING_TAGS = tuple(BLOCK_TAGS | SKIP_TAGS)
LINES_LAYOUT_MARKERS = ("hidden", "visibility", "display:block", "display: block", *GUTTER_MARKERS)
CODE_LINE_CLASSES = frozenset({"highlight-line", "block"})
DISPLAY_BLOCK_RE = re.compile(r"display\s*:\s*block\b", re.IGNORECASE)
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
CODE_MARK_RE = re.compile("\x00(\\d+)\x00")  # where a list item held a code block
WS_RE = re.compile(r"\s+")
MAX_DEPTH = 400  # deeper content is written as plain text (no recursion)
#: the same for inline markup (<b><i><span>...), three frames deep per level
MAX_INLINE_DEPTH = 200
#: libxml2 stops parsing at this depth, even with huge_tree (as parsel parses), and the
#: rest of the page is lost: a page that deep is parsed again flattened
PARSER_MAX_DEPTH = 2048


def page_title(root: _Element) -> str:
    """The page's title: ``<title>``, else the first ``<h1>`` (without its permalink).

    >>> from lxml import html
    >>> page_title(html.fromstring('<body><h1>Install<a class="headerlink" href="#i">¶</a></h1></body>'))
    'Install'
    """
    for node in root.xpath("//title"):
        text = _clean_heading(node.text_content())
        if text:
            return text
    for node in root.xpath("//h1"):
        text = _clean_heading(_flat_text(node))
        if text:
            return text
    return ""


def page_markdown(root: _Element, base_url: str = "", *, links: str = DEFAULT_LINKS) -> tuple[str, Selection]:
    """Markdown of the main content of the page whose tree is ``root``, and how that
    content was found (which rule chose it, whether it fell back to the whole page);
    ``links``: ``"text"`` or ``"urls"`` (see the module's docstring).

    >>> from lxml import html
    >>> tree = html.fromstring(
    ...     "<html><body><nav>Home</nav><main><h1>Title</h1><p>Some <b>bold</b>"
    ...     " text.<script>x=1</script></p><ul><li>one</li><li>two</li></ul></main>"
    ...     "<footer>(c) ACME</footer></body></html>")
    >>> markdown, selection = page_markdown(tree)
    >>> print(markdown)
    # Title
    <BLANKLINE>
    Some **bold** text.
    <BLANKLINE>
    - one
    - two
    >>> selection.root.tag
    'main'
    """
    from crawler.lib.maincontent import select_main_content  # here: maincontent imports this module

    selection = select_main_content(root)
    writer = _MarkdownWriter(base_url, check_links(links), skip=selection.skip)
    for node in title_outside(selection.root):
        writer.element(node, depth=1)
    writer.block(selection.root, depth=0)
    return writer.result(), selection


def title_outside(content: _Element) -> list[_Element]:
    """The page's title block when it stands above the main content ``content``
    rather than in it (Hugo themes put the title and its lead paragraph above the
    content's ``<div>``): the nearest visible ``<h1>`` before ``content``, outside page
    chrome, and the paragraphs right after it; nothing when ``content`` holds an ``<h1>``.

    >>> from lxml import html
    >>> page = html.fromstring("<body><header><h1>Site</h1></header><div class='c'><h1>Title</h1>"
    ...     "<p>Lead.</p><div id='content'><p>Text</p></div></div></body>")
    >>> [node.text for node in title_outside(page.get_element_by_id("content"))]
    ['Title', 'Lead.']
    >>> title_outside(page.find(".//div"))  # holds its own <h1>
    []
    """
    if _tag(content) == "h1" or content.find(".//h1") is not None:
        return []
    for h1 in reversed(content.xpath("preceding::h1")):
        node: _Element | None = h1
        while node is not None and not _skipped(node):
            node = node.getparent()
        if node is None and _clean_heading(_flat_text(h1)):
            block = [h1]
            for sibling in h1.itersiblings():
                if _tag(sibling) != "p" or _skipped(sibling):
                    break
                block.append(sibling)
            return block
    return []


def _is_hidden(node: _Element) -> bool:
    attrib = node.attrib
    if "hidden" in attrib or attrib.get("aria-hidden") == "true":
        return True
    style = attrib.get("style")
    return bool(style and HIDDEN_STYLE_RE.search(style))


def _tag(node: _Element) -> str:
    tag = node.tag
    return tag.lower() if isinstance(tag, str) else ""


def _inside_article(node: _Element) -> bool:
    """Whether ``node`` is inside an ``<article>`` or ``<main>``: a header there is the
    page's own (its title and lead, as GitBook writes them), not the site's."""
    parent = node.getparent()
    while parent is not None:
        if _tag(parent) in ("article", "main"):
            return True
        parent = parent.getparent()
    return False


def _flat_text(node: _Element) -> str:
    """The text of ``node``'s subtree as one line, without recursion: what is kept of
    content nested deeper than ``MAX_DEPTH`` (skipped elements stay out)."""
    parts: list[str] = []
    walker = etree.iterwalk(node, events=("start", "end"))
    for event, element in walker:
        block = _tag(element) in BLOCK_TAGS  # a block's text is a word apart from its neighbours'
        if event == "start":
            if element is not node and (_skipped(element) or (_tag(element) == "a" and _is_permalink(element))):
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


def _skipped(node: _Element) -> bool:
    """Page chrome and what a reader does not see: scripts, navigation, footers,
    hidden elements (tab panels excepted: a reader opens them), headers outside an
    article, search widgets, Doxygen's search box and generated-on footer."""
    tag = _tag(node)
    if not tag or tag == "footer":
        return True
    if tag in SKIP_TAGS and (tag != "aside" or not ASIDE_NOTE_RE.search(node.get("class") or "")):
        return True  # (an aside that is a note goes on: it may still be hidden)
    if tag == "header":
        return not _inside_article(node)
    attrib = node.attrib
    if not attrib:  # most elements: nothing more to look at
        return False
    role = attrib.get("role")
    if role == "search" or (_is_hidden(node) and role != "tabpanel"):
        return True
    ident = attrib.get("id")
    if ident is not None and ident in SKIP_IDS:
        return True
    classes = attrib.get("class")
    if classes is None:
        return False
    if SKIP_CLASS_RE.search(classes):
        return True
    return tag in FOOTER_CLASS_TAGS and "footer" in classes and "footer" in classes.split()


#: the whole text of a link to a section with more of what is above it (Doxygen's
#: "More..." after each brief description, rustdoc's "Read more")
MORE_LINK_TEXTS = frozenset({"more...", "more…", "read more", "read more...", "read more…"})


def _holds_blocks(node: _Element) -> bool:
    """Whether a custom element (``<starlight-tabs>``) holds blocks: then it is one,
    else it is text among text (``<relative-time>``).

    >>> from lxml import html
    >>> [_holds_blocks(html.fromstring(s)) for s in ("<x-tabs><div><p>a</p></div></x-tabs>", "<x-time>Jan 3</x-time>")]
    [True, False]
    """
    return any(child is not node for child in node.iter(*BLOCK_TAGS, *HEADING_TAGS))


def _is_more_link(node: _Element) -> bool:
    """A link whose whole text is "More..." to a section (``#details``,
    ``struct.html#a1b2``): a pointer to text, not text.

    >>> from lxml import html
    >>> [_is_more_link(html.fromstring(a)) for a in (
    ...     '<a href="#details">More...</a>', '<a href="x.html#m">Read more</a>',
    ...     '<a href="#opts">more</a>', '<a href="#details">More details</a>')]
    [True, True, False, False]
    """
    return "#" in (node.get("href") or "") and (node.text_content().strip().lower() in MORE_LINK_TEXTS)


def _is_permalink(node: _Element) -> bool:
    """Whether the link ``node`` is a permalink anchor: an in-page link marked as
    one, or whose text is only a glyph (``¶``, ``#``, an icon, a zero-width space)."""
    href = node.get("href")
    if not href or not href.lstrip().startswith("#"):
        return False
    classes = node.get("class")
    if classes and PERMALINK_CLASS_RE.search(classes):
        return True
    return PERMALINK_TEXT_RE.fullmatch(node.text_content()) is not None and node.find(".//img") is None


def _clean_heading(text: str) -> str:
    """``text`` on one line without the glyphs a heading shows but does not say.

    >>> _clean_heading("  Install\u200b \uf0c1 ¶")
    'Install'
    """
    return WS_RE.sub(" ", HEADING_GLYPH_RE.sub("", text)).strip()


def _class_tokens(node: _Element) -> list[str]:
    classes = node.get("class")
    return classes.split() if classes else []


def _code_language(node: _Element) -> str:
    """The language of the code block ``node`` (a ``<pre>``): a ``language-``,
    ``lang-`` or ``highlight-`` class or a ``data-language``/``data-lang`` attribute
    on it, its ``<code>``, or its nearest three ancestors (Sphinx's
    ``<div class="highlight-python"><div class="highlight"><pre>``).

    >>> from lxml import html
    >>> _code_language(html.fromstring('<div class="highlight-python"><div><pre>x</pre></div></div>')[0][0])
    'python'
    """
    candidates = [node]
    code = next(node.iter("code"), None)
    if code is not None:
        candidates.append(code)
    parent = node.getparent()
    while parent is not None and len(candidates) < 6:
        candidates.append(parent)
        parent = parent.getparent()
    for element in candidates:
        language = element.get("data-language") or element.get("data-lang")
        if not language:
            classes = element.get("class")
            match = LANG_CLASS_RE.search(classes) if classes else None
            language = match.group(1) if match else ""
        if language:
            return "" if language.lower() in NO_LANGUAGE else language.strip()
    return ""


def _code_text(node: _Element) -> str:
    r"""The text of the code block ``node`` as rendered: every ``<br>`` and every line
    element (a block, a Prism ``token-line``, a ``display:block`` span) ends one line,
    indentation kept, line-number gutters and hidden elements left out. The markup
    variants of one code give one text.

    >>> from lxml import html
    >>> _code_text(html.fromstring("<pre>a<br>  b<br></pre>"))
    'a\n  b'
    >>> _code_text(html.fromstring('<pre><span class="token-line">a<br></span>'
    ...     '<span class="token-line"><br></span><span class="token-line">  b</span></pre>'))
    'a\n\n  b'
    """
    if next(node.iterdescendants(*CODE_LAYOUT_TAGS), None) is None and not _has_markers(node, CODE_LAYOUT_MARKERS):
        return _code_lines(node.text_content())
    lines = _token_lines(node)
    if lines is not None:
        return _code_lines("\n".join(lines))
    parts: list[str] = []
    open_line = False  # text written since the last line break
    eat_newline = False  # a line element just ended its line: a newline right after it is no second one
    open_lines: list[tuple[_Element, int]] = []  # open line elements, with len(parts) at their start
    skipped: _Element | None = None

    def put(text: str) -> None:
        nonlocal open_line, eat_newline
        if eat_newline and text.startswith("\n"):
            text = text[1:]
        eat_newline = False
        if text:
            parts.append(text)
            open_line = not text.endswith("\n")

    walker = etree.iterwalk(node, events=("start", "end"))
    for event, element in walker:
        if element is node:
            if event == "start" and node.text:
                put(node.text)
            continue
        if event == "start":
            eat_newline = False
            tag = element.tag
            if not isinstance(tag, str):  # a comment
                skipped = element
                continue
            attrib = element.attrib
            classes = attrib.get("class")
            style = attrib.get("style")
            if (
                tag == "span"
                and len(attrib) == (classes is not None) + (style is not None)
                and not (classes and ("line" in classes or "ln" in classes or "block" in classes))
                and not (style and ("display" in style or "visibility" in style))
            ):
                if element.text:  # a highlighting span (the common case): its text alone
                    put(element.text)
                continue
            if (
                tag in SKIP_TAGS
                or "hidden" in attrib
                or attrib.get("aria-hidden") == "true"
                or (style and HIDDEN_STYLE_RE.search(style))
                or (classes and ("ln" in classes or "line" in classes) and GUTTER_CLASS_RE.search(classes))
            ):
                skipped = element
                walker.skip_subtree()
                continue
            if tag == "br":
                put("\n")
            elif tag in BLOCK_TAGS or _is_code_line(classes, style):
                if open_line:
                    put("\n")
                open_lines.append((element, len(parts)))
            if element.text:
                put(element.text)
        else:
            if element is skipped:
                skipped = None
            elif open_lines and open_lines[-1][0] is element:
                start = open_lines.pop()[1]
                if open_line or len(parts) == start:
                    put("\n")
                eat_newline = True
            if element.tail:
                put(element.tail)
    return _code_lines("".join(parts))


def _token_lines(node: _Element) -> list[str] | None:
    """The lines of Prism code (Docusaurus): a ``<code>`` whose children are all
    ``token-line``s (or GitBook's ``highlight-line``s), each holding only text and its
    ``<br>``; else None."""
    code = next(node.iter("code"), None)
    container = node if code is None else code
    if container.text and container.text.strip():
        return None
    lines: list[_Element] = []
    for line in container:
        classes = line.get("class") or ""
        if _tag(line) != "span" or ("token-line" not in classes and "highlight-line" not in classes):
            return None
        if line.tail and line.tail.strip():
            return None
        lines.append(line)
    if (
        not lines
        or next(container.iterdescendants(*LINE_BREAKING_TAGS), None) is not None
        or _has_markers(container, LINES_LAYOUT_MARKERS)
    ):
        return None
    return [line.text_content() for line in lines]


def _has_markers(node: _Element, markers: tuple[str, ...]) -> bool:
    markup = etree.tostring(node, encoding="unicode", with_tail=False)
    return any(marker in markup for marker in markers)


def _code_lines(text: str) -> str:
    text = text.replace("\xa0", " ")
    return "\n".join(line.rstrip() for line in text.split("\n")).strip("\n")


def _is_code_line(classes: str | None, style: str | None) -> bool:
    """Whether a code element with these attributes is one line: Prism's ``token-line``,
    GitBook's ``highlight-line``, a ``display:block`` style or Tailwind ``block`` class."""
    if classes and ("token-line" in classes or not CODE_LINE_CLASSES.isdisjoint(classes.split())):
        return True
    return bool(style and "block" in style and DISPLAY_BLOCK_RE.search(style))


def _fenced(text: str, language: str) -> str:
    """``text`` as a fenced code block, nothing if it is empty."""
    if not text.strip():
        return ""
    fence = "````" if "```" in text else "```"
    return f"{fence}{language}\n{text}\n{fence}"


def _int_attribute(node: _Element, name: str) -> int | None:
    value = node.get(name)
    if value is None:
        return None
    try:
        return int(value.strip())
    except ValueError:
        return None


_DEEPER_THAN: dict[int, etree.XPath] = {}


def deeper_than(root: _Element, depth: int) -> bool:
    """Whether elements nest more than ``depth`` levels under ``root`` (``root``
    alone: 1), i.e. ``tree_depth(root) > depth``: one XPath step per level, in C, about
    50 times cheaper than :func:`tree_depth` on an ordinary page.

    >>> from lxml import html
    >>> root = html.fromstring("<div><p><b>x</b></p></div>")
    >>> deeper_than(root, 2), deeper_than(root, 3), tree_depth(root)
    (True, False, 3)
    """
    xpath = _DEEPER_THAN.get(depth)
    if xpath is None:
        xpath = _DEEPER_THAN[depth] = etree.XPath("/".join(["*"] * depth))
    return bool(xpath(root))


def tree_depth(root: _Element) -> int:
    """How deep elements nest under ``root`` (``root`` alone: 1), without recursion."""
    depth = deepest = 0
    for event, _element in etree.iterwalk(root, events=("start", "end")):
        if event == "start":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


#: elements that close themselves (no end tag), and those a next sibling closes
VOID_TAGS = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
)
SELF_CLOSING_SIBLINGS = frozenset({"p", "li", "dt", "dd", "tr", "td", "th", "option"})
#: tags kept however deep: links (HTML closes a link that another one starts) and list
#: items (one starts after another: the items of a deep list become one flat list)
KEEP_DEEP_TAGS = frozenset({"a", "li"})


class _Flattener(HTMLParser):
    def __init__(self, max_depth: int) -> None:
        super().__init__(convert_charrefs=False)
        self.max_depth = max_depth
        self.stack: list[str] = []
        self.out: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in VOID_TAGS:
            self.out.append(self.get_starttag_text() or "")
            return
        if tag in SELF_CLOSING_SIBLINGS and self.stack and self.stack[-1] == tag:
            self.handle_endtag(tag)
        self.stack.append(tag)
        keep = len(self.stack) <= self.max_depth or tag in KEEP_DEEP_TAGS
        self.out.append((self.get_starttag_text() or "") if keep else " ")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.out.append(self.get_starttag_text() or "")

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID_TAGS:
            return
        # the innermost open element of that name, looked for among the last few only
        for back in range(1, min(len(self.stack), 16) + 1):
            if self.stack[-back] == tag:
                keep = len(self.stack) - back < self.max_depth or tag in KEEP_DEEP_TAGS
                self.out.append(f"</{tag}>" if keep else " ")
                del self.stack[-back:]
                return

    def handle_data(self, data: str) -> None:
        self.out.append(data)

    def handle_entityref(self, name: str) -> None:
        self.out.append(f"&{name};")

    def handle_charref(self, name: str) -> None:
        self.out.append(f"&#{name};")

    def handle_decl(self, decl: str) -> None:
        self.out.append(f"<!{decl}>")


def flatten_deep_html(text: str, max_depth: int = 256) -> str:
    """``text`` with the tags nested deeper than ``max_depth`` left out (links
    excepted), their text kept: HTML that lxml can parse whole. libxml2 stops parsing at 2048 levels (and
    the rest of the page is lost, silently), so a page that deep is parsed again from
    this.

    >>> flatten_deep_html("<div>" * 4 + "<b>deep</b> text" + "</div>" * 4 + "<p>after", 2)
    '<div><div>   deep  text  </div></div><p>after'
    """
    flattener = _Flattener(max_depth)
    flattener.feed(text)
    flattener.close()
    return "".join(flattener.out)


class _TabLabels:
    """The labels of the tab lists met so far, for the tab panels after them: by the
    tab's id (``aria-labelledby``), else in order. A stack: a tab set inside a panel
    takes its own labels and leaves its parent's for the next panels."""

    def __init__(self) -> None:
        self.by_id: dict[str, str] = {}
        self.queues: list[list[str]] = []

    def add_list(self, tablist: _Element) -> None:
        labels: list[str] = []
        for tab in tablist.iter(etree.Element):
            if tab.get("role") == "tab":
                label = _clean_heading(tab.text_content())
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


class _MarkdownWriter:
    """Walks a tree once, collecting blocks of markdown."""

    def __init__(
        self,
        base_url: str,
        links: str = DEFAULT_LINKS,
        tabs: _TabLabels | None = None,
        skip: frozenset[_Element] = frozenset(),
    ) -> None:
        self.base_url = base_url
        self.urls = links == "urls"
        self.skip = skip  # elements left out besides what _skipped says (page chrome)
        self.blocks: list[str] = []
        self.inline: list[str] = []
        self.tabs = tabs if tabs is not None else _TabLabels()
        #: code blocks met inside the list item being written (a mark in its text says where)
        self.item_code: list[str] | None = None

    def sub_writer(self) -> _MarkdownWriter:
        """A writer for a part written apart (a quote, an admonition), sharing the tab labels."""
        return _MarkdownWriter(self.base_url, "urls" if self.urls else "text", self.tabs, self.skip)

    def skipped(self, node: _Element) -> bool:
        return node in self.skip or _skipped(node)

    def result(self) -> str:
        self.flush()
        return "\n\n".join(self.blocks)

    # -- blocks --------------------------------------------------------------

    def flush(self) -> None:
        text = WS_RE.sub(" ", "".join(self.inline)).strip()
        self.inline = []
        if text:
            self.blocks.append(text)

    def add_block(self, text: str) -> None:
        self.flush()
        if text.strip():
            self.blocks.append(text.rstrip())

    def block(self, node: _Element, depth: int) -> None:
        """Write ``node``'s children (``node`` itself is a container)."""
        if depth > MAX_DEPTH:
            self.inline.append(" " + _flat_text(node) + " ")
            return
        if node.text:
            self.inline.append(node.text)
        for child in node:
            if not self.skipped(child):
                self.element(child, depth + 1)
            if child.tail:
                self.inline.append(child.tail)

    def element(self, node: _Element, depth: int) -> None:
        tag = _tag(node)
        attrib = node.attrib
        role = attrib.get("role")
        if role == "tablist":
            self.tabs.add_list(node)
            return
        if role == "tabpanel":
            self.tab_panel(self.tabs.label_for(node), node, depth, container=True)
            return
        classes = attrib.get("class")
        if classes is not None and tag in ("div", "table", "details", "section", "aside"):
            match = SPECIAL_CLASS_RE.search(classes)
            kind = SPECIAL_KIND.get(match.group(1), "note") if match else ""
            if kind == "code":
                code = self.code_like(node, tag)
                if code is not None:
                    self.add_block(code)
                    return
            elif kind == "tabs":
                self.tab_set(node, depth)
                return
            elif kind == "title":
                title = _clean_heading(_flat_text(node))
                self.add_block(f"# {title}" if title else "")
                return
            elif kind == "signature":
                self.add_block(_fenced(SIGNATURE_SPACE_RE.sub("", _flat_text(node)), ""))
                return
            elif kind == "note" or (tag == "details" and not ADMONITION_KINDS.isdisjoint(classes.split())):
                self.admonition(node, depth)  # (MkDocs writes collapsible ones as <details class="note">)
                return
        elif tag == "span" and classes == "lang":
            parent = node.getparent()
            if parent is not None and "language-" in (parent.get("class") or ""):
                return  # VitePress's language badge beside the code
        if tag in HEADING_TAGS:
            text = HEADING_GLYPH_RE.sub("", self.inline_text(node, depth)).strip()
            if text:
                self.add_block("#" * HEADING_TAGS[tag] + " " + text)
        elif tag == "p" or tag in ("dt", "summary", "figcaption", "legend"):
            self.flush()
            if tag == "dt" and "sig" in _class_tokens(node):
                text = WS_RE.sub(" ", _flat_text(node)).strip()  # a Sphinx signature: its text, unmarked
            else:
                text = self.inline_text(node, depth)
            if tag in ("dt", "legend") and text:
                text = f"**{text}**"
            self.add_block(text)
        elif tag == "pre":
            self.add_block(self.code_block(node))
        elif tag in ("ul", "ol"):
            self.list_blocks(node, depth)
        elif tag == "table":
            self.table(node, depth)
        elif tag == "blockquote":
            inner = self.sub_writer()
            inner.block(node, depth)
            self.add_block(_quoted(inner.result()))
        elif tag == "hr":
            self.add_block("---")
        elif tag in BLOCK_TAGS or ("-" in tag and _holds_blocks(node)):  # <starlight-tabs>, not <relative-time>
            self.flush()
            self.block(node, depth)
            self.flush()
        else:
            self.inline_element(node, depth)

    # -- inline --------------------------------------------------------------

    def inline_text(self, node: _Element, depth: int) -> str:
        saved, self.inline = self.inline, []
        self.inline_children(node, depth)
        text = WS_RE.sub(" ", "".join(self.inline)).strip()
        self.inline = saved
        return text

    def inline_children(self, node: _Element, depth: int) -> None:
        if depth > MAX_INLINE_DEPTH:
            self.inline.append(" " + _flat_text(node) + " ")
            return
        if node.text:
            self.inline.append(node.text)
        for child in node:
            if not self.skipped(child):
                self.inline_element(child, depth + 1)
            if child.tail:
                self.inline.append(child.tail)

    def inline_element(self, node: _Element, depth: int) -> None:
        tag = _tag(node)
        if tag == "br":
            self.inline.append("\n")
        elif tag == "img":
            alt = WS_RE.sub(" ", node.get("alt", "")).strip()
            src = self.asset_url(node.get("src", "")) if alt and self.urls else ""
            if src:
                self.inline.append(f"![{alt}]({src})")
            elif alt:  # (no usable URL: its text alone)
                self.inline.append(alt)
        elif tag == "a":
            if _is_permalink(node) or _is_more_link(node):
                return
            text = self.inline_text(node, depth)
            href = self.link_url(node.get("href", "")) if text and self.urls else ""
            self.inline.append(f"[{text}]({href})" if href else text)
        elif tag == "code":
            text = node.text_content()
            if text.strip():
                self.inline.append("`" + WS_RE.sub(" ", text).strip() + "`")
        elif tag in ("strong", "b"):
            self._wrap(node, depth, "**")
        elif tag in ("em", "i"):
            self._wrap(node, depth, "*")
        elif tag in ("label", "legend"):  # a form's captions: words apart from their neighbours'
            self.inline.append(" ")
            self.inline_children(node, depth)
            self.inline.append(" ")
        elif tag in BLOCK_TAGS or tag in HEADING_TAGS:
            # a block inside inline context (e.g. <div> inside <a>): keep its text; a
            # code block inside a list item stays a code block (marked, written after the
            # item); tab panels keep their labels
            role = node.get("role")
            if role == "tablist":
                self.tabs.add_list(node)
                return
            if role == "tabpanel":
                label = self.tabs.label_for(node)
                self.inline.append(f" **{label}** " if label else " ")
            code = self.code_like(node, tag) if self.item_code is not None else None
            if code is not None and self.item_code is not None:
                self.inline.append(f" \x00{len(self.item_code)}\x00 ")
                self.item_code.append(code)
            else:
                self.inline.append(" " + self.inline_text(node, depth) + " ")
        else:
            self.inline_children(node, depth)

    def _wrap(self, node: _Element, depth: int, mark: str) -> None:
        """``node``'s text between ``mark``s, the spaces at its ends kept outside them
        (``<em>str</em><em> or </em>`` is ``*str* *or*``, not ``*str**or*``)."""
        saved, self.inline = self.inline, []
        self.inline_children(node, depth)
        raw = "".join(self.inline)
        self.inline = saved
        text = WS_RE.sub(" ", raw).strip()
        if text:
            before = " " if raw[:1].isspace() else ""
            after = " " if raw[-1:].isspace() else ""
            self.inline.append(f"{before}{mark}{text}{mark}{after}")
        elif raw:
            self.inline.append(" ")

    # -- special blocks ------------------------------------------------------

    def code_block(self, node: _Element, language: str | None = None) -> str:
        return _fenced(_code_text(node), _code_language(node) if language is None else language)

    def code_like(self, node: _Element, tag: str) -> str | None:
        """The fenced code of ``node`` if it is a code block: a ``<pre>``, a Doxygen
        ``div.fragment``, a highlight table (line numbers in one cell, the code in the
        last); else None."""
        if tag == "pre":
            return self.code_block(node) or None
        classes = _class_tokens(node)
        if tag == "div" and "fragment" in classes:
            return self.code_block(node, "") or None
        if tag == "table" and ("highlighttable" in classes or "lntable" in classes):
            cells = [cell for row in _table_rows(node)[:1] for cell in row if _tag(cell) == "td"]
            if cells:
                pre = cells[-1].find(".//pre")
                code = cells[-1] if pre is None else pre
                return self.code_block(code, _code_language(code) or _code_language(node)) or None
        return None

    def tab_panel(self, label: str, node: _Element, depth: int, *, container: bool) -> None:
        """One tab's panel, introduced by its label: every panel is written, the hidden
        ones as the shown one."""
        self.flush()
        if label:
            self.add_block(f"**{label}**")
        if container:
            self.block(node, depth)
        else:
            self.element(node, depth + 1)
        self.flush()

    def tab_set(self, node: _Element, depth: int) -> None:
        """Tabs made of radio inputs and labels: sphinx-design ``.sd-tab-set`` (label,
        panel, label, panel), MkDocs Material ``.tabbed-set`` (``.tabbed-labels`` then
        ``.tabbed-content`` of ``.tabbed-block``s; older: label, panel) and VitePress
        ``.vp-code-group`` (``.tabs`` then ``.blocks``)."""
        labels: list[str] = []
        panels: list[_Element] = []
        for child in node:
            tag = _tag(child)
            if tag == "label":
                labels.append(_clean_heading(child.text_content()))
                continue
            if not tag or tag in SKIP_TAGS:
                continue
            classes = _class_tokens(child)
            if "tabbed-labels" in classes or "tabs" in classes:
                labels.extend(_clean_heading(label.text_content()) for label in child.iter("label"))
            elif "blocks" in classes or (
                "tabbed-content" in classes and "tabbed-block" in _class_tokens(child[0] if len(child) else child)
            ):
                panels.extend(panel for panel in child if _tag(panel) and _tag(panel) not in SKIP_TAGS)
            else:
                panels.append(child)
        for index, panel in enumerate(panels):
            self.tab_panel(labels[index] if index < len(labels) else "", panel, depth, container=False)

    def admonition(self, node: _Element, depth: int) -> None:
        """A note, tip or warning box as a quote whose first line is its title in bold
        (the title element's text, else its ``aria-label``, else its kind)."""
        title_node = None
        for child in node:
            if _tag(child) == "summary" or ADMONITION_TITLE_RE.search(child.get("class") or ""):
                title_node = child
                break
        title = ""
        if title_node is not None:
            title = _clean_heading(_flat_text(title_node)).rstrip(":").strip()
        if not title:
            title = _clean_heading(node.get("aria-label") or "")
        if not title:
            for name in _class_tokens(node):
                kind = name.rsplit("-", 1)[-1]
                if kind in ADMONITION_KINDS and (kind == name or not name.startswith("language")):
                    title = kind.capitalize()
                    break
        inner = self.sub_writer()
        if node.text:
            inner.inline.append(node.text)
        for child in node:
            if child is not title_node and not inner.skipped(child):
                inner.element(child, depth + 1)
            if child.tail:
                inner.inline.append(child.tail)
        body = inner.result()
        quoted = "\n".join(filter(None, [f"**{title}**" if title else "", body]))
        if title and body:
            quoted = f"**{title}**\n\n{body}"
        self.add_block(_quoted(quoted))

    def list_blocks(self, node: _Element, depth: int) -> None:
        """A list as one block, broken where an item holds a code block: the code is a
        fenced block of its own right after the item's line."""
        run: list[str] = []
        for line in self.list_lines(node, depth, indent=""):
            if "\n" in line:  # a code block (an item's line is a single line)
                self.add_block("\n".join(run))
                run = []
                self.add_block(line)
            else:
                run.append(line)
        self.add_block("\n".join(run))

    def list_lines(self, node: _Element, depth: int, indent: str) -> list[str]:
        if depth > MAX_DEPTH:
            text = _flat_text(node)
            return [f"{indent}- {text}"] if text else []
        lines: list[str] = []
        items = [item for item in node if _tag(item) == "li" and not self.skipped(item)]
        ordered = _tag(node) == "ol"
        step, number = 1, 1
        if ordered:
            start = _int_attribute(node, "start")
            if "reversed" in node.attrib:
                step, number = -1, len(items) if start is None else start
            elif start is not None:
                number = start
        for item in items:
            marker = "- "
            if ordered:
                value = _int_attribute(item, "value")
                number = number if value is None else value
                marker = f"{number}. "
                number += step
            nested: list[str] = []
            saved, self.inline = self.inline, []
            saved_code, self.item_code = self.item_code, []
            if item.text:
                self.inline.append(item.text)
            for child in item:
                if self.skipped(child):
                    pass
                elif _tag(child) in ("ul", "ol"):
                    nested.extend(self.list_lines(child, depth + 1, indent + "  "))
                else:
                    self.inline_element(child, depth + 1)
                if child.tail:
                    self.inline.append(child.tail)
            text = WS_RE.sub(" ", "".join(self.inline)).strip()
            codes = self.item_code
            self.inline, self.item_code = saved, saved_code
            if codes:
                lines.extend(_item_with_code(text, codes, indent, marker))
            elif text:
                lines.append(f"{indent}{marker}{text}")
            lines.extend(nested)
        return lines

    def table(self, node: _Element, depth: int) -> None:
        """A table, its caption first; a row that is a heading alone (Doxygen's
        member tables) is written as a heading between two tables; empty rows are dropped."""
        for caption in node:
            if _tag(caption) == "caption":
                self.add_block(self.inline_text(caption, depth))
        rows: list[list[str]] = []
        header = False
        for index, row in enumerate(_table_rows(node)):
            cells = [c for c in row if _tag(c) in ("td", "th")]
            if len(cells) == 1 and any(_tag(child) in HEADING_TAGS for child in cells[0]):
                self.add_block(_table_markdown(rows, header))
                rows, header = [], False
                self.block(cells[0], depth)
                continue
            texts = [self.inline_text(c, depth).replace("|", "\\|") for c in cells]
            if not any(texts):
                continue
            if index == 0 and all(_tag(c) == "th" for c in cells):
                header = True
            rows.append(texts)
        self.add_block(_table_markdown(rows, header))

    # -- URLs ----------------------------------------------------------------

    def link_url(self, href: str) -> str:
        """The URL a reader of the page follows: resolved, its trailing slash and
        fragment kept, tracking parameters dropped; "" for a link to a place on
        this page, a script, or what is not a URL."""
        href = href.strip()
        if not href or href.startswith("#") or href.lower().startswith(("javascript:", "data:")):
            return ""
        try:
            absolute = urljoin(self.base_url, href)
            if urldefrag(absolute)[0] == urldefrag(self.base_url)[0] and "#" in absolute:
                return ""  # a place on this page
            if absolute.lower().startswith(("http://", "https://")):
                return without_tracking(absolute)
        except ValueError:  # not a URL (an unclosed IPv6 bracket...): the text alone
            return ""
        return absolute

    def asset_url(self, src: str) -> str:
        """An image's URL without its query (a cache buster) and fragment; "" for inline
        data or what is not a URL."""
        src = src.strip()
        if not src or src.lower().startswith("data:"):
            return ""
        try:
            parts = urlsplit(urljoin(self.base_url, src))
        except ValueError:  # not a URL (an unclosed IPv6 bracket...): the alt text alone
            return ""
        return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def without_tracking(url: str) -> str:
    """``url`` without its tracking parameters (``utm_*``, ``fbclid``...), otherwise
    as written.

    >>> without_tracking("https://a.example/docs/?utm_source=x&page=2#intro")
    'https://a.example/docs/?page=2#intro'
    >>> without_tracking("https://a.example/docs/")
    'https://a.example/docs/'
    """
    parts = urlsplit(url)
    if not parts.query:
        return url
    params = parse_qsl(parts.query, keep_blank_values=True)
    kept = [(name, value) for name, value in params if not is_tracking_param(name)]
    if len(kept) == len(params):
        return url
    return urlunsplit(parts._replace(query=urlencode(kept)))


def _quoted(markdown: str) -> str:
    return "\n".join(("> " + line).rstrip() for line in markdown.splitlines())


def _table_rows(table: _Element) -> list[_Element]:
    """The rows of ``table`` itself (not of the tables in its cells), hidden ones left out."""
    rows: list[_Element] = []
    for child in table:
        tag = _tag(child)
        if tag == "tr":
            rows.append(child)
        elif tag in ("thead", "tbody", "tfoot"):
            rows.extend(row for row in child if _tag(row) == "tr")
    return [row for row in rows if not _skipped(row)]


def _item_with_code(text: str, codes: list[str], indent: str, marker: str) -> list[str]:
    r"""The lines of a list item whose text holds code marks: the item's line, each
    code block (one entry, several lines), and the text after it, indented under the item.

    >>> _item_with_code("Run: \x000\x00 then go.", ["```\nx\n```"], "", "1. ")
    ['1. Run:', '```\nx\n```', '   then go.']
    """
    parts = CODE_MARK_RE.split(text)
    lines = [f"{indent}{marker}{parts[0].strip()}".rstrip()]
    for index in range(1, len(parts), 2):
        lines.append(codes[int(parts[index])])
        after = parts[index + 1].strip()
        if after:
            lines.append(f"{indent}{' ' * len(marker)}{after}")
    return lines


def _table_markdown(rows: list[list[str]], header: bool) -> str:
    if not rows:
        return ""
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    head, body = (rows[0], rows[1:]) if header else ([""] * width, rows)
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * width]
    lines.extend("| " + " | ".join(r) + " |" for r in body)
    return "\n".join(lines)
