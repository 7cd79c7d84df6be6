"""SiteStylesheets: the rules of a page's own-site stylesheets, each fetched once per crawl."""

import asyncio

import pytest
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import HtmlResponse, Response, TextResponse
from scrapy.utils.misc import build_from_crawler

from crawler.lib.css import NO_RULES
from crawler.stylesheets import MAX_BYTES, SiteStylesheets


@pytest.fixture
def make_crawler(make_crawler):
    """Crawlers without a cache: these components never open it (and a test builds
    several crawlers on one directory)."""
    return lambda settings=None, spidercls=None: make_crawler(settings, spidercls, cache=False)


SITE = "https://docs.example.org"
DOXYGEN_CSS = b"div.fragment { padding: 4px } div.ttc { position: absolute; display: none; } a:hover { color: red }"


class Engine:
    """Scrapy's engine as the component sees it: ``download_async``, answering from
    ``answers`` (URL -> a Response or an exception); each download waits for ``gate``."""

    def __init__(self, answers):
        self.answers = answers
        self.requests = []
        self.gate = None

    async def download_async(self, request):
        self.requests.append(request)
        if self.gate is not None:
            await self.gate.wait()
        answer = self.answers[request.url]
        if isinstance(answer, BaseException):
            raise answer
        return answer


def css(url, body=DOXYGEN_CSS, status=200, content_type=b"text/css"):
    return TextResponse(url, body=body, status=status, headers={"Content-Type": content_type})


@pytest.fixture
def stylesheets(make_crawler):
    """``stylesheets(answers)``: ``(crawler, component)``, built as Scrapy builds it
    once the crawl runs (the crawler has its engine: one answering from ``answers``)."""

    def factory(answers, settings=None):
        crawler = make_crawler(settings)
        crawler.engine = Engine(answers)
        return crawler, build_from_crawler(SiteStylesheets, crawler)

    return factory


def page(url, head):
    return HtmlResponse(url, body=f"<html><head>{head}</head><body><p>x</p></body></html>".encode(), encoding="utf-8")


def test_off_with_its_setting(stylesheets):
    with pytest.raises(NotConfigured, match="MARKDOWN_SITE_STYLESHEETS"):
        stylesheets({}, {"MARKDOWN_SITE_STYLESHEETS": False})


def test_the_stylesheets_read_are_the_page_s_own_host_s_for_a_screen_the_first_ten(stylesheets):
    _, component = stylesheets({})
    head = (
        '<link rel="stylesheet" href="doxygen.css"><link rel="stylesheet" href="https://cdn.example.com/b.css">'
        '<link rel="stylesheet" href="//docs.example.org/tabs.css" media="screen">'
        '<link rel="stylesheet" href="print.css" media="print"><link rel="preload" href="font.css">'
    )
    assert component.links(page(f"{SITE}/api/file.html", head)) == [
        f"{SITE}/api/doxygen.css",
        f"{SITE}/tabs.css",
    ]
    many = "".join(f'<link rel="stylesheet" href="/s{n}.css">' for n in range(12))
    assert component.links(page(f"{SITE}/", many)) == [f"{SITE}/s{n}.css" for n in range(10)]
    based = page(f"{SITE}/a/", '<base href="https://cdn.example.com/"><link rel="stylesheet" href="x.css">')
    assert component.links(based) == []  # resolved where a browser resolves it: another host


def test_pages_waiting_for_one_stylesheet_share_its_one_download(stylesheets):
    crawler, component = stylesheets({f"{SITE}/doxygen.css": css(f"{SITE}/doxygen.css")})
    engine = crawler.engine

    async def crawl():
        engine.gate = asyncio.Event()
        pages = [asyncio.ensure_future(component.rules([f"{SITE}/doxygen.css"])) for _ in range(5)]
        for _ in range(100):  # until the download started
            if engine.requests:
                break
            await asyncio.sleep(0)
        for _ in range(10):  # every page asked
            await asyncio.sleep(0)
        assert len(engine.requests) == 1  # the others wait for it
        engine.gate.set()
        results = await asyncio.gather(*pages)
        later = await component.rules([f"{SITE}/doxygen.css"])  # read already: no download
        return results, later

    results, later = asyncio.run(crawl())
    assert len(engine.requests) == 1
    for rules, complete in [*results, later]:
        assert sorted(rules.by_class) == ["ttc"] and complete
    [request] = engine.requests
    assert request.meta["dont_revalidate"] is True  # RevalidationMiddleware neither stores nor counts it
    assert request.meta["render"] is False and request.meta["download_maxsize"] == MAX_BYTES == 2 * 1024 * 1024
    assert crawler.stats.get_value("stylesheets/fetched") == 1
    assert crawler.stats.get_value("stylesheets/failed") is None


def test_the_rules_of_several_stylesheets_are_merged_as_one(stylesheets):
    framework, theme = f"{SITE}/framework.css", f"{SITE}/theme.css"
    _, component = stylesheets(
        {
            framework: css(framework, b".collapse { display: none } .ttc { display: none }"),
            theme: css(theme, b".collapse.in { display: block }"),
        }
    )
    rules, complete = asyncio.run(component.rules([framework, theme]))
    assert sorted(rules.by_class) == ["ttc"] and complete  # what the theme shows again hides nothing


def test_a_stylesheet_that_fails_is_no_rules_and_only_a_passing_failure_makes_them_incomplete(stylesheets, caplog):
    answers = {
        f"{SITE}/missing.css": css(f"{SITE}/missing.css", b"<h1>Not found</h1>", status=404, content_type=b"text/html"),
        f"{SITE}/page.css": Response(f"{SITE}/page.css", body=b"<html>", headers={"Content-Type": "text/html"}),
        f"{SITE}/robots.css": IgnoreRequest("Forbidden by robots.txt"),
        f"{SITE}/busy.css": css(f"{SITE}/busy.css", b"", status=503),
        f"{SITE}/down.css": ConnectionRefusedError("Connection was refused"),
        f"{SITE}/good.css": css(f"{SITE}/good.css"),
    }
    crawler, component = stylesheets(answers)

    async def each():
        return {url: await component.rules([url]) for url in answers}

    with caplog.at_level("DEBUG", logger="crawler.stylesheets"):
        results = asyncio.run(each())
    complete = {url.rsplit("/", 1)[1]: done for url, (_, done) in results.items()}
    assert complete == {
        "missing.css": True,  # an answer: no rules, as in a browser
        "page.css": True,
        "robots.css": True,
        "busy.css": False,  # may pass: the page is read again next crawl
        "down.css": False,
        "good.css": True,
    }
    assert all(rules is NO_RULES for url, (rules, _) in results.items() if not url.endswith("good.css"))
    assert crawler.stats.get_value("stylesheets/failed") == 5
    assert crawler.stats.get_value("stylesheets/fetched") == 1
    assert "missing.css not read, taken as hiding nothing: HTTP 404" in caplog.text
    assert "page.css not read, taken as hiding nothing: not CSS (text/html)" in caplog.text
    assert "down.css not read, taken as hiding nothing: ConnectionRefusedError: Connection was refused" in caplog.text
    # one page with a good and a failing stylesheet: the good one's rules, incomplete
    rules, done = asyncio.run(component.rules([f"{SITE}/good.css", f"{SITE}/down.css"]))
    assert sorted(rules.by_class) == ["ttc"] and not done


def test_a_failure_that_may_pass_is_tried_again_by_a_later_page_a_few_times_and_every_request_is_one_try(
    stylesheets,
):
    url = f"{SITE}/doxygen.css"
    crawler, component = stylesheets({url: ConnectionRefusedError("Connection was refused")})

    async def three_pages():
        first = await component.rules([url])
        crawler.engine.answers[url] = css(url)  # the server is back
        second = await component.rules([url])
        third = await component.rules([url])
        return first, second, third

    (_, first_done), (second_rules, second_done), (_, third_done) = asyncio.run(three_pages())
    assert (first_done, second_done, third_done) == (False, True, True)
    assert sorted(second_rules.by_class) == ["ttc"]
    assert len(crawler.engine.requests) == 2  # read once it could be, then kept
    assert all(r.meta["dont_retry"] and r.meta["download_timeout"] == 30 for r in crawler.engine.requests)

    _, always_down = stylesheets({url: ConnectionRefusedError("refused")})
    for _ in range(5):
        asyncio.run(always_down.rules([url]))
    assert always_down.tries[url] == 3  # MAX_TRIES, then taken as hiding nothing this crawl


def test_a_stylesheet_whose_rules_cannot_be_parsed_hides_nothing(stylesheets, monkeypatch):
    url = f"{SITE}/odd.css"
    crawler, component = stylesheets({url: css(url)})

    def broken(text):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr("crawler.stylesheets.parse_hidden_rules", broken)
    rules, done = asyncio.run(component.rules([url]))
    assert rules is NO_RULES and done
    assert crawler.stats.get_value("stylesheets/failed") == 1
