"""NonHtmlStop: a page request answered with a declared non-HTML type is stopped at its
headers (issue 26); the docs spider counts it."""

import asyncio

import pytest
from scrapy import Request, signals
from scrapy.exceptions import StopDownload
from scrapy.http import Headers, Response

from crawler.spiders.docs import DocsSpider
from crawler.spiders.nonhtml import NonHtmlStop

SITE = "https://docs.example.com"


def page(url=f"{SITE}/files/schema.json"):
    return Request(url, meta={"docs_depth": 1})


def stopped(crawler, request, content_type):
    """Whether a handler of ``headers_received`` (as Scrapy 2.19's HTTP/1.1 handler sends
    it) stopped the download, and how."""
    headers = Headers({"Content-Type": content_type} if content_type is not None else {})
    results = crawler.signals.send_catch_log(
        signal=signals.headers_received, headers=headers, body_length=2048, request=request, spider=crawler.spider
    )
    stops = [
        result.value for _, result in results if hasattr(result, "value") and isinstance(result.value, StopDownload)
    ]
    assert all(stop.fail is False for stop in stops)  # the response goes on to the spider
    return bool(stops)


@pytest.fixture
def crawler(make_component):
    crawler, stop = make_component(NonHtmlStop, {"EXTENSIONS": {}})
    crawler.non_html_stop = stop  # kept, as the spider keeps it: the signal holds it weakly
    return crawler


@pytest.mark.parametrize(
    "content_type",
    ["application/json", "application/octet-stream", "text/plain; charset=utf-8", "application/x-yaml", "image/png"],
)
def test_a_page_request_declared_not_html_is_stopped(crawler, content_type):
    assert stopped(crawler, page(), content_type)


@pytest.mark.parametrize("content_type", [None, "", "text/html", "Text/HTML; charset=utf-8", "application/xhtml+xml"])
def test_html_or_no_content_type_is_read_in_full(crawler, content_type):
    assert not stopped(crawler, page(), content_type)


@pytest.mark.parametrize(
    "request_",
    [
        Request(f"{SITE}/robots.txt"),
        Request(f"{SITE}/sitemap.xml.gz", meta={"download_maxsize": 50 * 1024 * 1024}),
        Request(f"{SITE}/_static/site.css", meta={"dont_revalidate": True}),
    ],
    ids=["robots", "sitemap", "stylesheet"],
)
def test_requests_other_than_pages_are_read_in_full(crawler, request_):
    assert not stopped(crawler, request_, "application/octet-stream")


def test_the_docs_spider_builds_it_and_counts_a_stopped_response(make_crawler):
    crawler = make_crawler(spidercls=DocsSpider)
    spider = DocsSpider.from_crawler(crawler, start_urls=f"{SITE}/")
    crawler.spider = spider
    assert isinstance(spider.non_html_stop, NonHtmlStop)
    assert stopped(crawler, page(), "application/json")
    assert not stopped(crawler, page(), "text/html")
    request = page()
    response = Response(
        request.url,
        headers={"Content-Type": "application/json", "Content-Length": "2097152"},
        request=request,
        flags=["download_stopped"],
    )

    async def outputs():
        return [output async for output in spider.parse(response)]

    assert asyncio.run(outputs()) == []
    stats = crawler.stats
    assert stats.get_value("docs/non_html_skipped") == stats.get_value("docs/non_html_stopped") == 1
    assert stats.get_value("docs/non_html_bytes_not_downloaded") == 2097152
