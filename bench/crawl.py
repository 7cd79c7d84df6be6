"""Benchmark: crawling a generated 2,000-page site with bare Scrapy, Scrapy's HTTP cache
(RFC2616Policy) and this project, side by side in one run.

    python -m bench.crawl                 # 2,000 pages, quiet and noisy site, best of 5
    python -m bench.crawl --pages 200 --repeat 1    # smoke run
    python -m bench.crawl --breakdown     # first crawls, this project's components added one by one
    python -m bench.crawl --old /tmp/old  # also this project's crawler in another checkout (the code before a change)

For each crawler, on its own fresh copy of the same site (``bench/site.py``): a first
crawl, an unchanged recrawl, and a recrawl after 5% of the pages were edited. Each
crawl is ``scrapy crawl docs`` in a subprocess (same spider for all three; the
reference crawlers run without this project's components and call the same trivial
extractor once per page). With ``--old PATH``, a fourth crawler: this project's, the
same command run in another checkout (``git archive COMMIT | tar -x -C PATH``), so that
the code before a change is measured beside it, on the same machine at the same time.
Measured: wall time, CPU seconds of the crawl process per page, bytes downloaded, 304s,
extractor calls, pages reported changed (by the crawler; for the references, by a
raw-body hash), peak memory (Scrapy's ``memusage/max``).
Two sites: quiet (no per-request noise, stable ETag and Last-Modified), and noisy
(nonces, CSRF tokens, timestamps, a rotating block, an ETag computed over each body).

The crawlers take turns, step by step, and each step is run ``--repeat`` times
(a first crawl on a new cache each time; the 5% recrawl on a copy of the cache as it
was before it); the figures are those of each crawler's run with the least CPU, so
that the machine's moments of slowness, which come and go, weigh on no crawler more
than on another. Every cache stays on disk until the end of the benchmark: on a
filesystem without a journal, ext4 skips the inodes of files deleted in the last
seconds when it creates new ones, and deleting one crawler's 4,000 files just before
another crawler's first crawl made that crawl pay for it.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from crawler.defaults import SETTINGS

ROOT = Path(__file__).resolve().parent.parent
COMMON = {
    "LOG_LEVEL": "WARNING",
    "DOWNLOAD_DELAY": "0",
    "CONCURRENT_REQUESTS": "16",
    "CONCURRENT_REQUESTS_PER_DOMAIN": "16",
    "EXTRACTOR": "bench.components.TrivialExtractor",
}
RECORDER = {"bench.components.RawBodyRecorder": 10, "bench.components.NetworkBytes": 999}
#: this project's components, with their orders
DEDUP = ("DOWNLOADER_MIDDLEWARES", "crawler.middlewares.revalidation.RevalidationMiddleware", 840)
PIPELINE = ("ITEM_PIPELINES", "crawler.pipelines.content_hash.ContentHashPipeline", 300)
EXTRACTION = ("EXTENSIONS", "crawler.extensions.closing.ClosingStages", 500)
BOILERPLATE = ("PROCESSING_STAGES", "crawler.stages.boilerplate.BoilerplateStage", 0)
ALL = (DEDUP, PIPELINE, EXTRACTION, BOILERPLATE)
#: the crawlers of the comparison, and of the breakdown (--breakdown): this project's
#: components added one at a time
STACKS: dict[str, tuple[tuple[str, str, int], ...]] = {
    "bare": (),
    "httpcache": (),
    "ours": ALL,
    "old": ALL,  # (run in the --old checkout)
    "+dedup": (DEDUP,),
    "+pipeline": (DEDUP, PIPELINE),
    "+extraction": (DEDUP, PIPELINE, EXTRACTION),
}


def crawler_settings(kind: str, work: Path) -> dict[str, str]:
    stack = STACKS[kind]
    components: dict[str, dict[str, int | None]] = {
        "DOWNLOADER_MIDDLEWARES": dict(RECORDER),
        "ITEM_PIPELINES": {},
        "EXTENSIONS": {"scrapy.extensions.telnet.TelnetConsole": None, "bench.components.StatsDump": 0},
    }
    for setting, path, order in ALL:
        if setting in components:
            components[setting][path] = order if (setting, path, order) in stack else None
    if not stack:  # none of this project's components: no cache opened either (the add-on's CacheOwner)
        components["EXTENSIONS"]["crawler.extensions.cache.CacheOwner"] = None
    if EXTRACTION not in stack:  # without the closing stage, a pipeline calls the extractor for every page
        components["ITEM_PIPELINES"]["bench.components.ExtractEveryItem"] = 300
    settings = {
        **COMMON,
        **{name: json.dumps(value) for name, value in components.items()},
        "EXTRACTED_DOCS_DIR": str(work / "extracted-docs"),
        "BENCH_RAW_HASHES": str(work / "raw-hashes.json"),
        "BENCH_STATS_FILE": str(work / "stats.json"),
    }
    if BOILERPLATE not in stack:  # the closing stages without the boilerplate analysis
        settings["PROCESSING_STAGES"] = ",".join(
            path for path in SETTINGS["PROCESSING_STAGES"] if path != BOILERPLATE[1]
        )
    if kind == "httpcache":
        settings |= {
            "HTTPCACHE_ENABLED": "True",
            "HTTPCACHE_POLICY": "scrapy.extensions.httpcache.RFC2616Policy",
            "HTTPCACHE_DIR": str(work / "httpcache"),
        }
    return settings


def start_site(pages: int, noisy: bool) -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, "-m", "bench.site", "--pages", str(pages)]
    if noisy:
        command += ["--noise", "--changing-validators"]
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    return proc, f"http://127.0.0.1:{int(line.split()[1])}"


def crawl(url: str, settings: dict[str, str], work: Path, checkout: Path = ROOT) -> dict[str, Any]:
    command = [sys.executable, "-m", "scrapy", "crawl", "docs", "-a", f"start_urls={url}/"]
    for name, value in settings.items():
        command += ["-s", f"{name}={value}"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, cwd=checkout, check=True, capture_output=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    stats = json.loads((work / "stats.json").read_text())
    report_path = work / "extracted-docs" / "runs" / "latest.json"
    report = json.loads(report_path.read_text()) if report_path.exists() else {}
    pages = stats.get("item_scraped_count", 0)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "pages": pages,
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "cpu_ms_per_page": round(1000 * cpu / max(pages, 1), 2),
        "bytes_downloaded": stats.get("bench/network_bytes", 0),
        "responses_304": stats.get("downloader/response_status_count/304", 0),
        "extractor_calls": stats.get("extraction/calls", stats.get("bench/extractor_calls", 0)),
        "changed_reported": (report.get("pages_new", 0) + report.get("pages_changed", 0))
        if report
        else stats.get("bench/raw_changed", 0),
        "raw_body_changed": stats.get("bench/raw_changed", 0),
        "peak_memory_mb": round(stats.get("memusage/max", 0) / 1e6, 1),
    }


KINDS = ("bare", "httpcache", "ours")
STEPS = ("first", "unchanged", "edited_5pct")


def best(samples: list[dict[str, Any]]) -> dict[str, Any]:
    """The run with the least CPU, with the CPU seconds and extractor calls of every
    run beside it."""
    chosen = dict(min(samples, key=lambda r: r["cpu_s"]))
    chosen["cpu_s_runs"] = [r["cpu_s"] for r in samples]
    chosen["extractor_calls_runs"] = [r["extractor_calls"] for r in samples]
    return chosen


def run_site(pages: int, noisy: bool, repeat: int, root: Path, old: Path | None = None) -> dict[str, Any]:
    label = "noisy" if noisy else "quiet"
    kinds = (*KINDS, "old") if old is not None else KINDS
    checkouts = {kind: old if kind == "old" and old is not None else ROOT for kind in kinds}
    sites: dict[str, tuple[subprocess.Popen[str], str]] = {}
    samples: dict[str, dict[str, list[dict[str, Any]]]] = {kind: {step: [] for step in STEPS} for kind in kinds}
    works: dict[str, Path] = {}

    def step(kind: str, work: Path) -> dict[str, Any]:
        return crawl(sites[kind][1], crawler_settings(kind, work), work, checkouts[kind])

    try:
        for kind in kinds:
            sites[kind] = start_site(pages, noisy)
        for rep in range(repeat):  # first crawls, each on a new cache
            for kind in kinds:
                work = works[kind] = root / f"{label}-{kind}-{rep}"
                work.mkdir()
                samples[kind]["first"].append(step(kind, work))
        for _ in range(repeat):
            for kind in kinds:
                samples[kind]["unchanged"].append(step(kind, works[kind]))
        edited = {}
        for kind in kinds:
            request = urllib.request.Request(f"{sites[kind][1]}/_edit?fraction=0.05", method="POST")
            with urllib.request.urlopen(request) as r:
                edited[kind] = len(json.loads(r.read()))
            shutil.copytree(works[kind], works[kind].with_name(works[kind].name + "-before-edit"))
        for rep in range(repeat):
            for kind in kinds:
                work = works[kind]
                if rep:  # the cache as it was before the edit
                    shutil.rmtree(work)
                    shutil.copytree(work.with_name(work.name + "-before-edit"), work)
                samples[kind]["edited_5pct"].append(step(kind, work))
    finally:
        for proc, _ in sites.values():
            proc.terminate()
            proc.wait()
    return {kind: {**{name: best(samples[kind][name]) for name in STEPS}, "edited": edited[kind]} for kind in kinds}


BREAKDOWN = ("bare", "+dedup", "+pipeline", "+extraction", "ours")


def run_breakdown(pages: int, repeat: int, root: Path) -> dict[str, Any]:
    """First crawls of the quiet site with this project's components added one at a
    time, taking turns; the best and the median CPU of each."""
    proc, url = start_site(pages, noisy=False)
    runs: dict[str, list[float]] = {kind: [] for kind in BREAKDOWN}
    try:
        for rep in range(repeat):
            for kind in BREAKDOWN:
                work = root / f"breakdown-{kind}-{rep}"
                work.mkdir()
                runs[kind].append(crawl(url, crawler_settings(kind, work), work)["cpu_s"])
    finally:
        proc.terminate()
        proc.wait()
    bare = statistics.median(runs["bare"])
    print(f"\nfirst crawl of the quiet site, {pages} pages, components added one at a time ({repeat} runs each)")
    print(f"{'crawler':12} {'best cpu s':>10} {'median cpu s':>12} {'median / bare':>13}")
    for kind, values in runs.items():
        median = statistics.median(values)
        print(f"{kind:12} {min(values):>10.2f} {median:>12.2f} {median / bare:>12.2f}x")
    return {kind: {"cpu_s_runs": values, "median_cpu_s": statistics.median(values)} for kind, values in runs.items()}


def report(label: str, pages: int, results: dict[str, Any]) -> None:
    print(f"\n{label} site, {pages} pages")
    print(
        f"{'crawler':10} {'crawl':12} {'wall s':>7} {'cpu ms/page':>11} {'MB down':>8} {'304s':>6} "
        f"{'calls':>6} {'changed':>8} {'raw chg':>8} {'mem MB':>7}"
    )
    for kind, runs in results.items():
        for name in ("first", "unchanged", "edited_5pct"):
            r = runs[name]
            print(
                f"{kind:10} {name:12} {r['wall_s']:>7} {r['cpu_ms_per_page']:>11} "
                f"{r['bytes_downloaded'] / 1e6:>8.1f} {r['responses_304']:>6} {r['extractor_calls']:>6} "
                f"{r['changed_reported']:>8} {r['raw_body_changed']:>8} {r['peak_memory_mb']:>7}"
            )
    bare = results["bare"]["first"]
    for kind in ("ours", "old"):
        if kind not in results:
            continue
        first = results[kind]["first"]
        paired = sorted(o / b for o, b in zip(first["cpu_s_runs"], bare["cpu_s_runs"], strict=True))
        median = statistics.median(first["cpu_s_runs"]) / statistics.median(bare["cpu_s_runs"])
        print(
            f"first crawl CPU, {kind} / bare Scrapy: {first['cpu_s'] / bare['cpu_s']:.2f}x (best runs), "
            f"{median:.2f}x (medians); run by run {', '.join(f'{r:.2f}x' for r in paired)}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--json", help="write the figures to this file")
    parser.add_argument("--quiet-only", action="store_true")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each step per crawler; the best is kept")
    parser.add_argument(
        "--breakdown", action="store_true", help="instead: first crawls with this project's components added one by one"
    )
    parser.add_argument("--old", type=Path, help="a checkout of other code to measure beside (its scrapy crawl docs)")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    figures: dict[str, Any] = {"pages": args.pages, "repeat": args.repeat}
    if args.old is not None:
        figures["old"] = str(args.old)
    root = Path(tempfile.mkdtemp(prefix="bench-crawl-"))
    try:
        for label, noisy in (("quiet", False), ("noisy", True)):
            if (noisy and args.quiet_only) or args.breakdown:
                continue
            figures[label] = run_site(args.pages, noisy, args.repeat, root, args.old)
            report(label, args.pages, figures[label])
        if args.breakdown:
            figures["breakdown"] = run_breakdown(args.pages, args.repeat, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
