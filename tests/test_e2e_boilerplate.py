"""End-to-end: domain boilerplate is kept from the extractor, from the first crawl on."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.crawl import ROOT, crawl_env, run_crawl, scrapy_command
from tests.site import docs_site

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
