"""A generated documentation site for the crawl benchmark, served on 127.0.0.1.

    python -m bench.site --pages 2000 [--noise] [--changing-validators]

Prints ``PORT <n>`` once it listens. Pages carry realistic boilerplate (header, nav,
a cookie banner and a newsletter box inside ``<main>``, footer) and, with ``--noise``,
per-request noise: a script nonce, a CSRF token, a timestamp comment, a rotating sidebar
block. Validators: an ETag and a Last-Modified derived from each page's version (stable
while the page does not change), or with ``--changing-validators`` an ETag computed over
the response body (new on every response, as servers that hash dynamic output do).
``POST /_edit?fraction=0.05`` edits that share of the pages (chosen by a fixed random generator) and answers their
paths as JSON.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import random
import threading
import time
from email.utils import formatdate, parsedate_to_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

WORDS = [
    "install",
    "configure",
    "client",
    "server",
    "request",
    "response",
    "token",
    "widget",
    "module",
    "package",
    "function",
    "method",
    "object",
    "value",
    "field",
    "record",
    "index",
    "cache",
    "store",
    "page",
    "site",
    "crawl",
    "extract",
    "model",
    "prompt",
    "vector",
    "chunk",
    "search",
    "query",
    "filter",
    "limit",
    "error",
    "retry",
    "timeout",
    "network",
    "stream",
    "buffer",
    "file",
    "path",
    "release",
    "version",
]


class GeneratedSite:
    def __init__(self, pages: int, salt: int = 5, noise: bool = False, changing_validators: bool = False) -> None:
        self.pages = pages
        self.salt = salt
        self.noise = noise
        self.changing_validators = changing_validators
        self.versions = [0] * pages
        self.modified = [1_700_000_000.0] * pages
        self.counter = itertools.count()
        self.lock = threading.Lock()
        self.rng = random.Random(salt)

    def path(self, n: int) -> str:
        return "/" if n == 0 else f"/docs/section-{n % 20}/page-{n}.html"

    def links(self, n: int) -> list[int]:
        rng = random.Random(f"{self.salt}-links-{n}")
        children = [c for c in (2 * n + 1, 2 * n + 2) if c < self.pages]
        return children + [rng.randrange(self.pages) for _ in range(3)]

    def body(self, n: int) -> str:
        rng = random.Random(f"{self.salt}-{n}-{self.versions[n]}")
        paragraphs = "".join(f"<p>{' '.join(rng.choices(WORDS, k=rng.randint(40, 90)))}.</p>" for _ in range(6))
        code = f"<pre><code class='language-python'>client.call({n}, version={self.versions[n]})</code></pre>"
        return f"<h1>Page {n}</h1>{paragraphs}{code}"

    def render(self, n: int) -> bytes:
        request = next(self.counter)
        links = "".join(f'<li><a href="{self.path(m)}">Page {m}</a></li>' for m in self.links(n))
        head = body_noise = aside = ""
        css = "/s.css"
        if self.noise:
            css = f"/s.css?v={request}"  # a cache buster
            token = hashlib.sha256(str(request).encode()).hexdigest()
            head = (
                f'<meta name="csrf-token" content="{token}"><script nonce="{token[:16]}">var t={time.time()};</script>'
            )
            body_noise = f"<!-- {time.time()} --><input type='hidden' name='csrf' value='{token}'>"
            aside = f"<aside><p>Tip {request % 9}: rotate me.</p></aside>"
        html = (
            f"<!DOCTYPE html><html><head><title>Page {n} - Example docs</title>{head}"
            f'<link rel="stylesheet" href="{css}"></head><body>'
            f"<header><a href='/'>Example docs</a>{body_noise}</header><nav><ul>{links}</ul></nav>"
            f"<main><div class='cookies'><p>We use cookies to make this documentation better. By using it you "
            f"accept our cookie policy and our terms of service.</p></div>{self.body(n)}"
            f"<ul>{links}</ul><div class='newsletter'><p>Subscribe to the Example newsletter to hear about "
            f"new releases, security fixes and events near you.</p></div></main>{aside}"
            f"<footer><p>Copyright 2026 Example Inc.</p></footer></body></html>"
        )
        return html.encode()

    def sitemap(self, host: str) -> bytes:
        urls = "".join(f"<url><loc>http://{host}{self.path(n)}</loc></url>" for n in range(self.pages))
        return (
            f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'.encode()
        )

    def edit(self, fraction: float) -> list[str]:
        with self.lock:
            chosen = self.rng.sample(range(1, self.pages), max(1, int(self.pages * fraction)))
            for n in chosen:
                self.versions[n] += 1
                self.modified[n] += 86_400
        return [self.path(n) for n in sorted(chosen)]

    def find(self, path: str) -> int | None:
        if path == "/":
            return 0
        if path.startswith("/docs/section-") and path.endswith(".html"):
            try:
                n = int(path.rsplit("page-", 1)[1][:-5])
            except ValueError:
                return None
            return n if 0 < n < self.pages and self.path(n) == path else None
        return None


class QuietHandler(BaseHTTPRequestHandler):
    """The benchmark sites' request handler: HTTP/1.1, no access log, :meth:`send`."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def send(self, status: int, headers: dict[str, str], body: bytes = b"") -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def serve(site: GeneratedSite, port: int = 0) -> ThreadingHTTPServer:
    class Handler(QuietHandler):
        def do_POST(self) -> None:
            parts = urlsplit(self.path)
            if parts.path != "/_edit":
                self.send(404, {})
                return
            fraction = float(parse_qs(parts.query).get("fraction", ["0.05"])[0])
            self.send(200, {"Content-Type": "application/json"}, json.dumps(site.edit(fraction)).encode())

        def do_GET(self) -> None:
            path = urlsplit(self.path).path
            if path == "/robots.txt":
                self.send(200, {"Content-Type": "text/plain"}, b"User-agent: *\nAllow: /\nSitemap: /sitemap.xml\n")
                return
            if path == "/sitemap.xml":
                self.send(200, {"Content-Type": "application/xml"}, site.sitemap(self.headers.get("Host", "")))
                return
            n = site.find(path)
            if n is None:
                self.send(404, {"Content-Type": "text/html"}, b"<h1>Not found</h1>")
                return
            body = site.render(n)
            if site.changing_validators:
                validators = {"ETag": f'"{hashlib.sha256(body).hexdigest()[:20]}"'}
            else:
                validators = {
                    "ETag": f'"{n}-{site.versions[n]}"',
                    "Last-Modified": formatdate(site.modified[n], usegmt=True),
                }
            inm = self.headers.get("If-None-Match")
            ims = self.headers.get("If-Modified-Since")
            if inm is not None:
                fresh = inm == validators["ETag"]
            else:
                fresh = bool(
                    ims and "Last-Modified" in validators and site.modified[n] <= parsedate_to_datetime(ims).timestamp()
                )
            if fresh:
                self.send(304, validators)
                return
            self.send(200, {"Content-Type": "text/html; charset=utf-8", **validators}, body)

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--noise", action="store_true")
    parser.add_argument("--changing-validators", action="store_true")
    args = parser.parse_args()
    server = serve(GeneratedSite(args.pages, noise=args.noise, changing_validators=args.changing_validators))
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
