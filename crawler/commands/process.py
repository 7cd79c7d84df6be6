"""``scrapy process``: the processing stages on the stored pages, without crawling."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy import Spider
from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from crawler.cache import (
    CacheCorruptError,
    CacheLockedError,
    CacheMissingError,
    StoreSettingError,
    open_store,
    peek_cache,
)
from crawler.commands.crawl import quiet_start_up, run_crawler
from crawler.config import typed

if TYPE_CHECKING:
    import argparse
    from collections.abc import AsyncIterator


logger = logging.getLogger(__name__)

#: what ``--stage`` may name (the report stage always runs; removal needs a crawl)
STAGE_NAMES = ("boilerplate", "extraction", "vectors")


class ProcessSpider(Spider):
    """Requests nothing: the crawl it stands for closes at once, and the closing
    stages run on the stored pages (``processing`` says which stages and domains)."""

    name = "process"

    def __init__(self, stages: list[str] | None = None, domains: list[str] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.processing = {"stages": list(stages or ()), "domains": list(domains or ())}

    async def start(self) -> AsyncIterator[Any]:
        return
        yield  # an async generator that yields nothing


class Command(ScrapyCommand):
    requires_project = True
    requires_crawler_process = True

    def syntax(self) -> str:
        return "[options]"

    def short_desc(self) -> str:
        return "Run the processing stages (boilerplate, extraction, vectors) on the stored pages, without crawling"

    def long_desc(self) -> str:
        return (
            "Runs the stages of PROCESSING_STAGES (all but removal, which needs a crawl) on every page stored "
            "in EXTRACTED_DOCS_DIR, fetching nothing, under the cache's lock: after a change of prompt, schema, "
            "model or EXTRACTOR version it extracts exactly the pages whose extraction input key changed; after "
            "an embedder change it syncs their vectors again; an unchanged page costs no call. Writes a run "
            "report (kind process) and exits 0, or 1 when it failed, like a crawl. Pass the crawl's settings "
            "(-s EXTRACTOR=... -s VECTOR_SYNC_ENABLED=True ...)."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument(
            "--stage",
            action="append",
            default=[],
            metavar="NAME",
            help=f"run only this stage ({', '.join(STAGE_NAMES)}; repeatable; the report is always written)",
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="say what would be called (pages, tokens); call and send nothing"
        )
        parser.add_argument("--domain", action="append", default=[], help="only the pages of this domain (repeatable)")

    def process_options(self, args: list[str], opts: argparse.Namespace) -> None:
        super().process_options(args, opts)
        assert self.settings is not None
        unknown = [name for name in opts.stage if name not in STAGE_NAMES]
        if unknown:
            raise UsageError(f"--stage {unknown[0]!r}: one of {', '.join(STAGE_NAMES)}")
        if opts.dry_run:
            self.settings.set("EXTRACTOR_DRY_RUN", True, priority="cmdline")
        if "vectors" in opts.stage:  # asked for by name: on for this run
            self.settings.set("VECTOR_SYNC_ENABLED", True, priority="cmdline")
        # never a worker of a shared frontier's run (it would register, and could take
        # the run's start for its spider that requests nothing)
        self.settings.set("FRONTIER_ENABLED", False, priority="cmdline")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if args:
            raise UsageError(f"unexpected arguments: {' '.join(args)}")
        assert self.crawler_process is not None
        assert self.settings is not None
        if not self._cache_exists():
            where = typed(self.settings).get("EXTRACTED_DOCS_DIR")
            logger.error("Processing not started: no cache in %(dir)s: run a crawl first", {"dir": where})
            self.exitcode = 1
            return
        quiet_start_up(self.settings.get("LOG_LEVEL", "DEBUG"))
        crawler = self.crawler_process.create_crawler(ProcessSpider)
        status = run_crawler(self.crawler_process, crawler, "Processing", stages=opts.stage, domains=opts.domain)
        # the cache never opened (locked, damaged): said by the start-up error, never a 0
        self.exitcode = 1 if peek_cache(crawler) is None else status

    def _cache_exists(self) -> bool:
        """Whether ``EXTRACTED_DOCS_STORE`` has a cache to process (asked of the store,
        which never creates one here: a store without a directory too). Any other
        problem with it (a damaged file, a lock, a wrong setting) is said by the run's
        start-up, as for a crawl."""
        assert self.settings is not None
        try:
            open_store(self.settings, readonly=True).close()
        except CacheMissingError:
            return False
        except (CacheCorruptError, CacheLockedError, StoreSettingError):
            pass  # there is a cache; what is wrong with it is said when the run starts
        return True
