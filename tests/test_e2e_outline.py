"""End-to-end: text inside a page's content container stays whatever its class or id
say, with exact call counts. Each page reproduces a failure class of real documentation
sites: an older Sphinx layout whose sections' ids put a prefix before the heading's slug
(``div.section#s-comments``: its words are on the lists built for news pages), a
``<section id="related-objects">`` inside ``<main>``, a Sphinx index whose body is its
table of contents, a Docusaurus category page whose body is a grid of cards, a
DocBook section whose title block and terms sit beside the definition the selection
scores; and a label a name still leaves out, which the audit counts."""

from __future__ import annotations

import pytest

from tests.crawl import assert_ok, cache_command, extractor_input, paths, run_crawl
from tests.site import Raw

TEMPLATES = "/ref/templates.html"
QUERIES = "/topics/queries.html"
INDEX = "/manual/index.html"
GUIDES = "/guides/index.html"
NOTES = "/notes.html"
PLTCL = "/pg/pltcl-config.html"
#: a label named like chrome, with no heading and no prose: the one block a name leaves out
NOTES_PAGE = (
    "<html><head><title>Release notes</title></head><body><main><h1>Release notes</h1><p>This release "
    "speeds up template rendering and fixes the cache of compiled templates.</p>"
    "<div class='post-meta'>Posted by the release team</div></main></body></html>"
)


def old_sphinx_section(ident: str, heading: str, body: str) -> str:
    return (
        f'<div class="section" id="s-{ident}"><span id="{ident}"></span>'
        f'<h2>{heading}<a class="headerlink" href="#{ident}" title="Permalink">¶</a></h2>{body}</div>'
    )


def templates_page(comment: str, filters: int) -> str:
    items = "".join(
        old_sphinx_section(
            f"filter-{i}",
            f"filter_{i}",
            f"<p>Applies the filter number {i} to a value: <a href='#x'>see</a> the example.</p>"
            f"<pre>{{{{ value|filter_{i} }}}}</pre>",
        )
        .replace("<h2>", "<h3>")
        .replace("</h2>", "</h3>")
        for i in range(filters)
    )
    sections = old_sphinx_section(
        "built-in-filter-reference", "Built-in filter reference", f"<p>The filters Django ships.</p>{items}"
    ) + old_sphinx_section(
        "comments",
        "Comments",
        f"<p>{comment}</p><pre>{{# greeting #}}hello</pre>",
    )
    return (
        "<html><head><title>Templates | Django documentation</title></head><body>"
        "<div id='header'><h1 id='logo'><a href='/'>Django</a></h1><ul id='nav-links'><li><a href='/'>Home</a></li>"
        "</ul></div><div id='bd'><div id='yui-main'><div class='yui-b'><div class='yui-g' id='docs-content'>"
        "<div class='section' id='s-the-django-template-language'><span id='the-django-template-language'></span>"
        "<h1>The Django template language<a class='headerlink' href='#the-django-template-language'>¶</a></h1>"
        "<p>This document explains the language syntax of the Django template system, for designers and for "
        "programmers who write templates.</p>"
        f"{sections}</div></div></div></div>"
        "<div class='yui-b' id='sidebar'><h2>Contents</h2><ul><li><a href='#comments'>Comments</a></li></ul></div>"
        "</div><div id='ft'><p>© Django Software Foundation</p></div></body></html>"
    )


def queries_page(related: str) -> str:
    return (
        "<html><head><title>Making queries</title></head><body><nav><a href='/'>Docs</a></nav><main>"
        "<h1>Making queries</h1><p>Once you have created your data models, Django gives you a database-abstraction "
        "API that lets you create, retrieve, update and delete objects.</p>"
        "<section id='creating-objects'><h2>Creating objects</h2><p>To represent database-table data in Python "
        "objects, a model class represents a database table.</p></section>"
        f"<section id='related-objects'><h2>Related objects</h2><p>{related}</p>"
        "<p>Every related object access goes through a manager: <a href='/m'>managers</a>.</p></section>"
        "</main><footer>Built by the docs team</footer></body></html>"
    )


def index_page(chapters: int) -> str:
    items = "".join(
        f'<li class="toctree-l1"><a class="reference internal" href="chapter{i}.html">Chapter {i}: the topic '
        f'of part {i}</a><ul><li class="toctree-l2"><a class="reference internal" href="chapter{i}.html#use">'
        f"Using part {i}</a></li></ul></li>"
        for i in range(chapters)
    )
    return (
        "<html><head><title>The manual</title></head><body>"
        "<div class='related' role='navigation'><ul><li><a href='/'>index</a></li></ul></div>"
        "<div class='document'><div class='documentwrapper'><div class='bodywrapper'><div class='body' role='main'>"
        "<section id='the-manual'><h1>The manual<a class='headerlink' href='#the-manual'>¶</a></h1>"
        f"<div class='toctree-wrapper compound'><ul>{items}</ul></div></section></div></div></div>"
        "<div class='sphinxsidebar' role='navigation'><h3>Navigation</h3></div></div>"
        "<div class='footer'>© Copyright the authors</div></body></html>"
    )


def guides_page(children: int) -> str:
    cards = "".join(
        f'<article class="col col--6 margin-bottom--lg"><a class="card padding--lg cardContainer_fWXF" '
        f'href="/guides/guide{i}.html"><h2 class="text--truncate cardTitle_rnsV" title="Guide {i}">Guide {i}</h2>'
        f'<p class="text--truncate cardDescription_PWke">How to do the task number {i}, step by step.</p></a></article>'
        for i in range(children)
    )
    return (
        "<html><head><title>Guides | Site</title></head><body><nav class='navbar'><a href='/'>Site</a></nav>"
        "<div class='main-wrapper'><main class='docMainContainer_TBSr'><div class='container'><div class='row'>"
        "<div class='col docItemCol_VOVn'><article><nav class='theme-doc-breadcrumbs' aria-label='Breadcrumbs'>"
        "<ul class='breadcrumbs'><li><a href='/'>Home</a></li><li>Guides</li></ul></nav>"
        "<header><h1 class='title_kItE'>Guides</h1><p class='generatedIndexPage_vN6x'>Every guide.</p></header>"
        f"<article class='margin-top--lg'><section class='row list_eTzJ'>{cards}</section></article>"
        "</article></div></div></div></main></div><footer class='footer'>Copyright</footer></body></html>"
    )


def docbook_page(term: str) -> str:
    definition = "".join(
        f"<p>This parameter, if set to a nonempty string, names a function run whenever interpreter {i} starts, "
        "such as loading additional code before the first call of a session.</p>"
        for i in range(4)
    )
    return (
        "<html><head><title>44.11. PL/Tcl Configuration</title>"
        "<meta name='generator' content='DocBook XSL Stylesheets Vsnapshot'></head><body>"
        "<div class='navheader'><a href='p.html'>Prev</a> <a href='n.html'>Next</a></div>"
        "<div class='sect1' id='PLTCL-CONFIG'><div class='titlepage'><div><div>"
        "<h2 class='title'>44.11. PL/Tcl Configuration</h2></div></div></div><p>This section lists parameters.</p>"
        f"<div class='variablelist'><dl class='variablelist'><dt id='GUC-A'><span class='term'><code>{term}</code> "
        f"(<code>string</code>)</span></dt><dd>{definition}</dd><dt id='GUC-B'><span class='term'>"
        "<code>pltclu.start_proc</code></span></dt><dd><p>The same, for PL/TclU.</p></dd></dl></div></div>"
        "<div class='navfooter'><a href='index.html'>Home</a></div></body></html>"
    )


def child(title: str) -> str:
    return (
        f"<html><head><title>{title}</title></head><body><main><h1>{title}</h1><p>The text of {title}, "
        "long enough to be a paragraph of prose.</p></main></body></html>"
    )


COMMENT = "To comment-out part of a line in a template, use the comment syntax: {# #}."
RELATED = "When you define a relationship in a model, model instances get a convenient API to access related objects."


def build(site, *, comment=COMMENT, related=RELATED, chapters=3, guides=3, filters=4, term="pltcl.start_proc"):
    site.raw["/"] = Raw(
        (
            "<html><head><title>Home</title></head><body><main><h1>Home</h1><ul>"
            + "".join(
                f"<li><a href='{link}'>{link}</a></li>" for link in (TEMPLATES, QUERIES, INDEX, GUIDES, NOTES, PLTCL)
            )
            + "</ul></main></body></html>"
        ).encode()
    )
    site.raw[TEMPLATES] = Raw(templates_page(comment, filters).encode())
    site.raw[QUERIES] = Raw(queries_page(related).encode())
    site.raw[INDEX] = Raw(index_page(chapters).encode())
    site.raw[GUIDES] = Raw(guides_page(guides).encode())
    site.raw[NOTES] = Raw(NOTES_PAGE.encode())
    site.raw[PLTCL] = Raw(docbook_page(term).encode())
    for i in range(chapters):
        site.raw[f"/manual/chapter{i}.html"] = Raw(child(f"Chapter {i}").encode())
    for i in range(guides):
        site.raw[f"/guides/guide{i}.html"] = Raw(child(f"Guide {i}").encode())


@pytest.fixture
def outline_site(make_site):
    site = make_site("none", noise=False)
    site.pages.clear()
    site.sitemap = None
    build(site)
    return site


def test_sections_named_like_chrome_and_contents_pages_reach_the_extractor_and_their_edits_cost_a_call(
    outline_site, tmp_path
):
    site = outline_site
    cache = tmp_path / "cache"
    first = assert_ok(run_crawl(site.url + "/", cache))
    assert len(first.calls) == 1 + 6 + 3 + 3
    # the audit: what a name still leaves out is counted, said and listed
    assert "5 words left out by a name on 1 page (`scrapy cache ls --named-out`)" in first.stderr
    listed = cache_command(cache, "ls", "--named-out")
    assert NOTES in listed and "5 words out by name" in listed and TEMPLATES not in listed
    assert "Posted by" not in extractor_input(cache, site.url + NOTES)
    templates = extractor_input(cache, site.url + TEMPLATES)
    assert "## Built-in filter reference" in templates and "### filter_3" in templates
    assert "{{ value|filter_2 }}" in templates
    assert "## Comments" in templates and COMMENT in templates
    assert "Django Software Foundation" not in templates  # the page's footer still goes
    queries = extractor_input(cache, site.url + QUERIES)
    assert "## Related objects" in queries and RELATED in queries and "managers" in queries
    manual = extractor_input(cache, site.url + INDEX)
    assert "- Chapter 2: the topic of part 2" in manual and "Using part 1" in manual
    guides = extractor_input(cache, site.url + GUIDES)
    assert "Guide 2" in guides and "How to do the task number 1, step by step." in guides
    assert "Home" not in guides  # the breadcrumbs are a landmark
    pltcl = extractor_input(cache, site.url + PLTCL)
    assert "44.11. PL/Tcl Configuration" in pltcl and "pltcl.start_proc" in pltcl and "Prev" not in pltcl

    assert assert_ok(run_crawl(site.url + "/", cache)).calls == []  # unchanged: no call

    # an edit inside each named section, and of a term beside the scored definition,
    # re-extracts its page, and nothing else
    edits = {
        "comment": COMMENT.replace("part of a line", "a part of one line"),
        "related": RELATED + " Both ways.",
        "term": "pltcl.start_procedure",
    }
    build(site, **edits)
    second = assert_ok(run_crawl(site.url + "/", cache))
    assert paths(site, second.calls) == [PLTCL, TEMPLATES, QUERIES]
    assert "a part of one line" in extractor_input(cache, site.url + TEMPLATES)

    # a child added to a contents page re-extracts it (and the child is new)
    build(site, **edits, chapters=4, guides=4)
    third = assert_ok(run_crawl(site.url + "/", cache))
    assert paths(site, third.calls) == ["/guides/guide3.html", GUIDES, "/manual/chapter3.html", INDEX]
    assert "Guide 3" in extractor_input(cache, site.url + GUIDES)
    assert "Chapter 3: the topic of part 3" in extractor_input(cache, site.url + INDEX)


MODULE = "/lib/Text-XHtml.html"
LETTERS = "/lib/doc-index-C.html"
SERVICES = "/api/jdk.compiler/module-summary.html"
HADDOCK = "<html><head><script src='haddock-bundle.min.js'></script><title>{0}</title></head><body>"


def haddock_module(sign: str) -> str:
    items = {"copyright": sign, "spaceHtml": "Non-breaking space.", "bullet": "A bullet."}
    synopsis = "".join(f"<li class='src short'><a href='#v:{name}'>{name}</a> :: Html</li>" for name in items)
    interface = "".join(
        f"<div class='top'><p class='src'><a id='v:{name}' class='def'>{name}</a> :: Html"
        f" <a href='#v:{name}' class='selflink'>#</a></p><div class='doc'><p>{doc}</p></div></div>"
        for name, doc in items.items()
    )
    return (
        HADDOCK.format("Text.XHtml")
        + "<div id='content'><div id='module-header'><p class='caption'>Text.XHtml</p></div>"
        f"<div id='synopsis'><details id='syn'><summary>Synopsis</summary><ul>{synopsis}</ul></details></div>"
        f"<div id='interface'><h1>Html abbreviations</h1>{interface}</div></div></body></html>"
    )


def haddock_index(letters: str) -> str:
    bar = "".join(f"<li><a href='doc-index-{c}.html'>{c}</a></li>" for c in letters)
    return (
        HADDOCK.format("Index - C")
        + f"<div id='content'><div id='alphabet'><ul>{bar}</ul></div><div id='index'><h1>Index - C</h1>"
        "<table><tr><td class='src'>copyright</td><td class='module'><a href='Text-XHtml.html#v:copyright'>"
        "Text.XHtml</a></td></tr></table></div></div></body></html>"
    )


def javadoc_module(tool: str) -> str:
    rows = "".join(
        f"<div class='col-first even-row-color'><a href='{name}.html'>{name}</a></div>"
        f"<div class='col-last even-row-color'>{text}</div>"
        for name, text in (("JavaCompiler", "&nbsp;"), (tool, "&nbsp;"), ("ToolProvider", "&nbsp;"))
    )
    return (
        "<html><head><meta name='generator' content='javadoc/ModuleWriterImpl'><title>jdk.compiler</title></head>"
        "<body><main><div class='header'><h1>Module jdk.compiler</h1></div><section class='module-description'>"
        "<div class='block'>Defines the implementation of the system Java compiler and its command line equivalent,"
        " javac.</div></section><section class='services-summary' id='services-summary'><h2>Services</h2>"
        "<div class='caption'><span>Provides</span></div><div class='details-table two-column-summary'>"
        "<div class='table-header col-first'>Type</div><div class='table-header col-last'>Description</div>"
        f"{rows}</div></section></main></body></html>"
    )


def build_tools(site, *, sign="Copyright sign.", letters="ABCDEFGHIJKLMN", tool="Tool"):
    site.raw["/"] = Raw(
        (
            "<html><head><title>Home</title></head><body><main><h1>Home</h1><ul>"
            + "".join(f"<li><a href='{link}'>{link}</a></li>" for link in (MODULE, LETTERS, SERVICES))
            + "</ul></main></body></html>"
        ).encode()
    )
    site.raw[MODULE] = Raw(haddock_module(sign).encode())
    site.raw[LETTERS] = Raw(haddock_index(letters).encode())
    site.raw[SERVICES] = Raw(javadoc_module(tool).encode())


def test_a_tool_s_items_and_grid_cells_reach_the_extractor_its_synopsis_and_letter_bar_do_not(make_site, tmp_path):
    site = make_site("none", noise=False)
    site.pages.clear()
    site.sitemap = None
    build_tools(site)
    cache = tmp_path / "cache"
    first = assert_ok(run_crawl(site.url + "/", cache))
    assert len(first.calls) == 4
    module = extractor_input(cache, site.url + MODULE)
    # the item named copyright is the page's; the synopsis repeating the interface is written once
    assert "copyright :: Html" in module and "Copyright sign." in module and "Synopsis" not in module
    assert module.count("bullet :: Html") == 1
    index = extractor_input(cache, site.url + LETTERS)
    assert "Text.XHtml" in index and "- B" not in index  # (the bar above the title names no content)
    services = extractor_input(cache, site.url + SERVICES)
    assert "Tool" in services.split("Services")[1] and "ToolProvider" in services

    assert assert_ok(run_crawl(site.url + "/", cache)).calls == []  # unchanged: no call

    # an edit of the item and of the grid's cell each re-extracts its page; a letter more
    # in the bar changes no text the extractor reads
    build_tools(site, sign="The copyright sign, ©.", letters="ABCDEFGHIJKLMNO", tool="Tools")
    second = assert_ok(run_crawl(site.url + "/", cache))
    assert paths(site, second.calls) == [SERVICES, MODULE]
    assert "The copyright sign" in extractor_input(cache, site.url + MODULE)
    assert "Tools" in extractor_input(cache, site.url + SERVICES)
