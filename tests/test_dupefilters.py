from scrapy import Request
from scrapy.http import Response

from crawler.dupefilters import INCOMPLETE_REASON, RedirectAwareDupeFilter
from crawler.spiders.docs import DocsSpider

SITE = "https://docs.example.com"


def make(make_crawler):
    from crawler.cache import cache_for

    crawler = make_crawler(spidercls=DocsSpider)
    crawler.spider = DocsSpider.from_crawler(crawler, start_urls=f"{SITE}/")
    cache_for(crawler)
    return crawler, RedirectAwareDupeFilter.from_crawler(crawler)


def redirect(url, *chain):
    return Request(url, meta={"redirect_times": len(chain), "redirect_urls": list(chain)})


def schedule(df, crawler, request):
    """What Scrapy's scheduler does: drop a request seen before, and log it."""
    if df.request_seen(request):
        df.log(request, crawler.spider)
        return False
    return True


def respond(df, request):
    df.response_received(Response(request.url, request=request), request)


def test_redirects_to_pages_reached_are_ordinary_duplicates(make_crawler):
    from crawler.cache import peek_cache

    crawler, df = make(make_crawler)
    guide, old, older = Request(f"{SITE}/guide/"), Request(f"{SITE}/old"), Request(f"{SITE}/older")
    for request in (guide, old, older):
        assert schedule(df, crawler, request)
    # /older -> /old (dropped: requested), /old -> /guide/ (dropped), /guide/ answers later
    assert not schedule(df, crawler, redirect(f"{SITE}/old", f"{SITE}/older"))
    assert not schedule(df, crawler, redirect(f"{SITE}/guide/", f"{SITE}/old"))
    respond(df, guide)
    df.spider_idle()
    stats = crawler.stats
    assert stats.get_value("dupefilter/redirect_filtered") == 2
    assert stats.get_value("dupefilter/redirect_unreached") is None
    assert peek_cache(crawler).run.incomplete_reasons == []


def test_redirect_loops_make_the_run_partial(make_crawler, caplog):
    from crawler.cache import peek_cache

    crawler, df = make(make_crawler)
    # one request: /p/1 -> /p/1?r=1 -> /p/1; two requests: /x -> /y and /y -> /x
    assert schedule(df, crawler, Request(f"{SITE}/p/1"))
    assert schedule(df, crawler, redirect(f"{SITE}/p/1?r=1", f"{SITE}/p/1"))
    assert not schedule(df, crawler, redirect(f"{SITE}/p/1", f"{SITE}/p/1", f"{SITE}/p/1?r=1"))
    assert schedule(df, crawler, Request(f"{SITE}/x"))
    assert schedule(df, crawler, Request(f"{SITE}/y"))
    assert not schedule(df, crawler, redirect(f"{SITE}/y", f"{SITE}/x"))
    assert not schedule(df, crawler, redirect(f"{SITE}/x", f"{SITE}/y"))
    respond(df, Request(f"{SITE}/other"))
    df.spider_idle()
    assert crawler.stats.get_value("dupefilter/redirect_unreached") == 3
    assert peek_cache(crawler).run.incomplete_reasons == [INCOMPLETE_REASON]
    assert f"the redirect from {SITE}/p/1 to {SITE}/p/1 was dropped" in caplog.text
    df.spider_idle()  # reported once
    assert crawler.stats.get_value("dupefilter/redirect_unreached") == 3


def test_requests_seen_are_kept_in_a_job_directory(make_crawler, tmp_path):
    # (Scrapy's JOBDIR file, read back into the compact set by the next process)
    first = RedirectAwareDupeFilter(str(tmp_path))
    assert not first.request_seen(Request(f"{SITE}/guide/"))
    assert first.request_seen(Request(f"{SITE}/guide/"))
    first.close("finished")
    again = RedirectAwareDupeFilter(str(tmp_path))
    assert again.request_seen(Request(f"{SITE}/guide/"))
    assert not again.request_seen(Request(f"{SITE}/other"))
    assert len(again.seen) == 2 and again.unanswered == {again._fingerprint(Request(f"{SITE}/other"))}
    again.close("finished")
