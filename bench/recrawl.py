"""Benchmark: the CPU of an unchanged recrawl of realistic documentation pages, beside
the first crawl and beside plain Scrapy's HTTP cache revalidating the same pages.

    python -m bench.recrawl                        # 350 pages, best of 3
    python -m bench.recrawl --old /tmp/old         # also the code of another checkout
    python -m bench.recrawl --pages 30 --repeat 1  # smoke run

The site (``bench/docsite.py``): framework-shaped pages of 60 to 150 KB (the evaluation
set's MkDocs, Docusaurus, GitBook, Hugo, Sphinx and VitePress pages), each with a
navigation of every page of the site (hundreds of links), gzipped, with stable
validators and ``Cache-Control: max-age=0`` (stale at once: Scrapy's RFC2616Policy
revalidates it; with ``no-cache`` it would download it again in full). Crawlers, each
a ``scrapy`` subprocess:

* ``ours``: ``scrapy crawl docs`` of this checkout, as shipped (the trivial extractor
  of ``bench.components``);
* ``old`` (``--old PATH``): the same command in another checkout (the code before a
  change, e.g. ``git worktree add /tmp/old COMMIT``);
* ``httpcache``: plain Scrapy (no project: ``scrapy runspider bench/follow_spider.py``
  run from an empty directory), a minimal spider following every link of every page,
  with ``HTTPCACHE_ENABLED`` and ``RFC2616Policy``: on the recrawl it revalidates every
  page (a 304 each) and parses the cached copy to follow its links;
* ``httpcache_seen``: the same, its spider yielding each link's URL once (as the
  docs spider does: the duplicate filter would drop the others), so that what is left
  of the difference is the parsing a reused page saves.

Each repetition crawls the site once into a new cache (``first``) and then again
(``unchanged``: every page answered 304), the crawlers taking turns; the figures are
the run with the least CPU of each (CPU of the crawl process, user + system), every
run's CPU beside it. Caches stay on disk until the end (see ``bench/crawl.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
COMMON = {
    "LOG_LEVEL": "WARNING",
    "DOWNLOAD_DELAY": "0",
    "CONCURRENT_REQUESTS": "16",
    "CONCURRENT_REQUESTS_PER_DOMAIN": "16",
    "TELNETCONSOLE_ENABLED": "False",
    "STATS_CLASS": "bench_stats_dump.DumpingStats",
}
#: a module of its own, put on the crawl's path: the stats of any checkout's crawl,
#: whatever its ``bench`` package holds
STATS_MODULE = """
import json
import os

from scrapy.statscollectors import MemoryStatsCollector


class DumpingStats(MemoryStatsCollector):
    def _persist_stats(self, stats, *args):
        numbers = {k: v for k, v in stats.items() if isinstance(v, (int, float))}
        with open(os.environ["BENCH_STATS_FILE"], "w") as handle:
            json.dump(numbers, handle)
"""
KINDS = ("ours", "old", "httpcache", "httpcache_seen")
STEPS = ("first", "unchanged")


def start_site(pages: int) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench.docsite", "--pages", str(pages)], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    return proc, f"http://127.0.0.1:{int(line.split()[1])}"


def command(kind: str, url: str, work: Path, old: Path | None) -> tuple[list[str], Path]:
    """The crawl's command line and the directory it runs in."""
    settings = dict(COMMON)
    if kind.startswith("httpcache"):
        args = ["runspider", str(ROOT / "bench" / "follow_spider.py"), "-a", f"start_url={url}/"]
        if kind == "httpcache_seen":
            args += ["-a", "seen=true"]
        settings |= {
            "HTTPCACHE_ENABLED": "True",
            "HTTPCACHE_POLICY": "scrapy.extensions.httpcache.RFC2616Policy",
            "HTTPCACHE_DIR": str(work / "httpcache"),
        }
        cwd = work  # no scrapy.cfg: Scrapy's own defaults
    else:
        args = ["crawl", "docs", "-a", f"start_urls={url}/"]
        settings |= {"EXTRACTOR": "bench.components.TrivialExtractor", "EXTRACTED_DOCS_DIR": str(work / "cache")}
        cwd = old if kind == "old" and old is not None else ROOT
    line = [sys.executable, "-m", "scrapy", *args]
    for name, value in settings.items():
        line += ["-s", f"{name}={value}"]
    return line, cwd


def crawl(kind: str, url: str, work: Path, root: Path, old: Path | None) -> dict[str, Any]:
    line, cwd = command(kind, url, work, old)
    stats_file = work / "stats.json"
    env = {k: v for k, v in os.environ.items() if k != "SCRAPY_SETTINGS_MODULE"}
    checkout = str(old if kind == "old" and old is not None else ROOT)
    env["PYTHONPATH"] = os.pathsep.join([str(root), checkout])
    env["BENCH_STATS_FILE"] = str(stats_file)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(line, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{kind} crawl failed: {proc.stderr[-3000:]}")
    stats = json.loads(stats_file.read_text())
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "cpu_s": round(cpu, 2),
        "wall_s": round(wall, 2),
        "pages": stats.get("item_scraped_count", 0),
        # (HttpCacheMiddleware turns a 304 into its cached page before DownloaderStats counts it)
        "responses_304": stats.get("downloader/response_status_count/304", 0) or stats.get("httpcache/revalidate", 0),
        "parse_reused": stats.get("docs/parse_reused", 0),
        "requests": stats.get("scheduler/enqueued", 0),
        "dupefilter_filtered": stats.get("dupefilter/filtered", 0),
    }


def best(samples: list[dict[str, Any]]) -> dict[str, Any]:
    chosen = dict(min(samples, key=lambda r: r["cpu_s"]))
    chosen["cpu_s_runs"] = [r["cpu_s"] for r in samples]
    chosen["parse_reused_runs"] = [r["parse_reused"] for r in samples]
    chosen["responses_304_runs"] = [r["responses_304"] for r in samples]
    chosen["median_cpu_s"] = statistics.median(chosen["cpu_s_runs"])
    return chosen


def run(pages: int, repeat: int, old: Path | None, root: Path) -> dict[str, Any]:
    (root / "bench_stats_dump.py").write_text(STATS_MODULE)
    kinds = [kind for kind in KINDS if kind != "old" or old is not None]
    samples: dict[str, dict[str, list[dict[str, Any]]]] = {kind: {step: [] for step in STEPS} for kind in kinds}
    proc, url = start_site(pages)
    try:
        works: dict[tuple[str, int], Path] = {}
        for rep in range(repeat):
            for kind in kinds:
                work = works[kind, rep] = root / f"{kind}-{rep}"
                work.mkdir()
                samples[kind]["first"].append(crawl(kind, url, work, root, old))
            for kind in kinds:
                samples[kind]["unchanged"].append(crawl(kind, url, works[kind, rep], root, old))
    finally:
        proc.terminate()
        proc.wait()
    return {kind: {step: best(samples[kind][step]) for step in STEPS} for kind in kinds}


def ratios(results: dict[str, Any]) -> dict[str, float]:
    ours = results["ours"]
    out = {
        "ours_unchanged_over_first": ours["unchanged"]["cpu_s"] / ours["first"]["cpu_s"],
        "ours_unchanged_over_httpcache_unchanged": ours["unchanged"]["cpu_s"]
        / results["httpcache"]["unchanged"]["cpu_s"],
        "ours_unchanged_over_httpcache_seen_unchanged": ours["unchanged"]["cpu_s"]
        / results["httpcache_seen"]["unchanged"]["cpu_s"],
        "ours_first_over_httpcache_first": ours["first"]["cpu_s"] / results["httpcache"]["first"]["cpu_s"],
    }
    if "old" in results:
        out["ours_first_over_old_first"] = ours["first"]["cpu_s"] / results["old"]["first"]["cpu_s"]
        out["old_unchanged_over_first"] = results["old"]["unchanged"]["cpu_s"] / results["old"]["first"]["cpu_s"]
        out["ours_unchanged_over_old_unchanged"] = ours["unchanged"]["cpu_s"] / results["old"]["unchanged"]["cpu_s"]
    return {name: round(value, 3) for name, value in out.items()}


def report(pages: int, results: dict[str, Any], figures: dict[str, float]) -> None:
    print(f"\nrealistic documentation site, {pages} pages")
    print(f"{'crawler':10} {'crawl':10} {'cpu s':>6} {'runs':>20} {'wall s':>7} {'pages':>6} {'304s':>5} {'reused':>6}")
    for kind, steps in results.items():
        for step, r in steps.items():
            runs = ", ".join(f"{c:.2f}" for c in r["cpu_s_runs"])
            print(
                f"{kind:10} {step:10} {r['cpu_s']:>6.2f} {runs:>20} {r['wall_s']:>7} {r['pages']:>6} "
                f"{r['responses_304']:>5} {r['parse_reused']:>6}"
            )
    for name, value in figures.items():
        print(f"{name}: {value:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=350)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each step per crawler; the best is kept")
    parser.add_argument("--old", type=Path, help="a checkout of other code to measure beside (its scrapy crawl docs)")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    root = Path(tempfile.mkdtemp(prefix="bench-recrawl-"))
    try:
        results = run(args.pages, args.repeat, args.old, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    figures = ratios(results)
    report(args.pages, results, figures)
    if args.json:
        Path(args.json).write_text(
            json.dumps({"pages": args.pages, "repeat": args.repeat, **results, "ratios": figures}, indent=2)
        )


if __name__ == "__main__":
    main()
