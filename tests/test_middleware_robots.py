"""robots.txt downloaded once per crawl (crawler.middlewares.robots.RobotsTxtOnce); the
end-to-end counts of requests are in tests/test_e2e_unchanged_recrawl.py and
tests/test_e2e_robustness.py."""

import pytest
from scrapy import Request
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import TextResponse
from twisted.internet.error import TCPTimedOutError

from crawler.meta import FLAG_ROBOTSTXT_SHARED
from crawler.middlewares.robots import RobotsTxtOnce
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
