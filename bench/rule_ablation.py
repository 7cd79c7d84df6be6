"""Benchmark: what each rule of the main-content selection gains on general pages and
what it takes from documentation, one rule switched off at a time.

    python -m bench.rule_ablation --corpus DIR --root /work/docsites             # every rule
    python -m bench.rule_ablation --corpus DIR --root /work/docsites --limit 80 --json bench/results/rule_ablation.json
    python -m bench.rule_ablation --corpus DIR --rule learned --rule names:comment   # some rules, no docs
    python -m bench.rule_ablation --corpus DIR --rule teasers+beside-core            # two rules off at once

For each rule, the converter runs with that rule switched off (its function patched to
leave nothing out) on:

* the **development part** of trafilatura's corpus (bench.real_pages: never the test
  part): F1, precision and recall, and their change against all rules on (the rule's
  gain: what switching it off loses);
* every **documentation site** of bench.docs_gold (``--root``; the first ``--limit``
  pages of each, in the benchmark's fixed order): the words the converter sends, and
  the pages and words the rule takes out of them (words sent without the rule less
  words sent with it, page by page, where positive), and the mean recall and precision
  against each generator's container (bench.docs_sites): the rule's words are chrome
  when precision falls without it, text when recall rises.

A rule's gain is **within noise** when switching it off changes the development F1 by
less than ``NOISE`` (0.002: about three snippets of 3,180) and it takes no word from
documentation it should not: such a rule is a candidate for deletion.

The rules (each a name of this module's ``RULES``): ``learned`` (crawler.lib.blockfilter),
``teasers`` (stacks of teaser cards),
``beside-core`` (rails, forms and named blocks beside the article's core),
``related-headings`` (blocks under a heading naming links to other pages), ``furniture``
(lines known by their words), and ``names:KIND`` for each kind of class or id word
(``comment``, ``author``, ``related``, ``widget``, ``layout``, ``other``: a block so named
is no hint).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench import real_pages
from bench.docs_gold import SITES
from bench.docs_sites import DEFAULT_ROOT, ours, overlap, page_gold, site_pages, stylesheet_rules
from crawler.lib import chrome, maincontent, pagewalk

#: a change of the development F1 below this is noise
NOISE = 0.002
KINDS = ("comment", "author", "related", "widget", "layout", "other")


@contextmanager
def patched(target: Any, name: str, value: Any) -> Iterator[None]:
    original = getattr(target, name)
    setattr(target, name, value)
    try:
        yield
    finally:
        setattr(target, name, original)


@contextmanager
def without_kind(kind: str) -> Iterator[None]:
    """Class and id words of ``kind`` are no hint (the memo of names is emptied)."""
    original = pagewalk.name_hint

    def name_hint(tag: str, classes: str, ident: str) -> str:
        found = original(tag, classes, ident)
        return "" if found == kind else found

    pagewalk._CLASSIFIED.clear()
    with patched(pagewalk, "name_hint", name_hint):
        yield
    pagewalk._CLASSIFIED.clear()


@contextmanager
def without_furniture() -> Iterator[None]:
    original = maincontent.measure_body

    def measure_body(body: Any, visibility: Any) -> Any:
        return replace(original(body, visibility), furniture=[])

    with patched(maincontent, "measure_body", measure_body):
        yield


RULES: dict[str, Callable[[], Any]] = {
    "learned": lambda: patched(maincontent, "dropped", lambda *a, **k: []),
    "teasers": lambda: patched(maincontent, "teaser_stacks", lambda *a, **k: []),
    "beside-core": lambda: patched(maincontent, "beside_core", lambda *a, **k: ([], [], [])),
    "related-headings": lambda: patched(chrome, "_headed_blocks", lambda *a, **k: []),
    "furniture": without_furniture,
    **{f"names:{kind}": (lambda kind=kind: without_kind(kind)) for kind in KINDS},
}


def corpus_scores(pages: list[real_pages.Page]) -> dict[str, float]:
    tally = real_pages.Tally()
    for page in pages:
        tally.add(page, real_pages.ours(page.path.read_bytes(), page.url))
    return {key: value for key, value in tally.scores().items() if key != "ms_per_page"}


def docs_words(pages: list[Any]) -> dict[tuple[str, str], tuple[int, float, float]]:
    """Words the converter sends of each documentation page, and its recall and
    precision against the generator's container (bench.docs_sites), by ``(site, path)``."""
    sent = {}
    for page in pages:
        body = page.file.read_bytes()
        gold, root = page_gold(page, body)
        if gold is None:
            continue
        output = ours(body, page.url, stylesheet_rules(root, page.file))
        scored = overlap(output, gold)
        sent[(page.site, page.path)] = (len(output.split()), scored.recall, scored.precision)
    return sent


def _mean(values: list[float]) -> float:
    return round(sum(values) / len(values), 4) if values else 0.0


def measure(rules: list[str], corpus: list[real_pages.Page], docs: list[Any]) -> dict[str, Any]:
    base = corpus_scores(corpus)
    base_docs = docs_words(docs)
    rows: dict[str, Any] = {
        "all rules": {
            **base,
            "docs_recall": _mean([recall for _, recall, _ in base_docs.values()]),
            "docs_precision": _mean([precision for _, _, precision in base_docs.values()]),
        }
    }
    for rule in rules:
        print(f"without {rule}", file=sys.stderr)
        with ExitStack() as stack:
            for part in rule.split("+"):
                stack.enter_context(RULES[part]())
            scores = corpus_scores(corpus)
            found = docs_words(docs)
        taken = {key: found[key][0] - base_docs[key][0] for key in found if found[key][0] > base_docs.get(key, (0,))[0]}
        by_site: dict[str, int] = {}
        for (site, _path), count in taken.items():
            by_site[site] = by_site.get(site, 0) + count
        rows[rule] = {
            **scores,
            "docs_recall": _mean([recall for _, recall, _ in found.values()]),
            "docs_precision": _mean([precision for _, _, precision in found.values()]),
            "f1_gain": round(base["f1"] - scores["f1"], 4),
            "docs_pages_taken": len(taken),
            "docs_words_taken": sum(taken.values()),
            "docs_words_taken_by_site": by_site,
            "within_noise": abs(base["f1"] - scores["f1"]) < NOISE,
        }
    return rows


def table(rows: dict[str, Any]) -> str:
    lines = [
        "| rule switched off | dev F1 | precision | recall | F1 gain of the rule | docs pages it takes from "
        "| docs words | docs recall | docs precision |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for rule, row in rows.items():
        gain = "" if rule == "all rules" else f"{row['f1_gain']:+.4f}" + (" (noise)" if row["within_noise"] else "")
        lines.append(
            f"| {rule} | {row['f1']:.4f} | {row['precision']:.4f} | {row['recall']:.4f} | {gain} "
            f"| {row.get('docs_pages_taken', '')} | {row.get('docs_words_taken', '')} "
            f"| {row['docs_recall']:.4f} | {row['docs_precision']:.4f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=real_pages.CORPUS)
    parser.add_argument("--root", type=Path, help=f"the unpacked doc packages (e.g. {DEFAULT_ROOT}); none: no docs")
    parser.add_argument("--limit", type=int, default=80, help="pages of each documentation site")
    parser.add_argument("--rule", action="append", help="only these rules (repeatable; a+b: both at once)")
    parser.add_argument("--json", type=Path)
    opts = parser.parse_args(argv)
    corpus = [page for page in real_pages.load_pages(opts.corpus) if page.part == "dev"]
    docs: list[Any] = []
    if opts.root is not None:
        for site in SITES.values():  # (never the held-out sites: this compares designs)
            if not site.held_out and (opts.root / site.package / site.folder).is_dir():
                docs.extend(site_pages(site, opts.root)[: opts.limit])
    unknown = [part for rule in opts.rule or () for part in rule.split("+") if part not in RULES]
    if unknown:
        parser.error(f"unknown rule {unknown[0]!r}: one of {', '.join(RULES)}")
    rows = measure(opts.rule or list(RULES), corpus, docs)
    print(table(rows))
    if opts.json:
        opts.json.write_text(json.dumps({"limit": opts.limit, "rules": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
