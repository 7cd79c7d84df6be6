import asyncio
import gzip

import pytest
from scrapy import Request
from scrapy.http import HtmlResponse, Response, TextResponse, XmlResponse

from crawler.items import PageItem
from crawler.lib.pagetext import CONVERTER_VERSION, converter_id
from crawler.spiders.catalog import CatalogSpider
from crawler.spiders.docs import DocsSpider

SITE = "https://docs.example.com"
PAGE = (
    b"<html><head><title>Guide</title><link rel='canonical' href='/guide/'></head><body>"
    b"<nav><a href='/nav'>nav</a></nav><main><h1>Guide</h1><p>Text <a href='/a.html'>a</a>"
    b"<a href='https://elsewhere.org/x'>x</a><a href='/file.pdf'>pdf</a><a href='/blog/p'>b</a></p>"
    b"</main></body></html>"
)


@pytest.fixture
def spider(make_crawler):
    def factory(cache=True, **args):
        crawler = make_crawler(spidercls=DocsSpider, cache=cache)
        return DocsSpider.from_crawler(crawler, start_urls=f"{SITE}/", **args)

    return factory


def html(url, body=PAGE, depth=0, content_type=b"text/html; charset=utf-8"):
    request = Request(url, meta={"docs_depth": depth})
    return HtmlResponse(url, body=body, request=request, headers={"Content-Type": content_type})


def test_arguments(make_crawler):
    crawler = make_crawler(spidercls=DocsSpider)
    s = DocsSpider.from_crawler(
        crawler,
        start_urls=" https://a.com/ , https://b.com:8080/x",
        max_depth="2",
        include="/docs/",
        exclude="/old/,\\.bak$",
    )
    assert s.start_urls == ["https://a.com/", "https://b.com:8080/x"]
    assert s.allowed_domains == ["a.com", "b.com"]
    assert (s.max_depth, s.max_pages) == (2, None)
    for bad, message in [
        ({}, "start_urls"),
        ({"start_urls": "ftp://a"}, "http"),
        ({"start_urls": "https://a.com", "max_pages": "ten"}, "whole number"),
        ({"start_urls": "https://a.com", "include": "("}, "pattern"),
        ({"start_urls": "https://a.com", "sitemaps": "nope"}, "true or false"),
    ]:
        with pytest.raises(ValueError, match=message):
            DocsSpider.from_crawler(crawler, **bad)


def test_start_requests_pages_robots_and_sitemap(spider):
    requests = asyncio.run(_collect(spider()))
    assert [r.url for r in requests] == [f"{SITE}/", f"{SITE}/robots.txt", f"{SITE}/sitemap.xml"]
    no_sitemaps = asyncio.run(_collect(spider(sitemaps="false", cache=False)))
    assert [r.url for r in no_sitemaps] == [f"{SITE}/"]


async def _collect(s):
    return [r async for r in s.start()]


def parse(s, response):
    """Everything ``s.parse(response)`` yields (nothing awaited: no stylesheet linked)."""

    async def outputs():
        return [output async for output in s.parse(response)]

    return asyncio.run(outputs())


def first_output(s, response):
    """The first thing ``s.parse(response)`` yields (the page's item): its links not followed."""

    async def output():
        outputs = s.parse(response)
        try:
            return await anext(outputs)
        finally:
            await outputs.aclose()

    return asyncio.run(output())


def test_parse_yields_the_page_and_follows_site_links(spider):
    out = parse(spider(), html(f"{SITE}/guide/index.html"))
    item = out[0]
    assert isinstance(item, PageItem)
    assert (item.title, item.canonical_url) == ("Guide", f"{SITE}/guide")
    assert item.content == "# Guide\n\nText axpdfb"  # links as their text (MARKDOWN_LINKS)
    assert (item.converter, item.source_unchanged, item.selection_widened) == (converter_id("text"), False, False)
    links = sorted(r.url for r in out[1:])
    assert links == [f"{SITE}/a.html", f"{SITE}/blog/p", f"{SITE}/nav"]  # no offsite, no pdf
    assert all(r.meta["docs_depth"] == 1 for r in out[1:])


def test_markdown_links_urls_writes_the_links_a_reader_follows(make_crawler):
    crawler = make_crawler({"MARKDOWN_LINKS": "urls"}, spidercls=DocsSpider)
    item = first_output(DocsSpider.from_crawler(crawler, start_urls=f"{SITE}/"), html(f"{SITE}/guide/index.html"))
    assert item.content == (
        f"# Guide\n\nText [a]({SITE}/a.html)[x](https://elsewhere.org/x)[pdf]({SITE}/file.pdf)[b]({SITE}/blog/p)"
    )
    assert item.converter == converter_id("urls")
    bad = make_crawler({"MARKDOWN_LINKS": "all"}, spidercls=DocsSpider, cache=False)
    with pytest.raises(ValueError, match="MARKDOWN_LINKS must be one of text, urls, got 'all'"):
        DocsSpider.from_crawler(bad, start_urls=f"{SITE}/")


@pytest.mark.parametrize(
    ("flags", "unchanged"),
    [
        ([], False),
        (["revalidation_not_modified"], True),
        (["revalidation_revisit_skipped"], True),
        (["revalidation_duplicate"], True),
        (["revalidation_same_body"], True),
        (["render_replayed"], True),
        (["playwright"], False),  # a fresh rendering
    ],
)
def test_source_unchanged_says_whether_the_response_is_the_stored_one(spider, flags, unchanged):
    request = Request(f"{SITE}/a.html")
    response = HtmlResponse(request.url, body=PAGE, request=request, headers={"Content-Type": "text/html"}, flags=flags)
    item = first_output(spider(), response)
    assert item.source_unchanged is unchanged


def test_include_exclude_and_max_depth(spider):
    s = spider(exclude="/blog/", max_depth="1")
    assert sorted(r.url for r in parse(s, html(f"{SITE}/")) if isinstance(r, Request)) == [
        f"{SITE}/a.html",
        f"{SITE}/nav",
    ]
    deep = parse(s, html(f"{SITE}/a.html", depth=1))
    assert [type(x) for x in deep] == [PageItem]
    assert s.crawler.stats.get_value("docs/non_html_skipped") is None


def test_max_pages(spider):
    s = spider(max_pages="1")
    first = parse(s, html(f"{SITE}/"))
    assert [type(x) for x in first] == [PageItem]
    assert parse(s, html(f"{SITE}/a.html")) == []


def test_non_html_and_binary_are_skipped(spider):
    s = spider()
    pdf = Response(
        f"{SITE}/f", body=b"%PDF-1.4", headers={"Content-Type": "application/pdf"}, request=Request(f"{SITE}/f")
    )
    assert parse(s, pdf) == []
    text = TextResponse(
        f"{SITE}/t", body=b"plain", headers={"Content-Type": "text/plain"}, request=Request(f"{SITE}/t")
    )
    assert parse(s, text) == []
    binary = html(f"{SITE}/b", body=b"\x00\x01\x02" * 10)
    assert parse(s, binary) == []
    stats = s.crawler.stats
    assert (stats.get_value("docs/non_html_skipped"), stats.get_value("docs/binary_skipped")) == (2, 1)


def test_sitemaps(spider):
    s = spider(exclude="/private/")
    urlset = (
        f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<url><loc>{SITE}/only-in-sitemap</loc></url><url><loc>{SITE}/private/x</loc></url>"
        f"<url><loc>https://other.org/y</loc></url></urlset>"
    ).encode()
    assert list(s.parse_sitemap(XmlResponse(f"{SITE}/sitemap.xml", body=urlset))) == []  # (they wait)
    found = list(s.listed_requests())
    assert [(r.url, r.callback.__name__) for r in found] == [(f"{SITE}/only-in-sitemap", "parse")]
    index = (
        f'<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<sitemap><loc>{SITE}/s2.xml.gz</loc></sitemap></sitemapindex>"
    ).encode()
    assert [r.url for r in s.parse_sitemap(XmlResponse(f"{SITE}/sitemap.xml", body=index))] == [f"{SITE}/s2.xml.gz"]
    gz = Response(f"{SITE}/s2.xml.gz", body=gzip.compress(urlset))
    assert list(s.parse_sitemap(gz)) == [] and len(s.listed) == 1
    assert list(s.parse_sitemap(XmlResponse(f"{SITE}/bad.xml", body=b"<urlset><url>"))) == []
    robots = TextResponse(f"{SITE}/robots.txt", body=f"User-agent: *\nSitemap: {SITE}/s3.xml\n".encode())
    assert [r.url for r in s.parse_robots(robots)] == [f"{SITE}/s3.xml"]


def test_a_sitemap_s_pages_are_past_max_depth_0(spider):
    """A sitemap's pages are at depth 1: none with max_depth 0 (the start URLs alone), and
    the run is incomplete (what they would have shown is not marked removed)."""
    from crawler.cache import cache_for

    s = spider(max_depth="0")
    urlset = f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>{SITE}/x</loc></url></urlset>'
    assert list(s.parse_sitemap(XmlResponse(f"{SITE}/sitemap.xml", body=urlset.encode()))) == []
    assert cache_for(s.crawler).run.incomplete_reasons == ["max_depth"]


def urlset(*paths):
    urls = "".join(f"<url><loc>{SITE}{path}</loc></url>" for path in paths)
    return f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'.encode()


def test_a_large_sitemap_s_pages_wait_as_urls_and_are_requested_a_batch_at_a_time(spider):
    """A sitemap's pages wait as URLs (taken as requested: a link to one is not followed
    again) and are requested LISTED_BATCH at a time (the scheduler empty: nothing runs
    here), in the order listed, each naming the sitemap that listed it (no Referer does)."""
    from crawler.meta import META_LINKED_FROM, META_LISTED
    from crawler.spiders.discovery import LISTED_BATCH

    s = spider()
    paths = [f"/p/{n}" for n in range(LISTED_BATCH + 5)]
    assert list(s.parse_sitemap(XmlResponse(f"{SITE}/sitemap.xml", body=urlset(*paths)))) == []
    assert len(s.listed) == len(paths) == s.listed.most
    assert s.crawler.stats.get_value("docs/sitemap_urls") == len(paths)
    assert all(s.requested[f"{SITE}{path}"] == 1 for path in paths)
    page = html(f"{SITE}/", body=b"<html><body><main><p>Text</p><a href='/p/1004'>x</a></main></body></html>")
    assert [r for r in parse(s, page) if isinstance(r, Request)] == []  # (waiting: not followed)
    first = list(s.listed_requests())
    assert [r.url for r in first] == [f"{SITE}{path}" for path in paths[:LISTED_BATCH]]
    rest = list(s.listed_requests())
    assert [r.url for r in rest] == [f"{SITE}{path}" for path in paths[LISTED_BATCH:]]
    assert all(r.meta[META_LINKED_FROM] == f"{SITE}/sitemap.xml" and r.meta[META_LISTED] for r in first + rest)
    assert len(s.listed) == 0 and list(s.listed_requests()) == []


def test_the_pages_of_sitemaps_read_first_wait_until_the_start_urls_are_requested(spider):
    """Read first (the revisit schedule's), a sitemap's pages wait while the listed
    pages are closed: no page is requested before the start URLs; no Referer."""
    s = spider()
    s.sitemaps_first = True
    s.listed.open = False
    list(s.parse_sitemap(XmlResponse(f"{SITE}/sitemap.xml", body=urlset("/a", "/b"))))
    assert list(s.listed_requests()) == []
    # (start() yields them, in the order listed, as the downloader has room)
    assert [(r.url, r.meta.get("docs_linked_from")) for r in asyncio.run(_collect_listed(s))] == [
        (f"{SITE}/a", None),
        (f"{SITE}/b", None),
    ]
    assert s.crawler.stats.get_value("docs/sitemap_urls_waiting") == 0


async def _collect_listed(s):
    return [r async for r in s.listed_start()]


def test_sitemaps_read_first_note_each_page_s_lastmod_once_for_all_pages_of_a_date(spider):
    """The revisit schedule's lastmods: url_hash -> lastmod, never on a request; pages
    of one date share one string."""
    from crawler.cache import cache_for
    from crawler.identity import PageIdentity

    s = spider()
    s.sitemaps_first, s.listed.open = True, False
    entries = "".join(f"<url><loc>{SITE}{path}</loc><lastmod> 2026-11-01 </lastmod></url>" for path in ("/a", "/b"))
    body = f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</urlset>'.encode()
    list(s.parse_sitemap(XmlResponse(f"{SITE}/sitemap.xml", body=body)))
    lastmods = cache_for(s.crawler).run.revisit.lastmods
    identity = PageIdentity.from_crawler(s.crawler)
    a, b = (lastmods[identity.url_hash(f"{SITE}{path}")] for path in ("/a", "/b"))
    assert a == b == "2026-11-01" and a is b


def test_a_shared_frontier_run_queues_every_listed_page_at_once(spider):
    """In a shared-frontier run the run's queue is in Redis and its peers must see the
    pages: all are requested at once."""
    from crawler.spiders.discovery import LISTED_BATCH

    s = spider()
    s.shared_run = True
    paths = [f"/p/{n}" for n in range(LISTED_BATCH + 5)]
    list(s.parse_sitemap(XmlResponse(f"{SITE}/sitemap.xml", body=urlset(*paths))))
    assert len(list(s.listed_requests())) == len(paths) and len(s.listed) == 0


def test_listed_pages_past_max_pages_are_held_by_its_budget(spider):
    """With max_pages, a listed page its budget has no room for is held (counted in
    docs/max_pages_held), not waiting: the batch goes on to the next."""
    s = spider(max_pages="2")
    list(s.parse_sitemap(XmlResponse(f"{SITE}/sitemap.xml", body=urlset("/a", "/b", "/c", "/d"))))
    assert [r.url for r in s.listed_requests()] == [f"{SITE}/a", f"{SITE}/b"]
    assert len(s.listed) == 0 and s.crawler.stats.get_value("docs/max_pages_held") == 2


def test_catalog_spider_needs_start_urls(make_crawler):
    with pytest.raises(ValueError, match="start_urls"):
        CatalogSpider.from_crawler(make_crawler(spidercls=CatalogSpider))


def test_project_download_limits():
    from scrapy.settings import Settings

    settings = Settings()
    settings.setmodule("crawler.settings", priority="project")
    # Scrapy's defaults: 1 GiB bodies (an endless response, a gzip bomb), 180 s x 3 attempts
    assert settings.getint("DOWNLOAD_MAXSIZE") == 32 * 1024 * 1024
    assert settings.getint("DOWNLOAD_WARNSIZE") == 8 * 1024 * 1024
    assert settings.getint("DOWNLOAD_TIMEOUT") * (settings.getint("RETRY_TIMES") + 1) <= 90
    from crawler.addons import IncrementalAddon

    IncrementalAddon().update_settings(settings)  # (ADDONS names it: Scrapy applies it to each crawl)
    assert settings["DUPEFILTER_CLASS"] == "crawler.dupefilters.RedirectAwareDupeFilter"


def test_failure_reasons(spider, caplog):
    from scrapy.exceptions import DownloadCancelledError
    from twisted.python.failure import Failure

    s = spider()
    failure = Failure(DownloadCancelledError())
    failure.request = Request(f"{SITE}/endless")
    s.failed(failure)
    assert f"Page failed: {SITE}/endless: cancelled: response larger than DOWNLOAD_MAXSIZE" in caplog.text
    assert s.crawler.stats.get_value("docs/too_large") == 1
    failure = Failure(TimeoutError())
    failure.request = Request(f"{SITE}/slow")
    s.failed(failure)
    assert f"Page failed: {SITE}/slow: TimeoutError" in caplog.text
    assert s.crawler.stats.get_value("docs/failed_pages") == 2


def random_text_bytes(size, seed=16):
    """Random bytes without a NUL in them: binary content the NUL check misses."""
    import random

    return random.Random(seed).randbytes(size).replace(b"\x00", b"\x01")


def test_binary_bodies_served_as_html_are_skipped_and_make_the_run_partial(spider):
    s = spider()
    for n, body in enumerate(
        [random_text_bytes(300_000), b"\x89PNG\r\n\x1a\n" + b"x" * 100, b"%PDF-1.7\n" + b"<p>text</p>" * 50]
    ):
        assert parse(s, html(f"{SITE}/b{n}", body=body)) == []
    assert s.crawler.stats.get_value("docs/binary_skipped") == 3
    utf16 = "<html><body><main><p>UTF-16 page</p></main></body></html>".encode("utf-16")
    assert first_output(s, html(f"{SITE}/u16", body=utf16, content_type=b"text/html")).content == "UTF-16 page"


def test_charset_mismatch_is_read_in_the_body_s_encoding(spider):
    s = spider()
    text = "<html><body><main><h1>Café</h1><p>Déjà vu à la crème brûlée. Ça coûte 5 €.</p></main></body></html>"
    latin = html(f"{SITE}/latin", body=text.encode("cp1252"), content_type=b"text/html; charset=utf-8")
    item = first_output(s, latin)
    assert item.content == "# Café\n\nDéjà vu à la crème brûlée. Ça coûte 5 €."
    declared_latin = text.replace("<html>", "<html><head><meta charset='iso-8859-1'></head>").encode()
    item = first_output(s, html(f"{SITE}/utf8", body=declared_latin, content_type=b"text/html"))
    assert item.content == "# Café\n\nDéjà vu à la crème brûlée. Ça coûte 5 €."
    assert s.crawler.stats.get_value("docs/encoding_mismatch") == 2
    good = html(f"{SITE}/good", body=text.encode())
    assert first_output(s, good).content.startswith("# Café")
    assert s.crawler.stats.get_value("docs/encoding_mismatch") == 2


def test_deeply_nested_page_keeps_its_text_and_links(spider):
    s = spider()
    deep = b"<div>" * 100_000 + b"<p>Deep text <a href='/deep.html'>deep link</a></p>" + b"</div>" * 100_000
    body = (
        b"<html><body><main><h1>Deep</h1>"
        + deep
        + b"<p>After the divs <a href='/after.html'>after</a></p></main></body></html>"
    )
    out = parse(s, html(f"{SITE}/deep", body=body))
    assert out[0].content == "# Deep\n\nDeep text deep link\n\nAfter the divs after"
    assert sorted(r.url for r in out[1:]) == [f"{SITE}/after.html", f"{SITE}/deep.html"]
    assert s.crawler.stats.get_value("docs/deep_html") == 1


def test_a_page_whose_named_main_content_is_a_trifle_is_widened_counted_and_flagged(spider, caplog):
    """A forum thread: its <main> holds a title, every post is named "comment". No
    line per page (the summary line counts them)."""
    posts = "".join(
        f"<div class='comment'><p>Post {n}: the path extension needs a restart of the daemon, then "
        f"it reads the new configuration file and every plugin in it loads again as before.</p></div>"
        for n in range(5)
    )
    body = f"<html><body><main><h1>Path extension?</h1></main><div class='thread'>{posts}</div></body></html>"
    crawler_spider = spider()
    with caplog.at_level("INFO"):
        [item, *_] = parse(crawler_spider, html(f"{SITE}/forum/1", body.encode()))
    assert item.content.startswith("# Path extension?") and "Post 4: the path extension" in item.content
    assert item.selection_widened is True
    assert crawler_spider.crawler.stats.get_value("docs/selection_widened") == 1
    assert f"{SITE}/forum/1" not in caplog.text
    [ordinary] = [o for o in parse(crawler_spider, html(f"{SITE}/guide/")) if isinstance(o, PageItem)]
    assert ordinary.content and ordinary.selection_widened is False
    assert crawler_spider.crawler.stats.get_value("docs/selection_widened") == 1


def test_a_page_that_cannot_be_converted_makes_the_run_partial(spider, monkeypatch):
    """Its old record stays, and the pages only it links to may go unreached: nothing
    may be marked removed this run."""
    from crawler.cache import cache_for

    s = spider()
    run_state = cache_for(s.crawler).run
    page = b"<html><body><main><p>Logo <img alt='logo' src='http://[fe80::1/x.png'></p></main></body></html>"
    links = DocsSpider.from_crawler(s.crawler, start_urls=f"{SITE}/")
    links.markdown_links = "urls"  # an image URL that is not one: the alt text alone, never an error
    assert first_output(links, html(f"{SITE}/logo", body=page)).content == "Logo logo"
    assert run_state.incomplete_reasons == []
    monkeypatch.setattr("crawler.spiders.docs.page_markdown", lambda *a, **k: 1 / 0)
    assert parse(s, html(f"{SITE}/broken")) == []
    assert s.crawler.stats.get_value("docs/malformed") == 1
    assert run_state.incomplete_reasons == ["malformed page"]


def test_a_stored_response_that_reads_the_same_under_this_converter_is_an_unchanged_source(spider):
    """Bytes that differ (a nonce, no validators) while the page's stored text is an
    older converter's: the stored response, converted again, decides, title included;
    however it was compressed (gzip, br)."""
    import brotli

    from crawler.cache import cache_for
    from crawler.cache.responses import StoredResponse
    from crawler.meta import Revalidation

    s = spider()
    cache_for(s.crawler)

    def parsed(new_body, old_body, encoding=""):
        stored = StoredResponse(
            f"{SITE}/p", 200, {"Content-Type": "text/html; charset=utf-8", "Content-Encoding": encoding}, old_body, ""
        )
        # the middleware's verdict: the page's stored text is another converter's (no record)
        request = Request(f"{SITE}/p", meta={"revalidation": Revalidation("none", "fetched", previous=stored)})
        response = HtmlResponse(f"{SITE}/p", body=new_body, request=request, headers={"Content-Type": "text/html"})
        return next(o for o in parse(s, response) if isinstance(o, PageItem))

    page = "<html><head><title>{}</title></head><body><main><p>Text {}.</p></main><!-- {} --></body></html>"
    old = page.format("Guide", "one", "nonce 1").encode()
    assert parsed(page.format("Guide", "one", "nonce 2").encode(), old).source_unchanged
    assert parsed(page.format("Guide", "one", "nonce 2").encode(), gzip.compress(old), "gzip").source_unchanged
    assert parsed(page.format("Guide", "one", "nonce 2").encode(), brotli.compress(old), "br").source_unchanged
    assert not parsed(page.format("Guide", "two", "nonce 2").encode(), old).source_unchanged  # the text changed
    assert not parsed(page.format("Guide v2", "one", "nonce 2").encode(), old).source_unchanged  # the title did
    assert not parsed(page.format("Guide", "one", "nonce 2").encode(), b"\x00\x01", "zstd").source_unchanged


def test_a_page_answered_by_its_stored_response_again_is_not_parsed_again(spider):
    """What a stored response parsed into (ParsedPage) is reused while the response,
    the converter and the page's URL are the same; its links go through the rules of
    the day."""
    from crawler.cache import cache_for
    from crawler.cache.responses import StoredResponse
    from crawler.meta import Revalidation

    s = spider()
    store = cache_for(s.crawler).store

    def response(body=PAGE, flags=(), url=f"{SITE}/guide/", stored_body=None):
        stored = StoredResponse(url, 200, {"Content-Type": "text/html"}, stored_body or body, "")
        request = Request(url, meta={"revalidation": Revalidation("k", stored=stored), "docs_depth": 1})
        return HtmlResponse(url, body=body, request=request, headers={"Content-Type": "text/html"}, flags=list(flags))

    parsed = parse(s, response())
    kept = store.get_parsed("k")
    assert kept.links == [f"{SITE}/nav", f"{SITE}/a.html", "https://elsewhere.org/x", f"{SITE}/blog/p"]
    assert kept.fields["content"] == parsed[0].content and kept.converter == s.converter

    s.requested.clear()  # (a new run's spider)
    replayed = parse(s, response(flags=["revalidation_not_modified"]))
    assert s.crawler.stats.get_value("docs/parse_reused") == 1
    # not parsed: the item does not say whether its main content was widened (its record keeps what it said)
    unsaid = {"source_unchanged": True, "selection_widened": None, "named_out": None}
    assert replayed[0] == PageItem(**{**vars(parsed[0]), **unsaid})
    assert [r.url for r in replayed[1:]] == [r.url for r in parsed[1:]]
    assert all(r.meta["docs_depth"] == 2 for r in replayed[1:])
    assert parse(s, response(flags=["revalidation_duplicate"]))[1:] == []  # its links were followed already
    narrower = DocsSpider.from_crawler(s.crawler, start_urls=f"{SITE}/", exclude="/blog/")
    assert [r.url for r in parse(narrower, response(flags=["revalidation_revisit_skipped"]))][1:] == [
        f"{SITE}/nav",
        f"{SITE}/a.html",
    ]
    shallow = DocsSpider.from_crawler(s.crawler, start_urls=f"{SITE}/", max_depth="1")
    assert parse(shallow, response(flags=["revalidation_same_body"]))[1:] == []  # at max_depth
    assert s.crawler.stats.get_value("docs/parse_reused") == 4

    # parsed again: another stored body, a rendering, another converter
    other = PAGE.replace(b"Guide</h1>", b"Guides</h1>")
    assert first_output(s, response(other, flags=["revalidation_not_modified"])).content.startswith("# Guides")
    assert first_output(s, response(other, flags=["revalidation_not_modified", "render_replayed"])).content
    s.converter = "other"
    parse(s, response(other, flags=["revalidation_not_modified"]))
    assert s.crawler.stats.get_value("docs/parse_reused") == 4
    assert store.get_parsed("k").converter == "other"


def test_a_link_followed_already_is_not_requested_again_unless_shallower(spider):
    """The same navigation on every page: one request per URL (Scrapy's duplicate
    filter would drop the others), but a shallower path to a URL still counts (with
    DEPTH_LIMIT a deeper request may have been dropped)."""
    s = spider()
    first = [r.url for r in parse(s, html(f"{SITE}/a.html", depth=2)) if isinstance(r, Request)]
    assert first == [f"{SITE}/nav", f"{SITE}/a.html", f"{SITE}/blog/p"]
    assert [r for r in parse(s, html(f"{SITE}/b.html", depth=2)) if isinstance(r, Request)] == []
    shallower = [r for r in parse(s, html(f"{SITE}/c.html", depth=0)) if isinstance(r, Request)]
    assert [(r.url, r.meta["docs_depth"]) for r in shallower] == [(url, 1) for url in first]


def test_the_same_bytes_under_another_charset_are_parsed_again(spider):
    """A server that fixes a page's declared charset sends the same bytes: what they
    were parsed into under the old charset is not the page any more."""
    from crawler.cache import cache_for
    from crawler.cache.responses import StoredResponse
    from crawler.meta import Revalidation

    body = (
        "<html><head><title>Док</title></head><body><main><h1>Документация</h1>"
        "<p>Привет, мир. Это текст страницы.</p></main></body></html>"
    ).encode("cp1251")
    docs = spider()
    cache_for(docs.crawler)

    def response(charset, flags=()):
        headers = {"Content-Type": f"text/html; charset={charset}"}
        stored = StoredResponse(f"{SITE}/ru/", 200, headers, body, "")
        request = Request(f"{SITE}/ru/", meta={"revalidation": Revalidation("k", stored=stored), "docs_depth": 1})
        return HtmlResponse(f"{SITE}/ru/", body=body, request=request, headers=headers, flags=list(flags))

    wrong = first_output(docs, response("koi8-r"))  # the server's wrong charset
    assert "Документация" not in wrong.content
    docs.requested.clear()
    fixed = first_output(docs, response("windows-1251", ["revalidation_same_body"]))
    assert "Документация" in fixed.content
    assert not docs.crawler.stats.get_value("docs/parse_reused")
    docs.requested.clear()
    again = first_output(docs, response("windows-1251", ["revalidation_same_body"]))  # now the same source
    assert again.content == fixed.content
    assert docs.crawler.stats.get_value("docs/parse_reused") == 1


DOXYGEN_PAGE = (
    b'<html><head><title>file.c</title><link href="doxygen.css" rel="stylesheet" type="text/css"/></head><body>'
    b'<div class="contents"><div class="fragment"><div class="line"><a class="code hl_function" href="a.html">run</a>'
    b'<div class="ttc" id="link_run"><div class="ttname">int run(void)</div><div class="ttdoc">Runs it.</div></div>'
    b"();</div></div></div></body></html>"
)


class Engine:
    """The engine as the stylesheets see it: ``download_async`` from ``answers``."""

    def __init__(self, answers):
        self.answers, self.requests = answers, []

    async def download_async(self, request):
        self.requests.append(request.url)
        answer = self.answers[request.url]
        if isinstance(answer, BaseException):
            raise answer
        return TextResponse(request.url, body=answer, headers={"Content-Type": "text/css"})


def test_a_parsed_page_is_read_with_its_site_stylesheets_and_a_reused_parse_fetches_none(spider, make_crawler):
    from crawler.cache import cache_for
    from crawler.cache.responses import StoredResponse
    from crawler.meta import Revalidation

    css_url = f"{SITE}/api/doxygen.css"

    def crawl(s, *responses):
        async def outputs():
            return [[o async for o in s.parse(r)] for r in responses]

        return [items[0] for items in asyncio.run(outputs())]

    def response(path, flags=()):
        url = f"{SITE}/api/{path}"
        stored = StoredResponse(url, 200, {"Content-Type": "text/html"}, DOXYGEN_PAGE, "")
        request = Request(url, meta={"revalidation": Revalidation(path, stored=stored)})
        headers = {"Content-Type": "text/html"}
        return HtmlResponse(url, body=DOXYGEN_PAGE, request=request, headers=headers, flags=list(flags))

    def opened(s, engine):
        s.crawler.engine = engine
        s.spider_opened()  # (sent by Scrapy once the engine runs)
        return s

    engine = Engine({css_url: b"div.ttc { position: absolute; display: none; }"})
    s = opened(spider(), engine)
    store = cache_for(s.crawler).store
    one, two = crawl(s, response("a.c"), response("b.c"))
    assert one.content == two.content == "```\nrun();\n```"  # the tooltip's text left out
    assert engine.requests == [css_url]  # once for both pages
    assert store.get_parsed("a.c").fields["content"] == one.content

    again = opened(DocsSpider.from_crawler(s.crawler, start_urls=f"{SITE}/"), engine)  # the next crawl: a 304
    assert crawl(again, response("a.c", flags=["revalidation_not_modified"]))[0].content == one.content
    assert engine.requests == [css_url]  # reused as parsed: nothing fetched
    assert s.crawler.stats.get_value("docs/parse_reused") == 1

    down = opened(
        DocsSpider.from_crawler(s.crawler, start_urls=f"{SITE}/"), Engine({css_url: ConnectionRefusedError()})
    )
    [page] = crawl(down, response("c.c"))
    assert "int run(void)" in page.content  # the stylesheet could not be read: nothing hidden...
    assert store.get_parsed("c.c") is None  # ...and the next crawl reads the page again, even on a 304

    off = make_crawler({"MARKDOWN_SITE_STYLESHEETS": False}, spidercls=DocsSpider, cache=False)
    plain = DocsSpider.from_crawler(off, start_urls=f"{SITE}/")
    assert plain.stylesheets is None and plain.converter == f"markdown/{CONVERTER_VERSION};links=text;site_css=off"
    assert "int run(void)" in crawl(plain, response("d.c"))[0].content
