"""Benchmark: what the extractor's input costs with links as text and as URLs.

    python -m bench.links [--json bench/results/links.json]

The markdown of four pages in both link modes (``MARKDOWN_LINKS``: ``text``, ``urls``),
its estimated tokens (``crawler.lib.tokens.estimate_tokens``, about 4 bytes a token) and
the ratio urls / text:

* ``docs page``: a page of the crawl benchmark's site (``bench.site``: six paragraphs,
  a code block, a list of five links in ``<main>``);
* ``test site page``: the home page of the end-to-end tests' site (``tests.site``);
* ``sphinx prose``: reference prose where about one word in nine is a cross-reference
  (``../reference/module.html#module.function``), as Sphinx writes them;
* ``api index``: a module index, 200 entries of a link and a one-line description.

The pages are generated (fixed random generators): the figures are exact for them and measure no clock.
"""

from __future__ import annotations

import argparse
import json
import random
from typing import Any

from bench.site import WORDS, GeneratedSite
from crawler.lib.markdown import LINK_MODES
from crawler.lib.tokens import estimate_tokens
from tests.convert import html_bytes_to_markdown

BASE = "https://docs.example.com/en/stable/guide/usage/"


def sphinx_prose(salt: int = 3) -> str:
    rng = random.Random(salt)
    paragraphs = []
    for _ in range(8):
        words = []
        for _ in range(90):
            word = rng.choice(WORDS)
            if rng.random() < 1 / 9:
                target = f"../../reference/{word}.html#example.{word}.{rng.choice(WORDS)}"
                word = f'<a class="reference internal" href="{target}"><code>{word}()</code></a>'
            words.append(word)
        paragraphs.append(f"<p>{' '.join(words)}.</p>")
    return f"<html><body><main><h1>Usage</h1>{''.join(paragraphs)}</main></body></html>"


def api_index(salt: int = 4, entries: int = 200) -> str:
    rng = random.Random(salt)
    items = []
    for n in range(entries):
        module, name = rng.choice(WORDS), rng.choice(WORDS)
        description = " ".join(rng.choices(WORDS, k=8))
        items.append(f'<li><a href="/en/stable/api/{module}/{name}-{n}/">{module}.{name}_{n}</a>: {description}</li>')
    return f"<html><body><main><h1>API index</h1><ul>{''.join(items)}</ul></main></body></html>"


def e2e_site_page() -> str:
    from tests.site import docs_site

    site = docs_site(noise=False)
    return site.render("/", site.pages["/"]).decode()


def pages() -> dict[str, str]:
    return {
        "docs page": GeneratedSite(200).render(7).decode(),
        "test site page": e2e_site_page(),
        "sphinx prose": sphinx_prose(),
        "api index": api_index(),
    }


def measure() -> dict[str, Any]:
    figures: dict[str, Any] = {}
    for name, page in pages().items():
        tokens = {mode: estimate_tokens(html_bytes_to_markdown(page, BASE, links=mode)) for mode in LINK_MODES}
        figures[name] = {**tokens, "ratio_urls_to_text": round(tokens["urls"] / tokens["text"], 2)}
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args()
    figures = measure()
    print(f"{'page':<16} {'text':>7} {'urls':>7}  urls/text")
    for name, row in figures.items():
        print(f"{name:<16} {row['text']:>7} {row['urls']:>7}  {row['ratio_urls_to_text']:.2f}")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(figures, handle, indent=2)
            handle.write("\n")


if __name__ == "__main__":
    main()
