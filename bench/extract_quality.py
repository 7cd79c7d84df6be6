"""Benchmark: main-content extraction quality on the hand-checked evaluation set.

    python -m bench.extract_quality                      # every page, a table on stdout
    python -m bench.extract_quality --group docs         # one group (docs, general or holdout)
    python -m bench.extract_quality --json bench/results/extract_quality.json
    python -m bench.extract_quality --page sphinx_rtd --show   # and print each output

Every page of ``bench/evalset/<group>/NAME.html`` goes through three extractors in the
same run, and each output is scored against ``NAME.gold.md`` (see bench.quality):

* ``ours``: ``crawler.lib.markdown`` as the docs spider runs it (``tests.convert``), whatever
  the tree holds now;
* ``before``: ``bench.legacy_markdown``, the converter as it was at 650bd7f (baseline);
* ``trafilatura`` 2.3.1, when installed (``make bench-quality`` installs it)::

      trafilatura.extract(html, url=URL, output_format="markdown", include_tables=True,
                          include_comments=False)

  all other options at their defaults: no links, no images, no metadata (so no page
  title unless the page repeats it in the body), formatting on (markdown implies it),
  neither ``favor_precision`` nor ``favor_recall``, the readability/jusText fallback on.

Each extractor gets the page's bytes and its URL (the page's ``<link rel=canonical>``).
Figures per page and per group: F1, precision, recall (4-gram shingles of words), words
sent / gold words, code lines kept (share of the gold's code lines found as lines of the
output; "-" where the gold has no code), empty outputs, and CPU milliseconds per page
(median of ``--repeat`` runs, ``time.process_time``). Group figures are means over the
pages; the empty count is a sum.

``holdout`` is a held-out group written after the converter was tuned on ``docs`` and
``general`` (see bench/evalset/README.md). It is reported as its own group and is NOT in
``all``, which stays the mean over the tuned groups so that its figures compare with
earlier runs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from lxml import html as lxml_html

from bench import legacy_markdown
from bench.quality import code_line_recall, score
from tests.convert import html_bytes_to_markdown

EVALSET = Path(__file__).resolve().parent / "evalset"
GROUPS = ("docs", "general", "holdout")
#: the groups the converter was tuned on; ``all`` is their mean (holdout stays apart)
TUNED_GROUPS = ("docs", "general")
TRAFILATURA_VERSION = "2.3.1"

Extractor = Callable[[bytes, str], str]


@dataclass
class PageResult:
    """One extractor on one page."""

    group: str
    page: str
    extractor: str
    f1: float
    precision: float
    recall: float
    words_ratio: float
    code_lines: float | None
    empty: bool
    ms: float
    output_words: int
    gold_words: int


def pages(group: str | None = None) -> list[tuple[str, Path]]:
    """The evaluation pages as (group, path of the .html), sorted, of one group or all."""
    return [(g, path) for g in GROUPS if group in (None, g) for path in sorted((EVALSET / g).glob("*.html"))]


def gold_path(page: Path) -> Path:
    """The gold markdown of ``page`` (``NAME.html`` -> ``NAME.gold.md``)."""
    return page.with_name(page.name.removesuffix(".html") + ".gold.md")


def page_url(body: bytes, group: str, name: str) -> str:
    """The page's canonical URL, else a made-up one under ``evalset.invalid``."""
    root = lxml_html.fromstring(body)
    for href in root.xpath("//link[@rel='canonical']/@href"):
        if href.strip():
            return str(href).strip()
    return f"https://evalset.invalid/{group}/{name}.html"


def trafilatura_extractor() -> Extractor | None:
    """trafilatura's ``extract`` with the options the module docstring states, or
    ``None`` when trafilatura is not installed."""
    try:
        import trafilatura
    except ImportError:
        return None

    def extract(body: bytes, url: str) -> str:
        text = trafilatura.extract(
            body.decode("utf-8"), url=url, output_format="markdown", include_tables=True, include_comments=False
        )
        return text or ""

    return extract


def extractors(with_trafilatura: bool = True) -> dict[str, Extractor]:
    """The extractors to compare, by name, in table order."""
    found: dict[str, Extractor] = {
        "ours": html_bytes_to_markdown,
        "before": legacy_markdown.html_bytes_to_markdown,
    }
    extract = trafilatura_extractor() if with_trafilatura else None
    if extract is not None:
        found["trafilatura"] = extract
    return found


def timed(extract: Extractor, body: bytes, url: str, repeat: int) -> tuple[str, float]:
    """The output of ``extract`` and its median CPU time in milliseconds."""
    times: list[float] = []
    output = ""
    for _ in range(max(1, repeat)):
        start = time.process_time()
        output = extract(body, url)
        times.append((time.process_time() - start) * 1000)
    return output, statistics.median(times)


def run(
    group: str | None = None, repeat: int = 5, with_trafilatura: bool = True, names: list[str] | None = None
) -> list[PageResult]:
    """Score every extractor on every page (of ``group``; only ``names`` if given)."""
    chosen = extractors(with_trafilatura)
    results: list[PageResult] = []
    for page_group, path in pages(group):
        name = path.name.removesuffix(".html")
        if names and name not in names:
            continue
        body = path.read_bytes()
        gold = gold_path(path).read_text(encoding="utf-8")
        url = page_url(body, page_group, name)
        for extractor, extract in chosen.items():
            output, ms = timed(extract, body, url, repeat)
            s = score(output, gold)
            results.append(
                PageResult(
                    page_group, name, extractor, s.f1, s.precision, s.recall, s.words_ratio,
                    code_line_recall(output, gold), not output.strip(), ms, s.output_words, s.gold_words,
                )
            )  # fmt: skip
    return results


def summary(results: list[PageResult]) -> dict[str, dict[str, dict[str, Any]]]:
    """Per group (and ``all``: the tuned groups, not ``holdout``) and extractor: the mean
    of each figure over the pages, the number of empty outputs, the number of pages."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for group in (*GROUPS, "all"):
        chosen = [r for r in results if r.group == group or (group == "all" and r.group in TUNED_GROUPS)]
        for extractor in dict.fromkeys(r.extractor for r in chosen):
            rows = [r for r in chosen if r.extractor == extractor]
            code = [r.code_lines for r in rows if r.code_lines is not None]
            out.setdefault(group, {})[extractor] = {
                "pages": len(rows),
                "f1": round(statistics.mean(r.f1 for r in rows), 3),
                "precision": round(statistics.mean(r.precision for r in rows), 3),
                "recall": round(statistics.mean(r.recall for r in rows), 3),
                "words_ratio": round(statistics.mean(r.words_ratio for r in rows), 2),
                "code_lines": round(statistics.mean(code), 3) if code else None,
                "empty": sum(r.empty for r in rows),
                "ms": round(statistics.mean(r.ms for r in rows), 2),
            }
    return out


def _fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def table(results: list[PageResult], groups: dict[str, dict[str, dict[str, Any]]]) -> str:
    """The figures as a plain-text table: one line per page and extractor, then the
    group means."""
    head = f"{'page':24} {'extractor':12} {'F1':>5} {'prec':>5} {'rec':>5} {'words':>6} {'code':>5} {'ms':>7}"
    lines = [head, "-" * len(head)]
    previous = ""
    for r in results:
        label = f"{r.group}/{r.page}"
        if label != previous and previous:
            lines.append("")
        lines.append(
            f"{(label if label != previous else ''):24} {r.extractor:12} {r.f1:5.2f} {r.precision:5.2f} "
            f"{r.recall:5.2f} {r.words_ratio:6.2f} {_fmt(r.code_lines):>5} {r.ms:7.2f}" + ("  EMPTY" if r.empty else "")
        )
        previous = label
    lines += [
        "",
        "means per group (all: docs + general, not holdout; words: words sent / gold words; "
        "code: code lines kept; empty: count)",
        head,
    ]
    for group, by_extractor in groups.items():
        for extractor, f in by_extractor.items():
            lines.append(
                f"{group + ' (' + str(f['pages']) + ' pages)':24} {extractor:12} {f['f1']:5.2f} {f['precision']:5.2f} "
                f"{f['recall']:5.2f} {f['words_ratio']:6.2f} {_fmt(f['code_lines']):>5} {f['ms']:7.2f}"
                f"  empty={f['empty']}"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--group", choices=GROUPS, help="one group of pages (default: all)")
    parser.add_argument("--page", action="append", help="only this page (NAME, repeatable)")
    parser.add_argument("--repeat", type=int, default=5, help="runs per page and extractor; the median time counts")
    parser.add_argument("--no-trafilatura", action="store_true", help="leave trafilatura out even if installed")
    parser.add_argument("--json", help="write the figures to this file")
    parser.add_argument("--show", action="store_true", help="also print each extractor's output (use with --page)")
    args = parser.parse_args(argv)
    if not args.no_trafilatura and trafilatura_extractor() is None:
        print(f"trafilatura is not installed (pip install trafilatura=={TRAFILATURA_VERSION}): left out")
    results = run(args.group, args.repeat, not args.no_trafilatura, args.page)
    if not results:
        print("no evaluation pages matched", file=sys.stderr)
        return 2
    groups = summary(results)
    print(table(results, groups))
    if args.show:
        for group, path in pages(args.group):
            name = path.name.removesuffix(".html")
            if args.page and name not in args.page:
                continue
            body = path.read_bytes()
            url = page_url(body, group, name)
            for extractor, extract in extractors(not args.no_trafilatura).items():
                print(f"\n===== {group}/{name}: {extractor}\n{extract(body, url)}")
    if args.json:
        figures = {"groups": groups, "pages": [asdict(r) for r in results], "repeat": args.repeat}
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
