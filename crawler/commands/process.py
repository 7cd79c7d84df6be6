"""``scrapy process``: the processing stages on the stored pages, without crawling. This
module parses the options; :mod:`crawler.processcli` runs them, imported then: Scrapy
imports every command at start."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from crawler.subcommands import outside_project

if TYPE_CHECKING:
    import argparse

#: what ``--stage`` may name (the report stage always runs; removal needs a crawl)
STAGE_NAMES = ("boilerplate", "extraction", "vectors")
#: what ``--redo`` may do again: the steps of the stages (no page is downloaded)
PROCESS_REDO = ("extraction", "vectors")


class Command(ScrapyCommand):
    requires_project = False  # outside one: one line saying where to run it (outside_project)
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
        parser.add_argument(
            "--redo",
            action="append",
            default=[],
            choices=PROCESS_REDO,
            help="extract every page again (extraction), embed every chunk again (vectors); repeatable",
        )
        parser.add_argument("--domain", action="append", default=[], help="only the pages of this domain (repeatable)")
        parser.add_argument(
            "--run",
            metavar="ID",
            help="process the run ID of a shared frontier (FRONTIER_RUN) once, for all its crawl processes: "
            "its pages, and removal when every process finished (Redis URL from the environment, FRONTIER_REDIS_URL)",
        )
        parser.add_argument(
            "--wait",
            type=float,
            default=0.0,
            metavar="SECONDS",
            help="with --run: wait up to SECONDS for its crawl processes to end (default 0: exit 75 if they run)",
        )

    def process_options(self, args: list[str], opts: argparse.Namespace) -> None:
        super().process_options(args, opts)
        assert self.settings is not None
        # (here: Scrapy starts a crawler process, and logs it, before run)
        if (outside := outside_project("process", self.settings, store_named=False)) is not None:
            print(outside, file=sys.stderr)
            sys.exit(2)
        unknown = [name for name in opts.stage if name not in STAGE_NAMES]
        if unknown:
            raise UsageError(f"--stage {unknown[0]!r}: one of {', '.join(STAGE_NAMES)}")
        if opts.wait and not opts.run:
            raise UsageError("--wait goes with --run")
        if opts.run and opts.domain:
            raise UsageError("--run processes a whole run: no --domain")
        if "vectors" in opts.stage:  # asked for by name: on for this run
            self.settings.set("VECTOR_SYNC_ENABLED", True, priority="cmdline")
        # never a worker of a shared frontier's run (it would register, and could take
        # the run's start for its spider that requests nothing)
        self.settings.set("FRONTIER_ENABLED", False, priority="cmdline")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if args:
            raise UsageError(f"unexpected arguments: {' '.join(args)}")
        from crawler.processcli import process

        assert self.crawler_process is not None
        assert self.settings is not None
        self.exitcode = process(self.crawler_process, self.settings, opts)
