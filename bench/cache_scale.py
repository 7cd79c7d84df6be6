"""Benchmark: the cache at 100,000 and 1,000,000 pages.

    python -m bench.cache_scale                   # 100,000 and 1,000,000 pages
    python -m bench.cache_scale --sizes 20000     # smoke run

For each size, an index of that many page records (built once under /tmp and reused),
then, in this process:

* crawl start-up: open the cache as a crawl does (check the file, take the lock) and
  read one record; time and memory (tracemalloc peak), against the same on an empty
  cache (the reference): the index must not be loaded whole;
* lookups per second: ``get_page`` of random keys, against a bare ``SELECT`` of the
  same keys on the same file (the reference);
* updates per second: ``put_page`` with the crawl's commit policy (every 200 writes);
* size on disk per page, against the size of the records' JSON;
* the store calls a crawl makes for one changed page (read its stored response,
  record, content and parsed page; write all four; commit every 200 pages), in
  microseconds per page.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import shutil
import sqlite3
import time
import tracemalloc
from pathlib import Path
from typing import Any

from crawler.cache import Cache
from crawler.cache.codecs import json_encode
from crawler.cache.responses import ParsedPage, StoredResponse
from crawler.cache.sqlite import SqliteDocStore
from crawler.cache.sqlitefile import DB_NAME
from crawler.cache.sqlpages import page_row


def record(n: int) -> dict[str, Any]:
    url = f"https://docs{n % 50}.example.com/section{n % 31}/page-{n}.html"
    return {
        "url": url, "canonical_url": url, "domain": f"docs{n % 50}.example.com", "title": f"Page {n}",
        "status": "unchanged", "content_hash": f"{n:064x}", "first_seen": "2026-10-01T03:17:00Z",
        "last_seen": "2026-11-21T03:17:00Z", "last_changed": "2026-11-01T03:17:00Z",
        "last_extracted": "2026-11-01T03:20:00Z",
        "extraction": {"input_key": f"{n:064x}", "input_hash": f"{n:064x}", "extractor": "outline", "version": "1",
                       "file": f"extractions/{n:040x}.json"},
        "history": [{"at": "2026-10-01T03:17:00Z", "event": "new", "content_hash": f"{n:064x}"},
                    {"at": "2026-10-01T03:20:00Z", "event": "extracted", "input_hash": f"{n:064x}"}],
    }  # fmt: skip


def build(directory: Path, pages: int) -> None:
    marker = directory / f".bench-scale-{pages}"
    if marker.exists():
        return
    SqliteDocStore(directory).close()  # the database as a crawl makes it
    conn = sqlite3.connect(directory / DB_NAME)
    batch = 50_000
    for start in range(0, pages, batch):
        rows = [page_row(f"{n:040x}", record(n)) for n in range(start, min(pages, start + batch))]
        conn.executemany(f"INSERT OR REPLACE INTO pages VALUES ({', '.join('?' * len(rows[0]))})", rows)
        conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    marker.write_text("built")


def warm(directory: Path) -> None:
    """Read the index files once, so that both sides of a comparison find them in the
    page cache (the reference used to run second, on pages the first side had read from
    disk: 0.06x instead of 0.4x after the crawl benchmark had filled the page cache)."""
    for path in directory.glob("*.sqlite*"):
        with path.open("rb") as handle:
            while handle.read(1 << 20):
                pass


def startup(directory: Path) -> tuple[float, int]:
    gc.collect()
    tracemalloc.start()
    started = time.perf_counter()
    cache = Cache.open(directory)
    cache.store.get_page(f"{1:040x}")
    seconds = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    cache.close()
    return seconds, peak


def lookups(directory: Path, pages: int, count: int) -> tuple[float, float]:
    rng = random.Random(1)
    keys = [f"{rng.randrange(pages):040x}" for _ in range(count)]
    warm(directory)
    cache = Cache.open(directory)
    started = time.perf_counter()
    for key in keys:
        assert cache.store.get_page(key) is not None
    ours = count / (time.perf_counter() - started)
    cache.close()
    conn = sqlite3.connect(directory / DB_NAME)
    started = time.perf_counter()
    for key in keys:
        conn.execute("SELECT record FROM pages WHERE key = ?", (key,)).fetchone()
    bare = count / (time.perf_counter() - started)
    conn.close()
    return ours, bare


def updates(directory: Path, pages: int, count: int) -> float:
    rng = random.Random(2)
    warm(directory)
    cache = Cache.open(directory, commit_every=200)
    started = time.perf_counter()
    for _ in range(count):
        n = rng.randrange(pages)
        cache.store.put_page(f"{n:040x}", record(n))
        cache.wrote()
    cache.commit()
    rate = count / (time.perf_counter() - started)
    cache.close()
    return rate


def per_page(directory: Path, pages: int = 3000) -> float:
    """Microseconds of store calls per changed page, as a crawl makes them (the
    second crawl of ``pages`` pages: every read finds the first crawl's entries)."""
    body = b"<html><body>" + b"<p>Some documentation text with links.</p>" * 400 + b"</body></html>"
    text = "Some documentation text. " * 600
    links = [f"https://docs.example.com/page-{m}.html" for m in range(50)]
    seconds = 0.0
    for crawl in range(2):
        store = SqliteDocStore(directory)
        started = time.perf_counter()
        for n in range(pages):
            key = f"{n:040x}"
            store.get_response(key), store.get_page(key), store.get_content(key), store.get_parsed(key)
            url = f"https://docs.example.com/page-{n}.html"
            store.put_response(key, StoredResponse(url, 200, {"ETag": f'"{n}-{crawl}"'}, body, "t", "t"))
            store.put_parsed(key, ParsedPage("ab" * 32, "markdown/2", {"title": f"Page {n}"}, links))
            content = {"url": url, "text": f"{text}{crawl}", "fields": {}, "content_hash": "x", "stored_at": "t"}
            store.put_content(key, content)
            store.put_page(key, {**record(n), "url": url, "status": "changed"})
            if n % 200 == 199:
                store.commit()
        store.commit()
        seconds = time.perf_counter() - started
        store.close()
    return seconds / pages * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--operations", type=int, default=20_000)
    parser.add_argument("--dir", default="/tmp", help="where the caches are built (and kept)")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args()
    empty = Path(args.dir) / "bench-scale-empty"
    build(empty, 0)
    ref_seconds, ref_peak = startup(empty)
    figures: dict[str, Any] = {"empty_startup_s": round(ref_seconds, 4), "empty_startup_peak_kb": ref_peak // 1024}
    print(f"reference, start-up on an empty cache: {ref_seconds * 1000:.1f} ms, {ref_peak / 1024:.0f} KB peak")
    page_dir = Path(args.dir) / "bench-scale-per-page"
    shutil.rmtree(page_dir, ignore_errors=True)
    figures["store_calls_per_changed_page_us"] = round(per_page(page_dir))
    shutil.rmtree(page_dir, ignore_errors=True)
    print(f"store calls of one changed page: {figures['store_calls_per_changed_page_us']} µs")
    for pages in (int(s) for s in args.sizes.split(",")):
        directory = Path(args.dir) / f"bench-scale-{pages}"
        started = time.perf_counter()
        build(directory, pages)
        built = time.perf_counter() - started
        seconds, peak = startup(directory)
        ours, bare = lookups(directory, pages, args.operations)
        rate = updates(directory, pages, args.operations)
        index_bytes = sum(p.stat().st_size for p in directory.glob(f"{DB_NAME}*"))
        json_bytes = sum(len(json_encode(record(n))) for n in range(0, pages, max(1, pages // 1000))) / min(pages, 1000)
        row = {
            "startup_s": round(seconds, 4),
            "startup_vs_empty": round(seconds / ref_seconds, 2),
            "startup_peak_kb": peak // 1024,
            "lookups_per_s": round(ours),
            "bare_select_per_s": round(bare),
            "lookup_vs_bare_select": round(ours / bare, 2),
            "updates_per_s": round(rate),
            "index_bytes_per_page": round(index_bytes / pages),
            "index_vs_json": round(index_bytes / pages / json_bytes, 2),
        }
        figures[str(pages)] = row
        print(f"\n{pages:,} pages (index built in {built:.0f} s, reused afterwards)")
        print(
            f"  crawl start-up: {seconds * 1000:.1f} ms ({row['startup_vs_empty']}x the empty cache), "
            f"{peak / 1024:.0f} KB peak memory"
        )
        print(f"  lookups: {ours:,.0f}/s ({row['lookup_vs_bare_select']}x a bare SELECT: {bare:,.0f}/s)")
        print(f"  updates: {rate:,.0f}/s (commit every 200)")
        print(f"  index on disk: {index_bytes / pages:,.0f} bytes/page ({row['index_vs_json']}x the record's JSON)")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
