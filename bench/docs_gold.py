"""The gold of bench.docs_sites: each documentation generator's own content container,
and the visible text of a container.

Pure functions over an lxml tree, no I/O. A :class:`Site` names one generator's pages
in a Debian documentation package: where they are, which elements hold the page's text
(the generator's own content container: a fair stand-in for hand-checked gold) and
which elements inside that container are not text (permalink glyphs, "source" links,
tooltips a stylesheet hides). Some sites are ``held_out``: measured, never tuned on (the
held-out part of bench.docs_sites, ``--part held-out``: GTK-Doc's GLib, the Haddock of
two libraries' packages, the older Sphinx theme of SQLAlchemy). :func:`gold_text` is the container's visible text:
scripts, styles, templates, form controls, ``hidden`` elements and inline
``display:none``/``visibility:hidden`` are left out, code is kept. Blocks are apart (a
line break), inline elements run together as a browser renders them; an image counts
as its ``alt`` text (what stands for it where images are not seen), unless that only
says where the image is (``_images/logging_flow.png``: Sphinx's alt when none is given).

What a reader reveals with one click stays in the gold: closed ``<details>`` (Node's
change history), rustdoc's collapsed docs, mdBook's hidden code lines (``span.boring``),
both flavours of Node's code examples. What a stylesheet only shows on hover (Doxygen's
code tooltips ``div.ttc``, rustdoc's notable-traits tooltips) is not the page's text.

:func:`labelled_text` walks the whole page the same way and says where each piece of
text comes from and why it is or is not gold: what explains a page's misses and leaks.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from lxml import etree
from lxml.cssselect import CSSSelector

if TYPE_CHECKING:
    from lxml.etree import _Element

#: elements whose text never reaches a reader: code that runs, styles, inert templates,
#: what shows only without scripts, form controls and embedded documents
NOT_TEXT_TAGS = frozenset(
    {
        "script", "style", "template", "noscript", "head", "title", "meta", "link", "svg",
        "math", "canvas", "object", "embed", "iframe", "button", "input", "select", "option",
        "textarea", "datalist",
    }
)  # fmt: skip
#: elements that start a line: what is written on both sides of them are separate words
BLOCK_TAGS = frozenset(
    {
        "address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details",
        "dialog", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1",
        "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "html", "legend", "li", "main",
        "nav", "ol", "p", "pre", "section", "summary", "table", "tbody", "td", "tfoot", "th",
        "thead", "tr", "ul", "br",
    }
)  # fmt: skip
HIDDEN_STYLE_RE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
#: the whole text of a link that points at more text rather than being text
#: (Doxygen's "More..." after a brief description, rustdoc's "Read more")
#: an ``alt`` that only says where the image is (Sphinx writes the image's path when the
#: source gives no alt): no text equivalent
PATH_ALT_RE = re.compile(r"\S*/\S*\.(?:png|jpe?g|gif|svg|webp)|\S+\.(?:png|jpe?g|gif|svg|webp)", re.IGNORECASE)
MORE_LINK_RE = re.compile(r"\s*(?:more\.\.\.|more…|read more)\s*", re.IGNORECASE)

GOLD = ""  # the state of text that is gold
#: the state of a mark (labelled_text's ``marks``): where a marked element starts, no text
MARK = "mark"


@dataclass(frozen=True)
class Site:
    """One generator's pages in one Debian package."""

    #: the name on the command line and in the results
    name: str
    generator: str
    package: str
    #: the folder of the site's HTML under the unpacked package
    folder: str
    #: CSS selectors of the page's text: every match, in document order (a match
    #: inside another is part of it)
    content: tuple[str, ...]
    #: CSS selectors of what the content holds that is not text
    drop: tuple[str, ...] = ()
    #: also drop in-page links whose whole text is "More..." / "Read more"
    drop_more_links: bool = False
    #: CSS selectors of inline elements the stylesheet sets apart (labels with a margin):
    #: their text is a word of its own, not glued to its neighbours'
    apart: tuple[str, ...] = ()
    #: a page is the site's when its path matches (relative to ``folder``) ...
    include: str = r".*\.html"
    #: ... and its first 4 KB match this (the generator's mark; redirects do not)
    marker: str = ""
    #: pages measured: all (``None``) or a fixed sample of this many
    sample: int | None = None
    #: the kind of a page, from its path and first 4 KB (the sample covers every kind)
    kind: Callable[[str, str], str] = field(default=lambda path, head: path.split("/")[0].removesuffix(".html"))
    #: what the container holds that is not text, and how it is handled
    notes: str = ""
    #: part of the held-out sites: measured, never tuned on (``--part held-out``)
    held_out: bool = False

    @cached_property
    def _content(self) -> CSSSelector:
        return CSSSelector(", ".join(self.content))

    @cached_property
    def _drop(self) -> CSSSelector | None:
        return CSSSelector(", ".join(self.drop)) if self.drop else None

    @cached_property
    def _apart(self) -> CSSSelector | None:
        return CSSSelector(", ".join(self.apart)) if self.apart else None

    def containers(self, root: _Element) -> list[_Element]:
        """The elements of ``root`` holding the page's text, outermost, in document order."""
        found = self._content(root)
        chosen = set(found)
        return [node for node in found if not any(a in chosen for a in node.iterancestors())]

    def dropped(self, root: _Element) -> set[_Element]:
        """The elements of ``root`` that are not text although inside a container."""
        out = set(self._drop(root)) if self._drop is not None else set()
        if self.drop_more_links:
            for link in root.iter("a"):
                if (link.get("href") or "").find("#") >= 0 and MORE_LINK_RE.fullmatch(link.text_content()):
                    out.add(link)
        return out

    def set_apart(self, root: _Element) -> set[_Element]:
        """The inline elements of ``root`` whose text is a word apart."""
        return set(self._apart(root)) if self._apart is not None else set()


def _label(node: _Element) -> str:
    """``tag.class`` of ``node`` (``tag#id`` when it has no class): where a piece of
    text sits, for a report."""
    classes = ".".join((node.get("class") or "").split())
    if classes:
        return f"{node.tag}.{classes}"
    ident = node.get("id")
    return f"{node.tag}#{ident}" if ident else str(node.tag)


def _own_state(node: _Element, dropped: set[_Element]) -> str | None:
    """Why ``node``'s subtree is not gold, or ``None`` when nothing of its own says so."""
    if node in dropped:
        return f"not text [{_label(node)}]"
    attrib = node.attrib
    style = attrib.get("style")
    if "hidden" in attrib or (style and HIDDEN_STYLE_RE.search(style)):
        return f"hidden [{_label(node)}]"
    return None


def labelled_text(
    start: _Element,
    dropped: set[_Element],
    containers: set[_Element] | None = None,
    apart: Collection[_Element] = (),
    marks: Mapping[_Element, str] | None = None,
) -> Iterator[tuple[str, str, str]]:
    """The text under ``start`` as ``(text, label, state)``: ``label`` is the nearest
    element with a class or id around the text, ``state`` is ``""`` for gold text, else
    why it is not gold (``outside`` the containers, ``hidden [...]``, ``not text [...]``:
    the element that says so). Block boundaries are ``("\n", "", state)``. With
    ``containers``, ``start`` (the page) is outside until a container is entered;
    without, ``start`` is a container. The text of an element in ``apart`` is set
    apart by spaces. Comments are not text. Where an element of ``marks`` starts in
    gold, ``("", marks[element], MARK)`` (the outline check's headings)."""
    stack: list[tuple[str, str]] = []  # (state, label) of the open elements
    state, label = (GOLD if containers is None else "outside"), ""
    walker = etree.iterwalk(start, events=("start", "end", "comment", "pi"))
    for event, node in walker:
        if event in ("comment", "pi"):  # not text, but its tail is
            if node is not start and node.tail:
                yield node.tail, label, state
            continue
        tag = node.tag.lower() if isinstance(node.tag, str) else ""
        if event == "start":
            stack.append((state, label))
            if containers is not None and state == "outside" and node in containers:
                state = GOLD
            if state in (GOLD, "outside"):
                if tag in NOT_TEXT_TAGS:
                    state = f"not text [{tag}]"
                else:
                    own = _own_state(node, dropped)
                    if own is not None and (state == GOLD or own.startswith("hidden")):
                        state = own
            if node.get("class") or node.get("id"):
                label = _label(node)
            if marks and state == GOLD and node in marks:
                yield "", marks[node], MARK
            if tag in BLOCK_TAGS:
                yield "\n", "", state
            elif node in apart:
                yield " ", "", state
            if node.text:
                yield node.text, label, state
            alt = node.get("alt", "").strip() if tag == "img" else ""
            if alt and not PATH_ALT_RE.fullmatch(alt):  # an image's text equivalent
                yield f" {alt} ", label, state
        else:
            if tag in BLOCK_TAGS:
                yield "\n", "", state
            elif node in apart:
                yield " ", "", state
            state, label = stack.pop()
            if node is not start and node.tail:
                yield node.tail, label, state


def gold_text(site: Site, root: _Element) -> str | None:
    """The visible text of the page's content containers, ``None`` when the page has none.

    >>> from lxml import html
    >>> site = Site("t", "g", "p", "f", content=("div.body",), drop=("a.headerlink",))
    >>> page = html.fromstring('<html><body><nav>Menu</nav><div class="body"><h1>Title<a class="headerlink"'
    ...     ' href="#t">¶</a></h1><p>Some <b>bold</b> text.<span style="display:none">x</span></p>'
    ...     '<pre>a = 1\\nb = 2</pre></div></body></html>')
    >>> print(gold_text(site, page))
    Title
    Some bold text.
    a = 1
    b = 2
    """
    containers = site.containers(root)
    if not containers:
        return None
    dropped, apart = site.dropped(root), site.set_apart(root)
    parts: list[str] = []
    for container in containers:
        parts.extend(text for text, _, state in labelled_text(container, dropped, apart=apart) if state == GOLD)
        parts.append("\n")
    return tidy("".join(parts))


def tidy(text: str) -> str:
    """``text`` with blank lines and the spaces at line ends removed, runs of spaces
    made one (line breaks inside ``<pre>`` are kept: each is a line)."""
    lines = (re.sub(r"[ \t\r\f\v\xa0]+", " ", line).strip() for line in text.split("\n"))
    return "\n".join(line for line in lines if line)


# -- the kinds of page (what a sample covers) -----------------------------------

TITLE_RE = re.compile(r"<title>([^<]*)</title>", re.IGNORECASE)
DOXYGEN_KINDS = (
    ("source", re.compile(r"Source File$")),
    ("member list", re.compile(r"Member List$")),
    ("class", re.compile(r"(?:Class|Struct|Union|Interface|Exception)(?: Template)? Reference$")),
    ("namespace", re.compile(r"Namespace Reference$")),
    ("file", re.compile(r"File Reference$")),
    ("directory", re.compile(r"Directory Reference$")),
    ("concept", re.compile(r"Concept Reference$")),
    ("index", re.compile(r"(?:Members|Index|List|Hierarchy|Modules|Functions|Variables|Typedefs|Enumerations"
                         r"|Enumerator|Macros|Related Pages)(?: - \w+)?$")),
)  # fmt: skip
RUSTDOC_ITEM_RE = re.compile(r"(?:^|/)([a-z_]+)\.[^/]+\.html$")


def doxygen_kind(path: str, head: str) -> str:
    """A Doxygen page's kind from its title (``class``, ``file``, ``source``...);
    ``group/page`` for a title of its own (a group, or a page of the manual).

    >>> doxygen_kind("a0.html", "<title>libstdc++: std::vector&lt; T &gt; Class Template Reference</title>")
    'class'
    >>> doxygen_kind("a0.html", "<title>libstdc++: Sorting</title>")
    'group/page'
    """
    match = TITLE_RE.search(head)
    title = match.group(1).strip() if match else ""
    for kind, pattern in DOXYGEN_KINDS:
        if pattern.search(title):
            return kind
    return "group/page"


def examples_or(kind: Callable[[str, str], str]) -> Callable[[str, str], str]:
    """``kind``, prefixed ``example`` for the pages of Doxygen's examples (its own manual
    ships the output of each example: small sites of their own)."""
    return lambda path, head: ("example " if path.startswith("examples/") else "") + kind(path, head)


def rustdoc_kind(path: str, head: str) -> str:
    """A rustdoc page's kind from its file name.

    >>> [rustdoc_kind(p, "") for p in ("std/vec/struct.Vec.html", "std/vec/index.html", "src/core/lib.rs.html")]
    ['struct', 'module', 'source']
    """
    if path.startswith("src/"):
        return "source"
    match = RUSTDOC_ITEM_RE.search(path)
    if match:
        return match.group(1)
    return {"index.html": "module", "all.html": "all"}.get(path.rsplit("/", 1)[-1], "other")


def mdbook_kind(path: str, head: str) -> str:
    """The book a page belongs to; ``print`` for a book's one-page version."""
    return "print" if path.endswith("/print.html") else path.split("/")[0]


DOCBOOK_KIND_RE = re.compile(r'<div class="navheader">.*?</div>\s*<div class="([\w-]+)"', re.DOTALL)


def docbook_kind(path: str, head: str) -> str:
    """The class of a DocBook page's top content ``<div>`` (``sect1``, ``refentry``...)."""
    match = DOCBOOK_KIND_RE.search(head)
    return match.group(1) if match else "other"


def asciidoc_kind(path: str, head: str) -> str:
    if "/" in path:
        return path.split("/")[0]
    if path == "user-manual.html":
        return "docbook book"
    return "manpage" if path.startswith(("git", "scalar")) else "article"


def node_kind(path: str, head: str) -> str:
    return {"all.html": "all", "index.html": "index"}.get(path, "module")


def first_folder(path: str, head: str) -> str:
    return path.split("/")[0] if "/" in path else "top"


GTKDOC_KIND_RE = re.compile(
    r'<body[^>]*>\s*(?:<table class="navigation".*?</table>\s*)?<div[^>]*? class="([\w-]+)"', re.DOTALL
)


def gtkdoc_kind(path: str, head: str) -> str:
    """A GTK-Doc page's book and the class of its top content ``<div>`` (``refentry``,
    ``chapter``...).

    >>> gtkdoc_kind("gio/GFile.html", '<body bgcolor="white"><table class="navigation" id="top"><tr>'
    ...     '<td>Top</td></tr></table><div lang="en" class="refentry">')
    'gio refentry'
    """
    match = GTKDOC_KIND_RE.search(head)
    return f"{path.split('/')[0]} {match.group(1) if match else 'other'}"


JAVADOC_KIND_RE = re.compile(r'<meta name="generator" content="javadoc/(\w+?)(?:WriterImpl|Writer)?"')


def javadoc_kind(path: str, head: str) -> str:
    """A Javadoc page's kind from the writer that made it (``Class``, ``ClassUse``,
    ``Package``, ``Index``...).

    >>> javadoc_kind("java.base/java/util/List.html", '<meta name="generator" content="javadoc/ClassWriterImpl">')
    'Class'
    """
    match = JAVADOC_KIND_RE.search(head)
    return match.group(1) if match else "other"


def haddock_kind(path: str, head: str) -> str:
    """A Haddock page's kind: a package's ``contents``, its ``index`` (by letter), or a
    ``module``.

    >>> [haddock_kind(p, "") for p in ("base-4.15.1.0/index.html", "base-4.15.1.0/doc-index-A.html",
    ...                                "base-4.15.1.0/Data-Maybe.html")]
    ['contents', 'index', 'module']
    """
    name = path.rsplit("/", 1)[-1]
    return "contents" if name == "index.html" else "index" if name.startswith("doc-index") else "module"


HADDOCK_CONTENT = ("div#content",)
HADDOCK_DROP = (
    "#synopsis", "a.selflink", "a.link", "#description > p.caption", ".arguments .caption", ".fields .caption",
    ".hide-when-js-enabled", "#alphabet",
)  # fmt: skip
SPHINX_DROP = ("a.headerlink", "span.linenos", "td.linenos", "span.viewcode-link")
SPHINX_NOTES = (
    "a.headerlink (the ¶ permalink after each heading and definition), the line numbers of numbered code "
    "blocks (span.linenos, td.linenos) and viewcode's '[source]' link after a documented object "
    "(span.viewcode-link: the control rustdoc's a.srclink and Haddock's a.link are): not text, dropped. "
    "toctree lists (div.toctree-wrapper) are the text of a chapter page: kept. Code (div.highlight) kept."
)
DOXYGEN_DROP = ("span.permalink", "div.ttc", "span.lineno", "div.ingroups", "div.qindex", "span.icon")
DOXYGEN_NOTES = (
    "The title (div.headertitle .title) sits above div.contents and counts: it names the class/file/group, "
    "and the page says nothing else about what it is; its breadcrumb div.ingroups is not text. "
    "Dropped: span.permalink (the ◆ glyph of each member), div.ttc (code tooltips, display:none in "
    "doxygen.css, shown on hover: the definition of another symbol), span.lineno (line numbers of code "
    "listings), span.icon (the C/N/F badges of class and file lists), in-page 'More...' links, div.qindex "
    "(an index page's bar of letters, links to the letters "
    "below). span.mlabel (inline, static, constexpr: labels set apart by a margin) is a word apart. "
    "Kept: div.fragment code, the memberdecls tables, div.toc "
    "(in-page table of contents), 'Definition at line N of file F.', dynheader captions."
)

GTKDOC_CONTENT = ("body > div:not(.footer)",)
GTKDOC_DROP = ("td.listing_lines",)
GTKDOC_NOTES = (
    "DocBook XSL through GTK-Doc: the page is body > table.navigation, one content div (refentry, chapter, "
    "section, part, reference, index, glossary; the book's front page has no navigation), div.footer "
    "('Generated by GTK-Doc'): the content div is the gold. Dropped: the line numbers of code listings "
    "(td.listing_lines; style.css also hides the titles of warnings and notes, which these pages do not "
    "have). Kept: the function and property tables, annotations ('[nullable]', '[transfer full]'), 'Since'."
)

SITES: dict[str, Site] = {
    site.name: site
    for site in (
        Site(
            "sphinx", "Sphinx (python-docs-theme)", "python3.11-doc", "usr/share/doc/python3.11/html",
            content=("[role=main]",), drop=SPHINX_DROP, kind=first_folder, notes=SPHINX_NOTES,
        ),
        Site(
            "mkdocs", "MkDocs (mkdocs theme)", "mkdocs-doc", "usr/share/doc/mkdocs/html",
            content=("div[role=main]",), drop=("a.headerlink", ".doc-label-class-attribute"), kind=first_folder,
            notes="a.headerlink (an icon-font glyph, U+F0C1): not text, dropped. mkdocstrings' 'class-attribute' "
            "label in an attribute's heading (.doc-label-class-attribute): display:none in the site's extra.css, "
            "dropped.",
        ),
        Site(
            "rustdoc", "rustdoc 1.63", "rust-doc", "usr/share/doc/rust-doc/html",
            content=("section#main-content",),
            drop=("a.srclink", "#toggle-all-docs", "summary.hideme", "a.test-arrow", ".notable-traits-tooltiptext",
                  "pre.line-numbers", "a.anchor"),
            drop_more_links=True, apart=("span.stab",),
            include=r"(?:std|core|alloc|proc_macro|test|src)/.*\.html", marker='content="rustdoc"',
            sample=600, kind=rustdoc_kind,
            notes="Dropped: a.srclink ('source'), #toggle-all-docs ('[-]'), summary.hideme ('Expand description'), "
            "a.test-arrow ('Run', shown on hover), .notable-traits-tooltiptext (hover tooltip, display:none in "
            "rustdoc.css), pre.line-numbers (the gutter of source pages), 'Read more' links. span.stab "
            "('Experimental', 'Deprecated': inline-block labels) is a word apart. Kept: the "
            "item declaration, 'since' versions, stability notes, every impl block (open <details>). Redirect "
            "pages (10,098 of core's arch re-exports: no rustdoc mark) are not pages.",
        ),
        Site(
            "mdbook", "mdBook", "rust-doc", "usr/share/doc/rust-doc/html",
            content=("main",),
            include=r"(?:book|edition-guide|embedded-book|nomicon|reference|rust-by-example|rustc|rustdoc"
            r"|unstable-book)/.*\.html",
            marker="Book generated using mdBook", sample=600, kind=mdbook_kind,
            notes="main holds the chapter only (menu bar, sidebar and prev/next links are outside). Headings are "
            "links to themselves (a.header): their text is the heading, kept. span.boring (hidden lines of "
            "Rust examples, shown by a click): kept.",
        ),
        Site(
            "doxygen", "Doxygen 1.9.4 (its own manual and examples)", "doxygen-doc", "usr/share/doc/doxygen/html",
            content=("div.headertitle .title", "div.contents"), drop=DOXYGEN_DROP, drop_more_links=True,
            apart=("span.mlabel",), kind=examples_or(doxygen_kind), notes=DOXYGEN_NOTES,
        ),
        Site(
            "libstdcxx", "Doxygen 1.9.4 (API reference)", "libstdc++-12-doc",
            "usr/share/doc/gcc-12-base/libstdc++/user",
            content=("div.headertitle .title", "div.contents"), drop=DOXYGEN_DROP, drop_more_links=True,
            apart=("span.mlabel",), sample=600, kind=doxygen_kind, notes=DOXYGEN_NOTES,
        ),
        Site(
            "docbook", "DocBook XSL", "postgresql-doc-15", "usr/share/doc/postgresql-doc-15/html",
            content=("body > div:not(.navheader):not(.navfooter)",), drop=("p.indexdiv-quicklinks",),
            kind=docbook_kind,
            notes="The page is body > navheader, one content div (chapter, sect1, refentry, reference, part, "
            "appendix, preface, book, index, bibliography, legalnotice), navfooter: the content div is the gold. "
            "It holds no glyphs; the index's bar of letters (p.indexdiv-quicklinks) is not text; its div.toc "
            "(a chapter's table of contents, a sect1's list of its sections) is "
            "kept: it is the whole text of chapter and part pages.",
        ),
        Site(
            "asciidoc", "AsciiDoc (git-doc)", "git-doc", "usr/share/doc/git-doc",
            content=("#header > h1", "#header > h2", "#header > div.sectionbody", "#content", "#footnotes",
                     "body > div.book"),
            kind=asciidoc_kind,
            notes="div#content does not hold the title nor a manual page's NAME section: both are in div#header "
            "(h1, h2, div.sectionbody), which count; the header's author/email/date line does not. "
            "div#footnotes counts. user-manual.html is DocBook (body > div.book). Nothing to drop.",
        ),
        Site(
            "node", "Node.js doc tool", "nodejs-doc", "usr/share/doc/nodejs/api",
            content=("#apicontent",), drop=("a.mark", "a.srclink"), kind=node_kind,
            notes="a.mark (the '#' permalink after each heading) and a.srclink (the '[src]' link after a class's "
            "heading: the control rustdoc's a.srclink is): dropped. Kept: the 'Added in' metadata, the "
            "History tables (closed <details>), both the ESM and CommonJS version of each example (a toggle "
            "shows one: the other is one click away).",
        ),
        # found beside the eight in the corpus folder: a second Sphinx theme, and Breathe (Doxygen's XML in
        # Sphinx: one page per directive, many of them one definition long)
        Site(
            "sphinx-doc", "Sphinx (sphinx13 theme)", "sphinx-doc", "usr/share/doc/sphinx-doc/html",
            content=("[role=main]",), drop=SPHINX_DROP, kind=first_folder, notes=SPHINX_NOTES,
        ),
        Site(
            "breathe", "Sphinx + Breathe", "breathe-doc", "usr/share/doc/breathe-doc/html",
            content=("[role=main]",), drop=SPHINX_DROP, kind=first_folder, notes=SPHINX_NOTES,
        ),
        # more generators, and older layouts
        Site(
            "javadoc", "Javadoc 17 (the JDK's API)", "openjdk-17-doc", "usr/share/doc/openjdk-17-jre-headless/api",
            content=("main[role=main]",), drop=("a.module-graph > span",), marker='content="javadoc/', sample=600,
            kind=javadoc_kind,
            notes="main holds the page (navigation bars and footer are outside). The tabs of a summary table "
            "('All Methods', 'Static Methods': buttons) are not text. Dropped: the enlarged module graph "
            "(a.module-graph > span: display:none, shown on hover; its alt text repeats the thumbnail's). Kept: "
            "the inheritance tree, signatures, summary tables, 'Specified by'/'Parameters' notes. The redirect "
            "page (overview-summary.html) is not a page.",
        ),
        Site(
            "gtkdoc", "GTK-Doc 1.33 (GTK 3, GDK 3)", "libgtk-3-doc", "usr/share/gtk-doc/html",
            content=GTKDOC_CONTENT, drop=GTKDOC_DROP, marker="GTK-Doc", kind=gtkdoc_kind, notes=GTKDOC_NOTES,
        ),
        Site(
            "haddock", "Haddock 2.25 (GHC 9.0.2's libraries)", "ghc-doc", "usr/share/doc/ghc-doc/html/libraries",
            content=HADDOCK_CONTENT, drop=HADDOCK_DROP,
            include=r"(?!ghc/)[^/]+/[^/]+\.html", marker="haddock-bundle", sample=600, kind=haddock_kind,
            notes="div#content holds the module header (its info table and name), the contents, the description "
            "and the interface (the package header and footer are outside). Dropped: the synopsis (#synopsis: a "
            "drawer in the margin repeating every declaration of the interface), a.selflink ('#') and a.link "
            "('Source') after each declaration, the captions linuwial.css hides (#description's 'Description', "
            "'Arguments', 'Fields'), .hide-when-js-enabled ('Instances details': shown without scripts only), an "
            "index's bar of letters (#alphabet). Kept: instance lists and their methods (closed <details>), "
            "the examples (closed <details>). The hyperlinked sources (PKG/src/, HsColour, no container) and "
            "the ghc/ link to ghc-9.0.2/ are not pages; GHC's user guide (Sphinx) is not Haddock.",
        ),
        Site(
            "sqlalchemy", "Sphinx 5.3 (zzzeeksphinx, SQLAlchemy 1.4)", "python-sqlalchemy-doc",
            "usr/share/doc/python-sqlalchemy-doc/html",
            content=("[role=main]",), drop=(*SPHINX_DROP, "a.sql_link", "#sqlalchemy-documentation > h1"),
            kind=first_folder,
            notes=SPHINX_NOTES + " The theme's paramlinks (a.paramlink.headerlink, the ¶ after each parameter) and "
            "changelog links (a.changelog-reference.headerlink) are headerlinks: dropped. Also dropped what "
            "docs.css hides: a.sql_link (the 'sql' button of SQL popups, which are always shown: kept) and the "
            "front page's h1. The example sources (_modules/) count, as Sphinx's viewcode pages do.",
        ),
        # -- the held-out part: measured, never tuned on
        Site(
            "gtkdoc-glib", "GTK-Doc 1.33 (GLib, GIO, GObject)", "libglib2.0-doc", "usr/share/gtk-doc/html",
            content=GTKDOC_CONTENT, drop=GTKDOC_DROP, marker="GTK-Doc", kind=gtkdoc_kind, notes=GTKDOC_NOTES,
            held_out=True,
        ),
        Site(
            "haddock-lens", "Haddock 2.26 (lens 5.0, Debian's build)", "libghc-lens-doc",
            "usr/share/doc/libghc-lens-doc/html",
            content=HADDOCK_CONTENT, drop=HADDOCK_DROP, include=r"[^/]+\.html", marker="haddock-bundle",
            kind=haddock_kind, held_out=True, notes="As haddock's (one package, no package folder).",
        ),
        Site(
            "haddock-pandoc", "Haddock 2.26 (pandoc 2.17, Debian's build)", "libghc-pandoc-doc",
            "usr/share/doc/libghc-pandoc-doc/html",
            content=HADDOCK_CONTENT, drop=HADDOCK_DROP, include=r"[^/]+\.html", marker="haddock-bundle",
            kind=haddock_kind, notes="As haddock's (one package, no package folder). Held out until two of its "
            "pages were read for converter 12.",
        ),
    )
}  # fmt: skip
