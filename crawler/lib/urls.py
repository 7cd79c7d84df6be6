"""URL canonicalization: one identity for every spelling of a page's URL.

Pure functions, no Scrapy dependency.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, unquote_plus, urlencode, urlsplit, urlunsplit

from w3lib.url import canonicalize_url

#: Query parameters that identify a campaign or a click, never a page.
TRACKING_PARAMS = frozenset(
    {
        "fbclid",
        "gclid",
        "dclid",
        "gbraid",
        "wbraid",
        "msclkid",
        "mc_cid",
        "mc_eid",
        "yclid",
        "igshid",
        "_ga",
        "_gl",
        "_hsenc",
        "_hsmi",
        "ref_src",
    }
)
TRACKING_PREFIXES = ("utm_", "pk_", "mtm_")

DEFAULT_PORTS = {"http": 80, "https": 443}
INDEX_RE = re.compile(r"/(?:index|default)\.(?:html?|php|aspx?)$", re.IGNORECASE)


def is_tracking_param(name: str) -> bool:
    """
    >>> is_tracking_param("utm_source"), is_tracking_param("page")
    (True, False)
    """
    lowered = name.lower()
    return lowered in TRACKING_PARAMS or lowered.startswith(TRACKING_PREFIXES)


def canonical_url(url: str) -> str:
    """Return the canonical form of ``url``: the identity of the page it names.

    An index file name is kept: whether ``/docs/index.html`` is the page ``/docs`` is for
    evidence to say (:func:`index_file_parent`), never the name.

    >>> canonical_url("HTTP://Example.COM:80/docs/?utm_source=x&b=2&a=1#intro")
    'http://example.com/docs?a=1&b=2'
    >>> canonical_url("https://example.com:443/docs/default.html")
    'https://example.com/docs/default.html'
    >>> canonical_url("https://example.com")
    'https://example.com/'
    >>> canonical_url("http://[::1]:8080/a/?utm%5Fsource=x")
    'http://[::1]:8080/a'
    """
    # (every URL that worked before keeps its identity, but for three kinds: IPv6 hosts,
    # which raised, percent-encoded tracking parameter names, which were kept, and paths
    # ending in an index file name, which were folded into their directory)
    return _canonical(url, fold_index=False)


def index_file_parent(url: str) -> str | None:
    """The canonical URL of the directory page ``url`` may be another spelling of, when
    its path ends in an index file name (``index.html``, ``default.aspx``...); else
    ``None``. A possibility, not a fact: ``/guide/auth/default.html`` may be a page of
    its own (ContentHashPipeline folds it only on evidence).

    >>> index_file_parent("https://example.com/docs/index.html?b=2&a=1")
    'https://example.com/docs?a=1&b=2'
    >>> index_file_parent("https://example.com/index.php"), index_file_parent("https://example.com/docs/")
    ('https://example.com/', None)
    """
    if not INDEX_RE.search(urlsplit(url.strip()).path):
        return None
    return _canonical(url, fold_index=True)


def _canonical(url: str, *, fold_index: bool) -> str:
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = _host(parts.hostname)
    if parts.port is not None and DEFAULT_PORTS.get(scheme) != parts.port:
        host = f"{host}:{parts.port}"
    if parts.username:
        host = f"{parts.username}@{host}"
    query = "&".join(
        pair for pair in parts.query.split("&") if pair and not is_tracking_param(unquote_plus(pair.split("=", 1)[0]))
    )
    path = (INDEX_RE.sub("/", parts.path) if fold_index else parts.path) or "/"
    if len(path) > 1 and path.endswith("/"):
        path = path.rstrip("/") or "/"
    rebuilt = urlunsplit((scheme, host, path, query, ""))
    return canonicalize_url(rebuilt)


def _host(hostname: str | None) -> str:
    """A URL's host name, lower case, an IPv6 address in brackets as a URL needs it."""
    host = (hostname or "").lower()
    return f"[{host}]" if ":" in host else host


def url_domain(url: str) -> str:
    """The host of ``url`` (with a non-default port), the unit of a site.

    >>> url_domain("https://Docs.Example.com:8443/a")
    'docs.example.com:8443'
    """
    parts = urlsplit(url)
    host = _host(parts.hostname)
    if parts.port is not None and DEFAULT_PORTS.get(parts.scheme.lower()) != parts.port:
        host = f"{host}:{parts.port}"
    return host


def in_domains(url: str, domains: list[str]) -> bool:
    """Whether ``url``'s host is one of ``domains`` or a subdomain of one. A domain
    with a port (``host:8080``) matches that port only.

    >>> in_domains("https://docs.example.com/a", ["example.com"])
    True
    >>> in_domains("https://notexample.com/a", ["example.com"])
    False
    >>> in_domains("http://127.0.0.1:8080/", ["127.0.0.1:8080"]), in_domains("http://127.0.0.1:9/", ["127.0.0.1:8080"])
    (True, False)
    """
    host = (urlsplit(url).hostname or "").lower()
    with_port = url_domain(url)
    for domain in domains:
        domain = domain.strip().lower()
        if not domain:
            continue
        if ":" in domain:
            if with_port == domain:
                return True
        elif host == domain or host.endswith("." + domain):
            return True
    return False


def without_tracking(url: str) -> str:
    """``url`` without its tracking parameters (``utm_*``, ``fbclid``...), otherwise
    as written.

    >>> without_tracking("https://a.example/docs/?utm_source=x&page=2#intro")
    'https://a.example/docs/?page=2#intro'
    >>> without_tracking("https://a.example/docs/")
    'https://a.example/docs/'
    """
    parts = urlsplit(url)
    if not parts.query:
        return url
    params = parse_qsl(parts.query, keep_blank_values=True)
    kept = [(name, value) for name, value in params if not is_tracking_param(name)]
    if len(kept) == len(params):
        return url
    return urlunsplit(parts._replace(query=urlencode(kept)))
