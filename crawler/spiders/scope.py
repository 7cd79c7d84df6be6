"""The docs spider's default scope: a crawl stays under the path of each start URL.

A start URL's path, its *scope path* (:func:`scope_path`): its directory when its last
segment is a page's file name (``/en/index.html``, ``/en/intro.html``: ``/en``), else
the path itself (``/en/``, ``/en``, ``/docs/intro``), without a trailing slash. The
crawl's pages on that start URL's host (or a subdomain of it) are those whose path is
the scope path or under it (:func:`under`: ``/en`` and ``/en/...``, not ``/english``);
a start URL at the root (``/``, ``/index.html``) takes its whole host. Several start
URLs: the union. A host no start URL is on (one ``allowed_domains`` adds) has no scope
path: all its pages. Paths are compared percent-encoded alike and case-sensitively;
the scheme, the port and the query do not count.

Pure functions and a small class, no Scrapy dependency: the spider asks, counts and
logs (``-a scope=site`` or ``-a include=...`` leave it out).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from w3lib.url import canonicalize_url

if TYPE_CHECKING:
    from collections.abc import Iterable

#: the last segment of a path that names a page's file, not a directory
PAGE_FILE_RE = re.compile(r"\.(?:s?html?|xhtml|php\d?|aspx?|jspx?|cfm)$", re.IGNORECASE)


def url_path(url: str) -> str:
    """The path of ``url``, percent-encoded as :func:`w3lib.url.canonicalize_url` writes
    it (the same path however a link spells it).

    >>> url_path("https://h/en/a.html?x=1#top"), url_path("https://h/%c3%bcber/%7Ex")
    ('/en/a.html', '/%C3%BCber/~x')
    >>> url_path("https://h/über/") == url_path("https://h/%C3%BCber/")
    True
    """
    path = urlsplit(url).path
    if path.isascii() and "%" not in path:
        return path
    return urlsplit(canonicalize_url(url)).path


def scope_path(url: str) -> str:
    """The path a crawl started at ``url`` stays under; ``""`` for its whole host.

    >>> scope_path("https://h/en/"), scope_path("https://h/en/index.html"), scope_path("https://h/en")
    ('/en', '/en', '/en')
    >>> scope_path("https://h/"), scope_path("https://h"), scope_path("https://h/index.html?x=1")
    ('', '', '')
    >>> scope_path("https://h/en/intro.html"), scope_path("https://h/docs/intro"), scope_path("https://h/v1.2/")
    ('/en', '/docs/intro', '/v1.2')
    """
    path = url_path(url)
    directory, _, last = path.rpartition("/")
    if PAGE_FILE_RE.search(last):
        path = directory
    return path.rstrip("/")


def under(path: str, base: str) -> bool:
    """Whether ``path`` is the scope path ``base`` or under it (``""``: every path).

    >>> under("/en", "/en"), under("/en/", "/en"), under("/en/a/b.html", "/en")
    (True, True, True)
    >>> under("/english/", "/en"), under("/docs/", "/en"), under("/anything", "")
    (False, False, True)
    """
    return not base or path == base or path.startswith(base + "/")


def _host(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


class PathScope:
    """The scope paths of a crawl's start URLs, by host; :meth:`admits` says whether a
    URL is in the crawl's scope, :meth:`add` widens it (a start URL's redirect).

    >>> scope = PathScope(["https://docs.example.com/en/", "https://blog.example.org/"])
    >>> scope.admits("https://docs.example.com/en/guide/"), scope.admits("https://docs.example.com/en")
    (True, True)
    >>> scope.admits("https://docs.example.com/de/guide/"), scope.admits("https://docs.example.com/")
    (False, False)
    >>> scope.admits("https://blog.example.org/2026/post"), scope.admits("https://other.example.net/x")
    (True, True)
    >>> scope.add("https://docs.example.com/de/index.html"), scope.admits("https://docs.example.com/de/guide/")
    (True, True)
    >>> scope.add("https://docs.example.com/de/guide/"), str(scope)
    (False, 'docs.example.com/en, docs.example.com/de, blog.example.org/')
    """

    def __init__(self, start_urls: Iterable[str]) -> None:
        #: host -> its scope paths (``""``: the whole host)
        self.paths: dict[str, list[str]] = {}
        for url in start_urls:
            self.add(url)

    def add(self, url: str) -> bool:
        """The scope path of ``url`` added; whether the scope is wider for it."""
        if self.admits(url, only_hosts_with_paths=True):
            return False
        paths = self.paths.setdefault(_host(url), [])
        base = scope_path(url)
        paths[:] = [path for path in paths if not under(path, base)] + [base]
        return True

    def admits(self, url: str, *, only_hosts_with_paths: bool = False) -> bool:
        """Whether ``url`` is in the scope: under a scope path of its host (or of a
        host it is a subdomain of); a URL of a host no start URL is on is, unless
        ``only_hosts_with_paths``."""
        host = _host(url)
        path: str | None = None
        matched = False
        for scope_host, bases in self.paths.items():
            if host != scope_host and not host.endswith("." + scope_host):
                continue
            matched = True
            if path is None:
                path = url_path(url)
            if any(under(path, base) for base in bases):
                return True
        return not matched and not only_hosts_with_paths

    def __str__(self) -> str:
        return ", ".join(f"{host}{base or '/'}" for host, bases in self.paths.items() for base in bases)
