"""End-to-end: a page whose markup defeats the main-content selection is widened on
its first crawl, and said so: counted, flagged in its record, listed, in the summary."""

from __future__ import annotations

import json

from crawler.cache.sqlite import SqliteDocStore
from tests.crawl import assert_ok, cache_command, run_crawl, stat
from tests.site import Raw

PROSE = (
    "The scheduler keeps every queued job in a write-ahead log before it acknowledges the request.",
    "Workers lease jobs for a fixed interval and renew the lease while they run; a worker that stops "
    "renewing gives its jobs back to the queue.",
    "Retries back off exponentially with jitter, and a job that fails five times is parked in the "
    "dead-letter queue for a person to inspect.",
    "Priorities are strict between classes and fair within a class, so a flood of bulk jobs never "
    "starves the interactive ones.",
)
#: <main> holds a short intro and a toctree; the chapter's prose is in a sibling <div>
#: without a class name, outside <main>
DEFEATED = (
    "<html><head><title>Scheduler</title></head><body><nav><a href='/'>Home</a></nav>"
    "<main><h1>Scheduler</h1><p>This chapter describes the scheduler.</p><ul>"
    "<li><a href='/guide/'>Queues</a></li><li><a href='/api.html'>Leases</a></li></ul></main>"
    "<div>{prose}</div><footer>Copyright Example Corp</footer></body></html>"
)
#: the same chapter with its prose inside <main>
FIXED = DEFEATED.replace("</ul></main><div>{prose}</div>", "</ul>{prose}</main>")


def page(template):
    return template.format(prose="".join(f"<p>{text}</p>" for text in PROSE)).encode()


def record_and_input(cache, url):
    store = SqliteDocStore(cache, readonly=True)
    try:
        url_hash, record = store.find_page(url)
        extraction = store.read_extraction(url_hash)
    finally:
        store.close()
    return record, extraction["data"]["input"]


def test_a_page_that_defeats_the_selection_is_widened_counted_flagged_listed_and_summed_up(site, tmp_path):
    site.raw["/scheduler.html"] = Raw(page(DEFEATED), etag="v1")
    site.pages["/"].links.append("/scheduler.html")
    url = site.url + "/scheduler.html"
    cache = tmp_path / "cache"

    first = run_crawl(site.url + "/", cache)
    assert_ok(first)
    assert stat(first, "docs/selection_widened") == 1
    assert first.report["pages_widened"] == 1
    summary = "; 1 page widened (`scrapy cache ls --widened`)"
    assert summary in first.stderr
    assert [line for line in first.stderr.splitlines() if url in line and "INFO" in line] == []  # no line per page
    record, extracted = record_and_input(cache, url)
    since = record["selection_widened"]
    assert since == record["last_seen"]
    assert all(text in extracted for text in PROSE)  # the prose outside <main> is what the extractor read
    assert "Copyright Example Corp" not in extracted and "Home" not in extracted  # the chrome is not
    listed = [line for line in cache_command(cache, "ls", "--widened").splitlines() if site.url in line]
    assert [line.split()[-1] for line in listed] == [url]

    site.reset_log()
    again = run_crawl(site.url + "/", cache)  # a 304: the page's parse is reused, its flag kept
    assert_ok(again)
    assert site.requests_for("/scheduler.html") == [304]
    assert stat(again, "docs/parse_reused") >= 1 and stat(again, "docs/selection_widened") == 0
    assert again.report["pages_widened"] == 0 and "widened by the audit" not in again.stderr
    assert record_and_input(cache, url)[0]["selection_widened"] == since
    assert [row["url"] for row in json.loads(cache_command(cache, "ls", "--widened", "--json"))] == [url]

    site.raw["/scheduler.html"] = Raw(page(FIXED), etag="v2")  # the site moves its prose into <main>
    fixed = run_crawl(site.url + "/", cache)
    assert_ok(fixed)
    assert stat(fixed, "docs/selection_widened") == 0 and fixed.report["pages_widened"] == 0
    record, extracted = record_and_input(cache, url)
    assert "selection_widened" not in record and all(text in extracted for text in PROSE)
    assert "No page matches." in cache_command(cache, "ls", "--widened")
