"""Extractors for tests: they record every call in a file so tests count calls exactly."""

from __future__ import annotations

import asyncio
import os
import re
from typing import Any

from crawler.lib.outline import outline_markdown


class RecordingExtractor:
    """Appends one line per call (``url<TAB>first 60 chars of input``) to the file
    named by the ``TEST_EXTRACTOR_LOG`` setting; fails for URLs matching
    ``TEST_EXTRACTOR_FAIL``; sleeps ``TEST_EXTRACTOR_DELAY`` seconds per call; with
    ``TEST_EXTRACTOR_GATE``, each call waits until that file exists (the test decides
    when calls end, no clock involved): only the calls for URLs matching
    ``TEST_EXTRACTOR_HOLD``, when it is set."""

    name = "recording"
    version = "1"

    def __init__(
        self, log: str, fail: str = "", delay: float = 0.0, version: str = "1", gate: str = "", hold: str = ""
    ) -> None:
        self.log = log
        self.gate = gate
        self.hold = re.compile(hold) if hold else None
        self.fail = re.compile(fail) if fail else None
        self.delay = delay
        self.version = version

    @classmethod
    def from_crawler(cls, crawler: Any) -> RecordingExtractor:
        settings = crawler.settings
        return cls(
            settings.get("TEST_EXTRACTOR_LOG") or os.devnull,
            settings.get("TEST_EXTRACTOR_FAIL", ""),
            settings.getfloat("TEST_EXTRACTOR_DELAY", 0.0),
            settings.get("TEST_EXTRACTOR_VERSION", "1"),
            settings.get("TEST_EXTRACTOR_GATE", ""),
            settings.get("TEST_EXTRACTOR_HOLD", ""),
        )

    async def extract(self, url: str, content: str) -> dict[str, Any]:
        with open(self.log, "a", encoding="utf-8") as handle:
            handle.write(url + "\t" + content[:60].replace("\n", " ").replace("\t", " ") + "\n")
            handle.flush()
        if self.delay:
            await asyncio.sleep(self.delay)
        held = self.hold is None or self.hold.search(url)
        while self.gate and held and not os.path.exists(self.gate):
            await asyncio.sleep(0.02)
        if self.fail is not None and self.fail.search(url):
            raise RuntimeError(f"extractor failed on purpose for {url}")
        return {"input": content, **outline_markdown(content)}


class SyncExtractor:
    """A plain (not async) extractor without from_crawler."""

    name = "sync"
    version = "1"

    def extract(self, url: str, content: str) -> dict[str, Any]:
        return {"length": len(content)}


class NoVersionExtractor:
    name = "broken"

    def extract(self, url: str, content: str) -> dict[str, Any]:
        return {}


class KeyLoggingLLMExtractor:
    """The LLM extractor, built as usual, then logging the key it read from the
    variable ``LLM_API_KEY`` (as is, URL-encoded, and in a traceback): what a
    careless log call anywhere in the process would do."""

    @classmethod
    def from_crawler(cls, crawler: Any) -> Any:
        import logging
        from urllib.parse import quote

        from crawler.extractors.llm import LLMExtractor

        extractor = LLMExtractor.from_crawler(crawler)
        key = os.environ["LLM_API_KEY"]
        log = logging.getLogger("tests.careless")
        log.warning("Using the key %(key)s (%(quoted)s)", {"key": key, "quoted": quote(key, safe="")})
        try:
            raise RuntimeError(f"a failure that names the key {key}")
        except RuntimeError:
            log.exception("Something failed")
        return extractor


class KeyPrintingExtractor:
    """Cannot start, after printing the key in the variable ``LLM_API_KEY``
    to standard error (as is and URL-encoded), past logging: what a crash report, a
    library's print or a traceback could do."""

    @classmethod
    def from_crawler(cls, crawler: Any) -> Any:
        import sys
        from urllib.parse import quote

        key = os.environ["LLM_API_KEY"]
        print(f"debug: key {key} / {quote(key, safe='')}", file=sys.stderr, flush=True)
        raise ValueError(f"this extractor cannot start (key {key})")
