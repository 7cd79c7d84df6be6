"""A documentation site of realistic pages for the recrawl benchmark, served on 127.0.0.1.

    python -m bench.docsite --pages 350

Prints ``PORT <n>`` once it listens. Each page is one of the framework pages of the
evaluation set (``bench/evalset/docs``: MkDocs Material, Docusaurus, GitBook, Hugo
Docsy, Sphinx Furo / PyData / Read the Docs, VitePress) with its own title and text,
a site navigation linking every page of the site (as MkDocs and Sphinx themes render
the whole tree on every page: hundreds of links), and a page-specific section of
paragraphs, code and links inside its main content: 30 to 200 KB a page. The
template's own links are turned into fragments (they lead nowhere on this site).

Every page has a stable ETag and Last-Modified and ``Cache-Control: max-age=0`` (so
Scrapy's RFC2616Policy revalidates it, as this project does, instead of serving it
as fresh), and is gzipped when the client accepts it, as documentation hosts do.
Pages are made once, at start, so that serving costs the crawl nothing.
"""

from __future__ import annotations

import argparse
import gzip
import random
import re
from email.utils import formatdate
from http.server import ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

from bench.site import WORDS, QuietHandler

EVALSET = Path(__file__).resolve().parent / "evalset" / "docs"
TEMPLATES = (
    "mkdocs_material",
    "docusaurus_br",
    "docusaurus_lines",
    "gitbook",
    "hugo_docsy",
    "sphinx_furo",
    "sphinx_pydata",
    "sphinx_rtd",
    "vitepress",
)
#: where a page's own section goes: before the first of these in its template
CONTENT_ENDS = ("</article>", "</main>", "<footer")
SECTIONS = 12
LAST_MODIFIED = formatdate(1_700_000_000, usegmt=True)


def page_path(n: int) -> str:
    return "/" if n == 0 else f"/docs/section-{n % SECTIONS}/page-{n}.html"


def templates() -> list[str]:
    """The evaluation pages with their own links made fragments (external links kept:
    a crawler drops them as offsite)."""
    out = []
    for name in TEMPLATES:
        html = (EVALSET / f"{name}.html").read_text(encoding="utf-8")
        out.append(re.sub(r'href="(?!https?://)[^"]*"', 'href="#"', html))
    return out


def navigation(pages: int) -> str:
    items = "".join(
        f'<li class="nav-item"><a class="nav-link" href="{page_path(m)}">Section {m % SECTIONS}: topic {m}</a></li>'
        for m in range(pages)
    )
    return f'<nav class="site-nav" aria-label="Site navigation"><ul class="nav-list">{items}</ul></nav>'


def section(n: int, pages: int) -> str:
    """Page ``n``'s own text: 20 to 170 paragraphs, code blocks, links to other pages."""
    rng = random.Random(f"docsite-{n}")
    parts = [f"<h2>About topic {n}</h2>"]
    for k in range(rng.randint(20, 170)):
        words = " ".join(rng.choices(WORDS, k=rng.randint(40, 110)))
        if k % 7 == 3:
            target = rng.randrange(pages)
            words += f' See <a href="{page_path(target)}">topic {target}</a>.'
        parts.append(f"<p>{words}.</p>")
        if k % 11 == 5:
            parts.append(
                f"<pre><code class='language-python'>client = Client(topic={n})\n"
                f"client.call({k}, retries={k % 4})</code></pre>"
            )
    return "".join(parts)


def render(n: int, pages: int, template: str, nav: str) -> bytes:
    html = re.sub(r"<title>.*?</title>", f"<title>Topic {n} - Example docs</title>", template, count=1, flags=re.S)
    html = re.sub(r"(<body[^>]*>)", lambda m: m.group(1) + nav, html, count=1)
    at = min(i for end in CONTENT_ENDS if (i := html.find(end)) >= 0)
    return (html[:at] + section(n, pages) + html[at:]).encode("utf-8")


class DocSite:
    def __init__(self, pages: int) -> None:
        self.pages = pages
        nav = navigation(pages)
        shapes = templates()
        self.bodies = [render(n, pages, shapes[n % len(shapes)], nav) for n in range(pages)]
        self.gzipped = [gzip.compress(body, 6) for body in self.bodies]
        self.index = {page_path(n): n for n in range(pages)}


def serve(site: DocSite, port: int = 0) -> ThreadingHTTPServer:
    class Handler(QuietHandler):
        def do_GET(self) -> None:
            n = site.index.get(urlsplit(self.path).path)
            if n is None:
                self.send(404, {"Content-Type": "text/html"}, b"<h1>Not found</h1>")
                return
            validators = {"ETag": f'"page-{n}"', "Last-Modified": LAST_MODIFIED, "Cache-Control": "max-age=0"}
            if self.headers.get("If-None-Match") == validators["ETag"] or (
                self.headers.get("If-None-Match") is None and self.headers.get("If-Modified-Since") == LAST_MODIFIED
            ):
                self.send(304, validators)
                return
            headers = {"Content-Type": "text/html; charset=utf-8", **validators}
            body = site.bodies[n]
            if "gzip" in self.headers.get("Accept-Encoding", ""):
                headers["Content-Encoding"] = "gzip"
                body = site.gzipped[n]
            self.send(200, headers, body)

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=350)
    args = parser.parse_args()
    server = serve(DocSite(args.pages))
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
