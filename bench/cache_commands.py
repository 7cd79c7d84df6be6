"""Benchmark: ``scrapy cache stats | ls | show`` on a cache of 100,000 pages.

    python -m bench.cache_commands              # 100,000 pages (built once, then reused)
    python -m bench.cache_commands --pages 5000 # smoke run

The cache is synthetic but made through the store's ports by the store the commands
use (``--store``, default ``EXTRACTED_DOCS_STORE``'s): page records with history,
content, an extraction per page, run reports.
Each command is timed as a user runs it (a subprocess, wall clock, best of 5) beside
the reference measured in the same run: ``scrapy version``, the cost of starting Scrapy
at all. The target is an answer in under a second.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path

from scrapy.settings import Settings

from crawler.cache import store_factory
from crawler.cache.records import add_history
from crawler.defaults import SETTINGS

ROOT = Path(__file__).resolve().parent.parent


def build_cache(directory: Path, pages: int, store_name: str = SETTINGS["EXTRACTED_DOCS_STORE"]) -> None:
    marker = directory / f".bench-{pages}"
    if marker.exists():
        return
    store = store_factory(Settings({"EXTRACTED_DOCS_STORE": store_name}))(directory)
    rng = random.Random(3)
    statuses = ["unchanged"] * 90 + ["changed"] * 5 + ["new"] * 3 + ["removed"] * 2
    for n in range(pages):
        url_hash = f"{n:040x}"
        domain = f"docs{n % 40}.example.com"
        url = f"https://{domain}/section{n % 17}/page-{n}.html"
        record = {
            "url": url, "canonical_url": url, "domain": domain, "title": f"Page {n}",
            "status": rng.choice(statuses), "content_hash": f"{rng.getrandbits(256):064x}",
            "first_seen": "2026-10-01T03:17:00Z", "last_seen": "2026-11-21T03:17:00Z",
            "last_changed": f"2026-11-{1 + n % 20:02d}T03:17:00Z", "last_extracted": "2026-11-21T03:20:00Z",
            "extraction": {"input_key": f"{n:064x}", "input_hash": f"{n:064x}", "extractor": "outline",
                           "version": "1", "file": f"extractions/{url_hash}.json"},
        }  # fmt: skip
        for event in ("new", "extracted", "changed", "extracted"):
            add_history(record, event, "2026-11-01T03:17:00Z")
        if n % 500 == 0:
            record["extraction_error"] = {"at": "2026-11-21T03:20:00Z", "error": "TimeoutError"}
        store.put_page(url_hash, record)
        store.put_content(url_hash, {"url": url, "text": f"# Page {n}\n\n" + "Some text. " * 200})
        store.write_extraction(url_hash, {"url": url, "input_key": f"{n:064x}", "data": {"title": f"Page {n}"}})
        if n % 5000 == 0:
            store.commit()
    for run in range(10):
        store.write_run_report(f"20261{run + 110}T031700Z-bench", {
            "run_id": f"20261{run + 110}T031700Z-bench", "finished_at": "2026-11-21T04:00:00Z",
            "finish_reason": "finished", "pages_fetched": pages // 20, "responses_not_modified": pages - pages // 20,
            "extractor_calls": pages // 20, "extraction_cache_hits": pages - pages // 20, "errors": 0,
        })  # fmt: skip
    store.close()
    marker.write_text("built")


def timed(command: list[str], repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--dir", default=None, help="where to build the cache (default: /tmp/bench-cache-N)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--store", default=SETTINGS["EXTRACTED_DOCS_STORE"], help="EXTRACTED_DOCS_STORE: the store to build and read"
    )
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args()
    directory = Path(args.dir or f"/tmp/bench-cache-{args.pages}")
    started = time.perf_counter()
    build_cache(directory, args.pages, args.store)
    print(f"cache of {args.pages:,} pages in {directory} ready ({time.perf_counter() - started:.0f} s)")
    scrapy = [sys.executable, "-m", "scrapy"]
    where = ["-s", f"EXTRACTED_DOCS_DIR={directory}", "-s", f"EXTRACTED_DOCS_STORE={args.store}"]
    reference = timed([*scrapy, "version"], args.repeat)
    figures: dict[str, float] = {"pages": args.pages, "scrapy_version_s": round(reference, 3)}
    print(f"reference, `scrapy version` (starting Scrapy): {reference:.3f} s")
    probe = args.pages * 7 // 9  # a page somewhere in the middle
    for name, sub in (
        ("stats", ["stats"]),
        ("ls", ["ls"]),
        ("ls_failed", ["ls", "--failed", "--limit", "0"]),
        ("show", ["show", f"https://docs{probe % 40}.example.com/section{probe % 17}/page-{probe}.html"]),
    ):
        seconds = timed([*scrapy, "cache", *sub, *where], args.repeat)
        figures[f"{name}_s"] = round(seconds, 3)
        print(f"scrapy cache {' '.join(sub):24} {seconds:.3f} s  ({seconds - reference:+.3f} s over the reference)")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
