"""``scrapy cache <sub-command>``: inspect and manage the extracted-docs cache. This
module parses the options; :mod:`crawler.cachecli` runs the sub-command, imported then:
Scrapy imports every command at start, ``scrapy version`` too."""

from __future__ import annotations

import argparse
import sys
from datetime import datetime
from typing import Any, ClassVar

from scrapy.exceptions import UsageError

from crawler.cachecli import SHOWN_EXTRACTION_LINES
from crawler.statuses import STATUSES
from crawler.subcommands import SubCommands, outside_project


def iso_date(value: str) -> str:
    """``--since`` values: a date or a date and time (UTC)."""
    for fmt in ("%Y-%m-%d", "%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M"):
        try:
            return datetime.strptime(value, fmt).strftime("%Y-%m-%dT%H:%M:%SZ")
        except ValueError:
            continue
    raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD[THH:MM[:SS]]): {value!r}")


class Command(SubCommands):
    requires_project = False  # outside one: one line saying where to run it (outside_project)
    requires_crawler_process = False
    default_settings: ClassVar[dict[str, Any]] = {"LOG_ENABLED": False}
    name = "cache"
    subcommands: ClassVar[dict[str, str]] = {
        "stats": "pages, extractions, disk, recent runs, domains",
        "ls": "pages by --domain, --status, --since DATE, --failed, --empty, --widened, --named-out, "
        "--converter-pending; "
        "--run last|ID: the pages a run changed",
        "show": "one page (a URL, or an exported markdown file): record, extraction, metadata, history "
        "(--content, --input: its text)",
        "diff": "unified diff of a page's last two versions; --run last|ID: of each page a run changed",
        "invalidate": "extract pages again on the next crawl: URL..., --domain D or --all",
        "prune": "delete removed pages and unreferenced files (--dry-run: list them)",
        "verify": "check that index and files agree (--repair: fix them)",
        "export": "JSON Lines of pages with their extraction; --markdown DIR: a markdown file per page",
    }

    def add_subcommand_options(self, name: str, parser: argparse.ArgumentParser) -> None:
        if name == "stats":
            parser.add_argument("--runs", type=int, default=5, help="how many recent runs to show")
        if name in ("ls", "export"):
            parser.add_argument("--domain", help="host, with its port if it has one (127.0.0.1:8080)")
            parser.add_argument(
                "--status",
                choices=STATUSES,
                help="the page's current status, set by the last crawl that saw it"
                + ("; with --run, the status that run gave it (what a run changed: --run)" if name == "ls" else ""),
            )
        if name == "ls":
            parser.add_argument("--since", type=iso_date, help="changed on or after this date")
            parser.add_argument("--failed", action="store_true", help="only pages whose extraction failed")
            parser.add_argument(
                "--converter-pending",
                action="store_true",
                help="only pages whose text awaits a converter upgrade (CONVERTER_UPGRADE=apply)",
            )
            parser.add_argument(
                "--empty", action="store_true", help="only pages with no text to extract (not sent to the extractor)"
            )
            parser.add_argument(
                "--widened",
                action="store_true",
                help="only pages whose main content, as first chosen, left out too much of their text and was widened",
            )
            parser.add_argument(
                "--named-out",
                action="store_true",
                help="only pages whose last parse left words out of their content for a class or id name",
            )
            parser.add_argument("--limit", type=int, default=50, help="0 for all")
        if name in ("ls", "diff"):
            parser.add_argument(
                "--run", metavar="last|ID", help="the pages this run changed (last: the last crawl's run)"
            )
        if name == "show":
            parser.add_argument("url", help="a URL (any spelling), a url_hash, or a file of export --markdown")
        if name == "diff":
            parser.add_argument("url", nargs="?")
        if name == "show":
            what = parser.add_mutually_exclusive_group()
            what.add_argument("--content", action="store_true", help="print the page's stored markdown")
            what.add_argument("--input", action="store_true", help="print what the extractor reads (no boilerplate)")
            what.add_argument(
                "--extraction",
                action="store_true",
                help=f"print the whole extraction (else its first {SHOWN_EXTRACTION_LINES} lines)",
            )
        if name == "invalidate":
            parser.add_argument("urls", nargs="*")
            parser.add_argument("--domain", action="append", default=[])
            parser.add_argument("--all", action="store_true")
        if name == "prune":
            parser.add_argument("--dry-run", action="store_true")
        if name == "verify":
            parser.add_argument("--repair", action="store_true")
        if name == "export":
            parser.add_argument("--output", help="a file (default: standard output)")
            parser.add_argument("--include-content", action="store_true", help="add the cleaned markdown")
            parser.add_argument(
                "--markdown",
                metavar="DIR",
                help="instead: every live page's markdown as DIR/<host>/<path>.md and DIR/index.md, "
                "the files of pages gone deleted",
            )

    def short_desc(self) -> str:
        return "Inspect and manage the extracted-docs cache"

    def long_desc(self) -> str:
        return "Inspect and manage the extracted-docs cache. Every sub-command takes --json."

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if (outside := outside_project("cache", self.settings)) is not None:
            print(outside, file=sys.stderr)
            self.exitcode = 2
            return
        name = self.subcommand(args, opts)
        if getattr(opts, "limit", 0) is not None and getattr(opts, "limit", 0) < 0:
            raise UsageError("cache ls: --limit must be 0 or more")
        if getattr(opts, "markdown", None) is not None:
            given = [o for o in ("output", "domain", "status", "include_content") if getattr(opts, o)]
            if given:
                options = ", ".join("--" + o.replace("_", "-") for o in given)
                raise UsageError(f"cache export: --markdown DIR writes every live page, not with {options}")
        from crawler.cachecli.run import run_subcommand

        assert self.settings is not None
        self.exitcode = run_subcommand(name, self.settings, opts)
