"""Benchmark: how a crawl's costs grow with the site (issue 40 item 5).

    python -m bench.growth                    # 10,000, 30,000 and 100,000 pages (about an hour)
    python -m bench.growth --quick            # 2,000 and 10,000 pages (minutes)
    python -m bench.growth --sizes 5000,30000 --json growth.json
    python -m bench.growth --quick --old /tmp/old   # also another checkout (its bench/ copied from this one)

For each size N, the generated site of ``bench/site.py`` with N pages, and in a fresh
work dir (one cache, kept between the three): a first crawl, an unchanged recrawl, and a
recrawl after 1% of the pages were edited, each ``scrapy crawl docs`` in its own
subprocess with the crawl benchmark's settings (no delay, 16 requests at once, the
trivial extractor). Measured for each crawl, from the OS and the crawl's own files:

- CPU seconds of the crawl process (user + sys of that child, from ``os.wait4``) and per
  page; wall time; pages (items) crawled; extractor calls (``extraction/calls``);
- peak RSS of the process (``ru_maxrss`` from ``os.wait4``), its peak before the closing
  stages and Scrapy's ``memusage/max`` beside them (``bench.components.CloseProbe``);
- close time: from ``spider_closed`` (where the closing stages run) to
  ``engine_stopped`` (``CloseProbe``), per page, and the CPU seconds it took (steadier
  than the time on a busy machine);
- the sizes of the run's report (``runs/<run id>.json``), of ``runs/latest.json``, and
  of the whole cache dir on disk;
- the CPU seconds of ``bench.reference``'s fixed workload just before and just after
  the crawl (their mean): the machine's speed of the moment.

Each figure is printed with its ratio against the smallest N, then the issue's targets
as PASS/FAIL lines, and a column "1M (projected)": a linear fit of each figure on N
through the measured points, a projection, not a measurement. One run of each crawl (no
best of 5: at 100k pages that is hours); timings on a shared machine drift by up to
±25% in an hour, so the time targets are checked on the per-page figures divided by the
reference workload's CPU (``/ reference`` in the tables), the raw ratio printed beside.

``--old PATH`` runs the same crawls in another checkout too (its ``scrapy crawl docs``,
its code), after this one's at each N: ``git archive COMMIT | tar -x -C PATH``, then
copy this checkout's ``bench/`` over its own, since the probe that times the close lives
there.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from bench import reference
from bench.crawl import COMMON, ROOT, start_site
from bench.growth_figures import EDIT_FRACTION, KINDS, Crawl, Results, checks, from_json, table, to_json

SIZES = (10_000, 30_000, 100_000)
QUICK_SIZES = (2_000, 10_000)
#: the project's extensions (crawler/settings.py) plus the benchmark's probes, the close
#: timer first (see CloseProbe)
EXTENSIONS = {
    "scrapy.extensions.telnet.TelnetConsole": None,
    "scrapy.extensions.remote_control.RemoteControl": None,
    "scrapy.extensions.logstats.LogStats": None,
    "crawler.extensions.progress.CrawlProgress": 0,
    "bench.components.CloseProbe": -100,
    "bench.components.StatsDump": -50,
}


def parse_sizes(text: str) -> tuple[int, ...]:
    """``--sizes``: page counts, comma-separated, ascending.

    >>> parse_sizes("30000, 10_000")
    (10000, 30000)
    """
    try:
        sizes = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise ValueError(f"--sizes takes page counts separated by commas, got {text!r}") from None
    if not sizes or sizes[0] < 2:
        raise ValueError(f"--sizes needs page counts of at least 2, got {text!r}")
    return tuple(sizes)


def disk_usage(path: Path) -> int:
    """Bytes on disk under ``path`` (as ``du``: allocated blocks)."""
    return sum(
        os.lstat(os.path.join(folder, name)).st_blocks * 512 for folder, _, files in os.walk(path) for name in files
    )


def run_reports(runs: Path) -> set[Path]:
    return {path for path in runs.glob("*.json") if path.name != "latest.json"} if runs.is_dir() else set()


def crawl_settings(work: Path) -> dict[str, str]:
    return {
        **COMMON,
        "LOG_LEVEL": "INFO",
        "EXTENSIONS": json.dumps(EXTENSIONS),
        "EXTRACTED_DOCS_DIR": str(work / "extracted-docs"),
        "BENCH_STATS_FILE": str(work / "stats.json"),
    }


def crawl(kind: str, site_pages: int, url: str, work: Path, checkout: Path, rounds: int = reference.ROUNDS) -> Crawl:
    """One ``scrapy crawl docs`` in a subprocess, measured; its log in ``work/<kind>.log``."""
    command = [sys.executable, "-m", "scrapy", "crawl", "docs", "-a", f"start_urls={url}/"]
    for name, value in crawl_settings(work).items():
        command += ["-s", f"{name}={value}"]
    runs = work / "extracted-docs" / "runs"
    before = run_reports(runs)
    log = work / f"{kind}.log"
    (work / "stats.json").unlink(missing_ok=True)
    reference_before = reference.measure(rounds)
    started = time.perf_counter()
    with log.open("wb") as out:
        proc = subprocess.Popen(command, cwd=checkout, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own rusage
    wall = time.perf_counter() - started
    reference_after = reference.measure(rounds)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        tail = log.read_text(errors="replace")[-3000:]
        raise RuntimeError(f"the {kind} crawl of {site_pages} pages exited {proc.returncode}; {log}:\n{tail}")
    stats = json.loads((work / "stats.json").read_text())
    if "bench/close_s" not in stats:
        raise RuntimeError(f"the {kind} crawl has no close time (bench.components.CloseProbe not run?); see {log}")
    new = sorted(run_reports(runs) - before, key=lambda path: path.stat().st_mtime)
    latest = runs / "latest.json"
    return Crawl(
        kind=kind,
        site_pages=site_pages,
        pages=int(stats.get("item_scraped_count", 0)),
        extractor_calls=int(stats.get("extraction/calls", 0)),
        wall_s=wall,
        cpu_s=usage.ru_utime + usage.ru_stime,
        peak_rss_bytes=usage.ru_maxrss * 1024,  # kB on Linux
        rss_before_close_bytes=int(stats.get("bench/maxrss_before_close_kb", 0)) * 1024,
        memusage_max_bytes=int(stats.get("memusage/max", 0)),
        close_s=float(stats["bench/close_s"]),
        close_cpu_s=float(stats["bench/close_cpu_s"]),
        report_bytes=new[-1].stat().st_size if new else 0,
        latest_bytes=latest.stat().st_size if latest.exists() else 0,
        cache_bytes=disk_usage(work / "extracted-docs"),
        reference_cpu_s=(reference_before + reference_after) / 2,
    )


def edit(url: str, fraction: float) -> int:
    """Edits that share of the site's pages; how many."""
    request = urllib.request.Request(f"{url}/_edit?fraction={fraction}", method="POST")
    with urllib.request.urlopen(request) as response:
        return len(json.loads(response.read()))


def measure_size(site_pages: int, work: Path, checkout: Path, rounds: int) -> dict[str, Crawl]:
    """The three crawls of one size, on one cache in ``work``, against a site of its own."""
    work.mkdir(parents=True)
    proc, url = start_site(site_pages, noisy=False)
    try:
        measured = {}
        for kind in KINDS:
            if kind == "edited":
                edit(url, EDIT_FRACTION)
            measured[kind] = crawl(kind, site_pages, url, work, checkout, rounds)
            print(f"  {site_pages:,} pages, {KINDS[kind]}: {measured[kind].wall_s:.0f} s", file=sys.stderr, flush=True)
    finally:
        proc.terminate()
        proc.wait()
    return measured


def report(label: str, results: Results) -> None:
    print(f"\n== {label}: each figure with its ratio against the smallest size")
    print("   (1M (projected): a linear fit of the figure on N through the measured points, not a measurement)")
    for kind, crawls in results.items():
        print()
        print(table(kind, crawls))
    print("\ntargets of issue 40:")
    for check in checks(results):
        print(check.line())


def commit_of(checkout: Path) -> str | None:
    """The checkout's commit, when it is a git work tree."""
    proc = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return proc.stdout.strip() or None


def measure(
    sizes: tuple[int, ...], checkouts: dict[str, Path], keep: Path | None, rounds: int = reference.ROUNDS
) -> dict[str, Results]:
    """Every size, each checkout's three crawls in turn, in work dirs under ``keep``
    (or a temporary dir, removed)."""
    root = Path(tempfile.mkdtemp(prefix="bench-growth-", dir=keep))
    measured: dict[str, Results] = {label: {kind: {} for kind in KINDS} for label in checkouts}
    try:
        for n in sizes:
            for label, checkout in checkouts.items():
                for kind, crawl_figures in measure_size(n, root / f"{label}-{n}", checkout, rounds).items():
                    measured[label][kind][n] = crawl_figures
    finally:
        if keep is None:
            shutil.rmtree(root, ignore_errors=True)
    return measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--quick", action="store_true", help="2,000 and 10,000 pages")
    group.add_argument("--sizes", help="page counts, comma-separated (default 10000,30000,100000)")
    group.add_argument("--load", type=Path, help="print the figures of an earlier --json file instead of crawling")
    parser.add_argument("--json", type=Path, help="write every figure to this file")
    parser.add_argument("--old", type=Path, help="also measure another checkout (with this bench/ copied in)")
    parser.add_argument("--dir", type=Path, help="keep the work dirs here (default: a temporary dir, removed)")
    parser.add_argument(
        "--reference-rounds",
        type=int,
        default=reference.ROUNDS,
        help=f"rounds of bench.reference's workload around each crawl (default {reference.ROUNDS})",
    )
    args = parser.parse_args()
    try:
        sizes = QUICK_SIZES if args.quick else parse_sizes(args.sizes) if args.sizes else SIZES
    except ValueError as exc:
        parser.error(str(exc))
    checkouts = {"this": ROOT}
    if args.old is not None:
        probe = args.old / "bench" / "components.py"
        if "class CloseProbe" not in (probe.read_text() if probe.exists() else ""):
            parser.error(f"--old {args.old}: no bench.components.CloseProbe there; copy this checkout's bench/ into it")
        checkouts["old"] = args.old.resolve()
    if args.load is not None:
        measured, checkouts, commits = from_json(json.loads(args.load.read_text()))
    else:
        measured = measure(sizes, checkouts, args.dir, args.reference_rounds)
        commits = {label: commit_of(path) for label, path in checkouts.items()}
    for label, results in measured.items():
        report(f"{label} checkout ({checkouts[label]}, commit {commits[label] or 'unknown'})", results)
    if args.json:
        date = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        args.json.write_text(json.dumps(to_json(measured, checkouts, commits, date), indent=2))


if __name__ == "__main__":
    main()
