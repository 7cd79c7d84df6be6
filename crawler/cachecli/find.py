"""Finding what a ``scrapy cache`` command was asked about, and saying why not: a page
under another spelling, a domain or status that matches nothing, a cache one level down."""

from __future__ import annotations

import argparse
import difflib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crawler.identity import page_key
from crawler.incremental.folding import other_spellings
from crawler.lib.mdfiles import front_matter_url
from crawler.lib.urls import canonical_url, index_file_parent, url_domain

if TYPE_CHECKING:
    from collections.abc import Mapping

    from crawler.cache.ports import DocStore, PagePort
    from crawler.cache.records import PageRecord


def domain_hint(store: PagePort, domain: str | None) -> str:
    """When ``domain`` matches no page: the cache's domains it may have meant (a
    domain keeps its port: ``127.0.0.1:8080``), as a sentence; else nothing."""
    if not domain:
        return ""
    known = [d["domain"] for d in store.domain_summary()]
    host = domain.split(":")[0].lower()
    close = [d for d in known if d.split(":")[0] == host] or difflib.get_close_matches(domain, known, n=3)
    if not close:
        return f" The cache has no page of {domain}."
    return f" No page of {domain}; did you mean {' or '.join(close)}? (a domain keeps its port)"


def status_hint(status: str | None) -> str:
    """When ``ls --status`` matches no page: that the status is each page's current one,
    and where a run's changes are (a page changed, then seen unchanged, is unchanged).

    >>> status_hint(None)
    ''
    """
    if status is None:
        return ""
    return (
        " --status is a page's current status (the last crawl that saw it): what a run changed is"
        " `scrapy cache ls --run last` (or --run ID, from `scrapy cache stats`)."
    )


def with_failed_renderings(
    store: DocStore, found: list[tuple[str, Mapping[str, Any]]], opts: argparse.Namespace
) -> list[tuple[str, Mapping[str, Any]]]:
    """``ls --failed``: the pages whose extraction failed (``found``), and those whose
    rendering failed in the last crawl (its report's ``render.failed``: rendered again
    by the next; a page never rendered has no record, only its URL), each once, the
    error in ``render_error``."""
    try:
        report = find_run(store, "last")
    except ValueError:
        return list(found)
    failed = (report.get("render") or {}).get("failed") or {}
    pages: dict[str, dict[str, Any]] = {url_hash: dict(record) for url_hash, record in found}
    for url, error in failed.items():
        if opts.domain is not None and url_domain(url) != opts.domain:
            continue
        known = store.find_page(url)
        url_hash, record = known if known is not None else (page_key(canonical_url(url)), {"url": url})
        if opts.status is not None and record.get("status") != opts.status:
            continue
        page = pages.setdefault(url_hash, dict(record))
        page["render_error"] = error
        page["render_failed_in"] = report.get("run_id")
    return list(pages.items())


def caches_below(directory: str | os.PathLike[str] | None) -> str:
    """A hint naming the caches one level below ``directory`` (``make demo``'s
    ``extracted-docs/demo``), for a command that found none in it; else ``""``."""
    if not directory or not Path(directory).is_dir():
        return ""
    found = sorted(str(Path(directory) / p.parent.name) for p in Path(directory).glob("*/cache.sqlite"))
    if not found:
        return ""
    return f" A cache is in {', '.join(found)}: -s EXTRACTED_DOCS_DIR={found[0]} reads it."


def url_of_file(argument: str) -> str | None:
    """When ``argument`` is the path of a file (``scrapy cache show DIR/host/page.md``,
    absolute or relative): the URL its front matter names, a ValueError when it names
    none; else None (a URL or a url_hash)."""
    if "://" in argument or not os.path.isfile(argument):
        return None
    with open(argument, encoding="utf-8", errors="replace") as handle:
        head = handle.read(64 * 1024)
    url = front_matter_url(head)
    if url is None:
        raise ValueError(
            f"{argument} names no page: no url in a front matter (files of `scrapy cache export --markdown` have one)"
        )
    return url


def find_page(store: PagePort, url: str) -> tuple[str, PageRecord] | None:
    """The page of ``url``; else, for ``/X/index.html``, the page of ``/X/`` (the
    crawl records them as one page), said on stderr; else None, said too, with the
    stored pages its other spellings name (``/X`` for ``/X.html``...: maybe another
    page, so only suggested)."""
    found = store.find_page(url)
    if found is not None:
        return found
    parent = index_file_parent(url)
    if parent is not None and (found := store.find_page(parent)) is not None:
        print(
            f"{url} is not in the cache by that name: showing {found[1].get('url')} "
            "(a crawl records /X/index.html as /X/ when both are the same page)",
            file=sys.stderr,
        )
        return found
    # a URL typed without its scheme (127.0.0.1:8765/bugs.html) names no page by itself
    schemed = [f"{scheme}://{url.strip()}" for scheme in ("https", "http")] if "://" not in url else []
    spellings = [*schemed, *(other for s in schemed for other in other_spellings(s)), *other_spellings(url)]
    hits = (hit for other in spellings if (hit := store.find_page(other)) is not None)
    close = list(dict.fromkeys(str(hit[1].get("url")) for hit in hits))
    print(f"Not in the cache: {url}" + (f"; stored close to it: {', '.join(close)}" if close else ""), file=sys.stderr)
    return None


def find_run(store: DocStore, run: str) -> dict[str, Any]:
    """The report of ``run`` (an id, or ``last``: the last crawl's, not a ``scrapy
    process``'s) of a run whose change list the store keeps (``iter_run_changes``); a
    ValueError saying why when there is none."""
    if run == "last":
        latest = store.latest_run_report()
        found = latest if latest is None or latest.get("kind") != "process" else None
        if found is None and latest is not None:
            found = next((r for r in reversed(store.run_reports(20)) if r.get("kind") != "process"), None)
        if found is None:
            raise ValueError(f"No crawl has written a run report in {store.location} yet")
    else:
        found = store.run_report(run)
        if found is None:
            raise ValueError(f"No run {run!r} in {store.location} (`scrapy cache stats --runs N` lists the last runs)")
    # a report since the change table has its total; one before it, its list (moved
    # into the table when the cache was upgraded)
    if found.get("changes_error"):
        raise ValueError(
            f"The change list of run {found.get('run_id')} was not stored ({found['changes_error']}): "
            "`scrapy cache ls --since DATE` lists the pages changed since a date"
        )
    if "changes_total" not in found and not isinstance(found.get("changes"), list):
        raise ValueError(
            f"The report of run {found.get('run_id')} has no change list (written by an older version): "
            "`scrapy cache ls --since DATE` lists the pages changed since a date"
        )
    return found
