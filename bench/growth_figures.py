"""The growth benchmark's figures (``bench.growth``): one crawl's measurement, the
tables with each figure's ratio against the smallest size, the linear projection to 1M
pages, the issue's targets as checks, and the JSON file. Pure: no crawl, no clock."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

PROJECT_TO = 1_000_000
EDIT_FRACTION = 0.01
#: the three crawls at each size, in order, and their titles
KINDS = {"first": "first crawl", "unchanged": "unchanged recrawl", "edited": "recrawl after 1% edited"}
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
    #: CPU seconds of the fixed workload of ``bench.reference``, the mean of its run
    #: just before and just after the crawl (0: not measured, an older file)
    reference_cpu_s: float = 0.0

    @property
    def cpu_ms_per_page(self) -> float:
        return 1000 * self.cpu_s / max(self.pages, 1)

    @property
    def close_ms_per_page(self) -> float:
        return 1000 * self.close_s / max(self.pages, 1)

    @property
    def cpu_per_page_ref(self) -> float:
        """CPU per page in ms per second of the reference workload: the machine's speed
        of the moment divided out (the raw figure where no reference was measured)."""
        return self.cpu_ms_per_page / (self.reference_cpu_s or 1.0)

    @property
    def close_per_page_ref(self) -> float:
        """Close time per page (ms) per second of the reference workload."""
        return self.close_ms_per_page / (self.reference_cpu_s or 1.0)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self) | {
            "cpu_ms_per_page": self.cpu_ms_per_page,
            "close_ms_per_page": self.close_ms_per_page,
            "cpu_per_page_ref": self.cpu_per_page_ref,
            "close_per_page_ref": self.close_per_page_ref,
        }


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
    #: projected to 1M pages (not the figures of the machine's speed: no line in N)
    projects: bool = True

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
    Figure("reference_cpu_s", "reference workload CPU", "s", digits=2, projects=False),
    Figure("cpu_per_page_ref", "CPU per page / reference", "ms/s", digits=2, projects=False),
    Figure("peak_rss_bytes", "peak RSS (OS)", "MB", MB),
    Figure("rss_before_close_bytes", "peak RSS before close", "MB", MB),
    Figure("memusage_max_bytes", "memusage/max (Scrapy)", "MB", MB),
    Figure("close_s", "close time", "s", digits=2),
    Figure("close_ms_per_page", "close per page", "ms", digits=3, total="close_s"),
    Figure("close_per_page_ref", "close per page / reference", "ms/s", digits=3, projects=False),
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
        projected = f"{figure.projected(crawls):,.{figure.digits}f}" if figure.projects else "-"
        unit = f" {figure.unit}" if figure.unit else ""
        rows.append(
            [
                f"{figure.label}{unit}",
                *(cell(v, values[0], figure.digits) for v in values),
                projected,
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
        found.append(time_check("close time per page flat, first crawl", 1.2, first, "close", span))
        for kind, crawls in results.items():
            found.append(time_check(f"CPU per page, {KINDS[kind]}", 1.1, crawls, "cpu", span))
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


def time_check(target: str, limit: float, crawls: dict[int, Crawl], figure: str, span: str) -> Check:
    """A time target, largest size against smallest, on the per-page ``figure``
    ("cpu" or "close") divided by the reference workload of the moment (the machine's
    speed drifts between the sizes' crawls), the raw ratio said beside it."""
    small, large = crawls[min(crawls)], crawls[max(crawls)]
    ref = times(getattr(large, f"{figure}_per_page_ref"), getattr(small, f"{figure}_per_page_ref"))
    raw = times(getattr(large, f"{figure}_ms_per_page"), getattr(small, f"{figure}_ms_per_page"))
    return Check(f"{target}: <= {limit}x", ref <= limit, f"{ref:.2f}x against the reference, {raw:.2f}x raw ({span})")


def to_json(
    measured: dict[str, Results],
    checkouts: dict[str, Path],
    commits: dict[str, str | None] | None = None,
    date: str | None = None,
) -> dict[str, Any]:
    """Every figure, the checks and the projections, per checkout (and its commit)."""
    return {
        "date": date,
        "edit_fraction": EDIT_FRACTION,
        "checkouts": {
            label: {
                "path": str(checkouts[label]),
                "commit": (commits or {}).get(label),
                "crawls": {kind: {str(n): c.as_dict() for n, c in crawls.items()} for kind, crawls in results.items()},
                "checks": [asdict(check) for check in checks(results)],
                "projected_1m": {
                    kind: {f"{f.label} {f.unit}".strip(): f.projected(crawls) for f in FIGURES if f.projects}
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
            kind: {int(n): Crawl(**{name: c[name] for name in names if name in c}) for n, c in crawls.items()}
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
