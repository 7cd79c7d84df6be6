"""Benchmark: the audit of what class and id names still leave out of pages' content.

    python -m bench.named_out --root /work/docsites --corpus DIR --json bench/results/named_out_audit.json

For every page of every documentation site of bench.docs_gold (``--root``) and every page
of trafilatura's corpus (both parts, only counted), the converter's selection says how
many words it left out of the content container for a class or id name
(``Selection.named_out``: blocks with no section of the page's outline and no prose of
their own): the figure a crawl reports as ``docs/named_out_words`` and lists with
``scrapy cache ls --named-out``. Per site and part: pages, pages with words left out by
a name, those words, and the words sent.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bench.docs_gold import SITES
from bench.docs_sites import DEFAULT_ROOT, page_gold, site_pages, stylesheet_rules
from bench.real_pages import CORPUS, decoded, load_pages
from crawler.lib.pagetext import page_markdown


def tally() -> dict[str, int]:
    return {"pages": 0, "pages_named_out": 0, "words_named_out": 0, "words_sent": 0}


def add(figures: dict[str, int], markdown: str, named_out: int) -> None:
    figures["pages"] += 1
    figures["words_sent"] += len(markdown.split())
    figures["pages_named_out"] += bool(named_out)
    figures["words_named_out"] += named_out


def measure(root: Path | None, corpus: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, site in SITES.items() if root is not None else ():
        assert root is not None
        if not (root / site.package / site.folder).is_dir():
            continue
        figures = out[name] = tally()
        for page in site_pages(site, root):
            body = page.file.read_bytes()
            gold, tree = page_gold(page, body)
            if gold is not None:
                markdown, selection = page_markdown(tree, page.url, site_rules=stylesheet_rules(tree, page.file))
                add(figures, markdown, selection.named_out)
        print(name, figures, file=sys.stderr)
    for page in load_pages(corpus):
        markdown, selection = page_markdown(decoded(page.path.read_bytes(), page.url).selector.root, page.url)
        add(out.setdefault(f"corpus {page.part}", tally()), markdown, selection.named_out)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, help=f"the unpacked doc packages (e.g. {DEFAULT_ROOT}); none: no docs")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--json", type=Path)
    opts = parser.parse_args(argv)
    out = measure(opts.root, opts.corpus)
    print("| site or part | pages | pages with words left out by a name | those words | words sent |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, f in out.items():
        print(f"| {name} | {f['pages']} | {f['pages_named_out']} | {f['words_named_out']} | {f['words_sent']} |")
    if opts.json:
        opts.json.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
