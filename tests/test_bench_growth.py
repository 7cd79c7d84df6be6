"""The growth benchmark's pure parts (bench.growth_figures: ratios, the linear projection,
the targets' checks, the tables, its JSON; bench.growth's sizes and disk usage) and its
close probe (bench.components.CloseProbe).
No crawl and no timing: the figures come from ``make bench-growth``."""

import doctest
import json
import resource
import subprocess
import sys

import pytest
from scrapy import Spider, signals
from scrapy.utils.misc import build_from_crawler
from scrapy.utils.test import get_crawler

from bench import growth, growth_figures
from bench.components import CloseProbe
from bench.growth import disk_usage, parse_sizes
from bench.growth_figures import FIGURES, KINDS, Crawl, checks, from_json, project, table, to_json
from tests.crawl import ROOT

MB = 1_000_000


def crawl(kind, n, **figures):
    """A crawl of ``n`` pages that grows as it should: everything per page flat, the
    process's memory flat, the report small."""
    values = {
        "pages": n,
        "extractor_calls": n if kind == "first" else n // 100 if kind == "edited" else 0,
        "wall_s": n / 50,
        "cpu_s": n / 100,
        "peak_rss_bytes": 200 * MB,
        "rss_before_close_bytes": 150 * MB,
        "memusage_max_bytes": 180 * MB,
        "close_s": n / 1000 if kind == "first" else n / 100_000,
        "close_cpu_s": n / 2000 if kind == "first" else n / 200_000,
        "report_bytes": 20_000,
        "latest_bytes": 300,
        "cache_bytes": n * 10_000,
    }
    return Crawl(kind=kind, site_pages=n, **(values | figures))


def results(**changes_at_largest):
    """Every kind at 2,000 and 10,000 pages; ``changes_at_largest``: figures of the
    10,000-page first crawl."""
    found = {kind: {n: crawl(kind, n) for n in (2000, 10_000)} for kind in KINDS}
    found["first"][10_000] = crawl("first", 10_000, **changes_at_largest)
    return found


def failed(found):
    return [check.target for check in checks(found) if not check.passed]


@pytest.mark.parametrize("module", [growth, growth_figures])
def test_growth_doctests(module):
    # bench/ is not among the doctest paths of pytest: run its doctests here
    failures, attempted = doctest.testmod(module)
    assert attempted >= 1 and failures == 0


def test_sizes_sorted_and_bad_sizes_said():
    assert parse_sizes("100000,10000, 30000") == (10_000, 30_000, 100_000)
    with pytest.raises(ValueError, match="separated by commas, got 'ten'"):
        parse_sizes("ten")
    with pytest.raises(ValueError, match="at least 2"):
        parse_sizes("0,100")
    with pytest.raises(ValueError, match="at least 2"):
        parse_sizes(",")


def test_projection_is_the_least_squares_line():
    # slope 1e-4, intercept 1: exactly on the line
    assert project([(10_000, 2.0), (30_000, 4.0), (100_000, 11.0)], 1_000_000) == pytest.approx(101.0)
    assert project([(5, 7.0)], 1_000_000) == 7.0  # one point: flat


def test_per_page_figures_project_from_their_totals():
    crawls = {2000: crawl("first", 2000, cpu_s=30.0), 10_000: crawl("first", 10_000, cpu_s=110.0)}
    cpu_per_page = next(f for f in FIGURES if f.key == "cpu_ms_per_page")
    cpu = next(f for f in FIGURES if f.key == "cpu_s")
    # 10 ms a page plus 10 s at start: 10 ms a page at 1M, not a fit of 15 and 11 ms
    assert cpu.projected(crawls) == pytest.approx(10_010.0)
    assert cpu_per_page.projected(crawls) == pytest.approx(10.01)


def test_a_site_that_grows_well_passes_every_target():
    found = results()
    assert failed(found) == []
    # each kind's memory and CPU per page, the first crawl's close per page, the
    # edited recrawl's close, the report
    assert len(checks(found)) == 3 + 1 + 3 + 1 + 1


@pytest.mark.parametrize(
    ("changes", "target"),
    [
        ({"peak_rss_bytes": 350 * MB}, "peak RSS, first crawl: largest <= 1.5x smallest and <= 400 MB"),
        ({"cpu_s": 10_000 / 100 * 1.2}, "CPU per page, first crawl: <= 1.1x"),
        ({"close_s": 10_000 / 1000 * 1.3}, "close time per page flat, first crawl: <= 1.2x"),
        ({"close_s": 0.5}, "close of the 1%-edited recrawl <= 10% of the first crawl's, at 10,000 pages"),
        ({"report_bytes": 2 * MB}, "run report <= 1 MB at every size"),
    ],
)
def test_each_target_fails_on_its_own(changes, target):
    assert target in failed(results(**changes))


def test_time_targets_divide_out_the_machine_speed_of_the_moment():
    # the machine ran the reference workload 30% slower during the largest first crawl:
    # its CPU and close per page 30% higher pass; the raw ratio is still said
    slow = {"cpu_s": 10_000 / 100 * 1.3, "close_s": 10_000 / 1000 * 1.3, "reference_cpu_s": 1.3}
    found = results(**slow)
    for n in (2000, 10_000):
        for kind in KINDS:
            if (kind, n) != ("first", 10_000):
                found[kind][n] = crawl(kind, n, reference_cpu_s=1.0)
    assert failed(found) == []
    lines = {check.target: check.measured for check in checks(found)}
    assert lines["CPU per page, first crawl: <= 1.1x"].startswith("1.00x against the reference, 1.30x raw")
    # at the same speed, the same figures fail
    assert "CPU per page, first crawl: <= 1.1x" in failed(results(**(slow | {"reference_cpu_s": 0.0})))


def test_memory_over_400_mb_fails_even_when_flat():
    found = results()
    for n in (2000, 10_000):
        found["unchanged"][n] = crawl("unchanged", n, peak_rss_bytes=450 * MB)
    assert failed(found) == ["peak RSS, unchanged recrawl: largest <= 1.5x smallest and <= 400 MB"]


def test_one_size_checks_only_what_needs_no_second():
    found = {kind: {5000: crawl(kind, 5000)} for kind in KINDS}
    assert [check.target for check in checks(found)] == [
        "close of the 1%-edited recrawl <= 10% of the first crawl's, at 5,000 pages",
        "run report <= 1 MB at every size",
    ]


def test_table_gives_each_figure_its_ratio_and_projection():
    text = table("first", results()["first"])
    lines = text.splitlines()
    assert lines[0].split() == ["first", "crawl", "N=2,000", "N=10,000", "1M", "(projected)"]
    assert len(lines) == 1 + len(FIGURES)
    assert "pages crawled" in lines[1] and "2,000 (1.00x)" in lines[1] and "10,000 (5.00x)" in lines[1]
    assert lines[1].endswith("1,000,000")
    # the machine's speed is not a line in N: no projection of the rows divided by it
    assert [line.split()[-1] for line in lines if "reference" in line] == ["-", "-", "-"]
    unchanged = table("unchanged", results()["unchanged"])
    assert "0 (-)" in unchanged  # no extractor call at either size: no ratio


def test_json_round_trip(tmp_path):
    measured = {"this": results()}
    figures = json.loads(json.dumps(to_json(measured, {"this": tmp_path}, {"this": "abc1234"}, "2026-11-30T03:07:00Z")))
    assert from_json(figures) == (measured, {"this": tmp_path}, {"this": "abc1234"})
    assert figures["date"] == "2026-11-30T03:07:00Z" and figures["edit_fraction"] == 0.01
    this = figures["checkouts"]["this"]
    assert this["crawls"]["first"]["10000"]["cpu_ms_per_page"] == pytest.approx(10.0)
    assert this["projected_1m"]["edited"]["extractor calls"] == pytest.approx(10_000)
    assert all(check["passed"] for check in this["checks"])


def test_disk_usage_counts_allocated_blocks(tmp_path):
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "a.json").write_bytes(b"x" * 10_000)
    (tmp_path / "pages.db").write_bytes(b"y")
    assert 10_001 <= disk_usage(tmp_path) <= 10_001 + 2 * 64 * 1024


def test_close_probe_times_spider_closed_to_engine_stopped():
    crawler = get_crawler(Spider)
    crawler.spider = crawler._create_spider("probe")
    crawler.stats.open_spider()
    probe = build_from_crawler(CloseProbe, crawler)
    crawler.signals.send_catch_log(signals.spider_closed, spider=crawler.spider, reason="finished")
    crawler.signals.send_catch_log(signals.engine_stopped)
    stats = crawler.stats
    assert stats.get_value("bench/close_s") >= 0 and stats.get_value("bench/close_cpu_s") >= 0
    rss_kb = stats.get_value("bench/maxrss_before_close_kb")
    assert 0 < rss_kb <= resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert probe.closing_since is not None


def test_close_probe_without_a_close_sets_no_close_time():
    crawler = get_crawler(Spider)
    crawler.stats.open_spider()
    build_from_crawler(CloseProbe, crawler)
    crawler.signals.send_catch_log(signals.engine_stopped)
    assert crawler.stats.get_value("bench/close_s") is None


@pytest.mark.e2e
def test_growth_benchmark_smoke(tmp_path):
    # two tiny sites, three crawls each, as `python -m bench.growth` runs them: every
    # figure is there (no timing asserted)
    out = tmp_path / "figures.json"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.growth", "--sizes", "40,80", "--reference-rounds", "2", "--json", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "1M (projected)" in proc.stdout and "targets of issue 40:" in proc.stdout
    this = json.loads(out.read_text())["checkouts"]["this"]
    first, edited = this["crawls"]["first"]["80"], this["crawls"]["edited"]["80"]
    assert first["pages"] >= 40 and first["extractor_calls"] == first["pages"]
    assert this["crawls"]["unchanged"]["80"]["extractor_calls"] == 0 and edited["extractor_calls"] >= 1
    assert first["peak_rss_bytes"] >= first["rss_before_close_bytes"] > 0
    assert first["close_s"] > 0 and first["close_cpu_s"] > 0 and first["report_bytes"] > 0 and first["cache_bytes"] > 0
    assert (
        first["reference_cpu_s"] > 0
        and first["cpu_per_page_ref"] == first["cpu_ms_per_page"] / first["reference_cpu_s"]
    )


def test_a_zero_base_fails_its_target():
    found = results()
    found["first"][10_000] = crawl("first", 10_000, close_s=0.0)
    assert "close of the 1%-edited recrawl <= 10% of the first crawl's, at 10,000 pages" in failed(found)
