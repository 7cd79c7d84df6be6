"""``scrapy cache ls``, ``show`` and ``export``: the pages the cache holds, listed by
what they are (a run's change list: :mod:`.changes`), one shown whole, all written out
as JSON Lines or as a folder of markdown files (:mod:`crawler.mdfolder`)."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from crawler.cache import using_store
from crawler.cache.records import page_text
from crawler.cachecli import SHOWN_EXTRACTION_LINES
from crawler.cachecli.changes import ls_run
from crawler.cachecli.find import domain_hint, find_page, status_hint, url_of_file, with_failed_renderings
from crawler.cachecli.tables import output, print_json
from crawler.config import typed
from crawler.lib.blockkeys import shorten
from crawler.mdfolder import MarkdownFolder
from crawler.support.plural import plural
from crawler.support.tables import table

if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping

    from scrapy.settings import BaseSettings


def ls(settings: BaseSettings, opts: argparse.Namespace) -> int:
    limit = opts.limit or None
    if opts.run is not None:
        return ls_run(settings, opts, limit)
    with using_store(settings) as store:
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


def show(settings: BaseSettings, opts: argparse.Namespace) -> int:
    url = url_of_file(opts.url) or opts.url  # a file of `export --markdown`: the page it names
    with using_store(settings) as store:
        found = find_page(store, url)
        if found is None:
            return 1
        url_hash, record = found
        extraction = store.read_extraction(url_hash)
        content: Mapping[str, Any] = store.get_content(url_hash) or {}
    if opts.content or opts.input:
        use_clean = opts.input and typed(settings).getbool("BOILERPLATE_ENABLED")
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
        f"content         {len(text):,} chars markdown, {len(content.get('clean', text)):,} chars read by the extractor"
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
        print(f"Extraction by {extractor.get('name')} {extractor.get('version')} at {extraction.get('extracted_at')}:")
        lines = json.dumps(extraction.get("data"), indent=2, ensure_ascii=False).splitlines()
        shown = lines if opts.extraction else lines[:SHOWN_EXTRACTION_LINES]
        print("\n".join(shown))
        if len(shown) < len(lines):
            print(
                f"... {len(lines) - len(shown)} more lines: --extraction prints it whole"
                + (f" (or read {ref.get('file')})" if ref else "")
            )
    return 0


def export(settings: BaseSettings, opts: argparse.Namespace) -> int:
    if opts.markdown is not None:
        return export_markdown(settings, opts)
    with using_store(settings) as store, output(opts.output) as out:
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


def export_markdown(settings: BaseSettings, opts: argparse.Namespace) -> int:
    """``export --markdown DIR``: every live page's file, the stale ones deleted, the index."""
    folder = MarkdownFolder(opts.markdown)
    with using_store(settings) as store:
        done = folder.export_all(store)
    if opts.json:
        print_json({"directory": str(folder.root), **asdict(done)})
        return 0
    print(
        f"Exported {plural(done.pages, 'page')} to {folder.root}: {plural(done.written, 'file')} written, "
        f"{done.unchanged} unchanged, {done.removed} deleted"
        + (f", {plural(done.without_text, 'page')} without text (no file)" if done.without_text else "")
        + f"; the index is {folder.root / 'index.md'}"
    )
    return 0
