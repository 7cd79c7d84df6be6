"""``scrapy cache <sub-command>``: inspect and manage the extracted-docs cache (its parts:
:mod:`crawler.cachecli`)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, cast

from scrapy.exceptions import UsageError

from crawler.cache import StoreSettingError, store_factory, using_store
from crawler.cache.errors import CacheCorruptError, CacheMissingError
from crawler.cache.lock import CacheLockedError
from crawler.cache.maintenance import INTERRUPTED, INTERRUPTED_PRUNE, INTERRUPTED_RUN, verify_store
from crawler.cache.records import STATUSES, page_text
from crawler.cachecli.diff import find_run, run_diff, version_diff
from crawler.cachecli.find import caches_below, domain_hint, find_page, status_hint, with_failed_renderings
from crawler.cachecli.repair import prune, verify_cache
from crawler.cachecli.tables import host_signals, output, print_json, print_runs, run_summary, signal_cell
from crawler.config import typed
from crawler.incremental.ledger import invalidate
from crawler.incremental.revisit import RevisitPolicy
from crawler.lib.blockkeys import shorten
from crawler.stages.spool import SPOOL, Spool
from crawler.subcommands import SubCommands
from crawler.support.plural import plural
from crawler.support.tables import human_bytes, table

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from crawler.cache.base import StoreBase
    from crawler.cache.ports import DocStore

#: the lines of an extraction ``cache show`` prints unless asked for all (``--extraction``)
SHOWN_EXTRACTION_LINES = 60


def iso_date(value: str) -> str:
    """``--since`` values: a date or a date and time (UTC)."""
    for fmt in ("%Y-%m-%d", "%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M"):
        try:
            return datetime.strptime(value, fmt).strftime("%Y-%m-%dT%H:%M:%SZ")
        except ValueError:
            continue
    raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD[THH:MM[:SS]]): {value!r}")


class Command(SubCommands):
    requires_project = True
    requires_crawler_process = False
    default_settings: ClassVar[dict[str, Any]] = {"LOG_ENABLED": False}
    name = "cache"
    subcommands: ClassVar[dict[str, str]] = {
        "stats": "pages, extractions, disk, recent runs, domains",
        "ls": "pages by --domain, --status, --since DATE, --failed, --empty, --widened, --named-out, "
        "--converter-pending; "
        "--run last|ID: the pages a run changed",
        "show": "one page: record, extraction, metadata, history (--content, --input: its text)",
        "diff": "unified diff of a page's last two versions; --run last|ID: of each page a run changed",
        "invalidate": "extract pages again on the next crawl: URL..., --domain D or --all",
        "prune": "delete removed pages and unreferenced files (--dry-run: list them)",
        "verify": "check that index and files agree (--repair: fix them)",
        "export": "JSON Lines of pages with their extraction",
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
            parser.add_argument("url")
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

    def short_desc(self) -> str:
        return "Inspect and manage the extracted-docs cache"

    def long_desc(self) -> str:
        return "Inspect and manage the extracted-docs cache. Every sub-command takes --json."

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        name = self.subcommand(args, opts)
        sub = opts
        if getattr(sub, "limit", 0) is not None and getattr(sub, "limit", 0) < 0:
            raise UsageError("cache ls: --limit must be 0 or more")
        assert self.settings is not None
        handler: Callable[[argparse.Namespace], int] = getattr(self, f"do_{name}")
        try:
            self.exitcode = handler(sub)
        except BrokenPipeError:
            # the reader stopped reading (`scrapy cache ls | head`): not an error
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            self.exitcode = 0
        except StoreSettingError as exc:
            print(f"Error: {exc}", file=sys.stderr)
            self.exitcode = 2
        except CacheMissingError as exc:
            print(f"Error: {exc}{caches_below(self.settings.get('EXTRACTED_DOCS_DIR'))}", file=sys.stderr)
            self.exitcode = 1
        except (CacheCorruptError, CacheLockedError) as exc:
            print(f"Error: {exc}", file=sys.stderr)
            self.exitcode = 1
        except (OSError, ValueError) as exc:
            print(f"Error: {exc}", file=sys.stderr)
            self.exitcode = 1

    def store(self, *, changes: bool = False) -> AbstractContextManager[DocStore]:
        assert self.settings is not None
        return using_store(self.settings, changes=changes)

    # -- read-only -----------------------------------------------------------------

    def do_stats(self, opts: argparse.Namespace) -> int:
        with self.store() as store:
            statuses = store.status_counts()
            data: dict[str, Any] = {
                "directory": store.location,
                "pages": sum(statuses.values()),
                "statuses": {s: statuses.get(s, 0) for s in STATUSES},
                "extractions": store.extraction_counts(),
                "disk_bytes": store.size_on_disk(),  # None: a store without a directory
                "runs": [run_summary(r) for r in store.run_reports(opts.runs)],
                "domains": store.domain_summary(),
            }
            # each host's change signals, as the revisit schedule learnt them
            data["signals"] = host_signals(store, self._trust_policy(), [d["domain"] for d in data["domains"]])
        if opts.json:
            print_json(data)
            return 0
        where = data["directory"]
        if not data["pages"] and not data["runs"]:
            print(f"The cache in {where} is empty: no page recorded yet.")
            return 0
        if not data["pages"]:
            # runs that recorded nothing (every page failed): they, not "empty", are the news
            print(f"Cache {where}: no page recorded yet (`scrapy cache ls --failed` lists the last run's failures)")
            print_runs(data["runs"])
            return 0
        disk = dict(data["disk_bytes"] or {})
        about = "about " if disk.pop("approximate", False) else ""
        ext = data["extractions"]
        domains = len(data["domains"])
        on_disk = f", {about}{human_bytes(sum(disk.values()))} on disk" if disk else ""
        print(f"Cache {where}: {plural(data['pages'], 'page', grouped=True)} on {plural(domains, 'domain')}{on_disk}")
        print("  " + "  ".join(f"{s} {n:,}" for s, n in data["statuses"].items()))
        print(
            f"  extractions {ext['extracted']:,}, failed {ext['failed']:,}, "
            f"marked for re-extraction {ext['invalidated']:,}"
        )
        if disk:
            print("  disk: " + ", ".join(f"{part} {human_bytes(size)}" for part, size in disk.items()))
        print_runs(data["runs"])
        print("\nDomains:")
        rows = [
            [d["domain"], d["pages"], d["removed"], d["extracted"], d["failed"], d["last_seen"], d["last_changed"]]
            for d in data["domains"]
        ]
        print(
            table(
                ["domain", "pages", "removed", "extracted", "failed", "last seen", "last changed"],
                rows,
                right=range(1, 5),
            )
        )
        if data["signals"]:
            print("\nChange signals (revisit schedule; agree/noisy/stale observations):")
            rows = [
                [domain, *(signal_cell(signals[name]) for name in ("lastmod", "etag", "last_modified"))]
                for domain, signals in data["signals"].items()
            ]
            print(table(["domain", "lastmod", "ETag", "Last-Modified"], rows))
        return 0

    def _trust_policy(self) -> RevisitPolicy:
        """What the revisit schedule trusts (``REVISIT_TRUST_EVIDENCE``)."""
        assert self.settings is not None
        try:
            return RevisitPolicy(trust_evidence=typed(self.settings).getint("REVISIT_TRUST_EVIDENCE"))
        except ValueError as exc:
            raise UsageError(str(exc)) from None

    def do_ls(self, opts: argparse.Namespace) -> int:
        limit = opts.limit or None
        if opts.run is not None:
            return self.ls_run(opts, limit)
        with self.store() as store:
            found: list[tuple[str, Mapping[str, Any]]] = list(
                store.query_pages(
                    domain=opts.domain,
                    status=opts.status,
                    changed_since=opts.since,
                    failed=opts.failed,
                    converter_pending=opts.converter_pending,
                    empty=opts.empty,
                    widened=opts.widened,
                    named_out=opts.named_out,
                    limit=None if limit is None else limit + 1,
                )
            )
            if opts.failed:  # and the pages whose rendering failed in the last crawl
                found = with_failed_renderings(store, found, opts)
            hint = "" if found else domain_hint(store, opts.domain) + status_hint(opts.status)
        more = limit is not None and len(found) > limit
        found = found[:limit]
        if opts.json:
            print_json([{"url_hash": h, **r} for h, r in found])
            return 0
        if not found:
            print("No page matches." + hint)
            return 0
        rows = [
            [
                r.get("status"),
                r.get("last_changed", ""),
                r.get("last_extracted", ""),
                ", ".join(
                    what
                    for what, there in (
                        ("rendering failed", r.get("render_error")),
                        ("extraction failed", r.get("extraction_error")),
                        ("empty", r.get("empty_input")),
                        (f"{r.get('named_out')} words out by name", r.get("named_out")),
                    )
                    if there
                ),
                shorten(r.get("title", ""), 30),
                r.get("url"),
            ]
            for _, r in found
        ]
        print(table(["status", "last changed", "last extracted", "error", "title", "url"], rows))
        if more and limit is not None:
            print(f"... more pages match: --limit {limit * 2} or --limit 0 for all")
        return 0

    def do_show(self, opts: argparse.Namespace) -> int:
        with self.store() as store:
            found = find_page(store, opts.url)
            if found is None:
                return 1
            url_hash, record = found
            extraction = store.read_extraction(url_hash)
            content: Mapping[str, Any] = store.get_content(url_hash) or {}
        if opts.content or opts.input:
            assert self.settings is not None
            use_clean = opts.input and typed(self.settings).getbool("BOILERPLATE_ENABLED")
            text = page_text(content, use_clean)  # the input: without the domain's boilerplate
            if opts.json:
                print_json({"url": record.get("url"), "url_hash": url_hash, "input" if opts.input else "content": text})
            else:
                print(text)
            return 0
        if opts.json:
            print_json(
                {
                    "url_hash": url_hash,
                    "record": record,
                    "extraction": extraction,
                    "content_chars": len(content.get("text", "")),
                    "clean_chars": len(content.get("clean", content.get("text", ""))),
                }
            )
            return 0
        fields = [
            "url",
            "canonical_url",
            "domain",
            "title",
            "status",
            "content_hash",
            "first_seen",
            "last_seen",
            "last_changed",
            "last_extracted",
            "removed_at",
            "invalidated",
            "selection_widened",
            "named_out",
        ]
        print(table(["field", "value"], [[f, record.get(f)] for f in fields if f in record]))
        print(f"url_hash        {url_hash}")
        text = content.get("text", "")
        print(
            f"content         {len(text):,} chars markdown, "
            f"{len(content.get('clean', text)):,} chars read by the extractor"
        )
        if record.get("extraction_error"):
            error = record["extraction_error"]
            print(f"\nLast extraction FAILED at {error.get('at')}: {error.get('error')}")
        print("\nHistory:")
        print(
            table(
                ["at", "event", "details"],
                [
                    [
                        h.get("at"),
                        h.get("event"),
                        ", ".join(f"{k}={shorten(str(v), 20)}" for k, v in h.items() if k not in ("at", "event")),
                    ]
                    for h in record.get("history", [])
                ],
            )
            or "  (none)"
        )
        ref = record.get("extraction")
        if extraction is None:
            print("\nExtraction: none" + (f" ({ref.get('file')} missing)" if ref else ""))
        else:
            if ref:
                print(f"\nExtraction file: {ref.get('file')}")
            extractor = extraction.get("extractor") or {}
            print(
                f"Extraction by {extractor.get('name')} {extractor.get('version')} at {extraction.get('extracted_at')}:"
            )
            lines = json.dumps(extraction.get("data"), indent=2, ensure_ascii=False).splitlines()
            shown = lines if opts.extraction else lines[:SHOWN_EXTRACTION_LINES]
            print("\n".join(shown))
            if len(shown) < len(lines):
                print(
                    f"... {len(lines) - len(shown)} more lines: --extraction prints it whole"
                    + (f" (or read {ref.get('file')})" if ref else "")
                )
        return 0

    def ls_run(self, opts: argparse.Namespace, limit: int | None) -> int:
        """``ls --run last|ID``: the run's change list, from its report."""
        others = [f"--{n.replace('_', '-')}" for n in ("domain", "since", "failed", "converter_pending", "empty",
                                                       "widened", "named_out") if getattr(opts, n)]  # fmt: skip
        if others:
            raise UsageError(f"cache ls --run lists a run's changes; it takes --status and --limit, not {others[0]}")
        with self.store() as store:
            report = find_run(store, opts.run)
        changes = [c for c in report["changes"] if opts.status is None or c.get("status") == opts.status]
        more = limit is not None and len(changes) > limit
        changes = changes[:limit]
        if opts.json:
            print_json(changes)
            return 0
        if not changes:
            print(f"Run {report['run_id']} changed no page{'' if opts.status is None else f' ({opts.status})'}.")
            return 0
        rows = [
            [c.get("status"), (c.get("content_hash") or "")[:12], c.get("extraction_file") or "", c.get("url")]
            for c in changes
        ]
        print(table(["status", "content hash", "extraction file", "url"], rows))
        if more and limit is not None:
            print(f"... more pages changed: --limit {limit * 2} or --limit 0 for all")
        return 0

    def do_diff(self, opts: argparse.Namespace) -> int:
        if (opts.url is None) == (opts.run is None):
            raise UsageError("cache diff: give a URL or --run last|ID (one of them)")
        if opts.run is not None:
            return self.diff_run(opts)
        with self.store() as store:
            found = find_page(store, opts.url)
            if found is None:
                return 1
            url_hash, record = found
            content: Mapping[str, Any] = store.get_content(url_hash) or {}
        previous = content.get("previous")
        if not previous:
            message = (
                f"Only one version of {record.get('url')} is stored: it has not changed since it was first crawled."
            )
            print_json({"url": record.get("url"), "diff": None, "message": message}) if opts.json else print(message)
            return 0
        diff = version_diff(record.get("url"), previous, content)
        if opts.json:
            print_json(
                {
                    "url": record.get("url"),
                    "from": previous.get("stored_at"),
                    "to": content.get("stored_at"),
                    "diff": diff,
                }
            )
        else:
            print(diff if diff.endswith("\n") else diff + "\n", end="")
        return 0

    def diff_run(self, opts: argparse.Namespace) -> int:
        """``diff --run last|ID``: each page the run changed, as a diff of the version
        before the run and the run's own (while the cache still holds both: the run's is
        the page's last change); its new and removed pages named."""
        entries = []
        with self.store() as store:
            report = find_run(store, opts.run)
            for change in report["changes"]:
                content: Mapping[str, Any] = store.get_content(str(change.get("url_hash"))) or {}
                entries.append(run_diff(change, content))
        if opts.json:
            print_json({"run_id": report["run_id"], "pages": entries})
            return 0
        if not entries:
            print(f"Run {report['run_id']} changed no page.")
        for entry in entries:
            if entry["diff"]:
                print(entry["diff"] if entry["diff"].endswith("\n") else entry["diff"] + "\n", end="")
            else:
                print(f"# {entry['status']}: {entry['url']}: {entry['message']}")
        return 0

    def do_export(self, opts: argparse.Namespace) -> int:
        with self.store() as store, output(opts.output) as out:
            count = 0
            for url_hash, record in store.query_pages(domain=opts.domain, status=opts.status):
                if opts.status is None and record.get("status") == "removed":
                    continue
                extraction = store.read_extraction(url_hash)
                line: dict[str, Any] = {
                    "url": record.get("url"),
                    "url_hash": url_hash,
                    **{
                        k: record.get(k)
                        for k in (
                            "canonical_url",
                            "domain",
                            "title",
                            "status",
                            "content_hash",
                            "last_changed",
                            "last_extracted",
                        )
                    },
                    "extractor": extraction.get("extractor") if extraction else None,
                    "extraction": extraction.get("data") if extraction else None,
                }
                if opts.include_content:
                    content: Mapping[str, Any] = store.get_content(url_hash) or {}
                    line["content"] = content.get("clean", content.get("text"))
                out.write(json.dumps(line, ensure_ascii=False) + "\n")
                count += 1
            hint = "" if count else domain_hint(store, opts.domain)
        if opts.output:
            print(f"Exported {plural(count, 'page')} to {opts.output}", file=sys.stderr)
        if hint:
            print(f"No page exported.{hint}", file=sys.stderr)
        return 0

    # -- changes (under the cache lock) -------------------------------------------------

    def do_invalidate(self, opts: argparse.Namespace) -> int:
        if bool(opts.urls) + bool(opts.domain) + opts.all != 1:
            raise UsageError("cache invalidate: give URLs, or --domain D, or --all (one of them)")
        with self.store(changes=True) as store:
            if opts.all:
                targets = [h for h, _ in store.query_pages()]
            elif opts.domain:
                targets = [h for d in opts.domain for h, _ in store.query_pages(domain=d)]
            else:
                targets, missing = [], []
                for url in opts.urls:
                    found = store.find_page(url)
                    (targets.append(found[0]) if found else missing.append(url))
                if missing:
                    print("Not in the cache: " + ", ".join(missing), file=sys.stderr)
                    return 1
            with store.transaction():
                count = invalidate(store, targets)
        if opts.json:
            print_json({"invalidated": count})
        else:
            print(f"{count} page(s) marked: the next crawl that reaches them extracts them again.")
        return 0

    def do_prune(self, opts: argparse.Namespace) -> int:
        # a dry run changes nothing: no lock, a crawl may be running
        with self.store(changes=not opts.dry_run) as store:
            plan, summary = prune(store, dry_run=opts.dry_run)
        if opts.json:
            print_json({"dry_run": opts.dry_run, **summary})
            return 0
        verb = "Would delete" if opts.dry_run else "Deleted"
        print(
            f"{verb} {len(plan.removed_pages)} removed page(s), {len(plan.orphan_files)} unreferenced file(s), "
            f"{len(plan.temp_files)} temporary file(s), {len(plan.stale_inputs)} stale reuse entries, "
            f"{len(plan.orphan_renderings)} unreferenced rendering(s)."
        )
        for item in summary["removed_pages"][:20]:
            print(f"  page  {item['url']}")
        for path in (summary["orphan_files"] + summary["temp_files"])[:20]:
            print(f"  file  {path}")
        return 0

    def do_verify(self, opts: argparse.Namespace) -> int:
        assert self.settings is not None
        location = typed(self.settings).get("EXTRACTED_DOCS_DIR")
        if store_factory(self.settings).embedded:  # its files first: a damaged one keeps it from opening
            problems, where = verify_cache(location, repair=opts.repair)
        else:
            with self.store(changes=opts.repair) as store:
                problems, where = verify_store(cast("StoreBase", store), repair=opts.repair), store.location
        # what a stopped run or prune left is no damage: the next run (or prune) ends it
        unrepaired = [p for p in problems if not p.repaired and p.kind not in INTERRUPTED]
        adopted = sum(p.kind == INTERRUPTED_RUN and not p.repaired for p in problems)
        pruning = sum(p.kind == INTERRUPTED_PRUNE and not p.repaired for p in problems)
        pending = len(Spool(location).load())  # answers the store refused, kept for the next run
        if opts.json:
            print_json(
                {
                    "ok": not unrepaired,
                    "problems": [vars(p) for p in problems],
                    "interrupted": {"extractions_adopted": adopted + pending, "prune_pages": pruning},
                }
            )
            return 1 if unrepaired else 0
        if not problems:
            print(f"The cache in {where} is consistent: index and files agree.")
        else:
            print(
                table(
                    ["problem", "page or file", "detail", "repair"],
                    [[p.kind, p.target, p.detail, p.repaired or "-"] for p in problems],
                )
            )
        if adopted or pending:
            kept = f" ({pending} kept in {SPOOL}/: the store refused them)" if pending else ""
            print(
                f"\nInterrupted, not damaged: the next run adopts {plural(adopted + pending, 'extraction')}{kept} "
                "without an extractor call (same extractor)."
            )
        if pruning:
            print(
                f"\nInterrupted, not damaged: a prune was stopped while deleting {plural(pruning, 'removed page')}; "
                "the next `scrapy cache prune` ends it."
            )
        if unrepaired:
            print(
                f"\n{len(unrepaired)} problem(s) left: `scrapy cache verify --repair` fixes them "
                "(orphan files: `scrapy cache prune`)."
            )
        return 1 if unrepaired else 0


# -- maintenance of the embedded store's files (crawler/cache/maintenance.py) ----------
