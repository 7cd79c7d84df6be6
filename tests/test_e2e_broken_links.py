"""End-to-end: a broken link (a 404 or 410 for a page the cache never had) is said with
the page that links to it, listed in the run report and counted in the summary line."""

from __future__ import annotations

from tests.crawl import assert_ok, run_crawl


def test_a_broken_link_is_logged_reported_and_counted_with_its_linking_page(site, tmp_path):
    site.pages["/guide/"].links.append("/getting-started/")
    cache = tmp_path / "cache"
    missing, guide = site.url + "/getting-started/", site.url + "/guide/"

    first = assert_ok(run_crawl(site.url + "/", cache))
    # one line a run, not one a link (the same links are found again every run)
    line = f"Broken link, not found (404/410 for a page never seen): {missing} (linked from {guide})"
    assert first.stderr.count(line) == 1
    report = first.report
    assert report["links_broken"] == 1
    assert report["broken_links"] == [{"url": missing, "status": 404, "linked_from": guide}]
    assert "0 errors; 1 broken link" in first.stderr

    # an unchanged recrawl reuses the guide's links (a 304): the link is still named by its page
    again = assert_ok(run_crawl(site.url + "/", cache))
    assert again.report["pages_unchanged"] == 6
    assert again.report["broken_links"] == [{"url": missing, "status": 404, "linked_from": guide}]
    assert site.requests_for("/getting-started/") == [404, 404]  # asked again: it may be there now

    site.page("/getting-started/", "Getting started", "Install it, then run it.")  # the page comes
    fixed = assert_ok(run_crawl(site.url + "/", cache))
    assert (fixed.report["pages_new"], fixed.report["links_broken"], fixed.report["broken_links"]) == (1, 0, [])
    assert "broken link" not in fixed.stderr


def test_a_page_gone_is_no_broken_link(site, tmp_path):
    cache = tmp_path / "cache"
    assert_ok(run_crawl(site.url + "/", cache))
    site.remove("/api.html")  # still linked from the home page: gone, not a broken link
    second = assert_ok(run_crawl(site.url + "/", cache))
    assert f"Gone (404): {site.url}/api.html" in second.stderr
    assert (second.report["pages_removed"], second.report["links_broken"], second.report["broken_links"]) == (1, 0, [])


def test_a_start_url_that_is_not_found_is_no_broken_link_but_makes_the_run_partial(site, tmp_path):
    missing = site.url + "/nope/"
    result = assert_ok(run_crawl(f"{site.url}/,{missing}", tmp_path / "cache"))
    assert f"Start page {missing} answered 404 Not Found" in result.stderr
    assert (result.report["broken_links"], result.report["start_failed"]) == ([], {missing: "answered 404 Not Found"})
    # the pages only it links to are not reached: no page is marked removed this run
    assert result.report["complete"] is False and "failed" not in result.report
    assert result.report["incomplete_reasons"] == [f"start page {missing} answered 404 Not Found"]


def test_a_broken_link_held_for_max_pages_is_named_with_its_linking_page(site, tmp_path):
    """max_pages=2: the home page and its first link fill the budget, the other links
    are held; the first link is a 404, so the held ones are requested once the crawl is
    idle, the second broken link among them: it is still named with the home page."""
    site.pages.clear()
    site.sitemap = None
    site.page("/", "Home", "The home page.", links=["/gone-1.html", "/missing-2.html", "/p1.html"])
    site.page("/p1.html", "One", "The first page.")
    result = assert_ok(run_crawl(site.url + "/", tmp_path / "cache", args={"max_pages": "2"}))
    home = site.url + "/"
    assert result.report["broken_links"] == [
        {"url": site.url + "/gone-1.html", "status": 404, "linked_from": home},
        {"url": site.url + "/missing-2.html", "status": 404, "linked_from": home},
    ]
    line = (
        f"2 broken links, not found (404/410 for a page never seen): {site.url}/gone-1.html (linked from {home}), "
        f"{site.url}/missing-2.html (linked from {home})"
    )
    assert line in result.stderr
    assert result.report["pages_new"] == 2


def test_two_spellings_of_one_missing_page_are_one_broken_link(site, tmp_path):
    # /user-guide/theme/ and /user-guide/theme are one page by identity: one broken link,
    # as a shared run (whose queue asks for one of them) counts it
    site.pages["/guide/"].links += ["/user-guide/theme/", "/user-guide/theme"]
    result = assert_ok(run_crawl(site.url + "/", tmp_path / "cache"))
    assert result.report["links_broken"] == 1 and len(result.report["broken_links"]) == 1
    assert result.stderr.count("Broken link, not found (404/410 for a page never seen)") == 1
