"""A documentation site served on 127.0.0.1 that tests change between crawls.

Every response carries per-request noise unless turned off: a script nonce, a CSRF
meta tag and hidden form field, a timestamp in a comment, a cache-busting asset URL,
and a sidebar block that rotates on every request.
"""

from __future__ import annotations

import gzip
import hashlib
import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import formatdate, parsedate_to_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.helpers import serve, stop_serving

#: ``etag-constant``: one ETag for every version of a page, answered 304 (it hides
#: edits); ``last-modified-now``: a later Last-Modified on every response, never a 304
VALIDATOR_MODES = ("etag", "last-modified", "none", "etag-changing", "etag-constant", "last-modified-now")


@dataclass
class Page:
    title: str
    paragraphs: list[str]
    links: list[str] = field(default_factory=list)
    modified: float = field(default_factory=time.time)
    extra_html: str = ""  # raw HTML appended inside <main>

    def version(self) -> str:
        raw = repr((self.title, self.paragraphs, self.links, self.extra_html))
        return hashlib.sha256(raw.encode()).hexdigest()[:16]


@dataclass
class Stream:
    """A body written in chunks until the client hangs up or ``cap`` bytes are sent:
    an endless response. ``declared_length`` sends that Content-Length (else none:
    the body ends when the connection closes)."""

    chunk: bytes = b"<p>" + b"endless text " * 5000 + b"</p>"
    cap: int = 64 * 1024 * 1024
    content_type: str = "text/html; charset=utf-8"
    declared_length: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    #: seconds between the headers and the body: a client that hangs up at the headers
    #: has done so before the body is written
    pause: float = 0.0
    #: per response sent, the body bytes written (the socket took them)
    sent: list[int] = field(default_factory=list)


@dataclass
class Raw:
    """A response served as is: non-HTML files, malformed pages, errors. With ``etag``,
    sent with that ETag and answered 304 when a request names it."""

    body: bytes
    content_type: str = "text/html; charset=utf-8"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    etag: str = ""


class Site:
    """The site model. Change it between crawls with :meth:`page`, :meth:`remove`..."""

    def __init__(self, validators: str = "etag", noise: bool = True) -> None:
        assert validators in VALIDATOR_MODES, validators
        self.validators = validators
        self.noise = noise
        self.pages: dict[str, Page] = {}
        self.raw: dict[str, Raw] = {}
        #: path -> Location of a 301 (a key with a query string matches only that query)
        self.redirects: dict[str, str] = {}
        self.streams: dict[str, Stream] = {}
        self.sitemap: list[str] | None = None
        #: the sitemap's lastmod: None (none), "page" (each page's last change: right),
        #: or any other string, given as every page's lastmod (a build date)
        self.lastmod: str | None = None
        self.sitemap_status = 200  # another status: the sitemap fails so
        self.robots = "User-agent: *\nAllow: /\n"
        self.robots_status = 200  # another status: robots.txt fails so
        self.log: list[tuple[str, int]] = []
        self.lock = threading.Lock()
        self.counter = itertools.count()
        self.clock = itertools.count(1_800_000_000, 60)  # "now" of last-modified-now, a minute later each time
        self.server: ThreadingHTTPServer | None = None
        self.delay = 0.0
        self.delays: dict[str, float] = {}  # per path, seconds before the answer
        #: per path, an event the answer waits for: the test says when it is sent
        self.holds: dict[str, threading.Event] = {}
        #: per path, the statuses a browser's navigation gets, one per request (the last
        #: one stays); raw downloads get the page as usual
        self.browser_statuses: dict[str, list[int]] = {}
        self.browser_log: list[str] = []  # paths a browser navigated to, in order
        #: path prefix -> a function of the whole path (query included) giving the page
        #: there, or None (a 404): generated sites, endless ones (a calendar)
        self.generated: dict[str, Callable[[str], Page | None]] = {}

    # -- changing the site ---------------------------------------------------

    def page(
        self, path: str, title: str, *paragraphs: str, links: tuple[str, ...] | list[str] = (), extra_html: str = ""
    ) -> Page:
        page = Page(title, list(paragraphs), list(links), extra_html=extra_html)
        old = self.pages.get(path)
        if old is not None and old.version() == page.version():
            page.modified = old.modified
        else:
            page.modified = max(time.time(), (old.modified + 1) if old else 0)
        self.pages[path] = page
        return page

    def edit(self, path: str, *paragraphs: str) -> None:
        old = self.pages[path]
        self.page(path, old.title, *paragraphs, links=old.links, extra_html=old.extra_html)

    def remove(self, path: str) -> None:
        self.pages.pop(path, None)

    def move(self, old: str, new: str) -> None:
        self.pages[new] = self.pages.pop(old)
        for page in self.pages.values():
            page.links = [new if link == old else link for link in page.links]

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    @property
    def proxy_env(self) -> dict[str, str]:
        """Environment of a crawl that reaches this site under any host name (a URL of a
        reserved name, ``http://docs.example/``, the same in every run whatever the
        port): the site answers as the crawl's HTTP proxy."""
        return {"http_proxy": self.url, "no_proxy": "", "NO_PROXY": ""}

    def requests_for(self, path: str) -> list[int]:
        with self.lock:
            return [status for p, status in self.log if p == path]

    def count_status(self, status: int) -> int:
        with self.lock:
            return sum(1 for _, s in self.log if s == status)

    def reset_log(self) -> None:
        with self.lock:
            self.log.clear()

    # -- rendering -----------------------------------------------------------

    def render(self, path: str, page: Page) -> bytes:
        n = next(self.counter)
        links = "".join(f'<p><a href="{link}">{link.strip("/") or "home"} page</a></p>' for link in page.links)
        paragraphs = "".join(f"<p>{text}</p>" for text in page.paragraphs)
        noise_head = noise_body = sidebar = ""
        if self.noise:
            token = hashlib.sha256(f"{n}".encode()).hexdigest()
            noise_head = (
                f'<meta name="csrf-token" content="{token}">'
                f'<script nonce="{token[:12]}">window.__t={n};</script>'
                # (preloaded, not applied: the docs spider reads each stylesheet URL a
                # page applies once per crawl, so one changing on every request would
                # cost a request per page; a script's would fail the page's rendering)
                f'<link rel="preload" as="style" href="/static/site.css?v={token[:8]}">'
            )
            noise_body = (
                f"<!-- rendered at {time.time()} request {n} -->"
                f'<form action="/search"><input type="hidden" name="csrf" value="{token}">'
                f'<input name="q"><button>Search</button></form>'
            )
            sidebar = f"<aside><h3>Did you know?</h3><p>Tip number {n % 7}: rotate me.</p></aside>"
        html = (
            f"<!DOCTYPE html><html><head><title>{page.title}</title>{noise_head}</head><body>"
            f'<header><a href="/">Site</a> {noise_body}</header>'
            f'<nav><a href="/">Home</a></nav>'
            f"<main><h1>{page.title}</h1>{paragraphs}{links}{page.extra_html}</main>"
            f"{sidebar}<footer>Copyright Example Corp</footer></body></html>"
        )
        return html.encode("utf-8")

    def sitemap_xml(self) -> bytes:
        urls = "".join(
            f"<url><loc>{self.url}{path}</loc>{self.lastmod_xml(path)}</url>" for path in (self.sitemap or [])
        )
        return (
            '<?xml version="1.0" encoding="UTF-8"?>'
            f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'
        ).encode()

    def lastmod_xml(self, path: str) -> str:
        if self.lastmod is None:
            return ""
        if self.lastmod != "page":
            return f"<lastmod>{self.lastmod}</lastmod>"
        page = self.pages.get(path)
        if page is None:
            return ""
        return f"<lastmod>{datetime.fromtimestamp(page.modified, UTC).isoformat(timespec='microseconds')}</lastmod>"

    # -- serving -------------------------------------------------------------

    def start(self) -> Site:
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                site = self.server.site  # type: ignore[attr-defined]  # (the model it serves now: adopt)
                if self.path.startswith("http://"):  # asked as a proxy (an absolute URI): the path only
                    _, _, rest = self.path[len("http://") :].partition("/")
                    self.path = "/" + rest
                stream = site.streams.get(self.path.split("?")[0])
                if stream is not None:
                    self.send_stream(stream)
                    return
                if "?" in self.path and self.path in site.redirects:  # a URL with a query of its own
                    status, headers, body = 301, {"Location": site.redirects[self.path]}, b""
                elif (generated := site.generate(self.path)) is not None:
                    status, headers, body = generated
                else:
                    status, headers, body = site.respond(self.path.split("?")[0], dict(self.headers))
                with site.lock:
                    site.log.append((self.path.split("?")[0], status))
                delay = site.delays.get(self.path.split("?")[0], site.delay)
                if delay:
                    time.sleep(delay)
                hold = site.holds.get(self.path.split("?")[0])
                if hold is not None:
                    hold.wait(120)  # a safety net: tests set it themselves
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (a held answer)
                    self.close_connection = True

            def send_stream(self, stream: Stream) -> None:
                site = self.server.site  # type: ignore[attr-defined]
                with site.lock:
                    site.log.append((self.path.split("?")[0], 200))
                self.send_response(200)
                if stream.content_type:  # (empty: none sent)
                    self.send_header("Content-Type", stream.content_type)
                for name, value in stream.headers.items():
                    self.send_header(name, value)
                if stream.declared_length is not None:
                    self.send_header("Content-Length", str(stream.declared_length))
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                self.wfile.flush()
                if stream.pause:
                    time.sleep(stream.pause)
                sent = 0
                try:
                    while sent < stream.cap:
                        self.wfile.write(stream.chunk[: stream.cap - sent])
                        sent += len(stream.chunk[: stream.cap - sent])
                except OSError:  # the client hung up: what an endless body waits for
                    pass
                with site.lock:
                    stream.sent.append(sent)

        self.server = serve(Handler)
        self.server.site = self  # type: ignore[attr-defined]
        return self

    def adopt(self, other: Site) -> Site:
        """Serve this site from now on on ``other``'s running server (its port, so its
        URLs): a fresh site model where a cache crawled from ``other`` is valid as it is.
        ``other`` keeps the server and stops it; this site's :meth:`stop` is not called."""
        assert other.server is not None
        self.server = other.server
        self.server.site = self  # type: ignore[attr-defined]
        return self

    def stop(self) -> None:
        stop_serving(self.server)

    def generate(self, path: str) -> tuple[int, dict[str, str], bytes] | None:
        """The answer of a generated page (:attr:`generated`) at ``path``, or None."""
        for prefix, make in self.generated.items():
            if path.startswith(prefix):
                page = make(path)
                if page is None:
                    return 404, {"Content-Type": "text/html"}, b"<html><body><h1>Not found</h1></body></html>"
                return 200, {"Content-Type": "text/html; charset=utf-8"}, self.render(path.split("?")[0], page)
        return None

    def respond(self, path: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        if headers.get("Sec-Fetch-Mode") == "navigate":  # Chromium's, never Scrapy's
            with self.lock:
                self.browser_log.append(path)
                statuses = self.browser_statuses.get(path)
                status = (statuses.pop(0) if len(statuses) > 1 else statuses[0]) if statuses else 200
            if status != 200:
                return status, {"Content-Type": "text/html"}, f"<html><body><h1>{status}</h1></body></html>".encode()
        if path == "/robots.txt":
            if self.robots_status != 200:
                return self.robots_status, {"Content-Type": "text/html"}, b"<h1>Server error</h1>"
            robots = self.robots + (f"Sitemap: {self.url}/sitemap.xml\n" if self.sitemap is not None else "")
            return 200, {"Content-Type": "text/plain"}, robots.encode()
        if path == "/sitemap.xml":
            if self.sitemap is None:
                return 404, {"Content-Type": "text/html"}, b"<h1>Not found</h1>"
            if self.sitemap_status != 200:
                return self.sitemap_status, {"Content-Type": "text/html"}, b"<h1>Server error</h1>"
            return 200, {"Content-Type": "application/xml"}, self.sitemap_xml()
        if path in self.redirects:
            return 301, {"Location": self.redirects[path]}, b""
        if path in self.raw:
            raw = self.raw[path]
            etag = {"ETag": f'"{raw.etag}"'} if raw.etag else {}
            if raw.etag and headers.get("If-None-Match") == etag["ETag"]:
                return 304, etag, b""
            return raw.status, {"Content-Type": raw.content_type, **etag, **raw.headers}, raw.body
        page = self.pages.get(path)
        if page is None and path.endswith("/index.html"):
            page = self.pages.get(path[: -len("index.html")])
        if page is None:
            return 404, {"Content-Type": "text/html"}, b"<html><body><h1>Not found</h1></body></html>"
        body = self.render(path, page)
        out: dict[str, str] = {"Content-Type": "text/html; charset=utf-8"}
        if self.validators == "etag":
            etag = f'"{page.version()}"'
            out["ETag"] = etag
            if headers.get("If-None-Match") == etag:
                return 304, {"ETag": etag}, b""
        elif self.validators == "etag-changing":
            out["ETag"] = f'"{hashlib.sha256(body).hexdigest()[:16]}"'
        elif self.validators == "etag-constant":
            out["ETag"] = '"v1"'
            if headers.get("If-None-Match") == out["ETag"]:
                return 304, {"ETag": out["ETag"]}, b""
        elif self.validators == "last-modified-now":
            out["Last-Modified"] = formatdate(next(self.clock), usegmt=True)
        elif self.validators == "last-modified":
            out["Last-Modified"] = formatdate(int(page.modified), usegmt=True)
            since = headers.get("If-Modified-Since")
            if since and int(page.modified) <= parsedate_to_datetime(since).timestamp():
                return 304, {"Last-Modified": out["Last-Modified"]}, b""
        if "gzip" in headers.get("Accept-Encoding", "") and len(body) > 200:
            body = gzip.compress(body)
            out["Content-Encoding"] = "gzip"
        return 200, out, body


def docs_site(validators: str = "etag", noise: bool = True) -> Site:
    """The standard test site: a home page, a guide of three pages, an API page,
    and a page only the sitemap lists."""
    site = Site(validators, noise)
    site.page("/", "Home", "Welcome to the Example documentation.", links=["/guide/", "/api.html"])
    site.page(
        "/guide/",
        "Guide",
        "The guide explains installation and usage.",
        links=["/guide/install.html", "/guide/usage.html"],
    )
    site.page("/guide/install.html", "Install", "Run pip install example to install it.", links=["/guide/"])
    site.page("/guide/usage.html", "Usage", "Call example.run() with a config file.", links=["/guide/"])
    site.page("/api.html", "API", "The API has one function, run().", links=["/"])
    site.page("/hidden.html", "Hidden", "Only the sitemap links to this page.")
    site.sitemap = ["/", "/hidden.html"]
    return site
