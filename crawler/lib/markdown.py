"""Markdown of a page's main content, as the extractor should read it: the writer.

:func:`write_markdown` writes the element the selection chose, leaving out ``skip`` and
whatever cannot change what a reader sees (:mod:`crawler.lib.nodes`), plus cache-buster
query strings of images and alt texts that are only a file name. Blocks are separated by
one blank line, which the boilerplate analysis splits on. Pure functions over an lxml
tree; the tree is never modified.

Links are written as their text alone (``links="text"``, the default: fewer tokens, and
moving link targets changes nothing), or as ``[text](url)`` (``links="urls"``), resolved,
only tracking parameters dropped.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING
from urllib.parse import urldefrag, urljoin, urlsplit, urlunsplit

from crawler.lib.codetext import LINE_NUMBERS_RE, code_language, code_text, fenced
from crawler.lib.furniture import without_credit
from crawler.lib.mdnodes import (
    ADMONITION_KINDS,
    ADMONITION_TITLE_RE,
    HEADING_GLYPH_RE,
    SIGNATURE_SPACE_RE,
    SPECIAL_CLASS_RE,
    SPECIAL_KIND,
    TabLabels,
    clean_heading,
    flat_text,
    holds_blocks,
    int_attribute,
    is_badge,
    is_more_link,
    is_permalink,
    is_skipped,
    layout_list,
    table_rows,
)
from crawler.lib.mdsyntax import (
    CODE_MARK_RE,
    WS_RE,
    item_with_code,
    literal,
    literal_start,
    quoted,
    spaced,
    table_markdown,
)
from crawler.lib.nodes import (
    BLOCK_TAGS,
    HEADING_LEVELS,
    SKIP_TAGS,
    VISIBLE,
    Visibility,
    class_tokens,
    image_alt,
    tag_of,
)
from crawler.lib.urls import without_tracking

if TYPE_CHECKING:
    from lxml.etree import _Element

#: how links are written: their text only, or ``[text](url)``
LINK_MODES = ("text", "urls")
DEFAULT_LINKS = "text"


def check_links(links: str) -> str:
    """``links`` when it is a link mode, else ``ValueError`` naming the setting."""
    if links not in LINK_MODES:
        raise ValueError(f"MARKDOWN_LINKS must be one of {', '.join(LINK_MODES)}, got {links!r}")
    return links


HEADING_TAGS = HEADING_LEVELS
MAX_DEPTH = 400  # deeper content is written as plain text (no recursion)
#: the same for inline markup (<b><i><span>...), three frames deep per level
MAX_INLINE_DEPTH = 200


def write_markdown(
    root: _Element,
    base_url: str = "",
    *,
    links: str = DEFAULT_LINKS,
    skip: frozenset[_Element] = frozenset(),
    before: Iterable[_Element] = (),
    visibility: Visibility = VISIBLE,
) -> str:
    """Markdown of ``root``'s content, after that of the elements ``before`` (a title
    block standing above it), leaving out the elements in ``skip`` and whatever a
    reader does not see (``visibility``); ``links``: ``"text"`` or ``"urls"`` (see the
    module's docstring).

    >>> from lxml import html
    >>> tree = html.fromstring(
    ...     "<html><body><nav>Home</nav><main><h1>Title</h1><p>Some <b>bold</b>"
    ...     " text.<script>x=1</script></p><ul><li>one</li><li>two</li></ul></main>"
    ...     "<footer>(c) ACME</footer></body></html>")
    >>> print(write_markdown(tree.find(".//main")))
    # Title
    <BLANKLINE>
    Some **bold** text.
    <BLANKLINE>
    - one
    - two
    """
    writer = _MarkdownWriter(base_url, check_links(links), skip=skip, visibility=visibility)
    for node in before:
        writer.element(node, depth=1)
    writer.block(root, depth=0)
    return writer.result()


class _MarkdownWriter:
    """Walks a tree once, collecting blocks of markdown."""

    def __init__(
        self,
        base_url: str,
        links: str = DEFAULT_LINKS,
        tabs: TabLabels | None = None,
        skip: frozenset[_Element] = frozenset(),
        visibility: Visibility = VISIBLE,
    ) -> None:
        self.base_url = base_url
        self.urls = links == "urls"
        self.skip = skip  # elements left out besides what is_skipped says (the selection's)
        self.visibility = visibility
        self.blocks: list[str] = []
        self.inline: list[str] = []
        self.tabs = tabs if tabs is not None else TabLabels()
        #: code blocks met inside the list item being written (a mark in its text says where)
        self.item_code: list[str] | None = None

    def sub_writer(self) -> _MarkdownWriter:
        """A writer for a part written apart (a quote, an admonition), sharing the tab labels."""
        return _MarkdownWriter(self.base_url, "urls" if self.urls else "text", self.tabs, self.skip, self.visibility)

    def skipped(self, node: _Element) -> bool:
        return node in self.skip or is_skipped(node, self.visibility)

    def result(self) -> str:
        self.flush()
        return "\n\n".join(self.blocks)

    # -- blocks --------------------------------------------------------------

    def flush(self) -> None:
        text = WS_RE.sub(" ", "".join(self.inline)).strip()
        self.inline = []
        if text:
            self.blocks.append(literal_start(text))

    def add_block(self, text: str) -> None:
        self.flush()
        if text.strip():
            self.blocks.append(text.rstrip())

    def block(self, node: _Element, depth: int) -> None:
        """Write ``node``'s children (``node`` itself is a container)."""
        # the loop of inline_children, not shared: a frame more per level would lower
        # the depth that MAX_DEPTH allows under the recursion limit
        if depth > MAX_DEPTH:
            self.inline.append(" " + flat_text(node, self.skipped) + " ")
            return
        if node.text:
            self.inline.append(literal(node.text))
        for child in node:
            if not self.skipped(child):
                self.element(child, depth + 1)
            if child.tail:
                self.inline.append(literal(child.tail))

    def element(self, node: _Element, depth: int) -> None:
        tag = tag_of(node)
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
                title = clean_heading(flat_text(node, self.skipped))
                self.add_block(f"# {title}" if title else "")
                return
            elif kind == "signature":
                self.add_block(fenced(SIGNATURE_SPACE_RE.sub("", flat_text(node, self.skipped)), ""))
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
            if tag == "dt" and "sig" in class_tokens(node):
                text = WS_RE.sub(" ", flat_text(node, self.skipped)).strip()  # a Sphinx signature: its text, unmarked
            else:
                text = self.inline_text(node, depth)
            if tag == "figcaption" or (tag == "p" and "caption" in (classes or "")):
                text = without_credit(text)  # its photo credit ("Foto: ..."), not what it shows
            if tag in ("dt", "legend") and text:
                text = f"**{text}**"
            self.add_block(literal_start(text))
        elif tag == "pre":
            self.add_block(self.code_block(node))
        elif tag in ("ul", "ol") and not layout_list(node):
            self.list_blocks(node, depth)
        elif tag in ("ul", "ol"):  # its items are sections: blocks, as a <div>'s
            self.flush()
            self.block(node, depth)
            self.flush()
        elif tag == "table":
            code = self.code_like(node, tag)
            if code is not None:
                self.add_block(code)
            else:
                self.table(node, depth)
        elif tag == "blockquote":
            inner = self.sub_writer()
            inner.block(node, depth)
            self.add_block(quoted(inner.result()))
        elif tag == "hr":
            self.add_block("---")
        elif tag in BLOCK_TAGS or ("-" in tag and holds_blocks(node)):  # <starlight-tabs>, not <relative-time>
            self.flush()
            self.block(node, depth)
            self.flush()
        else:
            self.inline_element(node, depth)

    # -- inline --------------------------------------------------------------

    def inline_text(self, node: _Element, depth: int) -> str:
        return WS_RE.sub(" ", self.raw_inline(node, depth)).strip()

    def raw_inline(self, node: _Element, depth: int) -> str:
        """``node``'s inline markdown as written, its white space as it stands."""
        saved, self.inline = self.inline, []
        self.inline_children(node, depth)
        raw = "".join(self.inline)
        self.inline = saved
        return raw

    def inline_children(self, node: _Element, depth: int) -> None:
        if depth > MAX_INLINE_DEPTH:
            self.inline.append(" " + flat_text(node, self.skipped) + " ")
            return
        if node.text:
            self.inline.append(literal(node.text))
        for child in node:
            if not self.skipped(child):
                self.inline_element(child, depth + 1)
            if child.tail:
                self.inline.append(literal(child.tail))

    def inline_element(self, node: _Element, depth: int) -> None:
        tag = tag_of(node)
        if tag == "br":
            self.inline.append("\n")
        elif tag == "img":
            alt = without_credit(image_alt(node))
            src = self.asset_url(node.get("src", "")) if alt and self.urls else ""
            if src:
                self.inline.append(f"![{alt}]({src})")
            elif alt:  # (no usable URL: its text alone)
                self.inline.append(alt)
        elif tag == "a":
            if is_permalink(node) or is_more_link(node):
                return
            raw = self.raw_inline(node, depth)
            text = WS_RE.sub(" ", raw).strip()
            href = self.link_url(node.get("href", "")) if text and self.urls else ""
            # the spaces at its ends stay outside it: rustdoc's "<a>&amp;mut </a>T" is "&mut T"
            if text:
                self.inline.append(spaced(raw, f"[{text}]({href})" if href else text))
            elif raw[:1].isspace():
                self.inline.append(" ")
        elif tag == "code":
            text = node.text_content()
            if text.strip():  # (its spaces at the ends outside it: DocBook's "<code>PREPARE </code><em>")
                self.inline.append(spaced(text, "`" + WS_RE.sub(" ", text).strip() + "`"))
        elif tag in ("strong", "b"):
            self._wrap(node, depth, "**")
        elif tag in ("em", "i"):
            self._wrap(node, depth, "*")
        elif tag in ("label", "legend") or is_badge(node):
            # a form's captions, a badge (Doxygen's "inline" "constexpr" labels): words
            # apart from their neighbours'
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
        elif tag == "span" and "caption" in (node.get("class") or ""):
            self.inline.append(" " + without_credit(self.inline_text(node, depth)) + " ")  # its photo credit out
        else:
            self.inline_children(node, depth)

    def _wrap(self, node: _Element, depth: int, mark: str) -> None:
        """``node``'s text between ``mark``s, the spaces at its ends kept outside them
        (``<em>str</em><em> or </em>`` is ``*str* *or*``, not ``*str**or*``)."""
        raw = self.raw_inline(node, depth)
        text = WS_RE.sub(" ", raw).strip()
        if text:
            self.inline.append(spaced(raw, f"{mark}{text}{mark}"))
        elif raw:
            self.inline.append(" ")

    # -- special blocks ------------------------------------------------------

    def code_block(self, node: _Element, language: str | None = None) -> str:
        return fenced(code_text(node, self.visibility), code_language(node) if language is None else language)

    def code_like(self, node: _Element, tag: str) -> str | None:
        """The fenced code of ``node`` if it is a code block: a ``<pre>``, a Doxygen
        ``div.fragment``, a highlight table (line numbers in one cell, the code in the
        last); else None."""
        if tag == "pre":
            return self.code_block(node) or None
        classes = class_tokens(node)
        if tag == "div" and "fragment" in classes:
            return self.code_block(node, "") or None
        if tag == "table" and ("highlighttable" in classes or "lntable" in classes or node.find(".//pre") is not None):
            rows = table_rows(node, self.skipped)  # (only a table holding code: every table is asked)
            cells = [cell for row in rows[:1] for cell in row if tag_of(cell) == "td"]
            # a highlighter's table, or any table of one row laying a <pre> beside its
            # line numbers (GTK-Doc's listing_frame)
            if cells and (
                "highlighttable" in classes
                or "lntable" in classes
                or (
                    len(rows) == 1
                    and len(cells) >= 2
                    and cells[-1].find(".//pre") is not None
                    and all(LINE_NUMBERS_RE.fullmatch(cell.text_content()) for cell in cells[:-1])
                )
            ):
                pre = cells[-1].find(".//pre")
                code = cells[-1] if pre is None else pre
                return self.code_block(code, code_language(code) or code_language(node)) or None
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
            tag = tag_of(child)
            if tag == "label":
                labels.append(clean_heading(child.text_content()))
                continue
            if not tag or tag in SKIP_TAGS:
                continue
            classes = class_tokens(child)
            if "tabbed-labels" in classes or "tabs" in classes:
                labels.extend(clean_heading(label.text_content()) for label in child.iter("label"))
            elif "blocks" in classes or (
                "tabbed-content" in classes and "tabbed-block" in class_tokens(child[0] if len(child) else child)
            ):
                panels.extend(panel for panel in child if tag_of(panel) and tag_of(panel) not in SKIP_TAGS)
            else:
                panels.append(child)
        for index, panel in enumerate(panels):
            self.tab_panel(labels[index] if index < len(labels) else "", panel, depth, container=False)

    def admonition(self, node: _Element, depth: int) -> None:
        """A note, tip or warning box as a quote whose first line is its title in bold
        (the title element's text, else its ``aria-label``, else its kind)."""
        title_node = None
        for child in node:
            if tag_of(child) == "summary" or ADMONITION_TITLE_RE.search(child.get("class") or ""):
                title_node = child
                break
        title = ""
        if title_node is not None:
            title = clean_heading(flat_text(title_node, self.skipped)).rstrip(":").strip()
        if not title:
            title = clean_heading(node.get("aria-label") or "")
        if not title:
            for name in class_tokens(node):
                kind = name.rsplit("-", 1)[-1]
                if kind in ADMONITION_KINDS and (kind == name or not name.startswith("language")):
                    title = kind.capitalize()
                    break
        inner = self.sub_writer()
        if node.text:
            inner.inline.append(literal(node.text))
        for child in node:
            if child is not title_node and not inner.skipped(child):
                inner.element(child, depth + 1)
            if child.tail:
                inner.inline.append(literal(child.tail))
        body = inner.result()
        text = "\n".join(filter(None, [f"**{title}**" if title else "", body]))
        if title and body:
            text = f"**{title}**\n\n{body}"
        self.add_block(quoted(text))

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
            text = flat_text(node, self.skipped)
            return [f"{indent}- {text}"] if text else []
        lines: list[str] = []
        items = [item for item in node if tag_of(item) == "li" and not self.skipped(item)]
        ordered = tag_of(node) == "ol"
        step, number = 1, 1
        if ordered:
            start = int_attribute(node, "start")
            if "reversed" in node.attrib:
                step, number = -1, len(items) if start is None else start
            elif start is not None:
                number = start
        loose = WS_RE.sub(" ", node.text or "").strip()  # text a list holds outside its items
        if loose:
            lines.append(f"{indent}{loose}")
        for item in node:
            if item not in items:  # not an item: its text and its tail, as a line each
                if tag_of(item) and not self.skipped(item):
                    text = self.inline_text(item, depth + 1)
                    if text:
                        lines.append(f"{indent}{text}")
                tail = WS_RE.sub(" ", item.tail or "").strip()
                if tail:
                    lines.append(f"{indent}{tail}")
                continue
            marker = "- "
            if ordered:
                value = int_attribute(item, "value")
                number = number if value is None else value
                marker = f"{number}. "
                number += step
            # the item's text and nested lists in their order: text after a nested list
            # is a line of its own under the item, after the list
            parts: list[str | list[str]] = []
            saved, self.inline = self.inline, []
            saved_code, self.item_code = self.item_code, []
            if item.text:
                self.inline.append(literal(item.text))
            for child in item:
                if self.skipped(child):
                    pass
                elif tag_of(child) in ("ul", "ol"):
                    parts.append("".join(self.inline))
                    self.inline = []
                    parts.append(self.list_lines(child, depth + 1, indent + "  "))
                else:
                    self.inline_element(child, depth + 1)
                if child.tail:
                    self.inline.append(literal(child.tail))
            parts.append("".join(self.inline))
            codes = self.item_code
            self.inline, self.item_code = saved, saved_code
            first = True
            for part in parts:
                if isinstance(part, list):
                    lines.extend(part)
                    continue
                text = WS_RE.sub(" ", part).strip()
                if not text:
                    continue
                lead = marker if first else " " * len(marker)
                text = literal_start(text) if first else text
                first = False
                if codes and CODE_MARK_RE.search(text):
                    lines.extend(item_with_code(text, codes, indent, lead))
                else:
                    lines.append(f"{indent}{lead}{text}")
            tail = WS_RE.sub(" ", item.tail or "").strip()
            if tail:
                lines.append(f"{indent}{tail}")
        return lines

    def table(self, node: _Element, depth: int) -> None:
        """A table, its caption first; a row that is a heading alone (Doxygen's
        member tables) is written as a heading between two tables; empty rows are dropped."""
        for caption in node:
            if tag_of(caption) == "caption":
                self.add_block(self.inline_text(caption, depth))
        rows: list[list[str]] = []
        header = False
        for index, row in enumerate(table_rows(node, self.skipped)):
            cells = [c for c in row if tag_of(c) in ("td", "th")]
            if len(cells) == 1 and any(tag_of(child) in HEADING_TAGS for child in cells[0]):
                self.add_block(table_markdown(rows, header))
                rows, header = [], False
                self.block(cells[0], depth)
                continue
            texts = [self.inline_text(c, depth).replace("|", "\\|") for c in cells]
            if not any(texts):
                continue
            if index == 0 and all(tag_of(c) == "th" for c in cells):
                header = True
            rows.append(texts)
        self.add_block(table_markdown(rows, header))

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
