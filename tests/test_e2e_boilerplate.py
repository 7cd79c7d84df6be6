"""End-to-end: domain boilerplate is kept from the extractor, from the first crawl on."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.commands import run_command
from tests.crawl import ROOT, crawl_env, run_crawl, scrapy_command
from tests.old_stages import REPETITION_ALONE
from tests.site import Page, Raw, Site, docs_site

NEWSLETTER = "Subscribe to our newsletter to get product updates, tips and release notes every month."
HELPFUL = "Was this page helpful? Let us know by rating this page or by opening an issue on GitHub."
FOOTER = "© {year} Example Corp. All rights reserved. Registered office: 1 Example Street, Springfield."
OWN = {
    "/": "Welcome to the Example documentation, the starting point for every reader of it.",
    "/guide/": "The guide explains installation and usage of Example step by step for newcomers.",
    "/guide/install.html": "Run pip install example to install it; Python three is required on the machine.",
    "/guide/usage.html": "Call example.run() with a configuration file that names the input folder to read.",
    "/api.html": "The API has one function, run(), which takes a path and returns a report object.",
    "/hidden.html": "Only the sitemap links to this page, which describes the hidden maintenance mode.",
    "/faq.html": "Frequently asked questions about licensing, support windows and upgrade policies.",
    "/support.html": "Support is available by email on working days; urgent issues are answered first.",
}


def boilerplate(newsletter=NEWSLETTER, year=2025):
    # div-based boilerplate inside <main> and inside an <article>, in divs whose class
    # names no chrome (a 'feedback' or 'newsletter' class is left out page by page, by
    # crawler.lib.maincontent): per-page cleaning cannot see it, only cross-page analysis can
    return (
        f"<article><div class='box'><p>{HELPFUL}</p></div></article>"
        f"<div class='panel'><p>{newsletter}</p></div>"
        f"<div class='legal'><p>{FOOTER.format(year=year)}</p></div>"
    )


def build_site(**kwargs):
    site = docs_site()
    site.page("/faq.html", "FAQ", links=["/"])
    site.page("/support.html", "Support", links=["/"])
    site.pages["/"].links += ["/faq.html", "/support.html"]
    for path, text in OWN.items():
        page = site.pages[path]
        site.page(path, page.title, text, links=page.links, extra_html=boilerplate(**kwargs))
    return site


@pytest.fixture
def bsite():
    site = build_site().start()
    yield site
    site.stop()


def inputs(cache):
    """url path -> the text the extractor read (the recording extractor keeps it)."""
    out = {}
    for path in (cache / "extractions").glob("*.json"):
        data = json.loads(path.read_text())
        out[data["url"].split(":", 2)[2].split("/", 1)[1]] = data["data"]["input"]
    return {"/" + k: v for k, v in out.items()}


def test_extractor_never_reads_repeated_blocks(bsite, tmp_path):
    cache = tmp_path / "cache"
    first = run_crawl(bsite.url + "/", cache)
    assert first.returncode == 0, first.stderr[-2000:]
    assert len(first.calls) == 8
    read = inputs(cache)
    assert set(read) == set(OWN)
    for path, text in read.items():
        assert OWN[path] in text  # the page's own text, whole
        assert "newsletter" not in text and "helpful" not in text and "Registered office" not in text
    # the per-domain record: fingerprint, parameters, statistics, and the repeated
    # blocks' text kept once (the registered office is not lost)
    [record] = [json.loads(p.read_text()) for p in (cache / "boilerplate").glob("*.json")]
    assert (record["pages_analysed"], record["blocks_boilerplate"], len(record["hashes"])) == (8, 3, 3)
    assert record["params"]["threshold_pct"] == 0.7
    assert any("Registered office" in block["text"] for block in record["blocks"])
    assert 20 < record["boilerplate_pct"] < 80
    report = first.report["boilerplate"]
    assert (report["domains_analysed"], report["pages_analysed"]) == (1, 8)
    assert report["bytes_removed"] == record["bytes_removed"] > 0
    assert "Domain boilerplate" in first.stderr and "top repeated blocks" in first.stderr
    assert "min 5 pages, short lines under 50 chars):" in first.stderr  # every block counts (position on)
    assert "'boilerplate/bytes_removed'" in first.stderr


def test_boilerplate_only_change_reextracts_nothing(bsite, tmp_path):
    cache = tmp_path / "cache"
    assert run_crawl(bsite.url + "/", cache).returncode == 0
    # a new newsletter text and a new footer year on every page
    for path in OWN:
        page = bsite.pages[path]
        bsite.page(
            path,
            page.title,
            *page.paragraphs,
            links=page.links,
            extra_html=boilerplate("Join 10,000 developers: our monthly newsletter brings release notes.", 2026),
        )
    second = run_crawl(bsite.url + "/", cache)
    assert second.returncode == 0, second.stderr[-2000:]
    assert second.report["pages_changed"] == 8  # the pages did change...
    assert second.calls == []  # ...but not the text the extractor reads
    assert "'boilerplate/inputs_changed': 0" in second.stderr
    # a real edit of one page's own text re-extracts that page only
    bsite.edit("/faq.html", "Frequently asked questions about licensing, support windows and the new LTS.")
    third = run_crawl(bsite.url + "/", cache)
    assert [c.replace(bsite.url, "") for c in third.calls] == ["/faq.html"]
    assert "LTS" in inputs(cache)["/faq.html"]
    assert "newsletter" not in inputs(cache)["/faq.html"]


def test_disabled_analysis_sends_pages_as_they_are(bsite, tmp_path):
    cache = tmp_path / "cache"
    result = run_crawl(bsite.url + "/", cache, settings={"BOILERPLATE_ENABLED": "False"})
    assert result.returncode == 0
    assert all(NEWSLETTER in text for text in inputs(cache).values())
    assert "boilerplate" not in result.report
    # turning it on later re-extracts every page once, with cleaned input
    on = run_crawl(bsite.url + "/", cache)
    assert len(on.calls) == 8
    assert all(NEWSLETTER not in text for text in inputs(cache).values())


def test_boilerplate_command_tries_other_thresholds(bsite, tmp_path):
    cache = tmp_path / "cache"
    assert run_crawl(bsite.url + "/", cache).returncode == 0

    def command(*args):
        return subprocess.run(
            scrapy_command(["boilerplate", *args], cache, {}),
            cwd=ROOT,
            env=crawl_env(),
            capture_output=True,
            text=True,
            timeout=60,
        )

    same = command()
    assert same.returncode == 0, same.stderr
    assert "127.0.0.1" in same.stdout and "inputs changed" in same.stdout
    assert same.stdout.startswith("threshold 70%, min 5 pages, short lines under 50 chars, loose matching")
    loose = command("--min-pages", "9", "--json")
    data = json.loads(loose.stdout)
    [domain] = data["domains"]
    assert domain["skipped"] is True and domain["inputs_changed"] == 8  # 8 pages < 9: left alone
    assert sorted(domain["inputs_changed_urls"]) == sorted(f"{bsite.url}{path}" for path in bsite.pages)
    listed = command("--min-pages", "9", "--pages")
    assert sum(line.startswith("    ~ http") for line in listed.stdout.splitlines()) == 8
    assert "--pages lists them" in command("--min-pages", "9").stdout
    assert data["params"]["min_pages"] == 9
    strict = command("--strict", "--hysteresis", "0", "--json")
    assert json.loads(strict.stdout)["domains"][0]["blocks_new"] == 3
    # nothing was written
    assert run_crawl(bsite.url + "/", cache).calls == []
    bad = command("--threshold-pct", "2")
    assert bad.returncode == 2 and "threshold" in bad.stderr.lower()
    missing = subprocess.run(
        scrapy_command(["boilerplate"], tmp_path / "nothing", {}),
        cwd=ROOT,
        env=crawl_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert missing.returncode == 1 and "run a crawl first" in missing.stderr


# -- chrome in div layouts, repeated text inside the pages


class DivSite(Site):
    """A docs theme built from ``<div>``s: no ``<main>``, ``<header>``, ``<nav>`` or
    ``<footer>``. Each page's header shows its date ("Last updated: <date>", kept in
    the page's ``extra_html``), the bottom bar the build's."""

    def render(self, path: str, page: Page) -> bytes:
        links = "".join(f'<p><a href="{link}">{link.strip("/") or "home"} page</a></p>' for link in page.links)
        paragraphs = "".join(f"<p>{text}</p>" for text in page.paragraphs)
        return (
            f"<!DOCTYPE html><html><head><title>{page.title}</title></head><body>"
            f"<div class='topbar'><a href='/'>Example docs</a></div>"
            f"<div class='document'><div class='page-header'><h1>{page.title}</h1>"
            f"<p>Last updated: {page.extra_html}</p></div>"
            f"<div class='body'>{paragraphs}{links}</div></div>"
            f"<div class='bottom'><p>Generated on {page.extra_html} by Sphinx 7.2.</p></div></body></html>"
        ).encode()


def build_div_site(month="March"):
    site = DivSite(noise=False)
    template = build_site()
    for n, (path, page) in enumerate(sorted(template.pages.items())):
        site.page(path, page.title, OWN[path], links=page.links, extra_html=f"{month} {n + 1}, 2025")
    site.sitemap = template.sitemap
    return site


@pytest.fixture
def divsite():
    site = build_div_site().start()
    yield site
    site.stop()


def redate(site, month):
    for n, (path, page) in enumerate(sorted(site.pages.items())):
        site.page(path, page.title, *page.paragraphs, links=page.links, extra_html=f"{month} {n + 1}, 2025")


def test_short_dated_chrome_of_a_div_layout_is_kept_from_the_extractor(divsite, tmp_path):
    cache = tmp_path / "cache"
    first = run_crawl(divsite.url + "/", cache)
    assert first.returncode == 0, first.stderr[-2000:]
    assert len(first.calls) == 8
    for path, text in inputs(cache).items():
        title = divsite.pages[path].title
        assert text.startswith(f"# {title}\n\n{OWN[path]}")  # the title and the page's own text
        assert "Last updated" not in text and "Generated on" not in text and "Example docs" not in text
    # a rebuild: every page's date changes, and one page's text really changes
    redate(divsite, "April")
    divsite.edit("/faq.html", "Frequently asked questions about licensing, support windows and the new LTS.")
    second = run_crawl(divsite.url + "/", cache)
    assert second.returncode == 0, second.stderr[-2000:]
    assert second.report["pages_changed"] == 8
    assert [c.replace(divsite.url, "") for c in second.calls] == ["/faq.html"]
    # the record says which blocks are chrome, and why (the top bar and the header's
    # date line never reach the markdown: the main content leaves them out)
    [record] = [json.loads(p.read_text()) for p in (cache / "boilerplate").glob("*.json")]
    treated = {b["text"][:14]: (b["treated"], b["why"]) for b in record["blocks"]}
    assert treated == {
        "Generated on A": ("boilerplate", "edge: at the page's start or end on 8 of 8 pages of the domain"),
    }
    assert record["version"] == 2 and record["pages_emptied"] == 0
    # by repetition alone, the date lines are too short to count: every page would change
    by_repetition = json.loads(boilerplate_command(cache, "--no-position", "--json").stdout)
    assert by_repetition["domains"][0]["inputs_changed"] == 8


def boilerplate_command(cache, *args):
    """``scrapy boilerplate ARGS`` in this process (tests.commands)."""
    return run_command(["boilerplate", *args], cache)


NOTES = {
    v: f"Version 2.{v} renames the setting legacy_{name} and drops its old {name} hook for good."
    for v, name in enumerate(["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf"])
}


CODENAMES = ["", "Amber", "Basalt", "Cobalt", "Dune", "Ember", "Fjord"]


def migration_page(v, latest):
    """The guide to 2.``v``: its introduction and checklist, then the notes of every
    later version (the cumulative part, the same on every page) closing the page, as
    the site's boxes do after them."""
    name = CODENAMES[v]
    return [
        f"This guide takes a project to version 2.{v}, codename {name}, one step after the other.",
        f"Checklist for {name}: run the {name} test suite, then deploy {name} to staging first.",
        *(NOTES[w] for w in range(v + 1, latest + 1)),
    ]


def build_migration_site(latest):
    site = build_site()
    guides = [f"/migrate/to-2-{v}.html" for v in range(1, 7)]
    for v, path in enumerate(guides, start=1):
        site.page(path, f"Upgrading to 2.{v}", *migration_page(v, latest), links=["/"], extra_html=boilerplate())
    site.pages["/"].links += guides
    return site


def test_repeated_notes_closing_the_pages_of_a_section_reach_every_page(tmp_path):
    site = build_migration_site(latest=5).start()
    try:
        cache = tmp_path / "cache"
        first = run_crawl(site.url + "/", cache)
        assert first.returncode == 0, first.stderr[-2000:]
        assert len(first.calls) == 14
        read = inputs(cache)
        for v in range(1, 7):
            text = read[f"/migrate/to-2-{v}.html"]
            assert all(NOTES[w] in text for w in range(v + 1, 6))  # the later notes, all of them
            assert f"Checklist for {CODENAMES[v]}" in text and "newsletter" not in text
        assert all(NOTES[5] in read[f"/migrate/to-2-{v}.html"] for v in range(1, 5))  # on 4 of 6 pages
        # 2.6 comes out: its notes are added to every guide of the section
        for v in range(1, 7):
            path = f"/migrate/to-2-{v}.html"
            site.page(path, site.pages[path].title, *migration_page(v, latest=6), links=["/"], extra_html=boilerplate())
        second = run_crawl(site.url + "/", cache)
        assert second.returncode == 0, second.stderr[-2000:]
        assert sorted(c.replace(site.url, "") for c in second.calls) == [f"/migrate/to-2-{v}.html" for v in range(1, 6)]
        read = inputs(cache)
        assert all(NOTES[6] in read[f"/migrate/to-2-{v}.html"] for v in range(1, 6))
        [record] = [json.loads(p.read_text()) for p in (cache / "boilerplate").glob("*.json")]
        treated = {b["text"]: (b["treated"], b["section"], b["why"].partition(":")[0]) for b in record["blocks"]}
        assert treated[NOTES[6]] == ("content", "migrate", "section text")
        assert record["pages_emptied"] == 0 and "'boilerplate/pages_emptied'" not in second.stderr
        assert "repeated but kept as content: " in second.stderr  # the table at the end of the crawl
        shown = boilerplate_command(cache, "--blocks")
        assert shown.returncode == 0, shown.stderr
        assert "content     (5 pages /migrate/) Version 2.6 renames the setting legacy_golf" in shown.stdout
        assert "section text: repeated on the pages of section /migrate/ only, not site-wide" in shown.stdout
    finally:
        site.stop()


def as_version_1(cache):
    """Rewrite the domain records as the analysis by repetition alone wrote them,
    before records had a version: boilerplate blocks only, no treatment, no reasons."""
    for path in (cache / "boilerplate").glob("*.json"):
        record = json.loads(path.read_text())
        for key in ("version", "pages_emptied", "pages_emptied_urls"):
            del record[key]
        del record["params"]["position"]
        record["blocks"] = [{"hash": b["hash"], "pages": b["pages"], "text": b["text"]} for b in record["blocks"]]
        path.write_text(json.dumps(record))


def test_the_first_crawl_after_the_upgrade(bsite, divsite, tmp_path):
    """A cache made by the analysis by repetition alone, then crawls of the same pages
    with this one. No unchanged page is re-extracted: where both rules agree (long
    blocks at the pages' ends) nothing changes; where they differ (short dated chrome)
    the page keeps the input it was extracted with, until its text changes."""
    old = {"PROCESSING_STAGES": REPETITION_ALONE}
    for site, held in ((bsite, 0), (divsite, 8)):
        cache = tmp_path / f"cache-{held}"
        assert len(run_crawl(site.url + "/", cache, settings=old).calls) == 8
        as_version_1(cache)
        upgraded = run_crawl(site.url + "/", cache)
        assert upgraded.returncode == 0, upgraded.stderr[-2000:]
        assert upgraded.calls == []
        assert "'boilerplate/inputs_changed': 0" in upgraded.stderr
        assert (f"'boilerplate/pages_held': {held}" in upgraded.stderr) == bool(held)
        assert (f"{held} page(s) keep the input they were extracted with" in upgraded.stderr) == bool(held)
        assert all("newsletter" not in text for text in inputs(cache).values())
    cache = tmp_path / "cache-8"
    assert all("Generated on March" in text for text in inputs(cache).values())  # as extracted
    # a rebuild changes every page: re-extracted, as the old rule would have, by the new
    redate(divsite, "May")
    rebuilt = run_crawl(divsite.url + "/", cache)
    assert len(rebuilt.calls) == 8 and "'boilerplate/pages_held'" not in rebuilt.stderr
    assert all("Generated on" not in text for text in inputs(cache).values())
    redate(divsite, "June")
    assert run_crawl(divsite.url + "/", cache).calls == []  # and never again for a date


def test_a_page_cleaning_would_empty_reaches_the_extractor_whole(tmp_path):
    site = build_site()
    site.page("/tags.html", "Tags", links=["/"], extra_html=boilerplate())  # no text of its own
    site.pages["/"].links.append("/tags.html")
    site.start()
    try:
        cache = tmp_path / "cache"
        result = run_crawl(site.url + "/", cache)
        assert result.returncode == 0, result.stderr[-2000:]
        assert len(result.calls) == 9
        read = inputs(cache)
        assert NEWSLETTER in read["/tags.html"] and read["/tags.html"].startswith("# Tags")  # whole
        assert all(NEWSLETTER not in text for path, text in read.items() if path != "/tags.html")
        assert "'boilerplate/pages_emptied': 1" in result.stderr
        assert "1 page(s) kept whole: cleaning would have left no text" in result.stderr
        report = result.report["boilerplate"]
        assert report["pages_emptied"] == 1
        [domain] = report["domains"].values()
        assert domain["pages_emptied_urls"] == [f"{site.url}/tags.html"]
        listed = boilerplate_command(cache, "--pages")
        assert listed.returncode == 0, listed.stderr
        assert f"    ! {site.url}/tags.html" in listed.stdout.splitlines()
    finally:
        site.stop()


HEADER = (
    "Example Corp documentation portal: guides, references and release notes for every product we ship.",
    "Version {year} of the documentation, last built from the main branch of the documentation repository.",
)


def text_items_site(site, year):
    """Eight pages whose text a user's spider carries whole: the site's two header lines
    first, then the page's own paragraph."""
    own = list(OWN.items())
    links = "".join(f"<a href='{path}'>{path}</a> " for path, _ in own)
    for path, text in own:
        header = "".join(f"<p>{line.format(year=year)}</p>" for line in HEADER)
        site.raw[path] = Raw(
            f"<html><head><title>{path}</title></head><body><div class='top'>{header}</div>"
            f"<main><p>{text}</p><nav>{links}</nav></main></body></html>".encode()
        )


def test_header_lines_opening_a_user_s_items_are_boilerplate(make_site, tmp_path):
    """A user's ``{url, title, text}`` items whose text starts with the site's header
    lines: the title line the pipeline writes above them does not make them the page's
    interior; they are kept from the extractor, and a new year in them costs no call."""
    site = make_site("none", noise=False)
    site.pages.clear()
    site.sitemap = None
    text_items_site(site, 2025)
    cache = tmp_path / "cache"
    spider = "tests/text_items_spider.py"
    first = run_crawl(site.url + "/", cache, runspider=spider)
    assert first.returncode == 0, first.stderr[-3000:]
    assert len(first.calls) == len(OWN)
    read = inputs(cache)
    assert read["/guide/install.html"] == f"# /guide/install.html\n\n{OWN['/guide/install.html']}"
    assert all("documentation portal" not in text for text in read.values())
    text_items_site(site, 2026)
    assert run_crawl(site.url + "/", cache, runspider=spider).calls == []


def test_a_recrawl_reads_the_text_of_the_page_that_changed_only(bsite, tmp_path):
    """The statistics kept between runs: an unchanged recrawl reads no page's text, one
    that edited a page reads that page's; the record and the inputs are those a full
    pass over the pages makes (``scrapy boilerplate`` changes no input)."""
    cache = tmp_path / "cache"
    first = run_crawl(bsite.url + "/", cache)
    assert first.returncode == 0, first.stderr[-2000:]
    assert "'boilerplate/texts_read': 8" in first.stderr  # the statistics made from every page
    unchanged = run_crawl(bsite.url + "/", cache)
    assert unchanged.returncode == 0, unchanged.stderr[-2000:]
    assert "boilerplate/texts_read" not in unchanged.stderr and unchanged.calls == []
    bsite.edit("/faq.html", "Frequently asked questions about licensing, support windows and the new LTS.")
    edited = run_crawl(bsite.url + "/", cache)
    assert edited.returncode == 0, edited.stderr[-2000:]
    assert "'boilerplate/texts_read': 1" in edited.stderr
    assert [c.replace(bsite.url, "") for c in edited.calls] == ["/faq.html"]
    assert "LTS" in inputs(cache)["/faq.html"] and "newsletter" not in inputs(cache)["/faq.html"]
    [record] = [json.loads(p.read_text()) for p in (cache / "boilerplate").glob("*.json")]
    assert (record["pages_analysed"], record["blocks_boilerplate"]) == (8, 3)
    full = json.loads(boilerplate_command(cache, "--json").stdout)["domains"][0]
    assert full["inputs_changed"] == 0  # a full pass cleans every page as the stored inputs are
