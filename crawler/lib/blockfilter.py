"""The last step of the main-content selection: a logistic model that drops blocks whose
shape and place say they are not the page's text (next stories, calls to subscribe).

No single rule tells such blocks from the article, so a model over each block's
shape and place does; **no class or id word is a feature**: a name is never the reason
text is dropped. Weights (:data:`MODEL`, ``blockfilter.json``) are fitted by ``python -m
bench.block_filter --train`` on the development part of trafilatura's evaluation corpus.
It applies only to pages that say they are articles (:func:`is_article`), what it learned
from, never to documentation (:func:`is_documentation`). See docs/architecture.md.

Pure functions over an lxml tree, never modified; scores sum with ``math.fsum`` so the
same page gives the same selection run after run.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crawler.lib.nodes import BLOCK_TAGS, HEADING_TAGS, NEVER_TEXT_TAGS, VISIBLE, Visibility, tag_of

if TYPE_CHECKING:
    from collections.abc import Collection

    from lxml.etree import _Element

WORD_RE = re.compile(r"\w+")
#: the blocks judged one by one: the innermost of these that hold text (code never)
JUDGED_TAGS = frozenset(BLOCK_TAGS) | HEADING_TAGS
#: a paragraph of the article's prose: this many characters of text
PROSE_CHARS = 100
#: JSON-LD types of an article (schema.org's Article and its kinds)
ARTICLE_TYPE_RE = re.compile(
    r'"@type"\s*:\s*\[?\s*"(?:\w*Article|BlogPosting|SocialMediaPosting|Report)"', re.IGNORECASE
)
#: the tags the model tells apart (one feature each)
TAGS = ("p", "li", "h1", "h2", "h3", "h4", "h5", "h6", "div", "figcaption", "td", "dd", "dt", "blockquote")
#: what the model reads of a block, in the order of its weights
FEATURES = (
    "log_words",
    "link_share",
    "links",
    "position",
    "after_last_paragraph",
    "distance_after",
    "no_article",
    "ends_sentence",
    "stops_per_word",
    "capitals",
    "digits",
    "in_run",
    "beside_paragraphs",
    "ends_colon",
    *(f"tag_{tag}" for tag in TAGS),
)
SENTENCE_ENDS = frozenset('.!?"»“”')
#: the documentation generators whose pages the step leaves alone
DOC_GENERATOR_RE = re.compile(
    r"sphinx|mkdocs|docusaurus|doxygen|rustdoc|mdbook|docbook|asciidoc|hugo|jekyll|vitepress|gitbook|starlight|"
    r"javadoc|pdoc|typedoc|antora|docfx|gatsby",
    re.IGNORECASE,
)
#: the scripts and stylesheets documentation tools write beside their pages
DOC_ASSET_RE = re.compile(
    r"(?:^|/)(?:haddock[\w.-]*|doxygen|rustdoc[\w.-]*|doctools)\.(?:js|css)(?:\?|$)", re.IGNORECASE
)
#: the site generators of blogs and news sites among them
BLOG_GENERATOR_RE = re.compile(r"hugo|jekyll|gatsby", re.IGNORECASE)
MODEL_FILE = Path(__file__).with_name("blockfilter.json")


@dataclass(frozen=True)
class Model:
    """The fitted model (``blockfilter.json``): a weight per feature, the bias, the
    threshold a block's score must reach, the share of the selection's words the step
    may take at most."""

    weights: tuple[float, ...]
    bias: float
    threshold: float
    max_share: float

    @classmethod
    def load(cls, path: Path) -> Model:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        if tuple(data["features"]) != FEATURES or len(data["weights"]) != len(FEATURES):
            raise RuntimeError(f"{path} was fitted on other features: python -m bench.block_filter --train")
        weights = tuple(float(w) for w in data["weights"])
        return cls(weights, float(data["bias"]), float(data["threshold"]), float(data["max_share"]))


MODEL = Model.load(MODEL_FILE)
WEIGHTS = MODEL.weights
BIAS = MODEL.bias
THRESHOLD = MODEL.threshold
MAX_SHARE = MODEL.max_share


def _text(node: _Element) -> str:
    return " ".join("".join(node.itertext()).split())


def judged_blocks(root: _Element, skip: Collection[_Element], visibility: Visibility = VISIBLE) -> list[_Element]:
    """The innermost block elements of ``root`` that hold text, in document order,
    outside ``skip`` and what a reader does not see; code (``<pre>``) is never judged.

    >>> from lxml import html
    >>> page = html.fromstring("<div><p>One.</p><ul><li>a</li><li><p>b</p></li></ul><pre>x</pre></div>")
    >>> [b.text for b in judged_blocks(page, ())]
    ['One.', 'a', 'b']
    """
    out: list[_Element] = []

    def walk(node: _Element) -> bool:
        holds = False
        for child in node:
            tag = tag_of(child)
            if not tag or tag in NEVER_TEXT_TAGS or child in skip or visibility.excluded(child):
                continue
            if tag == "pre":
                holds = True
                continue
            if walk(child):
                holds = True
            elif tag in JUDGED_TAGS and "".join(child.itertext()).strip():
                out.append(child)
                holds = True
        return holds

    walk(root)
    return out


def link_share(node: _Element) -> float:
    """The share of ``node``'s words inside links."""
    total = len("".join(node.itertext()).split())
    if not total:
        return 0.0
    return sum(len("".join(a.itertext()).split()) for a in node.iter("a")) / total


class SiblingRuns:
    """Whether a block is one of three or more siblings of the same tag and class (a
    list of teasers), or sits in such a sibling: counted once per parent."""

    def __init__(self) -> None:
        self.counts: dict[_Element, Counter[tuple[object, str | None]]] = {}

    def _count(self, parent: _Element, node: _Element) -> int:
        counts = self.counts.get(parent)
        if counts is None:
            counts = self.counts[parent] = Counter((child.tag, child.get("class")) for child in parent)
        return counts[(node.tag, node.get("class"))]

    def __call__(self, node: _Element) -> bool:
        parent = node.getparent()
        if parent is None:
            return False
        if self._count(parent, node) >= 3 and tag_of(node) != "p":
            return True
        grand = parent.getparent()
        if grand is None or tag_of(parent) in ("body", "main", "article", "p"):
            return False
        return self._count(grand, parent) >= 3


def features(blocks: list[_Element]) -> list[list[float]]:
    """What the model reads of each block (:data:`FEATURES`)."""
    prose = [b for b in blocks if tag_of(b) == "p" and len(_text(b)) >= PROSE_CHARS]
    last = blocks.index(prose[-1]) if len(prose) >= 2 else None
    parents = Counter(p.getparent() for p in prose)
    article_parent = parents.most_common(1)[0][0] if parents else None
    runs = SiblingRuns()
    count = len(blocks)
    rows = []
    for index, block in enumerate(blocks):
        text = _text(block)
        words = WORD_RE.findall(text)
        n = max(1, len(words))
        tag = tag_of(block)
        row = [
            math.log1p(len(words)),
            link_share(block),
            float(len(block.findall(".//a"))),
            index / max(1, count - 1),
            1.0 if last is not None and index > last else 0.0,
            (index - last) / max(1, count) if last is not None else 0.0,
            1.0 if last is None else 0.0,
            1.0 if text[-1:] in SENTENCE_ENDS else 0.0,
            text.count(".") / n,
            sum(1 for w in words if w[:1].isupper()) / n,
            sum(1 for w in words if w.isdigit()) / n,
            1.0 if runs(block) else 0.0,
            1.0 if article_parent is not None and block.getparent() is article_parent else 0.0,
            1.0 if text.endswith(":") else 0.0,
        ]
        row += [1.0 if tag == name else 0.0 for name in TAGS]
        rows.append(row)
    return rows


def score(row: list[float]) -> float:
    """The model's probability that the block of ``row`` is not the page's text."""
    z = BIAS + math.fsum(w * x for w, x in zip(WEIGHTS, row, strict=True))
    return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0


def is_generated_documentation(root: _Element) -> bool:
    """A page a documentation tool says it wrote: its ``<meta name="generator">``
    (Javadoc, Doxygen, Sphinx...; a blog's site generator, Hugo or Jekyll, is not one),
    or a script or stylesheet of its own (Haddock's ``haddock-bundle.min.js``).

    >>> from lxml import html
    >>> [is_generated_documentation(html.fromstring(f'<html><head><meta name="generator" content="{tool}">'
    ...     '</head></html>')) for tool in ("javadoc/ClassWriterImpl", "Hugo 0.92", "DocBook XSL Stylesheets")]
    [True, False, True]
    >>> is_generated_documentation(html.fromstring('<html><head><script src="haddock-bundle.min.js"></script>'))
    True
    """
    for element in root.iter("meta"):
        if (element.get("name") or "").lower() == "generator":
            content = element.get("content") or ""
            return DOC_GENERATOR_RE.search(content) is not None and BLOG_GENERATOR_RE.search(content) is None
    for element in root.iter("script", "link"):
        if DOC_ASSET_RE.search(element.get("src") or element.get("href") or ""):
            return True
    return False


def is_documentation(root: _Element) -> bool:
    """A page of documentation: a documentation tool's (:func:`is_generated_documentation`),
    a site generator's ``<meta name="generator">``, or one with code blocks."""
    for element in root.iter("meta"):
        if (element.get("name") or "").lower() == "generator" and DOC_GENERATOR_RE.search(element.get("content") or ""):
            return True
    return next(root.iter("pre"), None) is not None or is_generated_documentation(root)


def is_article(root: _Element) -> bool:
    """Whether the page says it is an article, the kind of page the model learned from:
    ``<meta property="og:type" content="article">``, or JSON-LD whose ``@type`` is an
    ``Article``, ``NewsArticle``, ``BlogPosting``... (a landing page, a price list, a
    form or a documentation page does not: their short blocks are their text).

    >>> from lxml import html
    >>> is_article(html.fromstring('<html><head><meta property="og:type" content="article"></head></html>'))
    True
    >>> is_article(html.fromstring('<html><head><meta property="og:type" content="website"></head></html>'))
    False
    """
    for element in root.iter("meta"):
        kind = (element.get("property") or element.get("name") or "").lower()
        if kind == "og:type" and (element.get("content") or "").strip().lower() == "article":
            return True
    return any(
        ARTICLE_TYPE_RE.search(script.text or "")
        for script in root.iter("script")
        if (script.get("type") or "").strip().lower() == "application/ld+json"
    )


def judged(block: _Element) -> bool:
    """Whether the model may drop ``block``: not the page's title (``<h1>``: the corpus
    rarely counts a title either way), not a picture's caption (the corpus counts most
    captions as not the article; a reader sees it under the picture, and its edits are
    real), nothing inside a form (its labels are the form's text)."""
    tag = tag_of(block)
    if tag in ("h1", "figcaption") or next(block.iterancestors("figcaption"), None) is not None:
        return False
    return next(block.iterancestors("form"), None) is None


def choose(blocks: list[_Element], scores: list[float], threshold: float = THRESHOLD) -> list[_Element]:
    """The blocks that go, given the model's ``scores``: the blocks the model may judge
    (:func:`judged`) scored at or past ``threshold``, a heading only with its whole
    section (the blocks up to the next heading); none when they would hold more than
    :data:`MAX_SHARE` of the selection's words.

    >>> from lxml import html
    >>> prose = "Words of a story. " * 8
    >>> page = html.fromstring(f"<div><h1>T</h1><p>{prose}</p><h2>More</h2><p>{prose}</p><h2>Next</h2><p>d</p></div>")
    >>> blocks = list(page)
    >>> [b.text for b in choose(blocks, [0.9, 0.1, 0.9, 0.1, 0.9, 0.9], 0.6)]
    ['Next', 'd']
    """
    going = [score >= threshold and judged(block) for block, score in zip(blocks, scores, strict=True)]
    for index, block in enumerate(blocks):
        if going[index] and tag_of(block) in HEADING_TAGS:
            end = next((i for i in range(index + 1, len(blocks)) if tag_of(blocks[i]) in HEADING_TAGS), len(blocks))
            going[index] = all(going[index + 1 : end])
    out = [block for block, goes in zip(blocks, going, strict=True) if goes]
    words = sum(len(WORD_RE.findall(_text(b))) for b in blocks)
    if sum(len(WORD_RE.findall(_text(b))) for b in out) > MAX_SHARE * words:
        return []
    return out


def dropped(root: _Element, skip: Collection[_Element], visibility: Visibility = VISIBLE) -> list[_Element]:
    """The blocks of the selection ``root`` (less ``skip``) that the model says are not
    the page's text (:func:`choose`); none unless the page says it is an article
    (:func:`is_article`), none on a page of documentation."""
    page = root.getroottree().getroot()
    if is_documentation(page) or not is_article(page):
        return []
    blocks = judged_blocks(root, skip, visibility)
    if not blocks:
        return []
    return choose(blocks, [score(row) for row in features(blocks)])
