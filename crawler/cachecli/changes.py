"""What changed: ``scrapy cache ls --run`` (a run's change list, from its report) and
``scrapy cache diff`` (a page's last change, or each page a run changed, as diffs made
by :mod:`.diff`)."""

from __future__ import annotations

import json
from itertools import islice
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import UsageError

from crawler.cache import using_store
from crawler.cachecli.diff import run_diff, version_diff
from crawler.cachecli.find import find_page, find_run
from crawler.cachecli.tables import print_json
from crawler.support.tables import table

if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterable, Iterator, Mapping

    from scrapy.settings import BaseSettings


def ls_run(settings: BaseSettings, opts: argparse.Namespace, limit: int | None) -> int:
    """``ls --run last|ID``: the run's change list, read page by page from the store
    (``--limit 0``: all of it, however long)."""
    others = [f"--{n.replace('_', '-')}" for n in ("domain", "since", "failed", "converter_pending", "empty",
                                                   "widened", "named_out") if getattr(opts, n)]  # fmt: skip
    if others:
        raise UsageError(f"cache ls --run lists a run's changes; it takes --status and --limit, not {others[0]}")
    with using_store(settings) as store:
        report = find_run(store, opts.run)
        found = store.iter_run_changes(str(report["run_id"]), opts.status)
        changes = found if limit is None else islice(found, limit + 1)
        if opts.json:
            print_json_array(islice(changes, limit) if limit is not None else changes)
            return 0
        rows = (
            [c.get("status"), (c.get("content_hash") or "")[:12], c.get("extraction_file") or "", c.get("url")]
            for c in changes
        )
        shown = print_table(["status", "content hash", "extraction file", "url"], rows, limit)
    if shown is None:
        print(f"Run {report['run_id']} changed no page{'' if opts.status is None else f' ({opts.status})'}.")
    elif shown and limit is not None:
        print(f"... more pages changed: --limit {limit * 2} or --limit 0 for all")
    return 0


#: rows of ``ls --run``'s table laid out together (the columns' widths are each block's)
TABLE_ROWS = 1000


def print_table(header: list[str], rows: Iterator[list[Any]], limit: int | None) -> bool | None:
    """``rows`` as a table, :data:`TABLE_ROWS` at a time (a list of any length is never
    held), at most ``limit`` of them. Returns None when there was no row, else whether
    there were more than ``limit``."""
    printed = 0
    while block := list(islice(rows, TABLE_ROWS if limit is None else min(TABLE_ROWS, limit + 1 - printed))):
        if limit is not None and printed + len(block) > limit:
            block = block[: limit - printed]
            if block:
                print(table(header, block) if printed == 0 else table_body(header, block))
            return True
        print(table(header, block) if printed == 0 else table_body(header, block))
        printed += len(block)
    return None if printed == 0 else False


def table_body(header: list[str], rows: list[list[Any]]) -> str:
    """A block of rows after the first: the table without its header line."""
    return table(header, rows).split("\n", 1)[1]


def print_json_array(items: Iterable[Any], indent: int = 0, end: str = "\n") -> int:
    """``items`` as one JSON array, as :func:`print_json` prints a list (at ``indent``
    spaces, inside an object), an item at a time. Returns how many."""
    pad = " " * indent
    count = 0
    for item in items:
        lines = json.dumps(item, indent=2, ensure_ascii=False, default=str).splitlines()
        print(("[\n" if count == 0 else ",\n") + "\n".join(f"{pad}  {line}" for line in lines), end="")
        count += 1
    print(f"\n{pad}]" if count else "[]", end=end)
    return count


def diff(settings: BaseSettings, opts: argparse.Namespace) -> int:
    if (opts.url is None) == (opts.run is None):
        raise UsageError("cache diff: give a URL or --run last|ID (one of them)")
    if opts.run is not None:
        return diff_run(settings, opts)
    with using_store(settings) as store:
        found = find_page(store, opts.url)
        if found is None:
            return 1
        url_hash, record = found
        content: Mapping[str, Any] = store.get_content(url_hash) or {}
    previous = content.get("previous")
    if not previous:
        message = f"Only one version of {record.get('url')} is stored: it has not changed since it was first crawled."
        print_json({"url": record.get("url"), "diff": None, "message": message}) if opts.json else print(message)
        return 0
    text = version_diff(record.get("url"), previous, content)
    if opts.json:
        print_json(
            {
                "url": record.get("url"),
                "from": previous.get("stored_at"),
                "to": content.get("stored_at"),
                "diff": text,
            }
        )
    else:
        print(text if text.endswith("\n") else text + "\n", end="")
    return 0


def diff_run(settings: BaseSettings, opts: argparse.Namespace) -> int:
    """``diff --run last|ID``: each page the run changed, as a diff of the version
    before the run and the run's own (while the cache still holds both: the run's is
    the page's last change); its new and removed pages named. The change list is read
    from the store page by page, each diff printed as it is made."""
    with using_store(settings) as store:
        report = find_run(store, opts.run)
        entries = (
            run_diff(change, store.get_content(str(change.get("url_hash"))) or {})
            for change in store.iter_run_changes(str(report["run_id"]))
        )
        if opts.json:  # as print_json prints {"run_id", "pages"}, a page at a time
            print(f'{{\n  "run_id": {json.dumps(report["run_id"], ensure_ascii=False)},\n  "pages": ', end="")
            print_json_array(entries, indent=2, end="\n}\n")
            return 0
        shown = 0
        for entry in entries:
            shown += 1
            if entry["diff"]:
                print(entry["diff"] if entry["diff"].endswith("\n") else entry["diff"] + "\n", end="")
            else:
                print(f"# {entry['status']}: {entry['url']}: {entry['message']}")
    if not shown:
        print(f"Run {report['run_id']} changed no page.")
    return 0
