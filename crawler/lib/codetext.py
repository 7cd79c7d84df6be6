"""The text of a code block as a reader sees it, and its language: the code part of
the markdown writer (:mod:`crawler.lib.markdown`). Line breaks of every markup (``<br>``,
line elements, Prism's token lines, ``display:block`` spans) kept, line-number gutters
and hidden elements left out; the language from the block's classes or attributes.
Pure functions over an lxml tree; the tree is never modified.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from lxml import etree

from crawler.lib.nodes import BLOCK_TAGS, SKIP_TAGS, VISIBLE, Visibility, tag_of

if TYPE_CHECKING:
    from lxml.etree import _Element

LANG_CLASS_RE = re.compile(r"(?:^|\s)(?:language|lang|highlight-source|highlight)-([\w+#.-]+)")
#: what a class name says when there is no language (Sphinx ``highlight-default``)
NO_LANGUAGE = frozenset({"default", "none"})
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
#: a code block's gutter: its line numbers, one a line
LINE_NUMBERS_RE = re.compile(r"\s*\d+(?:\s+\d+)*\s*")


def code_language(node: _Element) -> str:
    """The language of the code block ``node`` (a ``<pre>``): a ``language-``,
    ``lang-`` or ``highlight-`` class or a ``data-language``/``data-lang`` attribute
    on it, its ``<code>``, or its nearest three ancestors (Sphinx's
    ``<div class="highlight-python"><div class="highlight"><pre>``).

    A ``lang`` attribute on the ``<pre>`` or its ``<code>`` (GitHub's ``<pre lang="shell">``)
    names it too, unless it is a natural language's tag (``en-US``) or the page's own.

    >>> from lxml import html
    >>> code_language(html.fromstring('<div class="highlight-python"><div><pre>x</pre></div></div>')[0][0])
    'python'
    >>> [code_language(html.fromstring(f'<pre lang="{lang}">x</pre>')) for lang in ("shell", "en-US")]
    ['shell', '']
    """
    candidates = [node]
    code = next(node.iter("code"), None)
    if code is not None:
        candidates.append(code)
    own = len(candidates)  # (``lang`` is the code's language only on these)
    parent = node.getparent()
    while parent is not None and len(candidates) < 6:
        candidates.append(parent)
        parent = parent.getparent()
    for index, element in enumerate(candidates):
        language = element.get("data-language") or element.get("data-lang")
        if not language and index < own:
            language = _lang_attribute(element)
        if not language:
            classes = element.get("class")
            match = LANG_CLASS_RE.search(classes) if classes else None
            language = match.group(1) if match else ""
        if language:
            return "" if language.lower() in NO_LANGUAGE else language.strip()
    return ""


#: a natural language's tag (BCP 47: ``en``, ``de-CH``, ``zh-Hant-TW``), not a code's
NATURAL_LANG_RE = re.compile(r"[a-z]{2,3}(?:-[A-Za-z0-9]{2,8})+")


def _lang_attribute(element: _Element) -> str:
    """The code language a ``lang`` attribute of a code element names, if it names one."""
    lang = (element.get("lang") or "").strip()
    if not lang or NATURAL_LANG_RE.fullmatch(lang):
        return ""
    page = element.getroottree().getroot().get("lang") or ""
    return "" if lang.lower() == page.strip().lower() else lang


def code_text(node: _Element, visibility: Visibility = VISIBLE) -> str:
    r"""The text of the code block ``node`` as rendered: every ``<br>`` and every line
    element (a block, a Prism ``token-line``, a ``display:block`` span) ends one line,
    indentation kept, line-number gutters and hidden elements left out. The markup
    variants of one code give one text.

    >>> from lxml import html
    >>> code_text(html.fromstring("<pre>a<br>  b<br></pre>"))
    'a\n  b'
    >>> code_text(html.fromstring('<pre><span class="token-line">a<br></span>'
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
                or (classes and ("ln" in classes or "line" in classes) and GUTTER_CLASS_RE.search(classes))
                or visibility.hidden(element)
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
        if tag_of(line) != "span" or ("token-line" not in classes and "highlight-line" not in classes):
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


def fenced(text: str, language: str) -> str:
    """``text`` as a fenced code block, nothing if it is empty."""
    if not text.strip():
        return ""
    fence = "````" if "```" in text else "```"
    return f"{fence}{language}\n{text}\n{fence}"
