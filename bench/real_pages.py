"""Benchmark: what the extractor reads on 990 real pages written by others.

    python -m bench.real_pages                          # both parts, ours and trafilatura
    python -m bench.real_pages --part test --json bench/results/real_pages.json
    python -m bench.real_pages --part dev --worst 20    # the dev pages ours scores worst on
    python -m bench.real_pages --page FILE --show       # one page: outputs and the snippets missed
    python -m bench.real_pages --part dev --by-place    # ours' leaks and finds by where they lie

The corpus is trafilatura's evaluation data (``../shared/corpora/trafilatura-evaldata.tar.xz``,
Apache-2.0; ``--corpus`` for another copy, a folder or the archive): news sites, blogs,
magazines, government and company pages in many languages, saved as served. Each page
comes with ``with`` snippets (passages of its main text) and ``without`` snippets (menus,
footers, share bars, related links, legal lines). A ``with`` snippet found in the output
is a true positive, a missing one a false negative; a ``without`` snippet found is a false
positive. Precision, recall and F1 are over all snippets of a part (trafilatura's own
scoring, ``tests/eval_common.py``: whitespace-normalised substring match).

**Two parts fixed once**: a page is in ``test`` when the first byte of the SHA-256 of its
file name is odd, else in ``dev``. The converter is tuned on ``dev`` only; ``test`` is
reported, never looked into page by page (``--page``/``--worst`` refuse it without
``--peek-test``).

Both extractors run on the same bytes in the same process:

* ``ours``: the page decoded as Scrapy decodes a response (``HtmlResponse``: the HTTP
  header, a BOM, ``<meta charset>``, else detection), converted as the docs spider does
  (``tests.convert``), then its markdown reduced to plain text (``#``, ``*``, ``|``,
  list markers and fences are markup, not words);
* ``trafilatura`` (2.3.1, ``make bench-quality`` installs it) as its own benchmark runs it:
  ``extract(html_bytes, fast=False, include_comments=False, include_tables=True,
  include_formatting=False)``.

Also per extractor: pages with an empty output, words sent (sum over the pages), and CPU
milliseconds per page (``time.process_time``, the whole run divided by the pages).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from scrapy.http import HtmlResponse

from crawler.lib.pagetext import page_markdown
from crawler.lib.sniff import better_encoding

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "trafilatura-evaldata.tar.xz"
PARTS = ("dev", "test")
WS_RE = re.compile(r"\s+")

Extractor = Callable[[bytes, str], str]


def part_of(file_name: str) -> str:
    """The part a page belongs to, fixed by its file name.

    >>> part_of("bmjv.de.konsum.html"), part_of("denkanstoos.com.2012.html")
    ('dev', 'test')
    """
    return "test" if hashlib.sha256(file_name.encode("utf-8")).digest()[0] % 2 else "dev"


@dataclass(frozen=True)
class Page:
    url: str
    file: str
    path: Path
    with_: tuple[str, ...]
    without: tuple[str, ...]

    @property
    def part(self) -> str:
        return part_of(self.file)


def corpus_dir(corpus: Path) -> Path:
    """The folder holding ``evaldata.json``: ``corpus`` itself, its ``tests/``, or the
    archive unpacked once into the temporary folder (kept for the next run)."""
    for candidate in (corpus, corpus / "tests"):
        if (candidate / "evaldata.json").is_file():
            return candidate
    if not corpus.is_file():
        raise SystemExit(f"No corpus at {corpus}: give --corpus (the .tar.xz or the folder holding evaldata.json)")
    digest = hashlib.sha256(str(corpus.resolve()).encode()).hexdigest()[:12]
    target = Path(tempfile.gettempdir()) / f"trafilatura-evaldata-{digest}"
    if not (target / "tests" / "evaldata.json").is_file():
        print(f"Unpacking {corpus} into {target}", file=sys.stderr)
        with tarfile.open(corpus) as archive:
            archive.extractall(target, filter="data")
    return target / "tests"


def load_pages(corpus: Path) -> list[Page]:
    """Every page of the corpus, in the order of ``evaldata.json``."""
    folder = corpus_dir(corpus)
    data = json.loads((folder / "evaldata.json").read_text(encoding="utf-8"))
    pages = []
    for url, entry in data.items():
        for sub in ("eval", "cache"):
            path = folder / sub / entry["file"]
            if path.is_file():
                break
        else:
            raise SystemExit(f"{entry['file']} (of {url}) is missing from {folder}")
        pages.append(Page(url, entry["file"], path, tuple(entry["with"]), tuple(entry["without"])))
    return pages


def norm(text: str) -> str:
    return WS_RE.sub(" ", text).strip()


MARKUP_LINE_RE = re.compile(r"^\|(?: --- \|)+$", re.MULTILINE)
LINE_PREFIX_RE = re.compile(r"^(?:[ \t]*(?:#{1,6}|>|-|\d+\.)(?:[ \t]+|$))+", re.MULTILINE)
#: a number escaped at a line's start so that markdown reads it as a word ("1\\. Introduction")
ESCAPED_NUMBER_RE = re.compile(r"^([ \t]*\d{1,9})\\([.)])", re.MULTILINE)
#: a fenced code block (indented too, in a list item or a quote): its fences and its lines
FENCED_RE = re.compile(
    r"^(?P<prefix>[ \t>]*)(?P<fence>`{3,}|~{3,})[^\n]*\n(?P<code>.*?)^[ \t>]*(?P=fence)[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
#: emphasis: one to three stars on each side of a text
EMPHASIS_RE = re.compile(r"(\*{1,3})(?=\S)(.+?)(?<=\S)\1", re.DOTALL)
#: an inline code span
CODE_SPAN_RE = re.compile(r"(`+)(.+?)\1", re.DOTALL)


def markdown_text(markdown: str) -> str:
    r"""Markdown as plain text: fences, table rules, heading, quote and list markers,
    emphasis and code marks, table pipes left out; code (a fenced block, a code span)
    as it is written (``2**15`` keeps its stars).

    >>> markdown_text("# Title\n\n- a **bold** `x`\n\n| a \\| b | c |\n| --- | --- |")
    'Title\n\na bold x\n\n  a | b   c  \n'
    >>> markdown_text("- 1\\. Introduction\n  - 1.1. Notation")
    '1. Introduction\n1.1. Notation'
    >>> markdown_text("***a*** and **b *c*** move by weeks*7 days"), markdown_text("O(m\\*log n) *x\\*y*")
    ('a and b c move by weeks*7 days', 'O(m*log n) x*y')
    >>> markdown_text("In base `2**15`:\n\n```python\n# squares\nx = [y**2 for y in z]\n```")
    'In base 2**15:\n\n\n# squares\nx = [y**2 for y in z]\n'
    >>> markdown_text("the\\`\\`CREATE\\`\\` and `code`")
    'the``CREATE`` and code'
    >>> markdown_text("> Note:\n>\n> ```yaml\n> a: 1\n> ```")
    'Note:\n\n\na: 1\n'
    """
    parts = []
    end = 0
    for fenced in FENCED_RE.finditer(markdown):
        parts.append(_prose_text(markdown[end : fenced.start()]))
        prefix = fenced.group("prefix")
        lines = fenced.group("code").splitlines(keepends=True)
        parts.append("\n" + "".join(line.removeprefix(prefix) if prefix else line for line in lines))
        end = fenced.end()
    parts.append(_prose_text(markdown[end:]))
    return "".join(parts)


def _prose_text(markdown: str) -> str:
    """markdown_text of what is not a fenced code block."""
    spans: list[str] = []

    def keep(match: re.Match[str]) -> str:
        spans.append(match.group(2).replace("\\|", "|"))
        return f"\x01{len(spans) - 1}\x01"

    text = CODE_SPAN_RE.sub(keep, markdown.replace("\\`", "\x03"))  # (an escaped backtick is the page's)
    text = MARKUP_LINE_RE.sub("", text)
    text = ESCAPED_NUMBER_RE.sub(r"\1\2", LINE_PREFIX_RE.sub("", text))
    text = text.replace("\\|", "\x00").replace("|", " ").replace("\x00", "|")
    text = text.replace("\\*", "\x02")  # (an escaped star is the page's)
    for _ in range(3):  # (nested: **b *c***; a lone star stays: "weeks*7")
        text = EMPHASIS_RE.sub(r"\2", text)
    text = text.replace("\x02", "*").replace("\x03", "`")
    return re.sub("\x01(\\d+)\x01", lambda match: spans[int(match.group(1))], text)


def decoded(body: bytes, url: str) -> HtmlResponse:
    """``body`` as the docs spider reads it: decoded as Scrapy decodes a response, in
    the encoding its bytes are in when they declare another."""
    response = HtmlResponse(url, body=body)
    better = better_encoding(response.body, response.encoding, response.text)
    return response if better is None else response.replace(encoding=better)


def ours_markdown(body: bytes, url: str) -> str:
    return page_markdown(decoded(body, url).selector.root, url)[0]


def ours(body: bytes, url: str) -> str:
    return markdown_text(ours_markdown(body, url))


def trafilatura_extractor() -> Extractor | None:
    try:
        import trafilatura
    except ImportError:
        return None

    def extract(body: bytes, url: str) -> str:
        text = trafilatura.extract(
            body, fast=False, include_comments=False, include_tables=True, include_formatting=False
        )
        return text or ""

    return extract


def with_reference(ours: Extractor, no_reference: bool) -> dict[str, Extractor]:
    """``ours``, and trafilatura beside it unless ``no_reference`` or not installed."""
    extractors: dict[str, Extractor] = {"ours": ours}
    reference = None if no_reference else trafilatura_extractor()
    if reference is not None:
        extractors["trafilatura"] = reference
    elif not no_reference:
        print("trafilatura is not installed (make bench-quality installs it): ours alone", file=sys.stderr)
    return extractors


@dataclass
class Tally:
    """Snippet counts of one extractor over a set of pages."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    pages: int = 0
    empty: int = 0
    words: int = 0
    cpu_s: float = 0.0
    errors: int = 0

    def add(self, page: Page, output: str) -> tuple[int, int]:
        text = norm(output)
        found = sum(1 for snippet in page.with_ if norm(snippet) in text)
        leaked = sum(1 for snippet in page.without if norm(snippet) in text)
        self.tp += found
        self.fn += len(page.with_) - found
        self.fp += leaked
        self.tn += len(page.without) - leaked
        self.pages += 1
        self.empty += not text
        self.words += len(text.split())
        return found, leaked

    def scores(self) -> dict[str, float]:
        precision = self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0
        recall = self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return {
            "f1": round(f1, 4),
            "precision": round(precision, 4),
            "recall": round(recall, 4),
            "ms_per_page": round(1000 * self.cpu_s / self.pages, 2) if self.pages else 0.0,
        }


@dataclass
class PageScore:
    file: str
    part: str
    extractor: str
    found: int
    with_: int
    leaked: int
    without: int
    words: int


@dataclass
class Run:
    tallies: dict[str, dict[str, Tally]] = field(default_factory=dict)
    pages: list[PageScore] = field(default_factory=list)


def run(pages: list[Page], extractors: dict[str, Extractor]) -> Run:
    result = Run({part: {name: Tally() for name in extractors} for part in PARTS})
    for index, page in enumerate(pages, 1):
        if index % 100 == 0:
            print(f"{index}/{len(pages)} pages", file=sys.stderr)
        body = page.path.read_bytes()
        for name, extract in extractors.items():
            tally = result.tallies[page.part][name]
            start = time.process_time()
            try:
                output = extract(body, page.url)
            except Exception as exc:  # noqa: BLE001 - a crash is a full miss, as in trafilatura's own scoring
                print(f"{name} failed on {page.file}: {type(exc).__name__}: {exc}", file=sys.stderr)
                tally.errors += 1
                output = ""
            tally.cpu_s += time.process_time() - start
            found, leaked = tally.add(page, output)
            result.pages.append(
                PageScore(
                    page.file,
                    page.part,
                    name,
                    found,
                    len(page.with_),
                    leaked,
                    len(page.without),
                    len(norm(output).split()),
                )
            )
    return result


def table(result: Run) -> str:
    lines = [
        "| part | extractor | F1 | precision | recall | empty | words | ms/page |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for part, tallies in result.tallies.items():
        for name, tally in tallies.items():
            if not tally.pages:
                continue
            s = tally.scores()
            lines.append(
                f"| {part} ({tally.pages}) | {name} | {s['f1']:.3f} | {s['precision']:.3f} | {s['recall']:.3f} "
                f"| {tally.empty} | {tally.words} | {s['ms_per_page']:.2f} |"
            )
    return "\n".join(lines)


def worst(result: Run, count: int) -> list[PageScore]:
    """The pages where ours loses most snippets against trafilatura (misses + leaks)."""
    by_file: dict[str, dict[str, PageScore]] = {}
    for score in result.pages:
        by_file.setdefault(score.file, {})[score.extractor] = score

    def loss(scores: dict[str, PageScore]) -> tuple[int, int]:
        mine = scores["ours"]
        other = scores.get("trafilatura")
        errors = (mine.with_ - mine.found) + mine.leaked
        base = (other.with_ - other.found) + other.leaked if other else 0
        return errors - base, errors

    ranked = sorted(by_file.values(), key=loss, reverse=True)
    return [scores["ours"] for scores in ranked[:count]]


def show(page: Page, extractors: dict[str, Extractor]) -> None:
    body = page.path.read_bytes()
    print(f"# {page.file} ({page.part}) {page.url}")
    for name, extract in extractors.items():
        text = norm(extract(body, page.url))
        missed = [s for s in page.with_ if norm(s) not in text]
        leaked = [s for s in page.without if norm(s) in text]
        print(f"\n## {name}: {len(text.split())} words; missed {missed}; leaked {leaked}\n")
        print(extract(body, page.url))


#: a paragraph of prose that marks the article (100 characters outside links)
PROSE_CHARS = 100
PLACES = (
    "within the article: text",
    "within the article: a heading",
    "within the article: a link",
    "after the article's last paragraph: text",
    "after the article's last paragraph: a link",
    "after the article's last paragraph: a heading",
    "a picture's caption",
    "a page without two paragraphs of prose",
    "elsewhere",
)


def place(node: Any, order: dict[Any, int], last: Any) -> str:
    """Where the element ``node`` (which holds a passage) lies: in a caption, within the
    article (before its last paragraph of prose) or after it, and as what."""
    ancestors = [node, *node.iterancestors()]
    tags = [a.tag for a in ancestors if isinstance(a.tag, str)]
    names = " ".join(f"{a.get('class') or ''} {a.get('id') or ''}".lower() for a in ancestors[:6])
    if "figcaption" in tags or "caption" in names:
        return "a picture's caption"
    if last is None:
        return "a page without two paragraphs of prose"
    where = "after the article's last paragraph" if order.get(node, 0) > order.get(last, 0) else "within the article"
    kind = (
        "a heading" if {"h1", "h2", "h3", "h4", "h5", "h6"} & set(tags[:3]) else "a link" if "a" in tags[:3] else "text"
    )
    return f"{where}: {kind}"


def by_place(pages: list[Page]) -> dict[str, dict[str, int]]:
    """Of the passages ours sends, the leaked (``without``) and the found (``with``) ones
    by :func:`place` of the innermost selected element that holds their start."""
    from crawler.lib.css import NO_RULES
    from crawler.lib.maincontent import select_main_content
    from crawler.lib.markdown import write_markdown
    from crawler.lib.nodes import Visibility

    counts = {name: dict.fromkeys(("leaked", "found"), 0) for name in PLACES}
    for page in pages:
        root = decoded(page.path.read_bytes(), page.url).selector.root
        visibility = Visibility.of(root, NO_RULES)
        selection = select_main_content(root, visibility)
        markdown = write_markdown(
            selection.root, page.url, skip=selection.skip, before=selection.before, visibility=visibility
        )
        text = norm(markdown_text(markdown))
        prose = [p for p in selection.root.iter("p") if len(norm("".join(p.itertext()))) >= PROSE_CHARS]
        last = prose[-1] if len(prose) >= 2 else None
        order = {element: index for index, element in enumerate(root.iter())}
        elements = [(e, norm("".join(e.itertext()))) for e in selection.root.iter() if isinstance(e.tag, str)]
        for kind, snippets in (("leaked", page.without), ("found", page.with_)):
            for snippet in map(norm, snippets):
                if snippet not in text:
                    continue
                holder = None
                for element, element_text in elements:  # document order: the innermost last
                    if snippet[:40] in element_text:
                        holder = element
                counts[place(holder, order, last) if holder is not None else "elsewhere"][kind] += 1
    return counts


def place_table(counts: dict[str, dict[str, int]]) -> str:
    lines = ["| where the passage is | leaked | found |", "| --- | ---: | ---: |"]
    lines += [f"| {name} | {c['leaked']} | {c['found']} |" for name, c in counts.items() if c["leaked"] or c["found"]]
    total = {kind: sum(c[kind] for c in counts.values()) for kind in ("leaked", "found")}
    return "\n".join([*lines, f"| all | {total['leaked']} | {total['found']} |"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--part", choices=(*PARTS, "all"), default="all")
    parser.add_argument("--no-reference", action="store_true", help="ours alone (no trafilatura)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--worst", type=int, default=0, help="list the N pages ours does worst on (dev only)")
    parser.add_argument("--page", help="one page by file name: both outputs and the snippets missed or leaked")
    parser.add_argument("--show", action="store_true")
    parser.add_argument("--peek-test", action="store_true", help="allow --page/--worst on the test part")
    parser.add_argument("--by-place", action="store_true", help="ours' passages by where they lie (dev only)")
    args = parser.parse_args(argv)

    extractors = with_reference(ours, args.no_reference)
    pages = load_pages(args.corpus)
    if args.page:
        chosen = [page for page in pages if page.file == args.page]
        if not chosen:
            parser.error(f"no page {args.page!r} in the corpus")
        if chosen[0].part == "test" and not args.peek_test:
            parser.error(f"{args.page} is in the test part: never tuned on (--peek-test to look anyway)")
        show(chosen[0], extractors)
        return 0
    if args.part != "all":
        pages = [page for page in pages if page.part == args.part]
    if (args.worst or args.by_place) and args.part != "dev" and not args.peek_test:
        parser.error("--worst and --by-place look into pages: --part dev (the test part is never tuned on)")
    if args.by_place:
        print(place_table(by_place(pages)))
        return 0
    result = run(pages, extractors)
    print(table(result))
    for score in worst(result, args.worst):
        print(
            f"{score.file}: found {score.found}/{score.with_}, leaked {score.leaked}/{score.without}, "
            f"{score.words} words"
        )
    if args.json:
        payload: dict[str, Any] = {
            "corpus": str(args.corpus),
            "parts": {
                part: {name: {**asdict(t), **t.scores()} for name, t in tallies.items() if t.pages}
                for part, tallies in result.tallies.items()
            },
            "pages": [asdict(score) for score in result.pages],
        }
        args.json.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
