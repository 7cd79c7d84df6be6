"""End-to-end: a page written as documentation frameworks write it (Docusaurus tabs and
Prism code) is re-extracted when its text changes, hidden tab included, and not when
only its markup does."""

from __future__ import annotations

from tests.crawl import run_crawl

PATH = "/guide/tabs.html"


def prism(code: str, variant: str) -> str:
    if variant == "br":
        lines = code.replace("\n", "<br>")
    else:
        lines = "".join(
            f'<span class="token-line"><span class="token plain">{line}</span><br></span>' for line in code.split("\n")
        )
    pre = f'<pre class="prism-code language-js"><code>{lines}</code></pre>'
    return f'<div class="language-js theme-code-block">{pre}</div>'


def tabs(npm: str, yarn: str, variant: str = "token-line") -> str:
    return (
        '<div class="tabs-container"><ul role="tablist" class="tabs">'
        '<li role="tab" aria-selected="true" class="tabs__item">npm</li>'
        '<li role="tab" aria-selected="false" class="tabs__item">Yarn</li></ul>'
        f'<div class="margin-top--md"><div role="tabpanel">{prism(npm, variant)}</div>'
        f'<div role="tabpanel" hidden="">{prism(yarn, variant)}</div></div></div>'
    )


def test_hidden_tab_edits_recrawl_markup_variants_do_not(site, tmp_path):
    cache = tmp_path / "cache"
    site.pages["/guide/"].links.append(PATH)
    npm, yarn = "npm install example\nnpx example init", "yarn add example\nyarn example init"
    site.page(PATH, "Tabs", "Install it.", extra_html=tabs(npm, yarn))
    first = run_crawl(site.url + "/", cache)
    assert first.returncode == 0 and "Traceback" not in first.stderr, first.stderr[-3000:]
    assert site.url + PATH in first.calls

    site.page(PATH, "Tabs", "Install it.", extra_html=tabs(npm, yarn, variant="br"))  # same code, other markup
    second = run_crawl(site.url + "/", cache)
    assert second.returncode == 0, second.stderr[-3000:]
    assert second.calls == []

    site.page(PATH, "Tabs", "Install it.", extra_html=tabs(npm, yarn.replace("yarn example", "yarn  example")))
    third = run_crawl(site.url + "/", cache)
    assert third.returncode == 0, third.stderr[-3000:]
    assert third.calls == [site.url + PATH]
