"""End-to-end: the revisit schedule (``REVISIT_*``) requests a known page only when
its trusted signal moved or its interval elapsed, learns per host whether the
sitemap's lastmod can be trusted, and measures what it skips."""

from __future__ import annotations

import pytest

from tests.crawl import assert_ok, cache_command, run_crawl, stat

PAGES = sorted(["/", "/guide/", "/guide/install.html", "/guide/usage.html", "/api.html", "/hidden.html"])
DISCOVERY = ("/robots.txt", "/sitemap.xml")
#: every known page due at once unless its lastmod is trusted; trusted after one
#: recrawl of the six pages agreeing (the first crawl has no lastmod to compare)
LEARNING = {
    "REVISIT_ENABLED": "True",
    "REVISIT_MIN_INTERVAL": "0",
    "REVISIT_TRUST_EVIDENCE": str(len(PAGES)),
    "REVISIT_SAMPLE": "0",
}


@pytest.fixture
def listed_site(make_site):
    site = make_site()
    site.sitemap = list(PAGES)
    return site


def host(site):
    """The site's domain as the cache names it (host and port)."""
    return site.url.split("//", 1)[1]


def pages_requested(site):
    return sorted(path for path, _ in site.log if path not in DISCOVERY)


def crawl(site, cache, args=None, **settings):
    site.reset_log()
    return assert_ok(run_crawl(site.url + "/", cache, settings={**LEARNING, **settings}, args=args))


def test_a_host_whose_lastmod_is_right_is_trusted_and_an_unchanged_recrawl_sends_only_the_sample(listed_site, tmp_path):
    site, cache = listed_site, tmp_path / "cache"
    site.lastmod = "page"
    first = crawl(site, cache)
    assert len(first.calls) == len(PAGES) and first.report["revisit"]["trusted_hosts"] == []
    learning = crawl(site, cache)  # every page checked: six lastmods that agree
    assert pages_requested(site) == PAGES and learning.calls == []
    assert learning.report["revisit"]["lastmod_observations"] == {host(site): {"agree": len(PAGES)}}
    assert learning.report["revisit"]["trusted_hosts"] == [host(site)]

    trusted = crawl(site, cache)
    assert pages_requested(site) == []  # not one page asked for: the sitemap said it all
    assert trusted.calls == [] and stat(trusted, "revisit/skipped/lastmod_unchanged") == len(PAGES)
    report = trusted.report
    assert report["revisit"]["requests_saved"] == len(PAGES)
    assert (report["pages_unchanged"], report["pages_removed"], report["complete"]) == (len(PAGES), 0, True)
    assert stat(trusted, "docs/parse_reused") == len(PAGES)  # the stored links followed
    assert "6 pages not requested by their revisit schedule" in trusted.stderr
    assert "lastmod trusted on 1 host" in trusted.stderr
    assert "Revisit schedule, last run: 6 pages not requested" in cache_command(cache, "stats")

    # the verification sample: a share of the skipped pages requested anyway
    sampled = crawl(site, cache, REVISIT_SAMPLE="0.5")
    assert len(pages_requested(site)) == sampled.report["revisit"]["sampled"]
    assert sampled.report["revisit"]["requests_saved"] == len(PAGES) - sampled.report["revisit"]["sampled"]
    assert sampled.report["revisit"]["sampled_changed"] == 0 and sampled.calls == []

    # an edit moves its page's lastmod: that page alone is requested, and extracted
    site.edit("/guide/usage.html", "Call example.run() with a config file or a dict.")
    edited = crawl(site, cache)
    assert pages_requested(site) == ["/guide/usage.html"]
    assert [url.replace(site.url, "") for url in edited.calls] == ["/guide/usage.html"]
    assert edited.report["pages_changed"] == 1


def test_a_host_whose_lastmod_is_the_build_date_is_never_trusted(listed_site, tmp_path):
    site, cache = listed_site, tmp_path / "cache"
    for build in ("2026-11-20", "2026-11-21", "2026-11-22", "2026-11-23"):
        site.lastmod = build  # every page's lastmod moves at every build, no text does
        result = crawl(site, cache)
        assert pages_requested(site) == PAGES
        assert result.report["revisit"]["trusted_hosts"] == []
    assert result.report["revisit"]["lastmod_observations"] == {host(site): {"noisy": len(PAGES)}}
    # and a lastmod that stays put proves nothing either: every page still checked
    crawl(site, cache)
    assert pages_requested(site) == PAGES


def test_a_change_the_lastmod_did_not_show_is_caught_by_the_sample_and_trust_starts_over(listed_site, tmp_path):
    site, cache = listed_site, tmp_path / "cache"
    site.lastmod = "page"
    crawl(site, cache)
    assert crawl(site, cache).report["revisit"]["trusted_hosts"] == [host(site)]
    page = site.pages["/api.html"]
    modified = page.modified
    site.edit("/api.html", "The API has two functions, run() and stop().")
    site.pages["/api.html"].modified = modified  # the text changed, its lastmod did not
    caught = crawl(site, cache, REVISIT_SAMPLE="1")
    revisit = caught.report["revisit"]
    assert (revisit["sampled"], revisit["sampled_changed"], revisit["miss_rate"]) == (len(PAGES), 1, round(1 / 6, 4))
    assert [url.replace(site.url, "") for url in caught.calls] == ["/api.html"]
    assert revisit["trusted_hosts"] == []  # a stale lastmod: trust is earned again


def test_off_by_its_setting_or_every_page_downloaded_again_for_one_run(listed_site, tmp_path):
    site, cache = listed_site, tmp_path / "cache"
    site.lastmod = "page"
    crawl(site, cache)
    crawl(site, cache)
    crawl(site, cache, {"redo": "download"})
    assert pages_requested(site) == PAGES
    crawl(site, cache, REVISIT_ENABLED="False")
    assert pages_requested(site) == PAGES
    crawl(site, cache)
    assert pages_requested(site) == []


def test_pages_wait_their_interval_and_a_page_never_checked_is_requested(listed_site, tmp_path):
    site, cache = listed_site, tmp_path / "cache"
    crawl(site, cache)  # no lastmod at all: the intervals decide
    waiting = crawl(site, cache, REVISIT_MIN_INTERVAL="1")
    assert pages_requested(site) == []  # checked less than a day ago
    assert stat(waiting, "revisit/skipped/interval") == len(PAGES)
    site.page("/new.html", "New", "A page the home page now links to.")
    site.pages["/"].links.append("/new.html")
    # the home page's change is not seen for a day; a page listed in the sitemap is
    site.sitemap.append("/new.html")
    found = crawl(site, cache, REVISIT_MIN_INTERVAL="1")
    assert pages_requested(site) == ["/new.html"]
    assert [url.replace(site.url, "") for url in found.calls] == ["/new.html"]


def test_a_page_found_gone_is_never_brought_back_from_its_stored_response(listed_site, tmp_path):
    site, cache = listed_site, tmp_path / "cache"
    crawl(site, cache)
    site.remove("/api.html")  # gone; the home page still links to it
    found = crawl(site, cache, REVISIT_MIN_INTERVAL="1", REVISIT_SAMPLE="1")
    assert found.report["pages_removed"] == 1
    again = crawl(site, cache, REVISIT_MIN_INTERVAL="1")
    assert site.requests_for("/api.html") == [404]  # asked for again, not replayed
    assert again.report["pages_unchanged"] == len(PAGES) - 1
    assert "/api.html" not in cache_command(cache, "ls", "--status", "unchanged")


def test_a_known_broken_link_waits_its_interval_and_is_still_reported(listed_site, tmp_path):
    site, cache = listed_site, tmp_path / "cache"
    site.pages["/guide/"].links.append("/guide/missing.html")
    missing, guide = site.url + "/guide/missing.html", site.url + "/guide/"
    first = crawl(site, cache)
    assert site.requests_for("/guide/missing.html") == [404]
    assert first.report["broken_links"] == [{"url": missing, "status": 404, "linked_from": guide}]

    waiting = crawl(site, cache, REVISIT_MIN_INTERVAL="1")
    assert pages_requested(site) == []  # not one request: the pages and the broken link wait
    report = waiting.report
    assert report["broken_links"] == first.report["broken_links"] and report["links_broken"] == 1  # still broken
    assert report["revisit"]["broken_links_not_rechecked"] == 1
    assert stat(waiting, "revisit/broken_link_skipped") == 1
    assert f"Broken link, not found (404/410 for a page never seen): {missing}" in waiting.stderr
    assert "1 known broken link not asked for again" in waiting.stderr

    due = crawl(site, cache)  # its interval elapsed (0 days): asked for again
    assert site.requests_for("/guide/missing.html") == [404]
    assert stat(due, "revisit/broken_link_requested/due") == 1 and due.report["links_broken"] == 1

    # the page is written: found when the link is next checked (the sample here), a page
    site.page("/guide/missing.html", "Written", "This page exists now, and says so.")
    found = crawl(site, cache, REVISIT_MIN_INTERVAL="1", REVISIT_SAMPLE="1")
    assert site.requests_for("/guide/missing.html") == [200]
    assert (found.report["pages_new"], found.report["links_broken"], len(found.calls)) == (1, 0, 1)


def test_a_known_broken_link_a_sitemap_lists_or_a_start_url_is_asked_for(listed_site, tmp_path):
    site, cache = listed_site, tmp_path / "cache"
    site.lastmod = "page"
    site.pages["/guide/"].links.append("/guide/new.html")  # linked before it is written
    crawl(site, cache)
    assert site.requests_for("/guide/new.html") == [404]
    site.page("/guide/new.html", "New", "A page written since, and listed in the sitemap now.")
    site.sitemap = [*PAGES, "/guide/new.html"]
    listed = crawl(site, cache, REVISIT_MIN_INTERVAL="1")
    assert site.requests_for("/guide/new.html") == [200]  # the listing says it may be a page
    assert (listed.report["pages_new"], listed.report["links_broken"], len(listed.calls)) == (1, 0, 1)

    site.reset_log()
    run_crawl(site.url + "/v2/", cache, settings=LEARNING)  # a start URL not written yet
    assert site.requests_for("/v2/") == [404]
    site.page("/v2/", "Version 2", "The documentation of version 2.")
    site.reset_log()
    run_crawl(site.url + "/v2/", cache, settings={**LEARNING, "REVISIT_MIN_INTERVAL": "1"})
    assert site.requests_for("/v2/") == [200]  # a start URL is always asked for


def test_a_changed_run_asks_for_the_known_broken_links_it_replayed_before_removing(make_site, tmp_path):
    """A page reached before only through links a change removed, and now through a link
    known as broken (a new hub page), is reached: not marked removed."""
    site, cache = make_site(), tmp_path / "cache"
    site.sitemap = ["/", "/hidden.html"]
    site.lastmod = "page"
    site.pages["/"].links.append("/hub.html")
    crawl(site, cache)
    assert site.requests_for("/hub.html") == [404]
    unchanged = crawl(site, cache, REVISIT_MIN_INTERVAL="1")
    assert pages_requested(site) == [] and stat(unchanged, "revisit/broken_link_skipped") == 1
    # the site reorganised: the hub is written and the home page reaches the guide through it only
    site.page("/hub.html", "Hub", "All the guides.", links=["/guide/"])
    site.page("/", "Home", "Welcome to the documentation, now with a hub.", links=["/hub.html", "/api.html"])
    changed = crawl(site, cache, REVISIT_MIN_INTERVAL="1")
    assert site.requests_for("/hub.html") == [200]  # replayed first, asked for once the home page changed
    assert stat(changed, "revisit/broken_link_requested/recheck") == 1
    assert not stat(changed, "revisit/broken_link_skipped")  # (counted when replayed, taken back)
    assert changed.report["revisit"]["broken_links_not_rechecked"] == 0
    report = changed.report
    assert (report["complete"], report["pages_removed"], report["pages_new"], report["links_broken"]) == (True, 0, 1, 0)


def test_a_page_the_sitemap_no_longer_lists_reached_through_a_known_broken_link_stays(make_site, tmp_path):
    """No page of the site changed, but one is reached now only through a link known as
    broken: the replayed link is asked for before the run ends."""
    site, cache = make_site(), tmp_path / "cache"
    site.sitemap = ["/", "/hidden.html"]
    site.pages["/"].links.append("/hub.html")
    crawl(site, cache)
    site.page("/hub.html", "Hub", "All the guides.", links=["/hidden.html"])
    site.sitemap = ["/"]  # the hidden page is listed no more: the new hub links it
    second = crawl(site, cache, REVISIT_MIN_INTERVAL="1")
    assert site.requests_for("/hub.html") == [200] and stat(second, "revisit/broken_link_requested/recheck") == 1
    report = second.report
    assert (report["complete"], report["pages_removed"], report["pages_new"], report["links_broken"]) == (True, 0, 1, 0)
    assert "Known broken link answered after all" in second.stderr


def test_an_index_file_spelling_is_decided_as_its_directory_page(listed_site, tmp_path):
    site, cache = listed_site, tmp_path / "cache"
    site.sitemap = [path for path in PAGES if path != "/guide/"] + ["/guide/index.html"]
    crawl(site, cache)
    crawl(site, cache, REVISIT_MIN_INTERVAL="1")
    assert pages_requested(site) == []  # both spellings of the guide skipped alike
    site.edit("/guide/", "The guide now explains installation, usage and upgrades.")
    edited = crawl(site, cache, {"redo": "download"}, REVISIT_MIN_INTERVAL="1")
    assert (edited.report["pages_changed"], edited.report["pages_new"]) == (1, 0)  # one page, not split


def test_only_a_request_is_a_check_and_a_new_converter_is_no_change_of_the_site(listed_site, tmp_path):
    site, cache = listed_site, tmp_path / "cache"
    site.lastmod = "page"
    crawl(site, cache)
    replayed = crawl(site, cache, REVISIT_MIN_INTERVAL="1")  # nothing asked for
    assert pages_requested(site) == [] and replayed.report["revisit"]["lastmod_observations"] == {}
    assert replayed.report["revisit"]["trusted_hosts"] == []
    assert crawl(site, cache).report["revisit"]["trusted_hosts"] == [host(site)]
    upgraded = crawl(site, cache, MARKDOWN_LINKS="urls", CONVERTER_UPGRADE="apply", REVISIT_SAMPLE="1")
    revisit = upgraded.report["revisit"]
    assert (revisit["sampled"], revisit["sampled_changed"]) == (len(PAGES), 0)
    assert revisit["trusted_hosts"] == [host(site)]


def test_a_sitemap_the_server_fails_makes_the_run_partial(listed_site, tmp_path):
    site, cache = listed_site, tmp_path / "cache"
    crawl(site, cache)
    site.sitemap_status = 501  # a server error no retry helps
    for settings in ({}, {"REVISIT_ENABLED": "False"}):
        failed = crawl(site, cache, **settings)
        assert failed.report["complete"] is False and failed.report["pages_removed"] == 0
        assert stat(failed, "docs/sitemap_failed") == 1


def spelt_both_ways(site):
    """The guide linked as ``/guide/`` (the home page, the sitemap) and as
    ``/guide/index.html`` (its own pages): one page, two spellings."""
    for path in ("/guide/install.html", "/guide/usage.html"):
        site.pages[path].links = ["/guide/index.html"]
    return site


@pytest.mark.parametrize("revisit", ["True", "False"])
def test_a_page_linked_under_two_spellings_is_requested_once_a_run(listed_site, tmp_path, revisit):
    site, cache = spelt_both_ways(listed_site), tmp_path / "cache"
    site.lastmod = "page"
    crawl(site, cache, REVISIT_ENABLED=revisit)
    for _ in range(2):
        again = crawl(site, cache, REVISIT_ENABLED=revisit, REVISIT_MIN_INTERVAL="0")
        assert site.requests_for("/guide/index.html") == []  # known to be /guide/: never asked for
        assert len(site.log) <= len(PAGES) + len(DISCOVERY)
        assert (again.report["pages_new"], again.report["pages_removed"], again.calls) == (0, 0, [])


def test_a_page_linked_under_two_spellings_is_never_marked_removed_by_the_revisit_schedule(listed_site, tmp_path):
    site, cache = spelt_both_ways(listed_site), tmp_path / "cache"
    site.lastmod = "page"
    crawl(site, cache)
    assert crawl(site, cache).report["revisit"]["trusted_hosts"] == [host(site)]
    site.edit("/guide/", "The guide now explains installation, usage and upgrades.")
    edited = crawl(site, cache)
    assert pages_requested(site) == ["/guide/"]
    assert [url.replace(site.url, "") for url in edited.calls] == ["/guide/"]
    assert (edited.report["pages_changed"], edited.report["pages_new"], edited.report["pages_removed"]) == (1, 0, 0)
    for _ in range(2):
        unchanged = crawl(site, cache)
        report = unchanged.report
        assert (report["pages_new"], report["pages_changed"], report["pages_removed"]) == (0, 0, 0)
        assert unchanged.calls == [] and report["complete"] is True
    listed = cache_command(cache, "show", site.url + "/guide/index.html")
    assert "upgrades" in listed  # the spelling is the page: its text the new one
