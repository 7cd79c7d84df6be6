"""Page identity: a key the project owns, whatever request fingerprinter the crawl uses."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from scrapy import Request
from scrapy.utils.request import RequestFingerprinter
from scrapy.utils.test import get_crawler

from crawler.identity import IDENTITY_VERSION, PageIdentity, page_key
from crawler.incremental.folding import directory_of, folded_into
from crawler.lib.urls import canonical_url

URLS = [
    "https://docs.example.com/",
    "https://docs.example.com/guide",
    "https://docs.example.com/a b/ü?x=1&a=2#frag",
    "http://docs.example.com:8080/api/v1/call()?q=%7Bx%7D",
    "https://docs.example.com/#!/ajax",
    "https://DOCS.example.com/Path/index.html",
    "https://docs.example.com/search?q=caf%C3%A9&page=2",
]


class ReversedFingerprinter:
    """Another REQUEST_FINGERPRINTER_CLASS: a crawl may use any."""

    def fingerprint(self, request):
        return RequestFingerprinter().fingerprint(request)[::-1]


def test_the_key_is_the_one_scrapys_default_fingerprinter_gave_so_old_caches_keep_their_keys():
    fingerprinter = RequestFingerprinter()
    for url in URLS:
        canonical = canonical_url(url)
        assert page_key(canonical) == fingerprinter.fingerprint(Request(canonical)).hex(), url


@settings(max_examples=300, deadline=None)
@given(
    path=st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=30),
    query=st.dictionaries(st.text("abcxyz", min_size=1, max_size=4), st.text(max_size=6), max_size=3),
)
def test_the_key_matches_the_default_fingerprint_for_any_path_and_query(path, query):
    url = "https://docs.example.com/" + path.replace("#", "").replace("?", "")
    if query:
        url += "?" + "&".join(f"{k}={v}" for k, v in query.items()).replace("#", "")
    canonical = canonical_url(url)
    assert page_key(canonical) == RequestFingerprinter().fingerprint(Request(canonical)).hex()


def test_the_crawlers_request_fingerprinter_never_changes_a_pages_key():
    default = PageIdentity.from_crawler(get_crawler())
    other = PageIdentity.from_crawler(get_crawler(settings_dict={"REQUEST_FINGERPRINTER_CLASS": ReversedFingerprinter}))
    assert other is not default
    for url in URLS:
        assert other(url) == default(url)
    assert PageIdentity.version == IDENTITY_VERSION


def test_every_spelling_of_a_page_is_one_key():
    identity = PageIdentity()
    spellings = [
        "https://docs.example.com/guide",
        "https://docs.example.com/guide/",
        "https://docs.example.com:443/guide#section",
        "https://docs.example.com/guide?utm_source=x",
    ]
    assert len({identity.url_hash(url) for url in spellings}) == 1
    assert identity.url_hash("https://docs.example.com/guide/index.html") != identity.url_hash(spellings[0])
    assert directory_of(identity, "https://docs.example.com/guide/index.html") == identity(spellings[0])


def test_a_spelling_folded_before_is_requested_as_the_page_it_is_recorded_as():
    identity = PageIdentity()
    spelling, directory = "https://a.example/guide/index.html", "https://a.example/guide/"
    records = {identity.url_hash(directory): {"url": directory, "status": "unchanged", "folded_from": [spelling]}}

    class Store:
        def get_page(self, url_hash):
            return records.get(url_hash)

    assert folded_into(Store(), identity, spelling) == directory
    assert folded_into(Store(), identity, directory) is None  # not an index file spelling
    assert folded_into(Store(), identity, "https://a.example/api/index.html") is None  # never fetched
    records[identity.url_hash(directory)]["status"] = "removed"  # the page gone: the spelling is asked
    assert folded_into(Store(), identity, spelling) is None
    records[identity.url_hash(directory)] = {"url": directory, "status": "new"}  # never folded
    assert folded_into(Store(), identity, spelling) is None
    records[identity.url_hash(spelling)] = {"url": spelling, "status": "new"}  # a page of its own
    records[identity.url_hash(directory)]["folded_from"] = [spelling]
    assert folded_into(Store(), identity, spelling) is None
    records[identity.url_hash(spelling)]["status"] = "removed"  # until a run found it is the directory's
    assert folded_into(Store(), identity, spelling) == directory
