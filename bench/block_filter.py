"""Fit and measure the learned step of the selection (:mod:`crawler.lib.blockfilter`).

    python -m bench.block_filter --cv                    # 5-fold on the dev part: what it does on pages it never saw
    python -m bench.block_filter --train                 # fit on the whole dev part, write crawler/lib/blockfilter.json

The data are the pages of trafilatura's evaluation corpus (:mod:`bench.real_pages`),
**the dev part only**: the test part is scored by ``bench.real_pages`` with the fitted
model, never fitted on or looked into. Each page is selected by the rules
(:func:`crawler.lib.maincontent.select_by_rules`); each judged block of the selection
(:func:`crawler.lib.blockfilter.judged_blocks`) is labelled by the corpus's snippets: a
block holding the start of a ``with`` passage (the article) is text (0), one holding the
start of a ``without`` passage (boilerplate) and none of the article is not (1), the
others are not used, nor the blocks the step never judges (:func:`blockfilter.judged`,
pages that do not say they are articles: :func:`blockfilter.is_article`). A logistic
regression (scikit-learn, ``make bench-quality`` installs it; the crawl needs only the
weights) is fitted on the labelled blocks.

``--cv`` splits the dev pages into five folds fixed by a seeded shuffle, fits on four and
applies the step, bounds and documentation guard included, to the fifth: the snippets
found and leaked over the dev part, against the rules alone, per threshold.

``--gate`` measures which pages the step could apply to (fitted and applied on those):
``declared`` (the crawl's: :func:`blockfilter.is_article`), ``dated`` (also a page with a
date of publication or an author: ``<time>``, ``article:published_time``, schema.org
``datePublished`` microdata, ``<meta name="author">``), ``all`` (every page that is not
documentation by :func:`blockfilter.is_documentation`).

``--names`` measures what the step leaves out on purpose, the words of class and id
names: each block's row gets one feature per name word, set when the block or an
ancestor of it within the selection carries it: ``chrome``, a fixed list of words
that name furniture (:data:`NAME_WORDS`); ``seen``, every word named on at least
:data:`SEEN_PAGES` dev pages (the vocabulary is taken over all dev pages, the labels
never).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.real_pages import CORPUS, Page, Tally, decoded, load_pages, markdown_text, norm
from crawler.lib import blockfilter
from crawler.lib.css import NO_RULES
from crawler.lib.maincontent import Selection, select_by_rules
from crawler.lib.markdown import write_markdown
from crawler.lib.nodes import Visibility

if TYPE_CHECKING:
    from lxml.etree import _Element

#: a snippet shorter than this labels nothing (too common a string)
MIN_SNIPPET = 8
#: the part of a snippet looked for in a block (a passage may run over two blocks)
SNIPPET_START = 40
FOLDS = 5
SEED = 7
THRESHOLDS = (0.5, 0.55, 0.6, 0.65, 0.7, 0.8)
REGULARISATION = 1.0
#: ``--names chrome``: words of class and id names that name furniture (trafilatura's and more)
NAME_WORDS = (
    "share", "social", "related", "author", "byline", "meta", "caption", "credit", "tag", "tags", "comment",
    "comments", "newsletter", "subscribe", "promo", "ad", "ads", "advert", "teaser", "widget", "sidebar", "footer",
    "nav", "breadcrumb", "date", "time", "info", "bio", "more", "recommended", "read", "also", "popular", "signup",
    "cta", "banner", "header", "title", "content", "body", "text", "article", "post", "entry", "story", "copyright",
    "source", "image", "photo", "media", "embed", "box", "aside", "list", "item", "card", "link", "links",
)  # fmt: skip
#: ``--names seen``: a word named on this many dev pages is a feature
SEEN_PAGES = 10
NAME_RE = re.compile(r"[a-z]+")


@dataclass
class PageData:
    page: Page
    selection: Selection
    visibility: Visibility
    blocks: list[_Element]
    rows: list[list[float]]
    labels: list[int | None]
    #: a page the step leaves alone (documentation, or not an article)
    skipped: bool

    def markdown(self, dropped: list[_Element]) -> str:
        selection = self.selection
        return write_markdown(
            selection.root,
            self.page.url,
            skip=selection.skip | frozenset(dropped),
            before=selection.before,
            visibility=self.visibility,
        )


def label(text: str, page: Page) -> int | None:
    starts = [norm(s)[:SNIPPET_START] for s in page.with_ if len(norm(s)) >= MIN_SNIPPET]
    if any(start in text for start in starts):
        return 0
    starts = [norm(s)[:SNIPPET_START] for s in page.without if len(norm(s)) >= MIN_SNIPPET]
    return 1 if any(start in text for start in starts) else None


#: the ``<meta>`` names of a date of publication or an author (``--gate dated``)
DATED_META = frozenset(
    {"article:published_time", "datepublished", "pubdate", "publishdate", "date", "dc.date", "author", "article:author"}
)


def is_dated(root: _Element) -> bool:
    """A page with a date of publication or an author (``--gate dated``)."""
    if next(root.iter("time"), None) is not None or root.xpath("//*[@itemprop='datePublished']"):
        return True
    return any(
        (m.get("property") or m.get("name") or m.get("itemprop") or "").lower() in DATED_META for m in root.iter("meta")
    )


GATES = {
    "declared": blockfilter.is_article,
    "dated": lambda root: blockfilter.is_article(root) or is_dated(root),
    "all": lambda root: True,
}


def page_data(page: Page, gate: str = "declared") -> PageData:
    root = decoded(page.path.read_bytes(), page.url).selector.root
    visibility = Visibility.of(root, NO_RULES)
    selection = select_by_rules(root, visibility)
    blocks = blockfilter.judged_blocks(selection.root, selection.skip, visibility)
    rows = blockfilter.features(blocks) if blocks else []
    # the blocks the step may judge, of the pages it applies to: the only ones it learns from
    article = GATES[gate](root) and not blockfilter.is_documentation(root)
    labels = [label(norm("".join(b.itertext())), page) if article and blockfilter.judged(b) else None for b in blocks]
    return PageData(page, selection, visibility, blocks, rows, labels, not article)


def name_words(block: _Element, stop: _Element) -> set[str]:
    """The words of the class and id names of ``block`` and its ancestors up to ``stop``."""
    words: set[str] = set()
    node: _Element | None = block
    while node is not None:
        for value in (node.get("class"), node.get("id")):
            if value:
                words.update(NAME_RE.findall(re.sub(r"([a-z])([A-Z])", r"\1 \2", value).lower()))
        if node is stop:
            break
        node = node.getparent()
    return words


def add_names(data: list[PageData], kind: str) -> int:
    """Append to each block's row one feature per name word (``--names``); the count of words."""
    if kind == "chrome":
        vocabulary: tuple[str, ...] = NAME_WORDS
    else:
        pages: Counter[str] = Counter()
        for d in data:
            named: set[str] = set()
            for block in d.blocks:
                named |= name_words(block, d.selection.root)
            pages.update(named)
        vocabulary = tuple(sorted(w for w, n in pages.items() if n >= SEEN_PAGES and len(w) > 1))
    for d in data:
        for block, row in zip(d.blocks, d.rows, strict=True):
            words = name_words(block, d.selection.root)
            row.extend(1.0 if w in words else 0.0 for w in vocabulary)
    return len(vocabulary)


def fit(data: list[PageData]) -> Any:
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    x = [row for d in data for row, y in zip(d.rows, d.labels, strict=True) if y is not None]
    y = [y for d in data for y in d.labels if y is not None]
    return LogisticRegression(max_iter=5000, C=REGULARISATION).fit(np.array(x), np.array(y))


def apply(model: Any, d: PageData, threshold: float) -> list[_Element]:
    """What the step drops of the page with ``model`` (as :func:`blockfilter.dropped`)."""
    if d.skipped or not d.blocks:
        return []
    scores = [float(p) for p in model.predict_proba(d.rows)[:, 1]]
    return blockfilter.choose(d.blocks, scores, threshold)


def cross_validate(data: list[PageData]) -> dict[str, dict[str, float]]:
    order = list(range(len(data)))
    random.Random(SEED).shuffle(order)
    folds = [order[i::FOLDS] for i in range(FOLDS)]
    tallies = {"rules": Tally(), **{f"learned {t}": Tally() for t in THRESHOLDS}}
    for held in folds:
        kept = set(held)
        model = fit([d for i, d in enumerate(data) if i not in kept])
        for i in held:
            d = data[i]
            tallies["rules"].add(d.page, markdown_text(d.markdown([])))
            for t in THRESHOLDS:
                tallies[f"learned {t}"].add(d.page, markdown_text(d.markdown(apply(model, d, t))))
    return {name: {"tp": t.tp, "fp": t.fp, **t.scores()} for name, t in tallies.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--cv", action="store_true", help="5-fold cross-validation on the dev part")
    parser.add_argument("--train", action="store_true", help="fit on the dev part and write the model file")
    parser.add_argument("--threshold", type=float, default=blockfilter.THRESHOLD)
    parser.add_argument("--out", type=Path, default=blockfilter.MODEL_FILE)
    parser.add_argument("--json", type=Path, help="with --cv: write the figures here")
    parser.add_argument("--gate", choices=sorted(GATES), default="declared", help="with --cv: the pages judged")
    parser.add_argument("--names", choices=("chrome", "seen"), help="with --cv: class and id words as features too")
    args = parser.parse_args(argv)
    if not (args.cv or args.train):
        parser.error("give --cv or --train")
    if args.train and args.gate != "declared":
        parser.error("--train fits the crawl's model: on the pages the crawl judges (--gate declared)")
    if args.train and args.names:
        parser.error("--train fits the crawl's model: without name words (--names is measured with --cv)")
    data = [page_data(page, args.gate) for page in load_pages(args.corpus) if page.part == "dev"]
    if args.names:
        print(f"{add_names(data, args.names)} name words as features")
    if args.cv:
        figures = cross_validate(data)
        print("| dev (5-fold) | found | leaked | F1 | precision | recall |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        for name, f in figures.items():
            print(f"| {name} | {f['tp']} | {f['fp']} | {f['f1']:.3f} | {f['precision']:.3f} | {f['recall']:.3f} |")
        if args.json:
            args.json.write_text(json.dumps(figures, indent=1) + "\n")
    if args.train:
        import sklearn

        model = fit(data)
        labelled = sum(1 for d in data for y in d.labels if y is not None)
        payload = {
            "features": list(blockfilter.FEATURES),
            "weights": [round(float(w), 6) for w in model.coef_[0]],
            "bias": round(float(model.intercept_[0]), 6),
            "threshold": args.threshold,
            "max_share": blockfilter.MAX_SHARE,
            "fitted_on": f"trafilatura's evaluation corpus, dev part: {len(data)} pages, {labelled} labelled blocks",
            "fitted_with": f"scikit-learn {sklearn.__version__} LogisticRegression(C={REGULARISATION})",
        }
        args.out.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.out}: {labelled} labelled blocks of {len(data)} pages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
