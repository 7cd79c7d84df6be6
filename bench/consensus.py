"""Benchmark: does trafilatura, asked as a second opinion, make our selection better?

    python -m bench.consensus --corpus DIR --json bench/results/consensus_dev.json      # the dev part
    python -m bench.consensus --corpus DIR --part test --only ours,trafilatura,both-plus-captions
    python -m bench.consensus --evalset --repeat 3       # the evaluation set of bench.extract_quality
    python -m bench.consensus --docs-root /work/docsites  # the documentation sites of bench.docs_sites

Issue 24 welcomes building on trafilatura wherever it measures better. This measures the
**consensus filter**: our converter selects the page's main content as always; trafilatura
extracts the same page; of our selected blocks (the innermost elements that write a
paragraph, a list item, a heading, a caption...; code is never judged), those whose words
trafilatura also left out (fewer than half of their word trigrams in its output) are
dropped, but only when the block carries some weak evidence of chrome of its own (the
variant's rule, :data:`RULES`), so that text neither method is sure of is kept. Where a
block lies: ``before`` the first block trafilatura kept, ``after`` the last, or ``inside``.

* ``ours``: the converter alone; ``trafilatura``: trafilatura alone, as
  ``bench.real_pages`` runs it;
* ``both-any``: every block trafilatura left out (the bound of what its opinion buys);
* ``both-tail``: those before or after; ``both-after``: those after the article's end;
* ``both-weak``: those before or after, link-dense (> half of their words in links),
  short (fewer than 12 words), or one of a run of three or more similar siblings;
* ``both-after-links-teasers``: after, or inside and link-dense, or inside and a teaser
  line (5 to 11 words, not a heading, not in a run);
* ``both-plus-captions``: the same, and inside labels (under 5 words, not a heading)
  and captions (``figcaption``): the best of these on the dev part;
* ``-docs`` appended: the filter skipped on pages that look like documentation (a
  ``<pre>``, or a documentation generator's ``<meta name=generator>``);
  ``-gated`` appended: trafilatura asked only when our selection holds three link-dense
  blocks (:func:`suspicious`); ``-articles`` appended: asked only on the pages the
  learned step judges (:func:`crawler.lib.blockfilter.is_article`, not
  documentation), so that documentation, price lists and landing pages are left alone.

``--favor-recall`` and ``--fast`` ask trafilatura with those options. Scoring and parts as
in :mod:`bench.real_pages` (whose helpers this reuses): tune on ``dev``, score ``test``
once. ms/page is CPU of the whole conversion of each variant, trafilatura's parse included;
``x ours`` the ratio to ours in the same run. Figures: ``docs/benchmarks.md``, "trafilatura
as a second opinion".
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.real_pages import CORPUS, PARTS, Extractor, Tally, decoded, load_pages, markdown_text
from crawler.lib.blockfilter import SiblingRuns, is_article, is_documentation, judged_blocks, link_share
from crawler.lib.css import NO_RULES, HiddenRules
from crawler.lib.maincontent import Selection, select_main_content
from crawler.lib.markdown import write_markdown
from crawler.lib.nodes import Visibility, tag_of

if TYPE_CHECKING:
    from lxml.etree import _Element

WORD_RE = re.compile(r"\w+")
#: a block of fewer words is a "short" block (a teaser line, a label, a stamp)
SHORT_WORDS = 12


def words(text: str) -> list[str]:
    return WORD_RE.findall(text.lower())


def trigrams(tokens: list[str]) -> set[tuple[str, ...]]:
    if len(tokens) < 3:
        return {tuple(tokens)} if tokens else set()
    return {tuple(tokens[i : i + 3]) for i in range(len(tokens) - 2)}


def traf_text(body: bytes, **options: Any) -> str:
    import trafilatura

    settings = {
        "fast": False,
        "include_comments": False,
        "include_tables": True,
        "include_formatting": False,
        **options,
    }
    return trafilatura.extract(body, **settings) or ""


#: a page that looks like documentation (the learned step's own test: one home)
looks_like_docs = is_documentation


def similar_run(node: _Element) -> bool:
    """One of three or more siblings of the same tag and class (a list of teasers), or in
    such a sibling (the learned step's feature: :class:`crawler.lib.blockfilter.SiblingRuns`)."""
    return SiblingRuns()(node)


def kept_by(tokens: list[str], reference: set[tuple[str, ...]]) -> bool:
    grams = trigrams(tokens)
    if not grams:
        return True
    return sum(1 for gram in grams if gram in reference) >= 0.5 * len(grams)


@dataclass(frozen=True)
class Block:
    """What a rule knows of one of our blocks that trafilatura left out: where it lies
    against the blocks trafilatura kept (``before`` the first, ``after`` the last, or
    ``inside``), its share of words in links, its words, whether it is one of a run of
    similar siblings (:func:`similar_run`), whether it is a heading, its tag."""

    position: str
    links: float
    count: int
    run: bool
    heading: bool
    tag: str

    @classmethod
    def of(cls, node: _Element, position: str) -> Block:
        tag = tag_of(node)
        count = len(words("".join(node.itertext())))
        return cls(position, link_share(node), count, similar_run(node), tag in HEADINGS, tag)


HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})


def _weak(b: Block) -> bool:
    return b.position != "inside" or b.links > 0.5 or b.count < SHORT_WORDS or b.run


def _after_short(b: Block) -> bool:
    return b.position == "after" and (b.links > 0.5 or b.run or b.heading or b.count < 30)


def _after_links(b: Block) -> bool:
    return b.position == "after" or (b.position == "inside" and b.links > 0.5)


def _after_links_teasers(b: Block) -> bool:
    teaser = not b.heading and not b.run and 5 <= b.count < SHORT_WORDS
    return _after_links(b) or (b.position == "inside" and teaser)


def _plus_labels(b: Block) -> bool:
    return _after_links_teasers(b) or (b.position == "inside" and not b.heading and b.count < 5)


def _plus_captions(b: Block) -> bool:
    return _plus_labels(b) or (b.position == "inside" and b.tag == "figcaption")


#: which of the blocks trafilatura left out a variant drops
RULES: dict[str, Callable[[Block], bool]] = {
    "any": lambda b: True,
    "tail": lambda b: b.position != "inside",
    "weak": _weak,
    "after": lambda b: b.position == "after",
    "after-short": _after_short,
    "after-links": _after_links,
    "after-links-teasers": _after_links_teasers,
    "plus-labels": _plus_labels,
    "plus-captions": _plus_captions,
}


def suspicious(selection: Selection, visibility: Visibility) -> bool:
    """The gate of the ``-gated`` variants: whether our selection holds ``GATE_DENSE``
    link-dense blocks (counted on our blocks alone, before trafilatura is asked)."""
    blocks = judged_blocks(selection.root, selection.skip, visibility)
    return sum(1 for block in blocks if link_share(block) > 0.5) >= GATE_DENSE


GATE_DENSE = 3


def consensus_markdown(
    body: bytes,
    url: str,
    mode: str | None,
    traf_options: dict[str, Any],
    *,
    docs_guard: bool = False,
    gate: bool = False,
    articles: bool = False,
    site_rules: HiddenRules = NO_RULES,
) -> str:
    """Our markdown of the page, less the blocks that trafilatura also left out and that
    the rule ``mode`` drops (``None``: our converter alone, as ``page_markdown``)."""
    root = decoded(body, url).selector.root
    visibility = Visibility.of(root, site_rules)
    selection = select_main_content(root, visibility)
    extra: set[_Element] = set()
    asked = mode is not None and not (docs_guard and looks_like_docs(root))
    asked = asked and not (articles and (is_documentation(root) or not is_article(root)))
    if asked and not (gate and not suspicious(selection, visibility)):
        reference_tokens = words(traf_text(body, **traf_options))
        reference = trigrams(reference_tokens)
        blocks = judged_blocks(selection.root, selection.skip, visibility)
        verdicts = [kept_by(words("".join(b.itertext())), reference) for b in blocks]
        kept_at = [i for i, v in enumerate(verdicts) if v]
        first, last = (kept_at[0], kept_at[-1]) if kept_at else (len(blocks), -1)
        if reference_tokens:  # trafilatura found nothing: no opinion
            for i, (block, kept) in enumerate(zip(blocks, verdicts, strict=True)):
                position = "before" if i < first else "after" if i > last else "inside"
                if not kept and RULES[str(mode)](Block.of(block, position)):
                    extra.add(block)
    return write_markdown(
        selection.root, url, skip=selection.skip | frozenset(extra), before=selection.before, visibility=visibility
    )


def extractors(traf_options: dict[str, Any]) -> dict[str, Extractor]:
    """Every variant by name: ``ours``, ``trafilatura``, then ``both-RULE`` with the
    suffixes ``-docs`` (documentation pages left alone) and ``-gated`` (trafilatura
    asked only when :func:`suspicious`)."""
    chosen: dict[str, Extractor] = {
        "ours": lambda body, url: markdown_text(consensus_markdown(body, url, None, {})),
        "trafilatura": lambda body, url: traf_text(body),
    }
    for mode in RULES:
        for guard in (False, True):
            for gate in (False, True):
                name = f"both-{mode}" + ("-docs" if guard else "") + ("-gated" if gate else "")
                chosen[name] = _variant(mode, traf_options, docs_guard=guard, gate=gate)
        chosen[f"both-{mode}-articles"] = _variant(mode, traf_options, docs_guard=False, gate=False, articles=True)
    return chosen


def _variant(
    mode: str, traf_options: dict[str, Any], *, docs_guard: bool, gate: bool, articles: bool = False
) -> Extractor:
    def extract(body: bytes, url: str) -> str:
        return markdown_text(
            consensus_markdown(body, url, mode, traf_options, docs_guard=docs_guard, gate=gate, articles=articles)
        )

    return extract


def evalset(traf_options: dict[str, Any], repeat: int) -> dict[str, Any]:
    """The project's evaluation set (``bench.extract_quality``): ours, trafilatura and
    the consensus (``plus-captions``, documentation pages left alone), per group."""
    from bench import extract_quality
    from tests.convert import html_bytes_to_markdown

    def both(body: bytes, url: str) -> str:
        return consensus_markdown(body, url, "plus-captions", traf_options, docs_guard=True)

    chosen = {"ours": html_bytes_to_markdown, "both-plus-captions-docs": both}
    reference = extract_quality.trafilatura_extractor()
    if reference is not None:
        chosen["trafilatura"] = reference
    extract_quality.extractors = lambda with_trafilatura=True: chosen  # type: ignore[assignment,return-value]
    results = extract_quality.run(repeat=repeat)
    figures = extract_quality.summary(results)
    print(extract_quality.table(results, figures))
    return figures


def docs_sites(root: Path, traf_options: dict[str, Any]) -> dict[str, Any]:
    """Every page ``bench.docs_sites`` scores on its development sites (never the
    held-out ones: this compares designs): how many the documentation guard leaves
    alone, and ours against the consensus (``plus-captions``, guarded) per site."""
    from bench import docs_sites as sites_bench
    from bench.docs_gold import SITES
    from bench.quality import tokens

    figures: dict[str, Any] = {}
    print("| site | pages | guarded | changed | ours recall | ours precision | both recall | both precision | empty |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, site in SITES.items():
        if site.held_out:
            continue
        tally: dict[str, Any] = dict.fromkeys(("pages", "guarded", "changed", "empty"), 0)
        sums = dict.fromkeys(("ours_r", "ours_p", "both_r", "both_p"), 0.0)
        for page in sites_bench.site_pages(site, root):
            body = page.file.read_bytes()
            gold, tree = sites_bench.page_gold(page, body)
            if gold is None or not tokens(gold):
                continue
            rules = sites_bench.stylesheet_rules(tree, page.file)
            mine = sites_bench.ours(body, page.url, rules)
            both = sites_bench.plain_text(
                consensus_markdown(body, page.url, "plus-captions", traf_options, docs_guard=True, site_rules=rules)
            )
            tally["pages"] += 1
            tally["guarded"] += looks_like_docs(decoded(body, page.url).selector.root)
            tally["changed"] += mine != both
            tally["empty"] += not both.strip()
            for key, text in (("ours", mine), ("both", both)):
                o = sites_bench.overlap(text, gold)
                sums[key + "_r"] += o.recall
                sums[key + "_p"] += o.precision
        n = max(1, tally["pages"])
        means = {key: round(value / n, 4) for key, value in sums.items()}
        figures[name] = {**tally, **means}
        print(
            f"| {name} | {tally['pages']} | {tally['guarded']} | {tally['changed']} | {means['ours_r']:.3f} "
            f"| {means['ours_p']:.3f} | {means['both_r']:.3f} | {means['both_p']:.3f} | {tally['empty']} |"
        )
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--part", choices=PARTS, default="dev")
    parser.add_argument("--only", help="comma-separated variants")
    parser.add_argument("--favor-recall", action="store_true", help="trafilatura's opinion with favor_recall=True")
    parser.add_argument("--fast", action="store_true", help="trafilatura's opinion with fast=True (no fallbacks)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--evalset", action="store_true", help="the evaluation set instead of the corpus")
    parser.add_argument("--repeat", type=int, default=5, help="with --evalset: timed runs per page (median)")
    parser.add_argument("--docs-root", type=Path, help="the documentation sites of bench.docs_sites instead")
    args = parser.parse_args(argv)
    options: dict[str, Any] = {"favor_recall": True} if args.favor_recall else {}
    if args.fast:
        options["fast"] = True
    if args.evalset or args.docs_root:
        figures = evalset(options, args.repeat) if args.evalset else docs_sites(args.docs_root, options)
        if args.json:
            args.json.write_text(json.dumps({"options": options, "figures": figures}, indent=1) + "\n")
        return 0
    chosen = extractors(options)
    if args.only:
        chosen = {name: chosen[name] for name in args.only.split(",")}
    pages = [page for page in load_pages(args.corpus) if page.part == args.part]
    tallies = {name: Tally() for name in chosen}
    for page in pages:
        body = page.path.read_bytes()
        for name, extract in chosen.items():
            start = time.process_time()
            try:
                output = extract(body, page.url)
            except Exception as exc:  # noqa: BLE001 - a crash is a full miss
                print(f"{name} failed on {page.file}: {exc!r}", file=sys.stderr)
                tallies[name].errors += 1
                output = ""
            tallies[name].cpu_s += time.process_time() - start
            tallies[name].add(page, output)
    base = tallies["ours"].scores()["ms_per_page"] if "ours" in tallies else 0.0
    print("| part | variant | F1 | precision | recall | leaked | empty | ms/page | x ours |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, tally in tallies.items():
        s = tally.scores()
        ratio = s["ms_per_page"] / base if base else 0.0
        print(
            f"| {args.part} ({tally.pages}) | {name} | {s['f1']:.3f} | {s['precision']:.3f} | {s['recall']:.3f} "
            f"| {tally.fp} | {tally.empty} | {s['ms_per_page']:.1f} | {ratio:.2f} |"
        )
    if args.json:
        payload = {name: {**asdict(t), **t.scores()} for name, t in tallies.items()}
        args.json.write_text(json.dumps({"part": args.part, "options": options, "variants": payload}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
