"""Benchmark: how many pages of an existing cache a new converter changes, and what
upgrading costs.

    git worktree add --detach /tmp/old 565f4c6          # the code before the change
    python -m bench.converter_upgrade --old /tmp/old --site /path/to/html/folder
    python -m bench.converter_upgrade --old /tmp/old --site DIR --start python3.11/html/index.html

A folder of real HTML (a Debian documentation package, unpacked: see
``../shared/corpora/README.md``) is served on 127.0.0.1 with ``Last-Modified``
validators. The old checkout crawls it into a new cache (``scrapy crawl docs`` run
in that checkout, its converter writing the pages' text); then this checkout crawls the
same site into the same cache, as a user upgrading does. Every page answers ``304``
on the second crawl, so every page whose text differs under the new converter is a
page the upgrade would re-pay: with ``CONVERTER_UPGRADE=keep`` (the default) the
stored text is kept and the page counted (``converter.pages_pending`` of the run
report, with the tokens of its new input); the extractor is called for none of them.

Printed and written (``--json``): pages, pages whose text the new converter changes
(the share of the cache), the tokens of their new input, the extractor calls of the
upgrade crawl (0 expected) and of the first crawl.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = {
    "DOWNLOAD_DELAY": "0",
    "CONCURRENT_REQUESTS_PER_DOMAIN": "16",
    "LOG_LEVEL": "WARNING",
    "ROBOTSTXT_OBEY": "False",
}


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def serve(folder: Path) -> tuple[ThreadingHTTPServer, str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(QuietHandler, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def crawl(checkout: Path, start: str, cache: Path, max_pages: int | None) -> dict[str, Any]:
    """``scrapy crawl docs`` of ``start`` run in ``checkout``; its run report. Its whole
    site (``-a scope=site``; a checkout from before that argument crawls the whole site
    anyway and keeps it as an attribute), so both checkouts crawl the same pages."""
    command = [sys.executable, "-m", "scrapy", "crawl", "docs", "-a", f"start_urls={start}", "-a", "sitemaps=false"]
    command += ["-a", "scope=site"]
    if max_pages:
        command += ["-a", f"max_pages={max_pages}"]
    for name, value in {**SETTINGS, "EXTRACTED_DOCS_DIR": str(cache)}.items():
        command += ["-s", f"{name}={value}"]
    done = subprocess.run(command, cwd=checkout, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"crawl in {checkout} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    report: dict[str, Any] = json.loads((cache / "runs" / "latest.json").read_text())
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old", type=Path, required=True, help="a checkout of the code before the change")
    parser.add_argument("--site", type=Path, required=True, help="a folder of HTML pages to serve")
    parser.add_argument("--start", default="index.html", help="the start page, relative to --site")
    parser.add_argument("--max-pages", type=int, default=None)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    server, base = serve(args.site)
    work = Path(tempfile.mkdtemp(prefix="converter-upgrade-"))
    try:
        start = f"{base}/{args.start.lstrip('/')}"
        first = crawl(args.old.resolve(), start, work / "cache", args.max_pages)
        upgrade = crawl(ROOT, start, work / "cache", args.max_pages)
    finally:
        server.shutdown()
        shutil.rmtree(work, ignore_errors=True)
    converter = upgrade.get("converter", {})
    keys = ("pages_new", "pages_changed", "pages_unchanged", "pages_empty", "responses_not_modified", "extractor_calls")
    pages = sum(upgrade.get(name, 0) for name in ("pages_new", "pages_changed", "pages_unchanged"))
    result = {
        "site": str(args.site),
        "start": args.start,
        "old": str(args.old),
        "first_crawl": {key: first.get(key) for key in keys} | {"converter": first.get("converter", {}).get("id")},
        "upgrade": {key: upgrade.get(key) for key in keys} | {"converter": converter},
        "pages": pages,
        "pages_changed_by_converter": converter.get("pages_pending", 0),
        "share_changed": round(converter.get("pages_pending", 0) / pages, 4) if pages else 0.0,
    }
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
