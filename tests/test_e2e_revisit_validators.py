"""End-to-end: a host's HTTP validators (``ETag``, ``Last-Modified``) earn or lose the
revisit schedule's trust as the content hash proves them right or wrong: an ETag that
hides edits behind 304s is caught by the sample and no longer sent to its host; a
Last-Modified that is always "now" is found noisy and costs no extraction."""

from __future__ import annotations

from tests.crawl import cache_command, stat
from tests.test_e2e_revisit import PAGES, crawl, host, pages_requested


def paths(site, result):
    return [url.replace(site.url, "") for url in result.calls]


def statuses(site):
    return sorted({status for path, status in site.log if path in PAGES})


def test_an_etag_that_hides_an_edit_is_caught_by_the_sample_and_no_longer_believed(make_site, tmp_path):
    site, cache = make_site("etag-constant"), tmp_path / "cache"
    site.sitemap = list(PAGES)
    assert len(crawl(site, cache).calls) == len(PAGES)

    site.edit("/api.html", "The API has two functions, run() and stop().")
    hidden = crawl(site, cache)  # every page asked for, each answered 304: the edit is missed
    assert pages_requested(site) == PAGES and statuses(site) == [304]
    assert hidden.calls == [] and hidden.report["pages_changed"] == 0
    assert hidden.report["revisit"]["signals"][host(site)]["etag"]["state"] == "unknown"

    sampled = crawl(site, cache, REVISIT_SAMPLE="1")  # every conditional request sent without validators
    assert stat(sampled, "revisit/unconditional/sampled") == len(PAGES) and statuses(site) == [200]
    assert paths(site, sampled) == ["/api.html"]  # found the run after it was hidden, extracted once
    revisit = sampled.report["revisit"]
    assert revisit["validator_observations"] == {host(site): {"etag": {"agree": len(PAGES) - 1, "stale": 1}}}
    etag = revisit["signals"][host(site)]["etag"]
    assert (etag["state"], etag["stale"]) == ("distrusted", 1)
    assert "ETag not believed on 1 host" in sampled.stderr

    site.edit("/guide/usage.html", "Call example.run() with a config file or a dict.")
    distrusted = crawl(site, cache)  # no sample: the host's ETag is not sent at all
    assert stat(distrusted, "revisit/unconditional/distrusted") == len(PAGES)
    assert pages_requested(site) == PAGES and statuses(site) == [200]
    assert paths(site, distrusted) == ["/guide/usage.html"] and distrusted.report["pages_changed"] == 1
    assert distrusted.report["revisit"]["signals"][host(site)]["etag"]["state"] == "distrusted"

    stats = cache_command(cache, "stats")
    assert "Change signals" in stats and "distrusted (10/0/2)" in stats  # (the second edit: stale again)
    unchanged = crawl(site, cache)
    assert unchanged.calls == [] and unchanged.report["pages_unchanged"] == len(PAGES)


def test_a_last_modified_that_is_always_now_is_noisy_and_extracts_nothing(make_site, tmp_path):
    site, cache = make_site("last-modified-now"), tmp_path / "cache"
    site.sitemap = list(PAGES)
    assert len(crawl(site, cache).calls) == len(PAGES)
    for _ in range(2):
        again = crawl(site, cache)  # each page's Last-Modified later than the one stored, no page changed
        assert pages_requested(site) == PAGES and statuses(site) == [200]
        assert again.calls == [] and again.report["pages_unchanged"] == len(PAGES)
    signal = again.report["revisit"]["signals"][host(site)]["last_modified"]
    assert (signal["state"], signal["noisy"], signal["stale"]) == ("noisy", 2 * len(PAGES), 0)
    # the pages were found unchanged: their schedule waits, whatever Last-Modified says
    waiting = crawl(site, cache, REVISIT_MIN_INTERVAL="1")
    assert pages_requested(site) == [] and stat(waiting, "revisit/skipped/interval") == len(PAGES)
    assert "noisy (0/12/0)" in cache_command(cache, "stats")
