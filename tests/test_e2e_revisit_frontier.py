"""End to end: the revisit schedule (``REVISIT_*``) in a shared-frontier run.

Three ``scrapy crawl docs`` processes of each run share the frontier (Redis) and the
store (PostgreSQL); ``scrapy process --run ID`` extracts once per run. The site lists
every page in its sitemap with a right lastmod. Counted at the site and with the
recording extractor: a learning run checks every page once and its host's lastmod
observations are recorded once per page (not once per process); the next run, the host
trusted, requests no page at all and calls no extractor, nothing removed; an edited
page, whichever process takes it, is the one page requested and extracted.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest

from crawler.cache.postgres import PostgresDocStore
from crawler.frontier.runstate import RunState
from tests.test_e2e_frontier import fetches, overlapping, served
from tests.test_e2e_run_processing import Shared

PAGES = 120
#: every page the sitemap lists: the generated pages, the home page, the guide
LISTED = [*(f"/p/{i}.html" for i in range(PAGES)), "/", "/guide/"]
REVISIT = {
    "REVISIT_ENABLED": "True",
    "REVISIT_MIN_INTERVAL": "0",  # every page due unless its host's lastmod is trusted
    "REVISIT_TRUST_EVIDENCE": str(len(LISTED)),  # trusted after one run of agreeing lastmods
    "REVISIT_SAMPLE": "0",
}


class RevisitShared(Shared):
    def settings(self, **more):
        return super().settings(**REVISIT, **more)

    def crawl(self, site, run, reap, workers=3):
        """A run whose sitemap waits until ``workers`` processes joined: they all take
        requests from the queue the sitemap fills."""
        state = RunState.from_url(self.redis_url, run)
        procs = overlapping(site, state, workers, lambda i: self.start_crawler(site, run, i, reap), path="/sitemap.xml")
        processed = self.process(run, "--wait", "60")
        assert processed.returncode == 0, processed.stderr[-3000:]
        return procs


@pytest.fixture
def listed_site():
    for site in served(PAGES):
        site.sitemap = list(LISTED)
        site.lastmod = "page"
        yield site


@pytest.fixture
def shared(tmp_path, postgres_dsn, redis_url):
    return RevisitShared(tmp_path, postgres_dsn, redis_url)


def listed_requested(site) -> Counter[str]:
    """The listed pages the site was asked for since its log was reset."""
    return Counter({path: n for path, n in fetches(site).items() if path in LISTED})


def host(site):
    """The site's domain as the cache names it (host and port)."""
    return site.url.split("//", 1)[1]


def host_trust(shared, site):
    store = PostgresDocStore(shared.dsn, readonly=True, create=False)
    try:
        record = store.get_domain(host(site))
    finally:
        store.close()
    return (record or {}).get("revisit")


def stat_in_log(proc, name) -> int:
    """A stat of one crawl process, from the stats Scrapy dumps at its close."""
    found = re.search(rf"'{re.escape(name)}': (\d+)", proc.log.read_text())
    return int(found.group(1)) if found else 0


def test_three_processes_skip_what_one_would_and_learn_once_per_page(listed_site, shared, reap):
    site = listed_site
    shared.crawl(site, "v1", reap)
    assert len(shared.calls_made()) == len(LISTED)  # (the redirects lead to listed pages)
    assert host_trust(shared, site) is None  # no lastmod to compare yet

    # learning: every listed page checked once, each a lastmod that agrees, counted once
    site.reset_log()
    shared.crawl(site, "v2", reap)
    assert listed_requested(site) == Counter(dict.fromkeys(LISTED, 1))
    assert shared.calls_made() == Counter()
    trust = host_trust(shared, site)
    assert trust is not None, "no lastmod observation recorded"
    assert (trust["agree"], trust["streak"], trust["noisy"], trust["stale"]) == (len(LISTED), len(LISTED), 0, 0)
    assert shared.report("v2")["revisit"]["lastmod_observations"] == {host(site): {"agree": len(LISTED)}}

    # trusted: not one listed page requested, by any process; nothing extracted or removed
    site.reset_log()
    procs = shared.crawl(site, "v3", reap)
    assert listed_requested(site) == Counter()
    assert shared.calls_made() == Counter()
    assert sum(stat_in_log(proc, "revisit/skipped/lastmod_unchanged") for proc in procs) == len(LISTED)
    report = shared.report("v3")
    assert (report["complete"], report["pages_removed"], report["pages_changed"]) == (True, 0, 0)
    assert report["pages_unchanged"] == len(LISTED)
    # the run's report adds up what the processes' schedules did
    assert report["revisit"]["requests_saved"] == len(LISTED)
    assert report["revisit"]["trusted_hosts"] == [host(site)]
    assert host_trust(shared, site)["agree"] == len(LISTED)  # a skipped page is no observation

    # an edit moves its page's lastmod: that page alone is requested, and extracted once
    site.edit("/p/42.html", "Page 42 was edited: its lastmod moved.")
    site.reset_log()
    shared.crawl(site, "v4", reap)
    assert listed_requested(site) == Counter({"/p/42.html": 1})
    assert shared.calls_made() == Counter({site.url + "/p/42.html": 1})
    report = shared.report("v4")
    assert (report["complete"], report["pages_removed"], report["pages_changed"]) == (True, 0, 1)
    assert report["revisit"]["requests_saved"] == len(LISTED) - 1

    # a faulty run: the sitemap fails, so no lastmod is known and every page is due
    # (REVISIT_MIN_INTERVAL=0), as one process decides; the run is partial, removes
    # nothing, and observes no lastmod
    site.sitemap_status = 500
    site.reset_log()
    shared.crawl(site, "v5", reap)
    assert listed_requested(site) == Counter(dict.fromkeys(LISTED, 1))
    assert shared.calls_made() == Counter()
    report = shared.report("v5")
    assert (report["complete"], report["pages_removed"]) == (False, 0)
    assert any("sitemap failed" in reason for reason in report["incomplete_reasons"])
    assert host_trust(shared, site)["agree"] == len(LISTED) + 1  # (v4's edited page agreed)
