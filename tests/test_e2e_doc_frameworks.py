"""End-to-end: what documentation frameworks render reaches the extractor, and only
real edits re-extract a page (Docusaurus Prism code and Tabs, a Hugo title outside
the article); a change of markup alone (Prism's two ways of writing lines) does not."""

from __future__ import annotations

import pytest

from tests.crawl import assert_ok, extractor_input, paths, run_crawl
from tests.site import Raw

CHROME = (
    '<nav class="navbar"><a href="/">Docs</a> <a href="/blog">Blog</a></nav>'
    '<aside class="theme-doc-sidebar-container"><ul><li><a href="/">Intro</a></li>'
    '<li><a href="/install.html">Install</a></li><li><a href="/config.html">Config</a></li></ul></aside>'
)
FOOTER = '<footer class="footer">Copyright 2026 Example, Inc. Built with Docusaurus.</footer>'

FORTRAN = ["program hello", "  ! print a greeting", "  print *, 'Hello'", "end program hello"]


def prism(lines: list[str]) -> str:
    """A Prism code block as Docusaurus renders it: one ``token-line`` span per line,
    each ending with a ``<br>``."""
    spans = "".join(
        f'<span class="token-line" style="color:#393A34"><span class="token plain">{line}</span><br></span>'
        for line in lines
    )
    return (
        '<div class="language-fortran codeBlockContainer_Ckt0 theme-code-block">'
        '<div class="codeBlockContent_biex"><pre tabindex="0" class="prism-code language-fortran '
        f'codeBlock_bY9V thin-scrollbar"><code class="codeBlockLines_e6Vv">{spans}</code></pre>'
        '<div class="buttonGroup__atx"><button type="button" aria-label="Copy code to clipboard" '
        'title="Copy" class="clean-btn"><span class="copyButtonIcons_eSgA">Copy</span></button></div>'
        "</div></div>"
    )


def tabs(panels: dict[str, str]) -> str:
    """Docusaurus ``<Tabs>``: the first panel shown, the others ``hidden``."""
    labels = "".join(
        f'<li role="tab" tabindex="{0 if i == 0 else -1}" aria-selected="{str(i == 0).lower()}" '
        f'class="tabs__item{" tabs__item--active" if i == 0 else ""}">{label}</li>'
        for i, label in enumerate(panels)
    )
    bodies = "".join(
        f'<div role="tabpanel" class="tabItem_Ymn6"{"" if i == 0 else " hidden"}><p>{text}</p></div>'
        for i, text in enumerate(panels.values())
    )
    return (
        '<div class="tabs-container tabList__CuJ"><ul role="tablist" aria-orientation="horizontal" '
        f'class="tabs">{labels}</ul><div class="margin-top--md">{bodies}</div></div>'
    )


def docusaurus(title: str, body: str) -> bytes:
    return (
        f"<!DOCTYPE html><html><head><title>{title} | Example</title></head><body>"
        f'<div id="__docusaurus">{CHROME}<div class="main-wrapper"><main class="docMainContainer_TBSr">'
        '<div class="container"><article><div class="theme-doc-markdown markdown"><header>'
        f'<h1>{title}<a href="#" class="hash-link" aria-label="Direct link" title="Direct link">\u200b</a></h1>'
        f"</header>{body}</div></article></div></main></div>{FOOTER}</div></body></html>"
    ).encode()


def hugo(title: str, body: str) -> bytes:
    """A Hugo theme whose page title sits above the article."""
    return (
        f"<!DOCTYPE html><html><head><title>{title} - Example</title></head><body>"
        '<header class="site-header"><a href="/">Example</a></header>'
        f'<div class="td-main"><div class="page-title"><h1 class="td-title">{title}</h1></div>'
        f'<article class="td-content"><div class="lead">{body}</div></article></div>'
        "<footer>Example docs</footer></body></html>"
    ).encode()


def build(site, *, fortran=FORTRAN, python_tab="pip install example", conda_tab="conda install example"):
    home = "<p>Start with <a href='/install.html'>install</a>, <a href='/code.html'>code</a> and " + (
        "<a href='/about.html'>about</a>.</p>"
    )
    site.raw["/"] = Raw(docusaurus("Example documentation", home))
    site.raw["/code.html"] = Raw(docusaurus("Hello in Fortran", "<p>The smallest program:</p>" + prism(fortran)))
    site.raw["/install.html"] = Raw(
        docusaurus("Install", "<p>Pick your installer.</p>" + tabs({"pip": python_tab, "conda": conda_tab}))
    )
    site.raw["/about.html"] = Raw(hugo("About the project", "<p>Example is maintained by volunteers.</p>"))


@pytest.fixture
def framework_site(make_site):
    site = make_site("none", noise=False)
    site.pages.clear()
    site.sitemap = None
    build(site)
    return site


def test_framework_markup_reaches_the_extractor_and_only_real_edits_cost_a_call(framework_site, tmp_path):
    site = framework_site
    cache = tmp_path / "cache"
    first = assert_ok(run_crawl(site.url + "/", cache))
    assert paths(site, first.calls) == ["/", "/about.html", "/code.html", "/install.html"]

    code = extractor_input(cache, site.url + "/code.html")
    assert "\n".join(FORTRAN) in code  # every line of the Prism block, indentation kept
    assert "```fortran" in code
    assert "Copy" not in code and "\u200b" not in code
    install = extractor_input(cache, site.url + "/install.html")
    assert "pip install example" in install and "conda install example" in install  # the hidden tab too
    assert install.index("pip") < install.index("pip install example")  # each panel under its label
    assert install.index("conda") < install.index("conda install example")
    about = extractor_input(cache, site.url + "/about.html")
    assert about.lstrip().startswith("# About the project")  # the title above the article

    assert assert_ok(run_crawl(site.url + "/", cache)).calls == []  # unchanged: no call

    # the code re-indented in one page: that page only
    build(site, fortran=[line.strip() for line in FORTRAN])
    assert paths(site, assert_ok(run_crawl(site.url + "/", cache)).calls) == ["/code.html"]

    # an edit inside the tab that is not shown: that page is re-extracted
    build(site, fortran=[line.strip() for line in FORTRAN], conda_tab="conda install -c conda-forge example")
    assert paths(site, assert_ok(run_crawl(site.url + "/", cache)).calls) == ["/install.html"]
    assert "conda install -c conda-forge example" in extractor_input(cache, site.url + "/install.html")


# -- the same code in Prism's other markup ----------------------------------------

PATH = "/guide/tabs.html"


def prism_js(code: str, variant: str) -> str:
    if variant == "br":
        lines = code.replace("\n", "<br>")
    else:
        lines = "".join(
            f'<span class="token-line"><span class="token plain">{line}</span><br></span>' for line in code.split("\n")
        )
    pre = f'<pre class="prism-code language-js"><code>{lines}</code></pre>'
    return f'<div class="language-js theme-code-block">{pre}</div>'


def js_tabs(npm: str, yarn: str, variant: str = "token-line") -> str:
    return (
        '<div class="tabs-container"><ul role="tablist" class="tabs">'
        '<li role="tab" aria-selected="true" class="tabs__item">npm</li>'
        '<li role="tab" aria-selected="false" class="tabs__item">Yarn</li></ul>'
        f'<div class="margin-top--md"><div role="tabpanel">{prism_js(npm, variant)}</div>'
        f'<div role="tabpanel" hidden="">{prism_js(yarn, variant)}</div></div></div>'
    )


def test_hidden_tab_edits_recrawl_markup_variants_do_not(site, tmp_path):
    cache = tmp_path / "cache"
    site.pages["/guide/"].links.append(PATH)
    npm, yarn = "npm install example\nnpx example init", "yarn add example\nyarn example init"
    site.page(PATH, "Tabs", "Install it.", extra_html=js_tabs(npm, yarn))
    first = run_crawl(site.url + "/", cache)
    assert first.returncode == 0 and "Traceback" not in first.stderr, first.stderr[-3000:]
    assert site.url + PATH in first.calls

    site.page(PATH, "Tabs", "Install it.", extra_html=js_tabs(npm, yarn, variant="br"))  # same code, other markup
    second = run_crawl(site.url + "/", cache)
    assert second.returncode == 0, second.stderr[-3000:]
    assert second.calls == []

    site.page(PATH, "Tabs", "Install it.", extra_html=js_tabs(npm, yarn.replace("yarn example", "yarn  example")))
    third = run_crawl(site.url + "/", cache)
    assert third.returncode == 0, third.stderr[-3000:]
    assert third.calls == [site.url + PATH]
