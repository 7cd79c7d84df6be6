import re

import pytest
from scrapy.exceptions import NotConfigured

from crawler.extensions.progress import CrawlProgress, counts, progress_line
from tests.crawl import run_crawl


def test_the_line():
    assert progress_line(10, 10, 30.0, 9, 0) == (
        "Fetched 10 of 10 known requests (99%), 30/min, under a minute left for those; 9 pages recorded"
    )


def test_a_process_of_a_shared_run_counts_what_it_took():
    """A process of a shared-frontier run takes requests other processes queued: it
    dequeues more than it enqueued, and never says more than 99% while it runs."""
    stats = {"scheduler/enqueued": 55, "scheduler/dequeued": 81, "pages/new": 79}
    done, known, recorded, failed = counts(stats, in_flight=0)
    assert (done, known) == (81, 81)
    assert progress_line(done, known, 0.0, recorded, failed).startswith("Fetched 81 of 81 known requests (99%)")
    assert counts({"scheduler/enqueued": 10, "scheduler/dequeued": 4}, in_flight=2)[:2] == (2, 10)


def test_off_with_no_interval(make_crawler):
    with pytest.raises(NotConfigured):
        CrawlProgress.from_crawler(make_crawler({"LOGSTATS_INTERVAL": 0}))


@pytest.mark.e2e
def test_progress_lines_during_a_real_crawl(site, tmp_path):
    site.delay = 0.2  # a slow server: the crawl lasts longer than several intervals, however loaded
    settings = {"LOGSTATS_INTERVAL": "0.3", "CONCURRENT_REQUESTS_PER_DOMAIN": "1"}
    result = run_crawl(site.url + "/", tmp_path / "cache", settings=settings)
    assert result.returncode == 0, result.stderr[-2000:]
    lines = [line for line in result.stderr.splitlines() if "[crawler.extensions.progress]" in line]
    assert lines
    pattern = re.compile(
        r"Fetched \d+ of \d+ known requests \(\d+%\)(, [\d,]+/min, .* left for those)?; \d+ pages? recorded"
    )
    assert all(pattern.search(line) for line in lines), lines
    assert "scrapy.extensions.logstats" not in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert "[crawler.extensions.closing] INFO: run " in last  # the summary is the last line
    assert "WARNING" not in result.stderr  # no warning on a default crawl (VectorSyncStage off)


def test_the_share_never_goes_back_as_links_are_found():
    from crawler.extensions.progress import shown_share

    shown = 0
    said = []
    # (done, known) at each line: the known requests grow faster than the done ones
    for done, known in ((10, 20), (20, 60), (40, 90), (60, 225), (93, 225), (225, 225)):
        line = progress_line(done, known, 0.0, done, 0, shown)
        said.append(int(line.split("(")[1].split("%")[0]))
        shown = shown_share(done, known, shown)
    assert said == sorted(said) and said[0] == 50 and said[-1] == 99
