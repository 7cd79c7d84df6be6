"""``scrapy boilerplate``'s run: the domain boilerplate analysis of the stored pages with
other parameters, compared per domain with the stored one; nothing is written."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, replace
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import UsageError

from crawler.cache import CacheCorruptError, CacheMissingError, StoreSettingError, using_store
from crawler.config import typed
from crawler.incremental.converter import holds_back
from crawler.lib.blockkeys import block_key, key_hash, shorten
from crawler.lib.boilerplate import CONTENT, Params
from crawler.stages import PageViews
from crawler.stages.boilerplate import (
    analyse_domain,
    analysis,
    boilerplate_blocks,
    pages_by_domain,
    params_from_settings,
)

if TYPE_CHECKING:
    import argparse

    from scrapy.settings import Settings


def compare(settings: Settings, opts: argparse.Namespace) -> int:
    """Per domain, the stored analysis and the one with the options' parameters,
    printed; the exit status."""
    params = options_params(settings, opts)
    try:
        with using_store(settings) as store:
            where = store.location
            pages = PageViews(store)
            grouped = pages_by_domain(pages, set(opts.domain) or None)
            hold = holds_back(typed(settings).get("CONVERTER_UPGRADE"))  # as the next crawl will
            results = []
            for domain in sorted(grouped):
                now = analysis(store.get_domain(domain))
                new = analyse_domain(pages, store, domain, grouped[domain], params, write=False, hold=hold)
                results.append(_compare(domain, now, new, params))
    except StoreSettingError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 2
    except CacheMissingError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    except CacheCorruptError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    if not results:
        print(
            f"No stored pages in {where}" + (f" for {', '.join(opts.domain)}" if opts.domain else ""),
            file=sys.stderr,
        )
        return 1
    if opts.json:
        print(json.dumps({"params": asdict(params), "domains": results}, indent=2))
    else:
        print(_table(results, params, pages=opts.pages, blocks=opts.blocks))
    return 0


def options_params(settings: Settings, opts: argparse.Namespace) -> Params:
    """The BOILERPLATE_* settings' parameters, changed by the options; a usage error
    naming the option of a wrong value."""
    base = params_from_settings(settings)
    changes: dict[str, Any] = {
        name: value
        for name, value in (
            ("threshold_pct", opts.threshold_pct),
            ("min_pages", opts.min_pages),
            ("min_block_chars", opts.min_block_chars),
            ("hysteresis", opts.hysteresis),
        )
        if value is not None
    }
    if opts.strict:
        changes["loose"] = False
    if opts.no_sections:
        changes["sections"] = False
    if opts.no_position:
        changes["position"] = False
    try:
        return replace(base, **changes)
    except ValueError as exc:
        raise UsageError(str(exc).replace("BOILERPLATE_", "--").replace("_", "-").lower()) from None


def _compare(domain: str, now: dict[str, Any] | None, new: dict[str, Any], params: Params) -> dict[str, Any]:
    # blocks are compared by their text under the new parameters' matching, so that a
    # strict run and a loose one (whose hashes differ) compare like with like
    now_hashes = {key_hash(block_key(b["text"], params.loose)) for b in boilerplate_blocks(now or {})}
    new_blocks = {key_hash(block_key(b["text"], params.loose)): b for b in boilerplate_blocks(new)}
    return {
        "domain": domain,
        "pages": new["pages_analysed"],
        "skipped": new["skipped"],
        "boilerplate_pct_now": now["boilerplate_pct"] if now else None,
        "boilerplate_pct_new": new["boilerplate_pct"],
        "blocks_now": len(now_hashes),
        "blocks_new": len(new_blocks),
        "bytes_removed_new": new["bytes_removed"],
        "inputs_changed": new["inputs_changed"],
        "inputs_changed_urls": new["inputs_changed_urls"],
        "pages_held": new["pages_held"],
        "pages_emptied": new["pages_emptied"],
        "pages_emptied_urls": new["pages_emptied_urls"],
        "blocks": new["blocks"],
        "blocks_added": [
            {"pages": b["pages"], "text": shorten(b["text"], 80)} for h, b in new_blocks.items() if h not in now_hashes
        ],
        "blocks_dropped": sorted(now_hashes - set(new_blocks)),
    }


def _table(results: list[dict[str, Any]], params: Params, *, pages: bool = False, blocks: bool = False) -> str:
    lines = [
        f"threshold {params.threshold_pct:.0%}, min {params.min_pages} pages, {params.block_length_rule()}, "
        f"{'loose' if params.loose else 'strict'} matching, "
        f"sections {'on' if params.sections else 'off'}, position {'on' if params.position else 'off'}, "
        f"hysteresis {params.hysteresis:g}",
        f"{'domain':32} {'pages':>6} {'now':>7} {'new':>7} {'blocks now>new':>15} {'inputs changed':>15}",
    ]
    for r in results:
        now = "-" if r["boilerplate_pct_now"] is None else f"{r['boilerplate_pct_now']:.1f}%"
        new = "skip" if r["skipped"] else f"{r['boilerplate_pct_new']:.1f}%"
        lines.append(
            f"{r['domain'][:32]:32} {r['pages']:>6} {now:>7} {new:>7} "
            f"{str(r['blocks_now']) + '>' + str(r['blocks_new']):>15} {r['inputs_changed']:>15}"
        )
        for block in r["blocks_added"][:5]:
            lines.append(f"    + ({block['pages']} pages) {block['text']}")
        if r["blocks_dropped"]:
            lines.append(f"    - {len(r['blocks_dropped'])} block(s) no longer boilerplate")
        content = sum(b.get("treated") == CONTENT for b in r["blocks"])
        if content and not blocks:
            lines.append(f"    = {content} repeated block(s) kept as content: --blocks says which and why")
        if r["pages_held"]:
            lines.append(
                f"    = {r['pages_held']} page(s) keep the input they were extracted with until they change "
                "(made by the rule by repetition alone)"
            )
        if r["pages_emptied"]:
            lines.append(f"    ! {r['pages_emptied']} page(s) kept whole: cleaning would have left no text")
            if pages:
                lines.extend(f"    ! {url}" for url in r["pages_emptied_urls"])
        if blocks:
            for b in r["blocks"]:
                where = f" /{b['section']}/" if b.get("section") else ""
                lines.append(f"    {b['treated']:11} ({b['pages']} pages{where}) {shorten(b['text'], 60)}")
                lines.append(f"    {'':11} {b['why']}")
        if pages:
            lines.extend(f"    ~ {url}" for url in r["inputs_changed_urls"])
        elif r["inputs_changed"]:
            lines.append(f"    ~ {r['inputs_changed']} page(s) whose input would change: --pages lists them")
    return "\n".join(lines)
