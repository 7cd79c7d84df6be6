"""Scrapy components used only by the crawl benchmark."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from scrapy import signals


class TrivialExtractor:
    """The cheapest extractor: the benchmark measures the crawler, not the extractor."""

    name = "trivial"
    version = "1"
    blocking = False

    def extract(self, url: str, content: str) -> dict[str, Any]:
        return {"chars": len(content)}


class ExtractEveryItem:
    """For the reference crawlers: what a pipeline without this project does, one
    extractor call per page."""

    def __init__(self, stats: Any) -> None:
        self.stats = stats
        self.extractor = TrivialExtractor()

    @classmethod
    def from_crawler(cls, crawler: Any) -> ExtractEveryItem:
        return cls(crawler.stats)

    async def process_item(self, item: Any) -> Any:
        self.extractor.extract(item.url, item.content)
        self.stats.inc_value("bench/extractor_calls")
        return item


class RawBodyRecorder:
    """Downloader middleware: SHA-256 of every HTML body the spider receives; at the end
    ``bench/raw_changed`` counts the pages whose raw body differs from the last run's
    (what a pipeline hashing raw HTML would call changed)."""

    def __init__(self, path: Path, stats: Any) -> None:
        self.path = path
        self.stats = stats
        self.hashes: dict[str, str] = {}

    @classmethod
    def from_crawler(cls, crawler: Any) -> RawBodyRecorder:
        recorder = cls(Path(crawler.settings["BENCH_RAW_HASHES"]), crawler.stats)
        crawler.signals.connect(recorder.spider_closed, signal=signals.spider_closed)
        return recorder

    async def process_response(self, request: Any, response: Any) -> Any:
        if b"html" in (response.headers.get("Content-Type") or b"") and response.status == 200:
            self.hashes[response.url] = hashlib.sha256(response.body).hexdigest()
        return response

    def spider_closed(self) -> None:
        previous = json.loads(self.path.read_text()) if self.path.exists() else {}
        changed = sum(1 for url, digest in self.hashes.items() if previous.get(url) != digest)
        self.stats.set_value("bench/raw_changed", changed)
        self.path.write_text(json.dumps(self.hashes))


class StatsDump:
    """Writes the crawl's stats to ``BENCH_STATS_FILE`` when the engine stops."""

    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Any) -> StatsDump:
        dump = cls(crawler)
        crawler.signals.connect(dump.engine_stopped, signal=signals.engine_stopped)
        return dump

    def engine_stopped(self) -> None:
        stats = {k: v for k, v in self.crawler.stats.get_stats().items() if isinstance(v, int | float)}
        Path(self.crawler.settings["BENCH_STATS_FILE"]).write_text(json.dumps(stats))


class NetworkBytes:
    """Downloader middleware next to the downloader: body bytes that really crossed the
    network (not HTTP-cache hits, not pages served from this project's cache)."""

    def __init__(self, stats: Any) -> None:
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Any) -> NetworkBytes:
        return cls(crawler.stats)

    async def process_response(self, request: Any, response: Any) -> Any:
        if not {"cached", "revalidation_revisit_skipped", "revalidation_not_modified"} & set(response.flags):
            self.stats.inc_value("bench/network_bytes", len(response.body))
        return response
