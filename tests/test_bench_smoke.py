"""The benchmarks still run (a seconds-long smoke run; the figures come from make bench)."""

import json
import os
import subprocess
import sys

import pytest

from tests.crawl import ROOT

pytestmark = pytest.mark.e2e  # every test runs a benchmark as `python -m bench...` does


def test_boilerplate_benchmark_smoke(tmp_path):
    out = tmp_path / "figures.json"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.boilerplate", "--quick", "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    figures = json.loads(out.read_text())
    # the benchmark itself asserts that with the reference's parameters our analyser
    # removes exactly what the original block-hash algorithm removes; here only that it
    # found boilerplate
    assert figures["boilerplate_pct_reference"] > 0 and figures["pages"] > 1000


def test_cache_commands_benchmark_smoke(tmp_path):
    out = tmp_path / "figures.json"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.cache_commands", "--pages", "200", "--repeat", "1",
         "--dir", str(tmp_path / "cache"), "--json", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    figures = json.loads(out.read_text())
    assert figures["pages"] == 200 and figures["stats_s"] > 0


def test_cache_scale_benchmark_smoke(tmp_path):
    out = tmp_path / "figures.json"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.cache_scale", "--sizes", "2000", "--operations", "500",
         "--dir", str(tmp_path), "--json", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(out.read_text())["2000"]["lookups_per_s"] > 0


def test_crawl_benchmark_smoke(tmp_path):
    out = tmp_path / "figures.json"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.crawl", "--pages", "60", "--repeat", "2", "--quiet-only", "--json", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    ours = json.loads(out.read_text())["quiet"]["ours"]
    assert ours["unchanged"]["extractor_calls"] == 0 and ours["unchanged"]["responses_304"] == 60
    # each step twice; the 5% recrawl both times from the cache as it was before it
    assert len(ours["first"]["cpu_s_runs"]) == 2 and ours["first"]["extractor_calls"] == 60
    assert ours["edited"] == 3 and ours["edited_5pct"]["extractor_calls_runs"] == [3, 3]


def test_links_benchmark_smoke(tmp_path):
    out = tmp_path / "figures.json"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.links", "--json", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    figures = json.loads(out.read_text())
    # link targets cost tokens: the link-heavy pages most
    assert all(row["urls"] > row["text"] for row in figures.values())
    assert figures["api index"]["ratio_urls_to_text"] > figures["docs page"]["ratio_urls_to_text"]


def test_recrawl_benchmark_smoke(tmp_path):
    out = tmp_path / "figures.json"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.recrawl", "--pages", "12", "--repeat", "1", "--json", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    figures = json.loads(out.read_text())
    ours = figures["ours"]["unchanged"]
    # every page answered 304 and reused, not parsed again; the reference revalidated every page
    assert ours["pages"] == ours["responses_304"] == ours["parse_reused"] == 12
    assert figures["httpcache"]["unchanged"]["responses_304"] >= 12
    assert figures["ratios"]["ours_unchanged_over_first"] > 0


def test_store_latency_benchmark_smoke(tmp_path, postgres_server):
    out = tmp_path / "figures.json"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.store_latency", "--pages", "50", "--repeat", "1", "--json", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "EXTRACTED_DOCS_DSN": postgres_server.admin_dsn},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    figures = json.loads(out.read_text())
    assert figures["sqlite"]["us_per_page"] > 0 and figures["postgres"]["statements_per_page"] > 0


def test_frontier_benchmark_smoke(tmp_path):
    out = tmp_path / "figures.json"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.frontier", "--pages", "60", "--repeat", "1", "--json", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = json.loads(out.read_text())["results"]
    # every configuration recorded each page once, across its processes
    assert {label: r["pages"] for label, r in results.items()} == {
        "no frontier x1": 60, "frontier x1": 60, "frontier x2": 60, "frontier x3": 60
    }  # fmt: skip


def test_render_requests_benchmark_smoke(tmp_path):
    out = tmp_path / "figures.json"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.render_requests", "--pages", "4", "--json", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    runs = json.loads(out.read_text())["runs"]
    # every rendered page hydrated by the main script, which the site sent once
    assert runs["rendered"]["pages_hydrated"] == 4 and runs["rendered"]["main_js_requests"] == 1
    assert runs["plain"]["pages_hydrated"] == 0 and runs["rendered"]["peak_pss_mb"] > 0


def tiny_corpus(folder):
    """Two pages in the corpus' layout (one of each part: bench.real_pages.part_of)."""
    (folder / "eval").mkdir(parents=True)
    page = "<html><body><main><h1>T</h1><p>{text}</p><div class='post-meta'>By Ann</div></main></body></html>"
    entries = {}
    for name, text in (("bmjv.de.konsum.html", "Words of the first page."), ("denkanstoos.com.2012.html", "Second.")):
        (folder / "eval" / name).write_text(page.format(text=text))
        entries[f"https://example.org/{name}"] = {"file": name, "with": [text], "without": ["By Ann"]}
    (folder / "evaldata.json").write_text(json.dumps(entries))
    return folder


def test_rule_ablation_and_named_out_benchmarks_smoke(tmp_path):
    corpus = tiny_corpus(tmp_path / "corpus")
    out = tmp_path / "ablation.json"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.rule_ablation", "--corpus", str(corpus), "--rule", "learned",
         "--rule", "teasers+names:other", "--json", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    rules = json.loads(out.read_text())["rules"]
    assert rules["all rules"]["recall"] == 1.0 and rules["teasers+names:other"]["precision"] < 1.0  # the label leaks
    out = tmp_path / "audit.json"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.named_out", "--corpus", str(corpus), "--json", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    audit = json.loads(out.read_text())
    assert audit["corpus dev"] == {"pages": 1, "pages_named_out": 1, "words_named_out": 2, "words_sent": 7}


def test_two_spellings_benchmark_smoke(tmp_path):
    site = tmp_path / "html"
    (site / "guide").mkdir(parents=True)
    paragraph = "<p>{} explains one part of the library, with an example and its output.</p>"
    (site / "index.html").write_text(
        "<html><body><h1>Home</h1>" + paragraph.format("Home") + '<a href="guide/index.html">Guide</a></body></html>'
    )
    (site / "guide" / "index.html").write_text(
        "<html><body><h1>Guide</h1>" + paragraph.format("The guide") + '<a href="a.html">A</a></body></html>'
    )
    (site / "guide" / "a.html").write_text("<html><body><h1>A</h1>" + paragraph.format("A") + "</body></html>")
    out = tmp_path / "figures.json"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.two_spellings", "--root", str(site), "--json", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    runs = json.loads(out.read_text())["runs"]
    assert [run["requests"] for run in runs[:2]] == [4, 3]  # /guide/ under both spellings, then once
    assert [run["calls"] for run in runs] == [3, 0, 1, 0] and {run["removed"] for run in runs} == {0}
