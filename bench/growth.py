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
  of the whole cache dir on disk.

Each figure is printed with its ratio against the smallest N, then the issue's targets
as PASS/FAIL lines, and a column "1M (projected)": a linear fit of each figure on N
through the measured points, a projection, not a measurement. One run of each crawl (no
best of 5: at 100k pages that is hours); timings on a shared machine vary by up to ±25%.

``--old PATH`` runs the same crawls in another checkout too (its ``scrapy crawl docs``,
its code), after this one's at each N: ``git archive COMMIT | tar -x -C PATH``, then
copy this checkout's ``bench/`` over its own, since the probe that times the close lives
there.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from bench.crawl import COMMON, ROOT, start_site

SIZES = (10_000, 30_000, 100_000)
QUICK_SIZES = (2_000, 10_000)
PROJECT_TO = 1_000_000
EDIT_FRACTION = 0.01
#: the three crawls at each size, in order, and their titles
KINDS = {"first": "first crawl", "unchanged": "unchanged recrawl", "edited": "recrawl after 1% edited"}
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
MB = 1e6


@dataclass
class Crawl:
    """One crawl's figures (sizes in bytes, times in seconds)."""

    kind: str
    site_pages: int
    pages: int
    extractor_calls: int
    wall_s: float
    cpu_s: float
    peak_rss_bytes: int
    rss_before_close_bytes: int
    memusage_max_bytes: int
    close_s: float
    close_cpu_s: float
    report_bytes: int
    latest_bytes: int
    cache_bytes: int

    @property
    def cpu_ms_per_page(self) -> float:
        return 1000 * self.cpu_s / max(self.pages, 1)

    @property
    def close_ms_per_page(self) -> float:
        return 1000 * self.close_s / max(self.pages, 1)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self) | {"cpu_ms_per_page": self.cpu_ms_per_page, "close_ms_per_page": self.close_ms_per_page}


#: kind of crawl -> site size -> its figures
Results = dict[str, dict[int, Crawl]]


@dataclass(frozen=True)
class Figure:
    """A row of the tables: a field of :class:`Crawl`, shown divided by ``scale``."""

    key: str
    label: str
    unit: str = ""
    scale: float = 1.0
    digits: int = 0
    #: a per-page figure: the field of the total it divides by the pages (its
    #: projection divides the projected total, never a fit of the quotient)
    total: str = ""

    def value(self, crawl: Crawl) -> float:
        return float(getattr(crawl, self.key)) / self.scale

    def projected(self, crawls: dict[int, Crawl], at: int = PROJECT_TO) -> float:
        """This figure at ``at`` pages by a linear fit on N: a projection."""

        def fit(key: str) -> float:
            return project([(n, float(getattr(c, key))) for n, c in crawls.items()], at)

        if self.total:
            return 1000 * fit(self.total) / max(fit("pages"), 1.0)
        return fit(self.key) / self.scale


FIGURES = (
    Figure("pages", "pages crawled"),
    Figure("extractor_calls", "extractor calls"),
    Figure("wall_s", "wall time", "s", digits=1),
    Figure("cpu_s", "CPU", "s", digits=1),
    Figure("cpu_ms_per_page", "CPU per page", "ms", digits=2, total="cpu_s"),
    Figure("peak_rss_bytes", "peak RSS (OS)", "MB", MB),
    Figure("rss_before_close_bytes", "peak RSS before close", "MB", MB),
    Figure("memusage_max_bytes", "memusage/max (Scrapy)", "MB", MB),
    Figure("close_s", "close time", "s", digits=2),
    Figure("close_ms_per_page", "close per page", "ms", digits=3, total="close_s"),
    Figure("close_cpu_s", "close CPU", "s", digits=2),
    Figure("report_bytes", "run report", "KB", 1e3, 1),
    Figure("latest_bytes", "runs/latest.json", "KB", 1e3, 1),
    Figure("cache_bytes", "cache dir (du)", "MB", MB, 1),
)


@dataclass(frozen=True)
class Check:
    """One of the issue's targets, held or not."""

    target: str
    passed: bool
    measured: str

    def line(self) -> str:
        return f"{'PASS' if self.passed else 'FAIL'}  {self.target}: {self.measured}"


# -- pure helpers ------------------------------------------------------------------


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


def ratio(value: float, base: float) -> float | None:
    """``value / base``, or None when the base is zero.

    >>> ratio(3.0, 2.0), ratio(1.0, 0)
    (1.5, None)
    """
    return value / base if base else None


def times(value: float, base: float) -> float:
    """``value / base`` for a check: infinite (never within a target) when the base is zero.

    >>> times(3.0, 2.0), times(1.0, 0)
    (1.5, inf)
    """
    return value / base if base else math.inf


def linear_fit(points: list[tuple[float, float]]) -> tuple[float, float]:
    """Least-squares ``(slope, intercept)`` of y on x; a flat line through one point.

    >>> linear_fit([(1, 3), (2, 5), (3, 7)])
    (2.0, 1.0)
    """
    if len({x for x, _ in points}) < 2:
        return 0.0, sum(y for _, y in points) / len(points)
    mean_x = sum(x for x, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in points) / sum((x - mean_x) ** 2 for x, _ in points)
    return slope, mean_y - slope * mean_x


def project(points: list[tuple[float, float]], at: float) -> float:
    """The linear fit of ``points`` evaluated at ``at`` (a projection, not a measurement).

    >>> project([(10, 1.0), (20, 2.0)], 100)
    10.0
    """
    slope, intercept = linear_fit(points)
    return slope * at + intercept


def cell(value: float, base: float, digits: int) -> str:
    """A table cell: the value and its ratio against the base.

    >>> cell(291.4, 250.0, 0)
    '291 (1.17x)'
    """
    r = ratio(value, base)
    return f"{value:,.{digits}f} ({r:.2f}x)" if r is not None else f"{value:,.{digits}f} (-)"


def table(kind: str, crawls: dict[int, Crawl]) -> str:
    """The figures of one kind of crawl at every size, with their ratios against the
    smallest size and a projection to 1M pages."""
    sizes = sorted(crawls)
    rows = [[f"{KINDS[kind]}", *(f"N={n:,}" for n in sizes), f"{PROJECT_TO // 1_000_000}M (projected)"]]
    for figure in FIGURES:
        values = [figure.value(crawls[n]) for n in sizes]
        projected = figure.projected(crawls)
        unit = f" {figure.unit}" if figure.unit else ""
        rows.append(
            [
                f"{figure.label}{unit}",
                *(cell(v, values[0], figure.digits) for v in values),
                f"{projected:,.{figure.digits}f}",
            ]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(
            text.ljust(w) if i == 0 else text.rjust(w) for i, (text, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in rows
    )


def checks(results: Results) -> list[Check]:
    """The issue's targets, smallest size against largest (with one size, only those
    that need no second)."""
    first = results["first"]
    sizes = sorted(first)
    small, large = sizes[0], sizes[-1]
    span = f"{large:,} against {small:,} pages"
    found: list[Check] = []
    if len(sizes) > 1:
        for kind, crawls in results.items():
            rss = times(crawls[large].peak_rss_bytes, crawls[small].peak_rss_bytes)
            found.append(
                Check(
                    f"peak RSS, {KINDS[kind]}: largest <= 1.5x smallest and <= 400 MB",
                    rss <= 1.5 and crawls[large].peak_rss_bytes <= 400 * MB,
                    f"{crawls[large].peak_rss_bytes / MB:.0f} MB, {rss:.2f}x ({span})",
                )
            )
        close = times(first[large].close_ms_per_page, first[small].close_ms_per_page)
        found.append(Check("close time per page flat, first crawl: <= 1.2x", close <= 1.2, f"{close:.2f}x ({span})"))
        for kind, crawls in results.items():
            cpu = times(crawls[large].cpu_ms_per_page, crawls[small].cpu_ms_per_page)
            found.append(Check(f"CPU per page, {KINDS[kind]}: <= 1.1x", cpu <= 1.1, f"{cpu:.2f}x ({span})"))
    edited = results["edited"][large]
    edited_share = times(edited.close_s, first[large].close_s)
    found.append(
        Check(
            f"close of the 1%-edited recrawl <= 10% of the first crawl's, at {large:,} pages",
            edited_share <= 0.10,
            f"{100 * edited_share:.0f}% ({edited.close_s:.1f} s against {first[large].close_s:.1f} s; "
            f"close CPU {edited.close_cpu_s:.1f} s against {first[large].close_cpu_s:.1f} s)",
        )
    )
    biggest = max((c for crawls in results.values() for c in crawls.values()), key=lambda c: c.report_bytes)
    found.append(
        Check(
            "run report <= 1 MB at every size",
            biggest.report_bytes <= MB,
            f"largest {biggest.report_bytes / MB:.2f} MB ({KINDS[biggest.kind]}, {biggest.site_pages:,} pages)",
        )
    )
    return found


# -- measuring ---------------------------------------------------------------------


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


def crawl(kind: str, site_pages: int, url: str, work: Path, checkout: Path) -> Crawl:
    """One ``scrapy crawl docs`` in a subprocess, measured; its log in ``work/<kind>.log``."""
    command = [sys.executable, "-m", "scrapy", "crawl", "docs", "-a", f"start_urls={url}/"]
    for name, value in crawl_settings(work).items():
        command += ["-s", f"{name}={value}"]
    runs = work / "extracted-docs" / "runs"
    before = run_reports(runs)
    log = work / f"{kind}.log"
    (work / "stats.json").unlink(missing_ok=True)
    started = time.perf_counter()
    with log.open("wb") as out:
        proc = subprocess.Popen(command, cwd=checkout, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own rusage
    wall = time.perf_counter() - started
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
    )


def edit(url: str, fraction: float) -> int:
    """Edits that share of the site's pages; how many."""
    request = urllib.request.Request(f"{url}/_edit?fraction={fraction}", method="POST")
    with urllib.request.urlopen(request) as response:
        return len(json.loads(response.read()))


def measure_size(site_pages: int, work: Path, checkout: Path) -> dict[str, Crawl]:
    """The three crawls of one size, on one cache in ``work``, against a site of its own."""
    work.mkdir(parents=True)
    proc, url = start_site(site_pages, noisy=False)
    try:
        measured = {}
        for kind in KINDS:
            if kind == "edited":
                edit(url, EDIT_FRACTION)
            measured[kind] = crawl(kind, site_pages, url, work, checkout)
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


def to_json(
    measured: dict[str, Results], checkouts: dict[str, Path], commits: dict[str, str | None] | None = None
) -> dict[str, Any]:
    """Every figure, the checks and the projections, per checkout (and its commit)."""
    return {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "edit_fraction": EDIT_FRACTION,
        "checkouts": {
            label: {
                "path": str(checkouts[label]),
                "commit": (commits or {}).get(label),
                "crawls": {kind: {str(n): c.as_dict() for n, c in crawls.items()} for kind, crawls in results.items()},
                "checks": [asdict(check) for check in checks(results)],
                "projected_1m": {
                    kind: {f"{f.label} {f.unit}".strip(): f.projected(crawls) for f in FIGURES}
                    for kind, crawls in results.items()
                },
            }
            for label, results in measured.items()
        },
    }


def from_json(figures: dict[str, Any]) -> tuple[dict[str, Results], dict[str, Path], dict[str, str | None]]:
    """The measurements, checkouts and their commits of an earlier ``--json`` file."""
    names = [field.name for field in fields(Crawl)]
    measured = {
        label: {
            kind: {int(n): Crawl(**{name: c[name] for name in names}) for n, c in crawls.items()}
            for kind, crawls in checkout["crawls"].items()
        }
        for label, checkout in figures["checkouts"].items()
    }
    checkouts = figures["checkouts"]
    return (
        measured,
        {label: Path(checkout["path"]) for label, checkout in checkouts.items()},
        {label: checkout.get("commit") for label, checkout in checkouts.items()},
    )


def measure(sizes: tuple[int, ...], checkouts: dict[str, Path], keep: Path | None) -> dict[str, Results]:
    """Every size, each checkout's three crawls in turn, in work dirs under ``keep``
    (or a temporary dir, removed)."""
    root = Path(tempfile.mkdtemp(prefix="bench-growth-", dir=keep))
    measured: dict[str, Results] = {label: {kind: {} for kind in KINDS} for label in checkouts}
    try:
        for n in sizes:
            for label, checkout in checkouts.items():
                for kind, crawl_figures in measure_size(n, root / f"{label}-{n}", checkout).items():
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
        measured = measure(sizes, checkouts, args.dir)
        commits = {label: commit_of(path) for label, path in checkouts.items()}
    for label, results in measured.items():
        report(f"{label} checkout ({checkouts[label]}, commit {commits[label] or 'unknown'})", results)
    if args.json:
        args.json.write_text(json.dumps(to_json(measured, checkouts, commits), indent=2))


if __name__ == "__main__":
    main()
