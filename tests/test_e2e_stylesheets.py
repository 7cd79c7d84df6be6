"""End-to-end: text a site's own stylesheet hides is not what the extractor reads.

Doxygen's source listings carry a hover tooltip for every linked symbol (``div.ttc``
inside the ``div.fragment``, hidden by ``.ttc { display: none }`` in ``doxygen.css``):
read as text, they tripled a listing. The docs spider fetches the stylesheets a page
links on its own host once per crawl, never as pages, and leaves out what they hide;
an edit of a tooltip alone then costs no extractor call.
"""

from __future__ import annotations

import html
import threading
import time

import pytest

from tests.crawl import assert_ok, extractor_input, paths, run_crawl, stat
from tests.site import Raw

LISTING = "/hello_8c_source.html"

#: doxygen.css as Doxygen 1.9 writes it, shortened: its code and tooltip rules
DOXYGEN_CSS = """/* The standard CSS for doxygen 1.9.4 */
body, table, div, p, dl { font: 400 14px/22px Roboto,sans-serif; }
.fragment { text-align: left; direction: ltr; overflow-x: auto; overflow-y: hidden; }
div.fragment { padding: 0 0 1px 0; margin: 4px 8px 4px 2px; background-color: #FBFCFD; border: 1px solid #C4CFE5; }
div.line { font-family: monospace, fixed; font-size: 13px; min-height: 13px; line-height: 1.0;
    white-space: pre-wrap; text-indent: -53px; padding-left: 53px; margin: 0px; }
div.line:after { content:"\\000A"; white-space: pre; }
span.lineno { padding-right: 4px; margin-right: 9px; text-align: right; border-right: 2px solid #0F0;
    background-color: #E8E8E8; white-space: pre; }
.lineno { -webkit-user-select: none; user-select: none; }
/* @group Code Colorization */
span.keyword { color: #008000 }
span.keywordtype { color: #604020 }
span.keywordflow { color: #e08000 }
span.preprocessor { color: #806020 }
span.stringliteral { color: #002080 }
/* tooltip related style info */
.ttc {
        position: absolute;
        display: none;
}
#powerTip { cursor: default; background-color: white; border: 1px solid gray; display: none;
    font-size: smaller; max-width: 80%; opacity: 0.9; position: absolute; z-index: 2147483647; }
#powerTip div.ttdoc { color: grey; font-style: italic; }
#powerTip div { margin: 0px; padding: 0px; font: 12px/16px Roboto,sans-serif; }
@media print { #top { display: none; } #side-nav { display: none; } .contents { margin-left: 0px; } }
"""
TABS_CSS = ".tabs, .tabs2, .tabs3 { background-image: url('tab_b.png'); width: 100%; z-index: 101; }\n"

CODE = [
    '<span class="preprocessor">#include &lt;stdio.h&gt;</span>',
    '<span class="preprocessor">#include &quot;<a class="code" href="hello_8h.html">hello.h</a>&quot;</span>',
    "",
    '<span class="keywordtype">int</span> <a class="code hl_function" href="hello_8h.html#a1">greet</a>'
    '(<span class="keyword">const</span> <span class="keywordtype">char</span> *name)',
    "{",
    '    <span class="keywordflow">return</span> printf('
    '<span class="stringliteral">&quot;Hello, %s\\n&quot;</span>, name);',
    "}",
]
TIP = "Print a greeting to stdout."


def listing(code=CODE, tip=TIP, title="hello.c") -> bytes:
    """A source listing as Doxygen 1.9 writes it (SOURCE_BROWSER, SOURCE_TOOLTIPS): one
    ``div.line`` per line, the tooltips after the last line inside the fragment."""
    lines = "".join(
        f'<div class="line"><a id="l{n:05d}" name="l{n:05d}"></a><span class="lineno">{n:5d}</span>{text}</div>\n'
        for n, text in enumerate(code, 1)
    )
    tooltip = (
        '<div class="ttc" id="ahello_8h_html_a1"><div class="ttname"><a href="hello_8h.html#a1">greet</a></div>\n'
        f'<div class="ttdeci">{html.escape("int greet(const char *name)")}</div>\n<div class="ttdoc">{tip}</div>\n'
        '<div class="ttdef"><b>Definition:</b> <a href="hello_8c_source.html#l00004">hello.c:4</a></div>\n</div>\n'
    )
    return f"""<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" \
"https://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
<html xmlns="http://www.w3.org/1999/xhtml">
<head>
<meta http-equiv="Content-Type" content="text/xhtml;charset=UTF-8"/>
<meta name="generator" content="Doxygen 1.9.4"/>
<title>greeter: src/{title} Source File</title>
<link href="tabs.css" rel="stylesheet" type="text/css"/>
<script type="text/javascript" src="jquery.js"></script>
<script type="text/javascript" src="dynsections.js"></script>
<link href="doxygen.css" rel="stylesheet" type="text/css" />
</head>
<body>
<div id="top"><!-- do not remove this div, it is closed by doxygen! -->
<div id="titlearea"><table cellspacing="0" cellpadding="0"><tbody><tr id="projectrow">
<td id="projectalign"><div id="projectname">greeter</div></td></tr></tbody></table></div>
<!-- end header part -->
<div id="main-nav"></div>
<div id="nav-path" class="navpath"><ul><li class="navelem"><a class="el" href="dir_src.html">src</a></li></ul></div>
</div><!-- top -->
<div class="header"><div class="headertitle"><div class="title">{title}</div></div></div><!--header-->
<div class="contents">
<a href="hello_8c.html">Go to the documentation of this file.</a><div class="fragment">{lines}{tooltip}\
</div><!-- fragment --></div><!-- contents -->
<!-- start footer part -->
<hr class="footer"/><address class="footer"><small>Generated by&#160;<a href="https://www.doxygen.org/index.html">\
<img class="footer" src="doxygen.svg" width="104" height="31" alt="doxygen"/></a> 1.9.4</small></address>
</body>
</html>
""".encode()


@pytest.fixture
def doxygen_site(make_site):
    """A Doxygen site without validators (every recrawl a 200 in full), serving its
    stylesheets as a web server does."""
    site = make_site("none", noise=False)
    site.pages.clear()
    site.sitemap = None
    site.raw["/doxygen.css"] = Raw(DOXYGEN_CSS.encode(), content_type="text/css")
    site.raw["/tabs.css"] = Raw(TABS_CSS.encode(), content_type="text/css")
    site.raw[LISTING] = Raw(listing())
    return site


def test_tooltips_the_site_stylesheet_hides_are_not_read_and_editing_them_costs_no_call(doxygen_site, tmp_path):
    site, cache = doxygen_site, tmp_path / "cache"
    first = run_crawl(site.url + LISTING, cache)
    assert_ok(first)
    assert paths(site, first.calls) == [LISTING]
    text = extractor_input(cache, site.url + LISTING)
    assert 'return printf("Hello, %s\\n", name);' in text and "int greet(const char *name)" in text
    assert TIP not in text and "Definition:" not in text and text.count("greet") == 1  # the tooltip left out
    # each stylesheet downloaded once, through the downloader, and never a page
    assert site.requests_for("/doxygen.css") == [200] and site.requests_for("/tabs.css") == [200]
    assert stat(first, "stylesheets/fetched") == 2 and stat(first, "stylesheets/failed") == 0
    report = first.report
    assert (report["pages_new"], report["pages_fetched"], report["complete"]) == (1, 1, True)

    # the site edits a tooltip only: the listing is downloaded again (new bytes), reads the same
    site.reset_log()
    site.raw[LISTING] = Raw(listing(tip="Prints a friendly greeting to standard output."))
    tooltip_edit = run_crawl(site.url + LISTING, cache)
    assert_ok(tooltip_edit)
    assert site.requests_for(LISTING) == [200] and site.requests_for("/doxygen.css") == [200]
    assert tooltip_edit.calls == []
    assert (tooltip_edit.report["pages_unchanged"], tooltip_edit.report["pages_changed"]) == (1, 0)

    # a real code line changes: one call
    code = [*CODE[:5], '    <span class="keywordflow">return</span> puts(name);', *CODE[6:]]
    site.raw[LISTING] = Raw(listing(code=code, tip="Prints a friendly greeting to standard output."))
    code_edit = run_crawl(site.url + LISTING, cache)
    assert_ok(code_edit)
    assert paths(site, code_edit.calls) == [LISTING]
    text = extractor_input(cache, site.url + LISTING)
    assert "    return puts(name);" in text and "friendly" not in text

    # unchanged (the same bytes): what the page parsed into is reused, no stylesheet fetched
    site.reset_log()
    unchanged = run_crawl(site.url + LISTING, cache)
    assert_ok(unchanged)
    assert unchanged.calls == [] and stat(unchanged, "docs/parse_reused") == 1
    assert site.requests_for("/doxygen.css") == [] and stat(unchanged, "stylesheets/fetched") == 0


def test_a_stylesheet_is_requested_once_per_crawl_for_all_the_pages_waiting_for_it(doxygen_site, tmp_path):
    site = doxygen_site
    pages = [f"/file{n}_8c_source.html" for n in range(30)]
    for n, path in enumerate(pages):
        site.raw[path] = Raw(listing(code=[*CODE, f"<span class='comment'>/* file {n} */</span>"], title=f"file{n}.c"))
    site.sitemap = pages  # every page requested at the start, none waiting for another's parse
    # doxygen.css answers only once every page was answered: each page's parse waits for it
    site.holds["/doxygen.css"] = hold = threading.Event()

    def release():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not all(site.requests_for(path) for path in pages):
            time.sleep(0.02)
        hold.set()

    releaser = threading.Thread(target=release, daemon=True)
    releaser.start()
    try:
        result = run_crawl(site.url + pages[0], tmp_path / "cache")
    finally:
        hold.set()
        releaser.join()
    assert_ok(result)
    # (and hello.c's listing, which each tooltip's "Definition:" links to)
    assert sorted(paths(site, result.calls)) == sorted([*pages, LISTING])
    assert site.requests_for("/doxygen.css") == [200] and site.requests_for("/tabs.css") == [200]
    assert stat(result, "stylesheets/fetched") == 2
    report = result.report
    assert (report["pages_new"], report["pages_fetched"], report["complete"]) == (31, 31, True)
    assert TIP not in extractor_input(tmp_path / "cache", site.url + pages[7])


def test_without_the_stylesheet_the_tooltips_are_read(doxygen_site, tmp_path):
    site = doxygen_site
    off = run_crawl(site.url + LISTING, tmp_path / "off", settings={"MARKDOWN_SITE_STYLESHEETS": "False"})
    assert_ok(off)
    assert TIP in extractor_input(tmp_path / "off", site.url + LISTING)
    assert site.requests_for("/doxygen.css") == [] and stat(off, "stylesheets/fetched") == 0

    # a stylesheet that is not there (a 404) or not CSS is no rules: never a failed page
    site.raw["/doxygen.css"] = Raw(b"<h1>Not found</h1>", status=404)
    site.raw["/tabs.css"] = Raw(b"<html><body>Sign in</body></html>")
    missing = run_crawl(site.url + LISTING, tmp_path / "missing")
    assert_ok(missing)
    assert TIP in extractor_input(tmp_path / "missing", site.url + LISTING)
    assert stat(missing, "stylesheets/failed") == 2 and stat(missing, "docs/failed_pages") == 0
    assert missing.report["pages_new"] == 1 and missing.report["complete"] is True
