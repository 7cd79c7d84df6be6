"""A real documentation site whose pages are reachable under two spellings, crawled night
after night with the revisit schedule on.

A tree of HTML files written by others (a Debian documentation package, unpacked by
``bench.docs_sites``) is served on 127.0.0.1 as a static host serves it: ``/x/`` answers
with ``/x/index.html``, every file has its Last-Modified and an ETag of its bytes. The
pages link directories as their generator writes them (Sphinx: ``library/index.html``);
the sitemap lists each directory as ``/x/`` with the file's modification time as its
lastmod (truthful). So the site links one page under two spellings.

Four crawls: the first, one more while the schedule learns the host's lastmod, then a
run after one page changed (its file and its lastmod), then an unchanged one. For each:
page requests (robots.txt, the sitemap and stylesheets apart), pages recorded, pages the run marked
removed, extractor calls. Every figure is against the site's own page count.

    python -m bench.two_spellings --root /work/docsites/python3.11-doc/usr/share/doc/python3.11/html \\
        [--json FILE]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading
from datetime import UTC, datetime
from email.utils import formatdate
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from bench.site import QuietHandler

ROOT = Path(__file__).resolve().parent.parent


class StaticSite:
    """The files under ``root``, served with validators; ``log`` the paths asked."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.log: list[str] = []
        self.lock = threading.Lock()
        self.server: ThreadingHTTPServer | None = None

    def pages(self) -> list[str]:
        """Every HTML file as the sitemap lists it (a directory's index as ``/x/``)."""
        paths = []
        for path in sorted(self.root.rglob("*.html")):
            rel = "/" + path.relative_to(self.root).as_posix()
            paths.append(rel[: -len("index.html")] if rel.endswith("/index.html") else rel)
        return paths

    def file(self, path: str) -> Path | None:
        target = self.root / unquote(path).lstrip("/")
        if target.is_dir():
            target = target / "index.html"
        return target if target.is_file() and self.root in target.resolve().parents else None

    def sitemap(self, base: str) -> bytes:
        entries = []
        for path in self.pages():
            found = self.file(path)
            assert found is not None
            lastmod = datetime.fromtimestamp(found.stat().st_mtime, UTC).isoformat(timespec="seconds")
            entries.append(f"<url><loc>{base}{path}</loc><lastmod>{lastmod}</lastmod></url>")
        return (
            '<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            + "".join(entries)
            + "</urlset>"
        ).encode()

    def start(self) -> str:
        site = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                path = urlsplit(self.path).path
                with site.lock:
                    site.log.append(path)
                base = f"http://{self.headers['Host']}"
                if path == "/robots.txt":
                    self.send(200, {"Content-Type": "text/plain"}, f"Sitemap: {base}/sitemap.xml\n".encode())
                    return
                if path == "/sitemap.xml":
                    self.send(200, {"Content-Type": "application/xml"}, site.sitemap(base))
                    return
                found = site.file(path)
                if found is None:
                    self.send(404, {"Content-Type": "text/html"}, b"<h1>Not found</h1>")
                    return
                body = found.read_bytes()
                etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
                headers = {
                    "Content-Type": "text/html" if found.suffix == ".html" else "application/octet-stream",
                    "ETag": etag,
                    "Last-Modified": formatdate(found.stat().st_mtime, usegmt=True),
                }
                if self.headers.get("If-None-Match") == etag:
                    self.send(304, headers)
                    return
                self.send(200, headers, body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


def crawl(url: str, cache: Path) -> dict[str, Any]:
    """``scrapy crawl docs`` of ``url`` into ``cache``, the revisit schedule on; its report."""
    settings = {
        "EXTRACTED_DOCS_DIR": str(cache),
        "EXTRACTOR": "bench.components.TrivialExtractor",  # (the report counts its calls)
        "REVISIT_ENABLED": "True",
        "REVISIT_MIN_INTERVAL": "0",
        "REVISIT_SAMPLE": "0",
        "DOWNLOAD_DELAY": "0",
        "CONCURRENT_REQUESTS_PER_DOMAIN": "8",
        "LOG_LEVEL": "WARNING",
    }
    command = [sys.executable, "-m", "scrapy", "crawl", "docs", "-a", f"start_urls={url}/"]
    for name, value in settings.items():
        command += ["-s", f"{name}={value}"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        raise SystemExit(f"crawl failed: {proc.stderr[-3000:]}")
    return json.loads((cache / "runs" / "latest.json").read_text())


def edit_one(root: Path) -> Path:
    """One page changes: a paragraph under the title of the first directory index found, its
    modification time (the sitemap's lastmod) moved on."""
    target = next(path for path in sorted(root.rglob("index.html")) if path.parent != root)
    html = target.read_text(encoding="utf-8", errors="replace")
    marker = "</h1>"  # (inside the page's main content: a change of its text)
    target.write_text(html.replace(marker, marker + "<p>A paragraph added by the benchmark.</p>", 1), "utf-8")
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, required=True, help="the site's HTML tree")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        site_root = Path(tmp) / "site"
        subprocess.run(["cp", "-a", str(args.root), str(site_root)], check=True)
        site = StaticSite(site_root)
        listed = set(site.pages())
        pages = len(listed)
        url = site.start()
        runs = []
        try:
            for name in ("first", "learning", "one page edited", "unchanged"):
                if name == "one page edited":
                    edit_one(site_root)
                site.log.clear()
                report = crawl(url, Path(tmp) / "cache")
                # (the stylesheets the pages apply are read once a crawl too: not pages)
                requests = [p for p in site.log if p.endswith((".html", "/"))]
                runs.append(
                    {
                        "run": name,
                        "pages": pages,
                        "requests": len(requests),
                        "distinct_paths": len(set(requests)),
                        "asked_twice": sorted(p for p in set(requests) if requests.count(p) > 1),
                        # spellings the sitemap does not use (/x/index.html), and broken links
                        "not_listed": sorted(set(requests) - listed)[:20],
                        "recorded": sum(report.get(k, 0) for k in ("pages_new", "pages_changed", "pages_unchanged")),
                        "removed": report.get("pages_removed"),
                        "calls": report.get("extractor_calls"),
                        "trusted_hosts": len((report.get("revisit") or {}).get("trusted_hosts") or []),
                        "complete": report.get("complete"),
                    }
                )
                print(json.dumps(runs[-1]), flush=True)
        finally:
            site.stop()
    if args.json:
        args.json.write_text(json.dumps({"root": str(args.root), "runs": runs}, indent=1) + "\n")


if __name__ == "__main__":
    main()
