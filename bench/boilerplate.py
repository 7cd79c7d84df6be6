"""Benchmark: the domain boilerplate analysis against the original block-hash
algorithm's straightforward two-pass implementation, on the generated corpus, one core.

    python -m bench.boilerplate            # full: ~12,000 pages, ~120 MB, 250 domains
    python -m bench.boilerplate --quick    # smoke run: 25 domains

Both sides do the whole job for every domain: find the boilerplate (pass 1) and strip
it from every page (pass 2). The reference is the original algorithm's functions as
written (:mod:`bench.reference_boilerplate`: ``compute_domain_fingerprint`` then
``strip_boilerplate`` per page, all pages held in memory); ours is ``DomainAnalyser``
(streaming passes: two with the reference's parameters, three by default, where a
pass locates the repeated blocks in each page). Times are CPU seconds
(``time.process_time``), best of ``--repeat`` runs. Memory: tracemalloc peak while
analysing the largest domain with pages streamed, against the same domain's text.
"""

from __future__ import annotations

import argparse
import gc
import json
import time
import tracemalloc
from typing import Any

from bench.corpus import Domain, corpus, make_domains, pages_of
from bench.reference_boilerplate import compute_domain_fingerprint, strip_boilerplate
from crawler.lib.boilerplate import Params, Reread, analyse_pages


def run_reference(data: list[tuple[Domain, list[tuple[str, str]]]], params: Params) -> tuple[int, int]:
    removed = pages_cleaned = 0
    for _, pages in data:
        texts = [text for _, text in pages]
        result = compute_domain_fingerprint(texts, params.threshold_pct, params.min_pages, params.min_block_chars)
        hashes = set(result.boilerplate_hashes)
        for text in texts:
            _, gone = strip_boilerplate(text, hashes, params.min_block_chars)
            removed += gone
            pages_cleaned += bool(gone)
    return removed, pages_cleaned


def run_ours(data: list[tuple[Domain, list[tuple[str, str]]]], params: Params) -> tuple[int, int]:
    removed = pages_cleaned = 0
    for _, pages in data:
        fingerprint, analyser = analyse_pages(pages, params)
        if fingerprint.skipped:
            continue
        for url, text in pages:
            _, gone = analyser.clean(url, text)
            removed += gone
            pages_cleaned += bool(gone)
    return removed, pages_cleaned


def timed(func: Any, *args: Any, repeat: int) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(repeat):
        gc.collect()
        start = time.process_time()
        result = func(*args)
        best = min(best, time.process_time() - start)
    return best, result


def memory_peak(domain: Domain, params: Params, streamed: bool) -> int:
    gc.collect()
    tracemalloc.start()
    if streamed:
        _, analyser = analyse_pages(Reread(lambda: pages_of(domain)), params)
        for url, text in pages_of(domain):
            analyser.clean(url, text)
    else:
        texts = [text for _, text in pages_of(domain)]
        hashes = set(compute_domain_fingerprint(texts).boilerplate_hashes)
        for text in texts:
            strip_boilerplate(text, hashes)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args()
    domains = make_domains(25, 1_200) if args.quick else make_domains()
    data = corpus(domains)
    pages = sum(len(p) for _, p in data)
    megabytes = sum(len(text.encode()) for _, p in data for _, text in p) / 1e6
    repeat = 1 if args.quick else args.repeat
    # the reference's rule: exact blocks, domain level, repetition alone, no hysteresis
    reference_params = Params(loose=False, sections=False, hysteresis=0.0, position=False)
    ref_time, ref_result = timed(run_reference, data, reference_params, repeat=repeat)
    same_time, same_result = timed(run_ours, data, reference_params, repeat=repeat)
    ours_time, ours_result = timed(run_ours, data, Params(), repeat=repeat)
    assert same_result == ref_result, (same_result, ref_result)  # same decisions, same bytes
    largest = max(domains, key=lambda d: d.pages)
    largest_mb = sum(len(t.encode()) for _, t in pages_of(largest)) / 1e6
    mem_ours = memory_peak(largest, Params(), streamed=True) / 1e6
    mem_ref = memory_peak(largest, Params(), streamed=False) / 1e6
    figures = {
        "pages": pages,
        "domains": len(domains),
        "megabytes": round(megabytes, 1),
        "reference_seconds": round(ref_time, 2),
        "reference_mb_per_s": round(megabytes / ref_time, 1),
        "ours_reference_params_seconds": round(same_time, 2),
        "ours_reference_params_mb_per_s": round(megabytes / same_time, 1),
        "speedup_reference_params": round(ref_time / same_time, 2),
        "ours_default_seconds": round(ours_time, 2),
        "ours_default_mb_per_s": round(megabytes / ours_time, 1),
        "speedup_default": round(ref_time / ours_time, 2),
        "boilerplate_pct_reference": round(100 * ref_result[0] / (megabytes * 1e6), 1),
        "boilerplate_pct_default": round(100 * ours_result[0] / (megabytes * 1e6), 1),
        "largest_domain_pages": largest.pages,
        "largest_domain_mb": round(largest_mb, 1),
        "memory_peak_ours_mb": round(mem_ours, 1),
        "memory_peak_reference_mb": round(mem_ref, 1),
    }
    print(f"corpus: {pages} pages, {len(domains)} domains, {megabytes:.1f} MB")
    print(f"reference (original algorithm, two passes): {ref_time:.2f} s CPU, {figures['reference_mb_per_s']} MB/s")
    print(
        f"ours, reference parameters:  {same_time:.2f} s, {figures['ours_reference_params_mb_per_s']} MB/s, "
        f"{figures['speedup_reference_params']}x the reference (identical output)"
    )
    print(
        f"ours, default (loose, sections, position, hysteresis): {ours_time:.2f} s, "
        f"{figures['ours_default_mb_per_s']} MB/s, "
        f"{figures['speedup_default']}x"
    )
    print(
        f"boilerplate found: {figures['boilerplate_pct_reference']}% (reference rule), "
        f"{figures['boilerplate_pct_default']}% (default)"
    )
    print(
        f"memory, largest domain ({largest.pages} pages, {largest_mb:.1f} MB): ours {mem_ours:.1f} MB peak "
        f"(streamed), reference {mem_ref:.1f} MB (all pages held)"
    )
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(figures, handle, indent=2)


if __name__ == "__main__":
    main()
