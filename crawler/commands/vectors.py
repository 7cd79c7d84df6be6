"""``scrapy vectors``: check the vector store against the cache (and repair), search it.
This module parses the options; :mod:`crawler.vectorscli` runs the sub-command, imported
then: Scrapy imports every command at start."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from crawler.subcommands import SubCommands, outside_project

if TYPE_CHECKING:
    import argparse
import sys


class Command(SubCommands):
    requires_project = False  # outside one: one line saying where to run it (outside_project)
    requires_crawler_process = False
    default_settings: ClassVar[dict[str, Any]] = {"LOG_ENABLED": False}
    name = "vectors"
    subcommands: ClassVar[dict[str, str]] = {
        "verify": "compare the vector store with the cache (--repair: embed what is missing, delete the rest)",
        "search": "the chunks nearest to QUERY",
    }

    def add_subcommand_options(self, name: str, parser: argparse.ArgumentParser) -> None:
        if name == "verify":
            parser.add_argument("--repair", action="store_true")
        if name == "search":
            parser.add_argument("query")
            parser.add_argument("--limit", type=int, default=5)

    def short_desc(self) -> str:
        return "Check the vector store against the cache (and repair it), or search it"

    def long_desc(self) -> str:
        return (
            "verify [--repair]: compare each live page's expected chunk points (current settings and "
            "EMBEDDER) with the vector store: missing points, stale points, points of another embedder, "
            "points of pages the cache does not know; --repair embeds what is missing and deletes the "
            "rest, and the points of removed pages.  search QUERY [--limit N]: the nearest chunks.  Both "
            "take --json.  Use the settings of the crawl (-s EMBEDDER=... -s VECTOR_SYNC_CHUNK_SIZE=...)."
        )

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if (outside := outside_project("vectors", self.settings)) is not None:
            print(outside, file=sys.stderr)
            self.exitcode = 2
            return
        name = self.subcommand(args, opts)
        from crawler.vectorscli import run_subcommand

        assert self.settings is not None
        self.exitcode = run_subcommand(name, self.settings, opts)
