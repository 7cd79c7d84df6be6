import pytest

from crawler.lib.urls import canonical_url, is_tracking_param, url_domain


@pytest.mark.parametrize(
    "variant",
    [
        "https://docs.example.com/guide",
        "https://docs.example.com/guide/",
        "https://docs.example.com/guide/index.html",
        "https://docs.example.com/guide/index.htm",
        "HTTPS://Docs.Example.COM:443/guide/",
        "https://docs.example.com/guide#install",
        "https://docs.example.com/guide?utm_source=newsletter&utm_medium=email",
        "https://docs.example.com/guide/?fbclid=abc&gclid=def",
    ],
)
def test_variants_of_one_page_share_a_canonical_url(variant):
    assert canonical_url(variant) == "https://docs.example.com/guide"


def test_meaningful_differences_are_kept():
    assert canonical_url("https://a.com/x?page=2") != canonical_url("https://a.com/x?page=3")
    assert canonical_url("https://a.com/x?b=2&a=1") == canonical_url("https://a.com/x?a=1&b=2")
    assert canonical_url("http://a.com/x") != canonical_url("https://a.com/x")
    assert canonical_url("http://a.com:8080/x") == "http://a.com:8080/x"
    assert canonical_url("https://a.com/X") != canonical_url("https://a.com/x")  # paths are case-sensitive


def test_root_keeps_its_slash():
    assert canonical_url("https://a.com") == canonical_url("https://a.com/") == "https://a.com/"
    assert canonical_url("https://a.com/index.html") == "https://a.com/"


def test_tracking_params():
    assert is_tracking_param("UTM_Campaign")
    assert is_tracking_param("mc_eid")
    assert not is_tracking_param("q")


def test_url_domain():
    assert url_domain("http://127.0.0.1:8000/a") == "127.0.0.1:8000"
    assert url_domain("https://Example.com:443/") == "example.com"


def test_in_domains_matches_hosts_subdomains_and_ports():
    from crawler.lib.urls import in_domains

    assert in_domains("https://docs.example.com/guide", ["example.com"])
    assert in_domains("https://EXAMPLE.com/", [" example.com "])
    assert not in_domains("https://example.org/", ["example.com"])
    assert not in_domains("https://badexample.com/", ["example.com"])
    assert in_domains("http://127.0.0.1:8080/x", ["127.0.0.1"])
    assert in_domains("http://127.0.0.1:8080/x", ["127.0.0.1:8080"])
    assert not in_domains("http://127.0.0.1:8081/x", ["127.0.0.1:8080"])
    assert not in_domains("https://example.com/", [])
