"""What ``scrapy cache stats`` prints: the last runs as a table, each host's change
signals; JSON and file output for every subcommand."""

from __future__ import annotations

import json
import sys
import textwrap
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TextIO

from crawler.cache.run_report import converter_note, partial_note, render_note, revisit_note
from crawler.support.tables import table

if TYPE_CHECKING:
    from collections.abc import Iterator

    from crawler.cache.ports import DocStore
    from crawler.incremental.revisit import RevisitPolicy


def host_signals(store: DocStore, policy: RevisitPolicy, domains: list[str]) -> dict[str, Any]:
    """Each host's change signals (lastmod, ETag, Last-Modified: state and counts), for
    the hosts with a trust record."""
    signals = {}
    for domain in domains:
        record = store.get_domain(domain)
        trust = record.get("revisit") if isinstance(record, dict) else None
        if isinstance(trust, dict):
            signals[domain] = policy.signals(trust)
    return signals


def signal_cell(signal: dict[str, Any]) -> str:
    """
    >>> signal_cell({"state": "distrusted", "agree": 4, "noisy": 0, "stale": 1})
    'distrusted (4/0/1)'
    >>> signal_cell({"state": "unknown", "agree": 0, "noisy": 0, "stale": 0})
    'unknown'
    """
    if signal["state"] == "unknown":
        return "unknown"
    return f"{signal['state']} ({signal['agree']}/{signal['noisy']}/{signal['stale']})"


def run_summary(report: dict[str, Any]) -> dict[str, Any]:
    calls = int(report.get("extractor_calls", 0))
    # a dry run sends nothing: it saves no call
    dry_run = isinstance(report.get("dry_run"), dict)
    saved = 0 if dry_run else int(report.get("extraction_cache_hits", 0))
    return {
        "run_id": report.get("run_id"),
        "finished_at": report.get("finished_at"),
        "finish_reason": report.get("finish_reason"),
        "dry_run": dry_run,
        # why a run is partial ("" for a complete one): a partial run removes no page
        "partial": partial_note(report),
        # why it failed as a whole ("" when it did not): the crawl exited 1
        "failed": str(report.get("failed") or ""),
        # what was asked and ignored (a misspelt setting...), one line each
        "mistakes": [str(m.get("message")) if isinstance(m, dict) else str(m) for m in report.get("mistakes") or []],
        # pages held back under a new converter ("" for none)
        "converter": converter_note(report),
        # the pages the run recorded (or processed); pages_fetched counts the HTML
        # responses downloaded in full: a page's other spelling (/index.html of /) is one more
        "pages": report["pages_processed"]
        if "pages_processed" in report
        else sum(int(report.get(k, 0)) for k in ("pages_new", "pages_changed", "pages_unchanged")),
        "pages_fetched": report.get("pages_fetched", 0),
        "not_modified": report.get("responses_not_modified", 0),
        "extractor_calls": calls,
        "calls_saved": saved,
        "hit_rate": saved / (calls + saved) if calls + saved else 0.0,
        "errors": report.get("errors", 0),
        # failed renderings, pages recorded though their scripts failed ("" for none)
        "render": render_note(report),
        # the revisit schedule: requests not sent, its sample, the miss rate it saw
        "revisit": report.get("revisit") if isinstance(report.get("revisit"), dict) else None,
    }


def print_runs(runs: list[dict[str, Any]]) -> None:
    """``scrapy cache stats``' table of the last runs, and what the last of them says of
    its renderings and its revisit schedule."""
    if runs:
        print("\nLast run:" if len(runs) == 1 else f"\nLast {len(runs)} runs:")
        rows = [
            [
                r["run_id"],
                r["finished_at"],
                ", ".join(str(p) for p in (r["finish_reason"], r["dry_run"] and "dry run", outcome(r)) if p),
                r["pages"],
                r["pages_fetched"],
                r["not_modified"],
                r["extractor_calls"],
                r["calls_saved"],
                f"{r['hit_rate']:.1%}",
                r["errors"],
            ]
            for r in runs
        ]
        print(
            table(
                [
                    "run",
                    "finished",
                    "reason",
                    "pages",
                    "downloaded",
                    "304s",
                    "extractor calls",
                    "calls saved",
                    "hit rate",
                    "errors",
                ],
                rows,
                right=range(3, 10),
            )
        )
        last = runs[-1]
        for label, note in (
            ("FAILED", last["failed"]),
            ("Partial", "" if last["failed"] else last["partial"].partition(": ")[2] or last["partial"]),
            *(("Ignored", mistake) for mistake in last["mistakes"]),
            ("Renderings", last.get("render")),
            ("Converter", last["converter"]),
            ("Revisit schedule", revisit_note(next((r["revisit"] for r in reversed(runs) if r.get("revisit")), None))),
        ):
            if note:
                print(wrapped(f"{label}, last run: {note}"))


def outcome(run: dict[str, Any]) -> str:
    """The table's word for how a run ended: ``FAILED``, ``partial`` or "" (the lines
    under the table say why, wrapped).

    >>> outcome({"failed": "no page could be crawled", "partial": "partial: x"}), outcome({"failed": "", "partial": ""})
    ('FAILED', '')
    """
    return "FAILED" if run.get("failed") else "partial" if run.get("partial") else ""


def wrapped(text: str, width: int = 100) -> str:
    """``text`` wrapped to ``width`` columns, the lines after the first indented.

    >>> print(wrapped("Partial, last run: failed pages; sitemap failed", width=30))
    Partial, last run: failed
      pages; sitemap failed
    """
    return textwrap.fill(text, width=width, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False)


def print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False, default=str))


@contextmanager
def output(path: str | None) -> Iterator[TextIO]:
    if path is None:
        yield sys.stdout
        return
    with open(path, "w", encoding="utf-8") as handle:
        yield handle
