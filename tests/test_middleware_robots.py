"""robots.txt downloaded once per crawl (crawler.middlewares.robots.RobotsTxtOnce); the
end-to-end counts of requests are in tests/test_e2e_unchanged_recrawl.py and
tests/test_e2e_robustness.py."""

import pytest
from scrapy import Request
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import TextResponse
from twisted.internet.error import TCPTimedOutError

from crawler.meta import FLAG_ROBOTSTXT_SHARED
from crawler.middlewares.robots import KEPT_BYTES, KEPT_SITES, RobotsTxtOnce
from tests.helpers import run

ROBOTS = "https://docs.example.com/robots.txt"
BODY = b"User-agent: *\nSitemap: https://docs.example.com/sitemap.xml\n"


@pytest.fixture
def build(make_component):
    return lambda **settings: make_component(RobotsTxtOnce, {"ROBOTSTXT_OBEY": True, **settings}, cache=False)


def rules_download(url=ROBOTS, **meta):
    """The request RobotsTxtMiddleware sends for a site's rules."""
    return Request(url, meta={"dont_obey_robotstxt": True, **meta})


def test_the_spiders_request_gets_the_rules_download_response_once(build):
    crawler, mw = build()
    rules = rules_download()
    assert run(mw.process_request(rules)) is None  # its own download goes on
    got = TextResponse(ROBOTS, body=BODY, request=rules)
    assert run(mw.process_response(rules, got)) is got

    spiders = Request(ROBOTS)
    shared = run(mw.process_request(spiders))
    assert shared.body == BODY and shared.request is spiders and FLAG_ROBOTSTXT_SHARED in shared.flags
    assert crawler.stats.get_value("robots/shared") == 1
    assert run(mw.process_request(Request(ROBOTS))) is None  # once: a third asker downloads


def test_other_urls_and_other_sites_are_downloaded(build):
    _, mw = build()
    rules = rules_download()
    run(mw.process_response(rules, TextResponse(ROBOTS, body=BODY, request=rules)))
    assert run(mw.process_request(Request("https://docs.example.com/"))) is None
    assert run(mw.process_request(Request("https://other.example.com/robots.txt"))) is None
    assert run(mw.process_request(Request("https://docs.example.com/robots.txt/x"))) is None


def test_a_redirected_rules_download_answers_its_first_url(build):
    _, mw = build()
    final = rules_download("https://www.docs.example.com/robots.txt", redirect_urls=[ROBOTS])
    run(mw.process_response(final, TextResponse(final.url, body=BODY, request=final)))
    assert run(mw.process_request(Request(ROBOTS))).body == BODY


def test_a_failed_rules_download_is_not_tried_again(build):
    crawler, mw = build()
    rules = rules_download()
    assert run(mw.process_exception(rules, TCPTimedOutError())) is None  # the error goes on
    with pytest.raises(IgnoreRequest, match="its download failed earlier in this crawl: TCPTimedOutError"):
        run(mw.process_request(Request(ROBOTS)))
    assert crawler.stats.get_value("robots/shared") == 1


def test_a_response_to_a_page_is_not_kept(build):
    _, mw = build()
    page = Request(ROBOTS)  # not RobotsTxtMiddleware's: the spider's own download
    run(mw.process_response(page, TextResponse(ROBOTS, body=BODY, request=page)))
    assert run(mw.process_request(Request(ROBOTS))) is None


def test_off_when_robots_txt_is_not_obeyed(build):
    with pytest.raises(NotConfigured, match="ROBOTSTXT_OBEY"):
        build(ROBOTSTXT_OBEY=False)


def test_a_kept_5xx_is_replayed_once_without_a_retry_and_a_third_asker_downloads(build):
    _, mw = build()
    rules = rules_download()
    run(mw.process_response(rules, TextResponse(ROBOTS, status=503, body=b"busy", request=rules)))
    spiders = Request(ROBOTS)
    assert run(mw.process_request(spiders)).status == 503 and spiders.meta["dont_retry"] is True
    assert run(mw.process_request(Request(ROBOTS))) is None


def test_what_is_kept_is_bounded(build):
    """A host the spider never asks about (a stylesheet's, a redirect's, another
    process's in a shared frontier) is forgotten in turn; a large body is not kept."""
    _, mw = build()
    for i in range(KEPT_SITES + 10):
        url = f"https://h{i}.example/robots.txt"
        rules = rules_download(url)
        run(mw.process_response(rules, TextResponse(url, body=BODY, request=rules)))
    assert len(mw._kept) == KEPT_SITES
    assert run(mw.process_request(Request("https://h0.example/robots.txt"))) is None  # forgotten: downloaded
    assert run(mw.process_request(Request(f"https://h{KEPT_SITES + 9}.example/robots.txt"))).body == BODY
    rules = rules_download()
    run(mw.process_response(rules, TextResponse(ROBOTS, body=b"#" * (KEPT_BYTES + 1), request=rules)))
    assert run(mw.process_request(Request(ROBOTS))) is None
