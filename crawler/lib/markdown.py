"""HTML to markdown: the main content of a page, as the extractor should read it.

Pure functions over an lxml tree (what ``response.selector.root`` holds); the tree is
never modified. Whatever cannot change what a reader sees is left out: scripts, styles,
comments, hidden elements, form fields, navigation, asides, page header and footer,
query strings of image URLs (cache busters). Blocks are separated by one blank line,
which is what the domain boilerplate analysis splits on.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit, urlunsplit

from lxml import etree, html

from crawler.lib.urls import canonical_url

if TYPE_CHECKING:
    from lxml.etree import _Element

#: Elements whose whole subtree never reaches the markdown.
SKIP_TAGS = frozenset(
    {
        "script", "style", "noscript", "template", "svg", "canvas", "iframe", "object",
        "embed", "link", "meta", "head", "title", "nav", "aside", "form", "input",
        "select", "textarea", "button", "option", "dialog", "map", "audio", "video",
    }
)  # fmt: skip
HEADING_TAGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
BLOCK_TAGS = frozenset(
    {
        "address", "article", "blockquote", "body", "center", "dd", "details", "div",
        "dl", "dt", "fieldset", "figcaption", "figure", "footer", "header", "hgroup",
        "hr", "html", "li", "main", "ol", "p", "pre", "section", "summary", "table",
        "tbody", "td", "tfoot", "th", "thead", "tr", "ul",
    } | set(HEADING_TAGS)
)  # fmt: skip
HIDDEN_STYLE_RE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
LANG_CLASS_RE = re.compile(r"(?:^|\s)(?:language|lang|highlight-source|highlight)-([\w+#.-]+)")
WS_RE = re.compile(r"\s+")
MAX_DEPTH = 400  # deeper content is written as plain text (no recursion)
#: libxml2 stops parsing at this depth, even with huge_tree (as parsel parses), and the
#: rest of the page is lost: a page that deep is parsed again flattened
PARSER_MAX_DEPTH = 2048


def page_title(root: _Element) -> str:
    """The page's title: ``<title>``, else the first ``<h1>``."""
    for xpath in ("//title", "//h1"):
        for node in root.xpath(xpath):
            text = WS_RE.sub(" ", node.text_content()).strip()
            if text:
                return text
    return ""


def main_content_root(root: _Element) -> _Element:
    """The element holding the page's main content: see
    :func:`crawler.lib.maincontent.select_main_content`."""
    from crawler.lib.maincontent import select_main_content  # here: maincontent imports this module

    return select_main_content(root).root


def html_to_markdown(root: _Element, base_url: str = "") -> str:
    """Markdown of the main content of the page whose tree is ``root``.

    >>> from lxml import etree, html
    >>> tree = html.fromstring(
    ...     "<html><body><nav>Home</nav><main><h1>Title</h1><p>Some <b>bold</b>"
    ...     " text.<script>x=1</script></p><ul><li>one</li><li>two</li></ul></main>"
    ...     "<footer>(c) ACME</footer></body></html>")
    >>> print(html_to_markdown(tree))
    # Title
    <BLANKLINE>
    Some **bold** text.
    <BLANKLINE>
    - one
    - two
    """
    from crawler.lib.maincontent import select_main_content  # here: maincontent imports this module

    selection = select_main_content(root)
    writer = _MarkdownWriter(base_url, selection.skip)
    writer.block(selection.root, depth=0)
    return writer.result()


def html_bytes_to_markdown(body: str | bytes, base_url: str = "") -> str:
    """Parse ``body`` and return the markdown of its main content."""
    if not body or not body.strip():
        return ""
    parser = html.HTMLParser(huge_tree=True)  # as parsel parses: 2048 levels, not 256
    root = html.fromstring(body, parser=parser)
    if deeper_than(root, PARSER_MAX_DEPTH - 1):
        text = body if isinstance(body, str) else body.decode("utf-8", "replace")
        root = html.fromstring(flatten_deep_html(text), parser=parser)
    return html_to_markdown(root, base_url)


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
    parent = node.getparent()
    while parent is not None:
        if _tag(parent) == "article":
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
            if element is not node and _skipped(element):
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
    hidden elements, headers outside an article."""
    tag = _tag(node)
    if not tag or tag in SKIP_TAGS or _is_hidden(node):
        return True
    if tag == "footer":
        return True
    return tag == "header" and not _inside_article(node)


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


class _MarkdownWriter:
    """Walks a tree once, collecting blocks of markdown."""

    def __init__(self, base_url: str, skip: frozenset[_Element] = frozenset()) -> None:
        self.base_url = base_url
        self.skip = skip  # elements left out besides what _skipped says (page chrome)
        self.blocks: list[str] = []
        self.inline: list[str] = []

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
        if tag in HEADING_TAGS:
            text = self.inline_text(node, depth)
            if text:
                self.add_block("#" * HEADING_TAGS[tag] + " " + text)
        elif tag == "p" or tag in ("dt", "summary", "figcaption"):
            self.flush()
            text = self.inline_text(node, depth)
            if tag == "dt" and text:
                text = f"**{text}**"
            self.add_block(text)
        elif tag == "pre":
            self.add_block(self.code_block(node))
        elif tag in ("ul", "ol"):
            self.add_block("\n".join(self.list_lines(node, depth, indent="")))
        elif tag == "table":
            self.add_block(self.table(node, depth))
        elif tag == "blockquote":
            inner = _MarkdownWriter(self.base_url, self.skip)
            inner.block(node, depth)
            quoted = inner.result()
            self.add_block("\n".join(("> " + line).rstrip() for line in quoted.splitlines()))
        elif tag == "hr":
            self.add_block("---")
        elif tag in BLOCK_TAGS:
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
        if depth > MAX_DEPTH:
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
            src = self.asset_url(node.get("src", ""))
            if src and alt:
                self.inline.append(f"![{alt}]({src})")
        elif tag == "a":
            text = self.inline_text(node, depth)
            href = self.link_url(node.get("href", ""))
            self.inline.append(f"[{text}]({href})" if text and href else text)
        elif tag == "code":
            text = node.text_content()
            if text.strip():
                self.inline.append("`" + WS_RE.sub(" ", text).strip() + "`")
        elif tag in ("strong", "b"):
            self._wrap(node, depth, "**")
        elif tag in ("em", "i"):
            self._wrap(node, depth, "*")
        elif tag in BLOCK_TAGS or tag in HEADING_TAGS:
            # a block inside inline context (e.g. <div> inside <a>): keep its text
            self.inline.append(" " + self.inline_text(node, depth) + " ")
        else:
            self.inline_children(node, depth)

    def _wrap(self, node: _Element, depth: int, mark: str) -> None:
        text = self.inline_text(node, depth)
        if text:
            self.inline.append(f"{mark}{text}{mark}")

    # -- special blocks ------------------------------------------------------

    def code_block(self, node: _Element) -> str:
        code = node.find(".//code")
        classes = " ".join(filter(None, [node.get("class", ""), code.get("class", "") if code is not None else ""]))
        match = LANG_CLASS_RE.search(classes)
        lang = match.group(1) if match else ""
        text = (code if code is not None else node).text_content().strip("\n")
        fence = "````" if "```" in text else "```"
        return f"{fence}{lang}\n{text}\n{fence}"

    def list_lines(self, node: _Element, depth: int, indent: str) -> list[str]:
        if depth > MAX_DEPTH:
            text = _flat_text(node)
            return [f"{indent}- {text}"] if text else []
        lines: list[str] = []
        ordered = _tag(node) == "ol"
        number = 0
        for item in node:
            if _tag(item) != "li" or self.skipped(item):
                continue
            number += 1
            marker = f"{number}. " if ordered else "- "
            nested: list[str] = []
            saved, self.inline = self.inline, []
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
            self.inline = saved
            if text:
                lines.append(f"{indent}{marker}{text}")
            lines.extend(nested)
        return lines

    def table(self, node: _Element, depth: int) -> str:
        rows: list[list[str]] = []
        header = False
        for index, row in enumerate(node.iter("tr")):
            cells = [c for c in row if _tag(c) in ("td", "th")]
            if not cells:
                continue
            if index == 0 and all(_tag(c) == "th" for c in cells):
                header = True
            rows.append([self.inline_text(c, depth).replace("|", "\\|") for c in cells])
        if not rows:
            return ""
        width = max(len(r) for r in rows)
        rows = [r + [""] * (width - len(r)) for r in rows]
        head, body = (rows[0], rows[1:]) if header else ([""] * width, rows)
        lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * width]
        lines.extend("| " + " | ".join(r) + " |" for r in body)
        return "\n".join(lines)

    # -- URLs ----------------------------------------------------------------

    def link_url(self, href: str) -> str:
        href = href.strip()
        if not href or href.startswith("#") or href.lower().startswith(("javascript:", "data:")):
            return ""
        try:
            absolute = urljoin(self.base_url, href)
            if absolute.lower().startswith(("http://", "https://")):
                return canonical_url(absolute)
        except ValueError:  # not a URL (an unclosed IPv6 bracket...): the text alone
            return ""
        return absolute

    def asset_url(self, src: str) -> str:
        src = src.strip()
        if not src or src.lower().startswith("data:"):
            return ""
        parts = urlsplit(urljoin(self.base_url, src))
        return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
