"""Benchmark: a crawl whose sitemap lists 50,000 pages, its first pages only.

    python -m bench.sitemap_stream                    # 50,000 pages, stop after 2,000 responses
    python -m bench.sitemap_stream --revisit          # REVISIT_ENABLED: the sitemaps read first
    python -m bench.sitemap_stream --old /tmp/old     # also the code of another checkout, side by side

The site is ``bench/site.py``'s generated one (every page in its sitemap, each with a
lastmod), served in this process. Each crawl is ``scrapy crawl docs`` in a subprocess,
stopped by Scrapy's ``CLOSESPIDER_PAGECOUNT`` once it has that many responses: what a
sitemap costs shows from its reading on, not after the whole site. Measured:

- the process's peak RSS (``ru_maxrss`` of the crawl process, from the OS);
- the most requests in Scrapy's scheduler at once (:class:`SchedulerProbe`);
- seconds from the crawl's launch to the sitemap's download, to the first page request
  after it, and the longest time the server saw no page request once the crawl began
  (reading and queueing a sitemap stops the crawl: nothing else runs meanwhile);
- the CPU seconds of the crawl process.

With ``--old PATH`` (``git archive COMMIT | tar -x -C PATH``) the same crawl is run in
that checkout too (this file copied into its ``bench/`` if it has none: the probe is
here), on the same site, the two taking turns ``--repeat`` times; each figure is the
run with the least CPU of its code.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from scrapy import signals

from bench.crawl import COMMON, ROOT
from bench.site import GeneratedSite, serve

#: the crawl benchmark's settings, with the probes
SETTINGS = {
    **COMMON,
    "EXTENSIONS": json.dumps(
        {
            "scrapy.extensions.telnet.TelnetConsole": None,
            "bench.components.StatsDump": 0,
            "bench.sitemap_stream.SchedulerProbe": 0,
        }
    ),
}


class SchedulerProbe:
    """Extension: the most requests Scrapy's scheduler held at once, as the stat
    ``bench/scheduler_max`` (looked at each time a request is scheduled)."""

    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Any) -> SchedulerProbe:
        probe = cls(crawler)
        crawler.signals.connect(probe.request_scheduled, signal=signals.request_scheduled)
        return probe

    def request_scheduled(self, request: Any) -> None:
        scheduler = self.crawler.engine.scheduler
        if scheduler is not None:
            # (sent before the request is queued: it counts as one more)
            self.crawler.stats.max_value("bench/scheduler_max", len(scheduler) + 1)


class TimedSite(GeneratedSite):
    """The generated site, each page's entry in its sitemap with a lastmod, and the
    times (``time.monotonic()``) of its sitemap's downloads and of the page requests."""

    def __init__(self, pages: int) -> None:
        super().__init__(pages)
        self.sitemap_times: list[float] = []
        self.page_times: list[float] = []

    def sitemap(self, host: str) -> bytes:
        urls = "".join(
            f"<url><loc>http://{host}{self.path(n)}</loc><lastmod>2026-11-{1 + n % 28:02d}</lastmod></url>"
            for n in range(self.pages)
        )
        body = f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'
        self.sitemap_times.append(time.monotonic())
        return body.encode()

    def find(self, path: str) -> int | None:
        self.page_times.append(time.monotonic())
        return super().find(path)


def crawl(site: TimedSite, url: str, checkout: Path, stop_after: int, revisit: bool) -> dict[str, Any]:
    """One crawl of ``site`` at ``url`` with the code of ``checkout``: its figures."""
    site.sitemap_times.clear()
    site.page_times.clear()
    with tempfile.TemporaryDirectory(prefix="sitemap-stream-") as work:
        stats_file = Path(work) / "stats.json"
        settings = {
            **SETTINGS,
            "EXTRACTED_DOCS_DIR": str(Path(work) / "cache"),
            "BENCH_STATS_FILE": str(stats_file),
            "CLOSESPIDER_PAGECOUNT": str(stop_after),
            "REVISIT_ENABLED": str(revisit),
        }
        command = [sys.executable, "-m", "scrapy", "crawl", "docs", "-a", f"start_urls={url}/"]
        for name, value in settings.items():
            command += ["-s", f"{name}={value}"]
        env = {**os.environ, "PYTHONPATH": str(checkout)}
        started = time.monotonic()
        proc = subprocess.Popen(command, cwd=checkout, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        assert proc.stderr is not None
        errors = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise SystemExit(f"crawl failed ({proc.returncode}): {errors.decode(errors='replace')[-3000:]}")
        stats = json.loads(stats_file.read_text())
    pages = sorted(site.page_times)
    served = site.sitemap_times[0] if site.sitemap_times else None
    after = [t for t in pages if served is not None and t > served]
    gaps = [b - a for a, b in itertools.pairwise(pages)]
    return {
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "scheduler_max": stats.get("bench/scheduler_max", 0),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "sitemap_s": round(served - started, 2) if served is not None else None,
        "first_page_after_sitemap_s": round(after[0] - served, 2) if after and served is not None else None,
        "first_page_s": round(pages[0] - started, 2) if pages else None,
        "longest_gap_s": round(max(gaps), 2) if gaps else None,
        "responses": stats.get("response_received_count", 0),
        "sitemap_urls": stats.get("docs/sitemap_urls", 0),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=50_000)
    parser.add_argument("--stop-after", type=int, default=2000, help="responses before the crawl stops")
    parser.add_argument("--revisit", action="store_true", help="REVISIT_ENABLED: the sitemaps read first")
    parser.add_argument("--old", type=Path, help="another checkout, crawled the same way beside this one")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    site = TimedSite(args.pages)
    server = serve(site)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    checkouts = {"this": ROOT, **({"old": args.old.resolve()} if args.old else {})}
    for checkout in checkouts.values():
        probe = checkout / "bench" / "sitemap_stream.py"
        if not probe.exists():  # (code from before this benchmark: the probe extension is this file's)
            probe.write_text(Path(__file__).read_text())
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in checkouts}
    try:
        for _ in range(args.repeat):
            for name, checkout in checkouts.items():
                results[name].append(crawl(site, url, checkout, args.stop_after, args.revisit))
    finally:
        server.shutdown()
        server.server_close()
    mode = "REVISIT_ENABLED (sitemaps first)" if args.revisit else "default"
    print(f"{args.pages:,}-URL sitemap, {mode}, stopped after {args.stop_after:,} responses")
    for name, runs in results.items():
        print(f"{name:5s}", json.dumps(min(runs, key=lambda run: run["cpu_s"])))


if __name__ == "__main__":
    main()
