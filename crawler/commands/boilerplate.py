"""``scrapy boilerplate``: re-run the domain boilerplate analysis on the stored pages,
with other parameters, without crawling; print per domain what would change. This
module parses the options; :mod:`crawler.boilerplatecli` runs the analysis, imported
then: Scrapy imports every command at start."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, ClassVar

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from crawler.subcommands import outside_project

if TYPE_CHECKING:
    import argparse


class Command(ScrapyCommand):
    requires_project = False  # outside one: one line saying where to run it (outside_project)
    requires_crawler_process = False
    default_settings: ClassVar[dict[str, Any]] = {"LOG_ENABLED": False}

    def syntax(self) -> str:
        return "[options]"

    def short_desc(self) -> str:
        return "Try other boilerplate thresholds on the stored pages (read-only)"

    def long_desc(self) -> str:
        return (
            "Re-runs the domain boilerplate analysis on the pages stored in EXTRACTED_DOCS_DIR "
            "with the given parameters (defaults: the BOILERPLATE_* settings) and prints, per "
            "domain, the boilerplate share now and with these parameters, and how many pages' "
            "extractor input would change, and the pages that cleaning would empty (kept "
            "whole). --blocks lists every repeated block: boilerplate or content, and why. "
            "Nothing is written."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("--threshold-pct", type=float, help="fraction of a domain's pages (0-1]")
        parser.add_argument("--min-pages", type=int, help="pages a block must be on, at least")
        parser.add_argument("--min-block-chars", type=int, help="shortest block that counts")
        parser.add_argument("--hysteresis", type=float, help="0 to ignore the stored fingerprint")
        parser.add_argument("--strict", action="store_true", help="exact blocks only (no loose matching)")
        parser.add_argument("--no-sections", action="store_true", help="domain level only")
        parser.add_argument(
            "--no-position", action="store_true", help="repetition alone decides, not where a block sits"
        )
        parser.add_argument("--domain", action="append", default=[], help="only this domain (repeatable)")
        parser.add_argument("--json", action="store_true", help="JSON output for scripts")
        parser.add_argument("--pages", action="store_true", help="list the pages whose extractor input would change")
        parser.add_argument("--blocks", action="store_true", help="every repeated block: how it is treated and why")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if (outside := outside_project("boilerplate", self.settings)) is not None:
            print(outside, file=sys.stderr)
            self.exitcode = 2
            return
        if args:
            raise UsageError(f"unexpected arguments: {' '.join(args)}")
        from crawler.boilerplatecli import compare

        assert self.settings is not None
        self.exitcode = compare(self.settings, opts)
