"""``make demo``: serve the sample site in demo/site on loopback, crawl it three times.

The second crawl shows the point of the project: every page answers 304 Not Modified
(the stdlib server honours If-Modified-Since), nothing is downloaded again and the
extractor is not called once. Then one page is edited and a third crawl re-extracts
that page only. The cache goes to extracted-docs/demo/ (emptied first; or $DEMO_CACHE),
the served copy of the site to a temporary directory removed at the end.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SITE = Path(__file__).resolve().parent / "site"


class Handler(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        host = self.headers.get("Host", "")
        if self.path == "/robots.txt":
            self._send(b"User-agent: *\nAllow: /\nSitemap: /sitemap.xml\n", "text/plain")
        elif self.path == "/sitemap.xml":
            urls = "".join(
                f"<url><loc>http://{host}/{p.relative_to(self.directory).as_posix()}</loc></url>"
                for p in sorted(Path(self.directory).rglob("*.html"))
            )
            body = f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'
            self._send(body.encode(), "application/xml")
        else:
            super().do_GET()

    def _send(self, body: bytes, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def crawl(url: str, cache: Path) -> dict[str, object]:
    command = [
        sys.executable,
        "-m",
        "scrapy",
        "crawl",
        "docs",
        "-a",
        f"start_urls={url}",
        "-s",
        f"EXTRACTED_DOCS_DIR={cache}",
        "-s",
        "DOWNLOAD_DELAY=0",
        "-s",
        "LOG_LEVEL=WARNING",
    ]
    subprocess.run(command, cwd=ROOT, check=True)
    return json.loads((cache / "runs" / "latest.json").read_text())


def show(title: str, report: dict[str, object]) -> None:
    print(f"\n{title}")
    for key in (
        "pages_new",
        "pages_changed",
        "pages_unchanged",
        "pages_removed",
        "responses_not_modified",
        "requests",
        "extractor_calls",
        "extraction_cache_hits",
        "bytes_downloaded",
    ):
        print(f"  {key:24} {report[key]}")


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="crawler-demo-"))
    site = work / "site"
    shutil.copytree(SITE, site)
    cache = Path(os.environ.get("DEMO_CACHE") or ROOT / "extracted-docs" / "demo")
    shutil.rmtree(cache, ignore_errors=True)
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    print(f"Serving the sample site at {url}; cache in {cache}")
    try:
        show("First crawl: every page is new and extracted", crawl(url, cache))
        show("Second crawl, nothing changed: 304s, zero extractor calls", crawl(url, cache))
        page = site / "guide" / "install.html"
        time.sleep(1.1)  # Last-Modified has one-second resolution
        page.write_text(page.read_text().replace("Python 3.10", "Python 3.11"))
        show("Third crawl, one page edited: one extractor call", crawl(url, cache))
    finally:
        server.shutdown()
        shutil.rmtree(work, ignore_errors=True)
    print(f"\nExtractions: {cache / 'extractions'}\nRun reports: {cache / 'runs'}")


if __name__ == "__main__":
    main()
