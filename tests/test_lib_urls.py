from urllib.parse import quote, urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crawler.lib.urls import INDEX_RE, canonical_url, index_file_parent, is_tracking_param, url_domain


@pytest.mark.parametrize(
    "variant",
    [
        "https://docs.example.com/guide",
        "https://docs.example.com/guide/",
        "HTTPS://Docs.Example.COM:443/guide/",
        "https://docs.example.com/guide#install",
        "https://docs.example.com/guide?utm_source=newsletter&utm_medium=email",
        "https://docs.example.com/guide/?fbclid=abc&gclid=def",
    ],
)
def test_variants_of_one_page_share_a_canonical_url(variant):
    assert canonical_url(variant) == "https://docs.example.com/guide"


@pytest.mark.parametrize(
    "spelling",
    [
        "https://docs.example.com/guide/index.html",
        "https://docs.example.com/guide/index.htm",
        "https://docs.example.com/guide/default.html",
        "https://docs.example.com/guide/Default.aspx",
        "https://docs.example.com/guide/index.php?utm_source=x#top",
    ],
)
def test_an_index_file_name_is_a_page_of_its_own_until_evidence_says_otherwise(spelling):
    # /guide/auth/default.html may be the page about the default backend, not /guide/auth
    assert canonical_url(spelling) != "https://docs.example.com/guide"
    assert canonical_url(spelling).startswith("https://docs.example.com/guide/")
    assert index_file_parent(spelling) == legacy_canonical_url(spelling) == "https://docs.example.com/guide"


def test_index_file_parent_only_for_index_file_names():
    assert index_file_parent("https://a.com/guide/") is None
    assert index_file_parent("https://a.com/guide/indexes.html") is None
    assert index_file_parent("https://a.com/guide/index.html/") is None
    assert index_file_parent("https://a.com/index.html") == "https://a.com/"
    assert index_file_parent("https://a.com/x/index.php?page=2") == "https://a.com/x?page=2"


def test_meaningful_differences_are_kept():
    assert canonical_url("https://a.com/x?page=2") != canonical_url("https://a.com/x?page=3")
    assert canonical_url("https://a.com/x?b=2&a=1") == canonical_url("https://a.com/x?a=1&b=2")
    assert canonical_url("http://a.com/x") != canonical_url("https://a.com/x")
    assert canonical_url("http://a.com:8080/x") == "http://a.com:8080/x"
    assert canonical_url("https://a.com/X") != canonical_url("https://a.com/x")  # paths are case-sensitive


def test_root_keeps_its_slash():
    assert canonical_url("https://a.com") == canonical_url("https://a.com/") == "https://a.com/"
    assert canonical_url("https://a.com/index.html") == "https://a.com/index.html"


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


# -- properties ---------------------------------------------------------------

hosts = st.one_of(
    st.from_regex(r"[a-z][a-z0-9-]{0,10}(\.[a-z][a-z0-9-]{0,10}){0,3}", fullmatch=True),
    st.ip_addresses(v=4).map(str),
    st.ip_addresses(v=6).map(lambda ip: f"[{ip}]"),
)
ports = st.one_of(st.none(), st.integers(1, 65535))
segments = st.lists(st.text(max_size=8).map(lambda t: quote(t, safe="")), max_size=4)
names = st.one_of(
    st.sampled_from(["utm_source", "UTM_Medium", "utm%5Fcampaign", "fbclid", "gclid", "_ga"]),
    st.from_regex(r"[a-z]{1,6}", fullmatch=True),
)
queries = st.lists(st.tuples(names, st.text(max_size=6).map(lambda t: quote(t, safe=""))), max_size=4)


@st.composite
def urls(draw):
    scheme = draw(st.sampled_from(["http", "https", "HTTP"]))
    port = draw(ports)
    netloc = draw(hosts) + (f":{port}" if port is not None else "")
    path = "/" + "/".join(draw(segments)) + draw(st.sampled_from(["", "/", "/index.html"]))
    query = "&".join(f"{name}={value}" for name, value in draw(queries))
    fragment = draw(st.sampled_from(["", "#top", "#a%20b"]))
    return f"{scheme}://{netloc}{path}{'?' + query if query else ''}{fragment}"


@given(urls())
def test_canonical_url_is_idempotent_and_never_raises(url):
    canonical = canonical_url(url)
    assert canonical_url(canonical) == canonical
    parts = urlsplit(canonical)
    assert parts.scheme in ("http", "https") and not parts.fragment
    assert not any(is_tracking_param(pair.split("=")[0]) for pair in parts.query.split("&") if pair)


@given(urls(), st.sampled_from(["utm_source=x", "UTM%5FSOURCE=y", "fbclid=1"]), st.sampled_from(["", "#intro"]))
def test_tracking_parameters_and_fragments_never_change_the_identity(url, tracking, fragment):
    base = url.split("#")[0]
    extra = base + ("&" if "?" in base else "?") + tracking + fragment
    assert canonical_url(extra) == canonical_url(url)


def test_ipv6_hosts():
    assert canonical_url("http://[::1]/a/") == "http://[::1]/a"
    assert canonical_url("http://[::1]:8080/") == "http://[::1]:8080/"
    assert url_domain("http://[::1]:8080/x") == "[::1]:8080"


def legacy_canonical_url(url):
    """canonical_url as it was before IPv6 hosts and encoded tracking names were handled
    and before it stopped folding index file names: every other identity it gave must
    stay the same (a new url_hash re-embeds a page)."""
    from urllib.parse import urlunsplit

    from w3lib.url import canonicalize_url

    from crawler.lib.urls import DEFAULT_PORTS

    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if parts.port is not None and DEFAULT_PORTS.get(scheme) != parts.port:
        host = f"{host}:{parts.port}"
    if parts.username:
        host = f"{parts.username}@{host}"
    query = "&".join(pair for pair in parts.query.split("&") if pair and not is_tracking_param(pair.split("=", 1)[0]))
    path = INDEX_RE.sub("/", parts.path) or "/"
    if len(path) > 1 and path.endswith("/"):
        path = path.rstrip("/") or "/"
    return canonicalize_url(urlunsplit((scheme, host, path, query, "")))


odd_paths = st.lists(st.sampled_from(["a", ".", ";", "a b", "%7e", "%2F", "é", "", "index.html", "x y#z"]), max_size=4)


@given(urls(), odd_paths)
def test_identities_of_urls_that_worked_before_never_change(url, extra):
    url = url.split("#")[0].rstrip("/") + "/" + "/".join(extra)
    host = urlsplit(url).netloc
    if "[" in host or "%5f" in url.lower():  # IPv6 (raised before) or an encoded tracking name
        return
    if INDEX_RE.search(urlsplit(url).path):
        # the one change of identity: an index file name is kept (the page is its own
        # until evidence folds it); the old identity is still known, as its parent's
        assert canonical_url(url) != legacy_canonical_url(url)
        assert index_file_parent(url) == legacy_canonical_url(url)
    else:
        assert index_file_parent(url) is None
        assert canonical_url(url) == legacy_canonical_url(url)
