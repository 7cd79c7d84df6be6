"""The docs spider's scope: a crawl stays under the path of each start URL
(crawler.spiders.scope), widened by ``-a scope=site`` or replaced by ``-a include``."""

import asyncio
import logging

import pytest
from scrapy import Request
from scrapy.exceptions import IgnoreRequest
from scrapy.http import HtmlResponse, XmlResponse

from crawler.cache import cache_for
from crawler.cache.sqlite import SqliteDocStore
from crawler.identity import page_key
from crawler.incremental.spiderport import _first_recorded
from crawler.lib.urls import canonical_url
from crawler.spiders.docs import DocsSpider
from crawler.spiders.scope import PathScope, scope_path

SITE = "https://docs.example.com"
LINKS = ["/en/", "/en", "/en/guide/a.html", "/english/", "/docs/x.html", "/", "/de/guide/"]
PAGE = (
    "<html><head><title>Guide</title></head><body><main><h1>Guide</h1><p>Text</p>"
    + "".join(f"<a href='{link}'>{link}</a>" for link in LINKS)
    + "<a href='https://elsewhere.org/en/x'>offsite</a></main></body></html>"
).encode()


@pytest.mark.parametrize(
    ("start", "inside", "outside"),
    [
        ("/en/", ["/en", "/en/", "/en/a/b.html", "/en/?q=1"], ["/", "/english/", "/docs/", "/EN/"]),
        ("/en/index.html", ["/en", "/en/", "/en/intro.html"], ["/", "/english"]),
        ("/en", ["/en", "/en/", "/en/x"], ["/english", "/enx/"]),
        ("/en/intro.html", ["/en/", "/en/other.html"], ["/", "/docs/"]),
        ("/docs/intro", ["/docs/intro", "/docs/intro/step-1"], ["/docs/", "/docs/install", "/docs/intro.html"]),
        ("/", ["/", "/en/", "/docs/x.html", "/index.html"], []),
        ("", ["/", "/anything/at/all"], []),
        ("/index.php", ["/", "/en/"], []),
        ("/über/", ["/%C3%BCber/x", "/%c3%bcber/y", "/über/z"], ["/uber/"]),
    ],
)
def test_the_scope_of_a_start_url(start, inside, outside):
    scope = PathScope([f"{SITE}{start}"])
    assert [path for path in inside if not scope.admits(f"{SITE}{path}")] == []
    assert [path for path in outside if scope.admits(f"{SITE}{path}")] == []


def test_several_start_urls_are_the_union_by_host():
    scope = PathScope([f"{SITE}/en/", f"{SITE}/fr/index.html", "https://blog.example.org/"])
    assert [scope_path(url) for url in (f"{SITE}/en/", f"{SITE}/fr/index.html")] == ["/en", "/fr"]
    assert scope.admits(f"{SITE}/fr/guide/") and scope.admits(f"{SITE}/en/guide/")
    assert not scope.admits(f"{SITE}/de/guide/")
    assert scope.admits("http://docs.example.com:8080/en/x")  # the scheme and the port do not count
    assert scope.admits("https://api.docs.example.com/en/x") and not scope.admits("https://api.docs.example.com/")
    assert scope.admits("https://blog.example.org/2026/11/post")  # a start URL at the root: its whole host
    assert scope.admits("https://cdn.example.net/any")  # no start URL's host: allowed_domains decide
    assert str(scope) == "docs.example.com/en, docs.example.com/fr, blog.example.org/"


@pytest.fixture
def spider(make_crawler):
    """``spider(start, settings, **args)``: a docs spider on a crawler of its own (the
    first one a test makes has the cache)."""
    made = []

    def factory(start=f"{SITE}/en/", settings=None, **args):
        crawler = make_crawler(settings, spidercls=DocsSpider, cache=not made)
        made.append(crawler)
        return DocsSpider.from_crawler(crawler, start_urls=start, **args)

    return factory


def html(url, depth=0, **meta):
    request = Request(url, meta={"docs_depth": depth, **meta})
    return HtmlResponse(url, body=PAGE, request=request, headers={"Content-Type": "text/html; charset=utf-8"})


def followed(s, response):
    """The URLs of the requests ``s.parse(response)`` yields."""

    async def outputs():
        return [output async for output in s.parse(response)]

    return sorted(r.url for r in asyncio.run(outputs()) if isinstance(r, Request))


def stat(s, name):
    return s.crawler.stats.get_value(name)


def test_links_outside_the_start_url_s_path_are_counted_not_followed_and_leave_the_run_complete(spider):
    s = spider()
    assert followed(s, html(f"{SITE}/en/")) == [f"{SITE}/en", f"{SITE}/en/", f"{SITE}/en/guide/a.html"]
    assert stat(s, "docs/out_of_scope") == 4  # /english/, /docs/x.html, /, /de/guide/: not the offsite one
    followed(s, html(f"{SITE}/en/guide/a.html", depth=1))  # the same links again: counted once
    assert stat(s, "docs/out_of_scope") == 4
    assert cache_for(s.crawler).run.incomplete_reasons == []
    assert s.in_crawl_scope(f"{SITE}/en/guide/b.html") and not s.in_crawl_scope(f"{SITE}/docs/x.html")


def test_scope_site_crawls_the_whole_site(spider):
    s = spider(scope="site")
    assert len(followed(s, html(f"{SITE}/en/"))) == len(LINKS)
    assert stat(s, "docs/out_of_scope") is None and s.in_crawl_scope(f"{SITE}/docs/x.html")


def test_include_replaces_the_path_scope_and_exclude_narrows_it(spider):
    included = spider(include="/docs/,/de/")
    assert followed(included, html(f"{SITE}/en/")) == [f"{SITE}/de/guide/", f"{SITE}/docs/x.html"]
    both = spider(include="/docs/,/de/", scope="path")  # asked for: both apply
    assert followed(both, html(f"{SITE}/en/")) == []
    excluded = spider(exclude="/guide/")
    assert followed(excluded, html(f"{SITE}/en/")) == [f"{SITE}/en", f"{SITE}/en/"]
    assert stat(excluded, "docs/out_of_scope") == 4  # (an excluded link is no scope's)


def test_a_wrong_scope_is_one_clear_error(spider):
    with pytest.raises(ValueError, match=r"^Spider argument scope must be path or site, got 'sites'$"):
        spider(scope="sites")
    assert spider(scope="SITE").path_scope is None


def test_a_sitemap_s_entries_outside_the_path_are_not_requested(spider):
    s = spider()
    urlset = (
        '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        + "".join(f"<url><loc>{SITE}{path}</loc></url>" for path in ("/en/a.html", "/docs/b.html", "/"))
        + "</urlset>"
    ).encode()
    assert list(s.parse_sitemap(XmlResponse(f"{SITE}/sitemap.xml", body=urlset))) == []  # (they wait)
    assert [r.url for r in s.listed_requests()] == [f"{SITE}/en/a.html"]
    assert (stat(s, "docs/sitemap_urls"), stat(s, "docs/out_of_scope")) == (1, 2)


def test_discovery_files_are_asked_for_at_the_site_s_root(spider):
    async def start(s):
        return [r.url async for r in s.start()]

    assert asyncio.run(start(spider())) == [f"{SITE}/en/", f"{SITE}/robots.txt", f"{SITE}/sitemap.xml"]


def redirected(url, origin, depth, **meta):
    return Request(url, meta={"docs_depth": depth, "redirect_urls": [origin], **meta})


def test_a_page_s_redirect_out_of_the_scope_is_dropped_before_it_is_scheduled(spider):
    s = spider()
    with pytest.raises(IgnoreRequest, match="outside the crawl's scope"):
        s.request_scheduled(redirected(f"{SITE}/docs/moved.html", f"{SITE}/en/old.html", 1))
    assert stat(s, "docs/out_of_scope") == 1
    s.request_scheduled(redirected(f"{SITE}/en/new.html", f"{SITE}/en/old.html", 1))  # within it: followed
    s.request_scheduled(redirected(f"{SITE}/", f"{SITE}/en/", 0))  # a start URL's: followed
    s.request_scheduled(Request(f"{SITE}/robots.txt", meta={"redirect_urls": [f"{SITE}/en/robots.txt"]}))
    s.request_scheduled(Request(f"{SITE}/docs/x.html", meta={"docs_depth": 1}))  # not a redirect
    assert stat(s, "docs/out_of_scope") == 1
    site = spider(scope="site")  # no path scope: the handler is not even connected
    site.request_scheduled(redirected(f"{SITE}/docs/moved.html", f"{SITE}/en/old.html", 1))


def test_a_start_url_s_redirect_widens_the_scope_and_asks_for_what_it_left_out(spider, caplog):
    s = spider(start=f"{SITE}/latest/")
    urlset = (
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<url><loc>{SITE}/en/latest/b.html</loc></url></urlset>"
    )
    assert list(s.parse_sitemap(XmlResponse(f"{SITE}/sitemap.xml", body=urlset.encode()))) == []
    with pytest.raises(IgnoreRequest):  # a page's redirect there, before the start URL's answer
        s.request_scheduled(redirected(f"{SITE}/en/latest/c.html", f"{SITE}/latest/c.html", 1))
    assert stat(s, "docs/out_of_scope") == 2
    start = html(f"{SITE}/en/latest/", depth=0, redirect_urls=[f"{SITE}/latest/"])
    with caplog.at_level(logging.INFO):
        urls = followed(s, start)
    assert f"{SITE}/en/latest/b.html" in urls and f"{SITE}/en/latest/c.html" in urls
    assert stat(s, "docs/out_of_scope") == len(LINKS)  # the left-out pair asked for; the page's own links out
    assert s.in_crawl_scope(f"{SITE}/latest/x.html") and s.in_crawl_scope(f"{SITE}/en/latest/x.html")
    assert (
        f"Start URL {SITE}/latest/ redirected to {SITE}/en/latest/: the crawl's scope is "
        "docs.example.com/latest, docs.example.com/en/latest"
    ) in caplog.text


def test_a_shared_run_keeps_the_start_urls_scope_and_says_so(spider, caplog):
    s = spider(start=f"{SITE}/latest/", settings={"FRONTIER_ENABLED": True})
    start = html(f"{SITE}/en/latest/", depth=0, redirect_urls=[f"{SITE}/latest/"])
    with caplog.at_level(logging.WARNING):
        followed(s, start)
    assert not s.in_crawl_scope(f"{SITE}/en/latest/x.html")
    assert "in a shared-frontier run the scope stays the start URLs' (start at" in caplog.text


def test_the_pages_recorded_first_are_those_in_scope(tmp_path):
    """``max_pages``' recrawl asks for the first recorded pages in scope: read in growing
    batches, not the whole site's records, and not crowded out by the pages outside."""
    store = SqliteDocStore(tmp_path / "cache")
    urls = [f"{SITE}/docs/{n:03}.html" for n in range(40)] + [f"{SITE}/en/{n}.html" for n in range(3)]
    for n, url in enumerate(urls):
        status = ("new", "changed", "unchanged")[n % 3]
        store.put_page(page_key(canonical_url(url)), {"url": url, "domain": "docs.example.com", "status": status})
    store.commit()
    try:
        wanted = PathScope([f"{SITE}/en/"]).admits
        assert _first_recorded(store, "docs.example.com", 2, wanted) == [f"{SITE}/en/0.html", f"{SITE}/en/1.html"]
        assert _first_recorded(store, "docs.example.com", 5, wanted) == [f"{SITE}/en/{n}.html" for n in range(3)]
        assert _first_recorded(store, "docs.example.com", 2, lambda url: True) == urls[:2]
    finally:
        store.close()
