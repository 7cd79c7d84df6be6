"""Store calls per page at a crawl's close: a first crawl and an unchanged recrawl.

The pages go through the real ContentHashPipeline into a store that counts every call
made to it (``CountingStore``, named in ``EXTRACTED_DOCS_STORE``); the counts are
reset, and the closing components run as at the end of a crawl (``spider_closed``).
Works on this code and on the code before the stages (``ExtractionStage`` and
``DomainBoilerplate`` as extensions), so both can be measured side by side::

    python -m bench.close_calls --pages 20
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from scrapy import Spider, signals
from scrapy.utils.misc import build_from_crawler
from scrapy.utils.test import get_crawler

from bench.components import TrivialExtractor
from crawler.cache import cache_for, peek_cache
from crawler.cache.sqlite import SqliteDocStore
from crawler.items import PageItem
from crawler.pipelines.content_hash import ContentHashPipeline

#: store methods that are not calls to the store (helpers building file names)
NOT_CALLS = {"extraction_path", "domain_path", "legacy_domain_path", "commit", "close"}
COUNTS: Counter[str] = Counter()

TOPICS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]
FOOTER = "Was this page helpful? Let us know by rating this page or by writing to the docs team."


class CountingStore(SqliteDocStore):
    """The default store, counting each call to a public method in ``COUNTS``."""

    def __getattribute__(self, name: str) -> Any:
        attribute = super().__getattribute__(name)
        if not name.startswith("_") and name not in NOT_CALLS and callable(attribute):
            COUNTS[name] += 1
        return attribute


def closing_components(crawler: Any) -> list[Any]:
    try:
        from crawler.extensions.closing import ClosingStages  # type: ignore[import-not-found,unused-ignore]
    except ImportError:  # the code before the stages
        from crawler.extensions.boilerplate import DomainBoilerplate  # type: ignore[import-not-found,unused-ignore]
        from crawler.extensions.extraction import ExtractionStage  # type: ignore[import-not-found,unused-ignore]

        built = [build_from_crawler(ExtractionStage, crawler), build_from_crawler(DomainBoilerplate, crawler)]
        if crawler.settings.getbool("VECTOR_SYNC_ENABLED"):
            from crawler.extensions.vector_sync import VectorSync  # type: ignore[import-not-found,unused-ignore]

            built.append(build_from_crawler(VectorSync, crawler))
        return built
    return [build_from_crawler(ClosingStages, crawler)]


def page(n: int) -> PageItem:
    url = f"https://docs.example/{TOPICS[n % 10]}/{n}.html"
    own = f"Page {n} explains {TOPICS[n % 10]} and {TOPICS[(n * 3 + 1) % 10]} in words of its own, {n * 7} of them."
    return PageItem(url=url, canonical_url=url, title=f"Page {n}", content=f"# Page {n}\n\n{own}\n\n{FOOTER}")


async def crawl(directory: Path, pages: int, *, vectors: bool = False) -> dict[str, float]:
    """One crawl's pages recorded, then its close; the close's store calls per page."""
    crawler = get_crawler(
        Spider,
        {
            "EXTRACTED_DOCS_DIR": str(directory),
            "EXTRACTED_DOCS_STORE": "bench.close_calls.CountingStore",
            "EXTRACTOR": f"{TrivialExtractor.__module__}.TrivialExtractor",
            "LOG_LEVEL": "WARNING",
            "VECTOR_SYNC_ENABLED": vectors,
            "EXTENSIONS_BASE": {},  # no crawl runs: Scrapy's own extensions have nothing to close
            "EXTENSIONS": {"crawler.extensions.cache.CacheOwner": 400},  # opens the cache, as in a crawl
        },
    )
    pipeline = build_from_crawler(ContentHashPipeline, crawler)
    for n in range(pages):
        await pipeline.process_item(page(n))
    components = closing_components(crawler)  # held: signals keep weak references
    cache_for(crawler).commit()
    # the store counts in the module EXTRACTED_DOCS_STORE names (not __main__'s copy)
    counter = importlib.import_module("bench.close_calls").COUNTS
    counter.clear()
    await crawler.signals.send_catch_log_async(signal=signals.spider_closed, spider=Spider("docs"), reason="finished")
    await crawler.signals.send_catch_log_async(signal=signals.engine_stopped)
    counts = dict(counter)
    del components
    cache = peek_cache(crawler)
    if cache is not None:
        cache.close()
    per_page = {name: round(count / pages, 2) for name, count in sorted(counts.items())}
    per_page["total"] = round(sum(counts.values()) / pages, 2)
    return per_page


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--vectors", action="store_true", help="with the vector sync (local Qdrant, feature hashing)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        directory = Path(work) / "extracted-docs"
        first = asyncio.run(crawl(directory, args.pages, vectors=args.vectors))
        unchanged = asyncio.run(crawl(directory, args.pages, vectors=args.vectors))
    figures = {"pages": args.pages, "vectors": args.vectors, "first crawl": first, "unchanged recrawl": unchanged}
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
