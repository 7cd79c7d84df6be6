"""Scrapy components used only by the crawl benchmark."""

from __future__ import annotations

import hashlib
import json
import resource
import time
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


class CloseProbe:
    """Times the closing stages, which run at ``spider_closed``: from that signal to
    ``engine_stopped``, in seconds (stat ``bench/close_s``) and in CPU seconds of the
    process (``bench/close_cpu_s``: steadier on a busy machine), and notes the
    process's peak RSS before them (``bench/maxrss_before_close_kb``, from the OS).

    Give it an order below the project's extensions and ``StatsDump``'s in
    ``EXTENSIONS``: built first, its handlers run first (Scrapy starts a signal's
    handlers in the order they were connected), so the timer starts before the
    closing stages and its stats are set before ``StatsDump`` writes them.
    """

    def __init__(self, stats: Any) -> None:
        self.stats = stats
        self.closing_since: float | None = None
        self.cpu_since = 0.0

    @classmethod
    def from_crawler(cls, crawler: Any) -> CloseProbe:
        probe = cls(crawler.stats)
        crawler.signals.connect(probe.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(probe.engine_stopped, signal=signals.engine_stopped)
        return probe

    def spider_closed(self) -> None:
        self.closing_since = time.monotonic()
        self.cpu_since = time.process_time()
        self.stats.set_value("bench/maxrss_before_close_kb", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)

    def engine_stopped(self) -> None:
        if self.closing_since is not None:
            self.stats.set_value("bench/close_s", time.monotonic() - self.closing_since)
            self.stats.set_value("bench/close_cpu_s", time.process_time() - self.cpu_since)


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
