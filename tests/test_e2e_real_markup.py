"""End-to-end: what the extractor reads on markup nobody here wrote, with exact call
counts. Each page reproduces one failure class found on real sites: a Sphinx + Breathe
(exhale) one-definition API page and a Sphinx chapter page made of a heading and a
toctree (both sent empty or as the site's name before), a Doxygen file page whose member
documentation (under its headings, beside the summary tables) was left out and whose
labels ran together ("inlineconstexprnoexcept"), a Doxygen file page of one member whose
one-paragraph description and only definition were left out under their headings, an article page with a counter of free
articles that changes on every visit (left out by the learned step of the selection), a
section named ``format-meta``
(its text was never hashed), an alt text that is only the image's path, and a rail
of related posts whose teasers change on every build."""

from __future__ import annotations

from pathlib import Path
from string import Template

import pytest

from tests.crawl import assert_ok, extractor_input, paths, run_crawl
from tests.site import Raw

FIXTURES = Path(__file__).parent / "fixtures" / "real-markup"


def page(fixture: str, **values: str) -> Raw:
    """The page ``fixtures/real-markup/FIXTURE.html`` with its ``$placeholders`` filled."""
    return Raw(Template((FIXTURES / f"{fixture}.html").read_text()).substitute(values).encode())


def cards(related: list[tuple[str, str]]) -> str:
    return "".join(
        f'<article class="card"><h3 class="card-title"><a href="/posts/{i}.html">{title}</a></h3>'
        f'<p class="card-excerpt">{excerpt}</p></article>'
        for i, (title, excerpt) in enumerate(related)
    )


INTRO = "Sphinx provides a Python API to easily integrate Sphinx documentation into your web application."
STORY = [
    "The council voted on Tuesday to extend the river path by another four kilometres, connecting the "
    "old mill district with the new housing estate on the eastern bank.",
    "Work is expected to start in the spring and last about eighteen months, according to the planning "
    "department, which published the tender documents last week.",
    "Residents welcomed the plan but asked for better lighting and a separate lane for bicycles.",
]
MOUSE = [
    "Vor fünfzig Jahren stellte Douglas Engelbart in San Francisco die Computermaus vor, zusammen mit "
    "Hypertext, Videokonferenzen und dem gemeinsamen Bearbeiten von Dokumenten.",
    "Die Vorführung dauerte neunzig Minuten und ging als Mutter aller Demos in die Geschichte ein, obwohl "
    "kaum jemand im Saal ahnte, was er da gesehen hatte.",
    "Heute steckt die Idee in jedem Laptop, jedem Telefon und jedem Tablet, auch wenn die Maus selbst "
    "langsam vom Schreibtisch verschwindet.",
]
RELATED = [
    ("Bridge closures to last until autumn", "The council says two bridges stay closed."),
    ("New estate gets its first residents", "Forty families moved in last week."),
    ("Market moves to the square", "The Saturday market has a new home."),
]


def build(
    site,
    *,
    define_doc="The largest number of widgets a frame holds.",
    intro=INTRO,
    description="Comma-separated values: a table as plain text, one record per line.",
    image="/p/2024/img-001.png",
    story=STORY,
    related=RELATED,
    define_line="259",
    free_articles="9",
    header_doc="This is a Standard C++ Library header.",
):
    links = [
        "/api/define_widget_max.html",
        "/api/iosfwd.html",
        "/api/numeric.html",
        "/blog/maus.html",
        "/usage/websupport/index.html",
        "/formats/csv.html",
        "/gallery.html",
        "/posts/river.html",
    ]
    site.raw["/"] = Raw(
        (
            "<html><head><title>Home</title></head><body><main><h1>Home</h1><ul>"
            + "".join(f"<li><a href='{link}'>{link}</a></li>" for link in links)
            + "</ul></main></body></html>"
        ).encode()
    )
    site.raw["/api/define_widget_max.html"] = page(
        "exhale_define", name="WIDGET_MAX", slug="widget-max", doc=define_doc
    )
    site.raw["/api/numeric.html"] = page("doxygen_file", line=define_line)
    site.raw["/api/iosfwd.html"] = page("doxygen_file_one_member", description=header_doc)
    site.raw["/blog/maus.html"] = page(
        "news_counter", paragraphs="".join(f"<p>{p}</p>" for p in MOUSE), count=free_articles
    )
    site.raw["/usage/websupport/index.html"] = page("sphinx_chapter", intro=intro)
    site.raw["/formats/csv.html"] = page(
        "format_page", name="CSV", description=description, languages="<li>English</li><li>French</li>"
    )
    site.raw["/gallery.html"] = page("photo_page", src=image, caption="We walked along the river.")
    site.raw["/posts/river.html"] = page(
        "news_story", paragraphs="".join(f"<p>{p}</p>" for p in story), cards=cards(related)
    )


@pytest.fixture
def real_markup_site(make_site):
    site = make_site("none", noise=False)
    site.pages.clear()
    site.sitemap = None
    build(site)
    return site


def test_pages_nobody_here_wrote_are_read_whole_and_only_their_real_edits_cost_a_call(real_markup_site, tmp_path):
    site = real_markup_site
    cache = tmp_path / "cache"
    first = assert_ok(run_crawl(site.url + "/", cache))
    assert paths(site, first.calls) == [
        "/",
        "/api/define_widget_max.html",
        "/api/iosfwd.html",
        "/api/numeric.html",
        "/blog/maus.html",
        "/formats/csv.html",
        "/gallery.html",
        "/posts/river.html",
        "/usage/websupport/index.html",
    ]
    define = extractor_input(cache, site.url + "/api/define_widget_max.html")
    assert "# Define WIDGET_MAX" in define and "The largest number of widgets a frame holds." in define
    assert "Defined in File widget.h" in define
    assert "View page source" not in define and "Copyright" not in define
    numeric = extractor_input(cache, site.url + "/api/numeric.html")
    assert "#define __cpp_lib_gcd\n```\n\nDefinition at line 158 of file numeric." in numeric  # each macro's
    assert "std::lcm (_Mn __m, _Nn __n) inline constexpr noexcept" in numeric  # labels apart
    iosfwd = extractor_input(cache, site.url + "/api/iosfwd.html")
    assert "## Detailed Description\n\nThis is a Standard C++ Library header." in iosfwd
    assert "#define _GLIBCXX_IOSFWD\n```\n\nDefinition at line 34 of file iosfwd." in iosfwd
    mouse = extractor_input(cache, site.url + "/blog/maus.html")
    assert all(paragraph in mouse for paragraph in MOUSE) and "Wer Fragen hat" in mouse
    assert "Gratis-Artikel" not in mouse  # the counter, on a page that says it is an article
    chapter = extractor_input(cache, site.url + "/usage/websupport/index.html")
    assert chapter.lstrip().startswith("# Sphinx Web Support")
    assert "New in version 1.1." in chapter and INTRO in chapter
    assert "- The WebSupport Class" in chapter  # the toctree is the chapter
    assert "SPHINX" not in chapter and "Quick search" not in chapter
    csv = extractor_input(cache, site.url + "/formats/csv.html")
    assert "Comma-separated values" in csv and "- French" in csv and "Files of this format" in csv
    gallery = extractor_input(cache, site.url + "/gallery.html")
    assert "We walked along the river." in gallery and "img-001" not in gallery
    river = extractor_input(cache, site.url + "/posts/river.html")
    assert all(paragraph in river for paragraph in STORY)
    assert "Bridge closures" not in river and "Read next" not in river and "weekly letter" not in river

    assert assert_ok(run_crawl(site.url + "/", cache)).calls == []  # unchanged: no call

    # chrome that changes on every build re-extracts nothing: another rail of related
    # posts, the image renamed (its alt text is its path), the counter of free articles
    build(
        site,
        image="/p/2026/img-042.png",
        related=[("Library opens on Sundays", "From May on."), *RELATED[:2]],
        free_articles="8",
    )
    assert assert_ok(run_crawl(site.url + "/", cache)).calls == []

    # real edits, one per page: the one-definition page, a macro's line on the Doxygen
    # file page, the description of the one-member file page, the chapter's paragraph,
    # the description inside format-meta
    build(
        site,
        image="/p/2026/img-042.png",
        free_articles="7",
        define_line="261",
        header_doc="This is a Standard C++ Library header: the forward declarations of the stream classes.",
        define_doc="The largest number of widgets one frame may hold.",
        intro=INTRO.replace("easily ", ""),
        description="Comma-separated values: a table as plain text, one record per line, fields split by commas.",
    )
    third = assert_ok(run_crawl(site.url + "/", cache))
    assert paths(site, third.calls) == [
        "/api/define_widget_max.html",
        "/api/iosfwd.html",
        "/api/numeric.html",
        "/formats/csv.html",
        "/usage/websupport/index.html",
    ]
    assert "fields split by commas" in extractor_input(cache, site.url + "/formats/csv.html")
