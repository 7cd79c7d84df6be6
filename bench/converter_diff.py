"""Benchmark: which pages a converter change rewrites, on every real page we measure on.

    python -m bench.converter_diff --json /tmp/new.json                 # this checkout's converter
    (cd <worktree of the old commit> && python -m bench.converter_diff --json /tmp/old.json)
    python -m bench.converter_diff --diff /tmp/old.json /tmp/new.json   # pages changed, per group and site

A new converter version makes an existing cache count the pages whose markdown changed
``converter_pending`` (re-extracted only under ``CONVERTER_UPGRADE=apply``): this says how
many pages that is, before the version ships. It hashes the markdown of every page of
trafilatura's corpus (:mod:`bench.real_pages`: its ``dev`` and ``test`` parts) and of every
page of the documentation sites (:mod:`bench.docs_sites`, ``--root`` as there), each
converted as those benchmarks convert it, and compares two such files. The test part is
only counted, never listed (it is never looked into page by page).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

GROUPS = ("corpus_dev", "corpus_test", "docs")


def digest(markdown: str) -> str:
    return hashlib.sha256(markdown.encode("utf-8")).hexdigest()[:16]


def hashes(corpus: Path, root: Path) -> dict[str, dict[str, str]]:
    """The hash of every page's markdown, by group; a documentation page's key is
    ``SITE:PATH``."""
    from bench import docs_sites
    from bench.docs_gold import SITES
    from bench.real_pages import load_pages, ours_markdown

    out: dict[str, dict[str, str]] = {group: {} for group in GROUPS}
    for page in load_pages(corpus):
        out[f"corpus_{page.part}"][page.file] = digest(ours_markdown(page.path.read_bytes(), page.url))
    for name, site in SITES.items():
        for doc in docs_sites.site_pages(site, root):
            out["docs"][f"{name}:{doc.path}"] = digest(docs_sites.ours(doc.file.read_bytes(), doc.url))
    return out


def changed(old: dict[str, Any], new: dict[str, Any]) -> dict[str, list[str]]:
    """The pages of each group whose markdown differs (or that one side lacks).

    >>> changed({"docs": {"a:x": "1", "b:y": "2"}}, {"docs": {"a:x": "1", "b:y": "3"}})
    {'docs': ['b:y']}
    """
    out = {}
    for group in old.keys() & new.keys():
        keys = old[group].keys() | new[group].keys()
        out[group] = sorted(key for key in keys if old[group].get(key) != new[group].get(key))
    return dict(sorted(out.items()))


def report(old: dict[str, Any], new: dict[str, Any]) -> str:
    r"""The changed pages per group, the documentation pages per site, the dev pages listed.

    >>> print(report({"docs": {"a:x": "1", "b:y": "2"}}, {"docs": {"a:x": "1", "b:y": "3"}}))
    docs: 1 of 2 pages changed
        b: 1
    """
    lines = []
    for group, keys in changed(old, new).items():
        lines.append(f"{group}: {len(keys)} of {len(old[group])} pages changed")
        if group == "docs":
            lines += [f"    {site}: {count}" for site, count in Counter(k.split(":")[0] for k in keys).most_common()]
        elif group == "corpus_dev":
            lines += [f"    {key}" for key in keys]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from bench.docs_sites import DEFAULT_ROOT
    from bench.real_pages import CORPUS

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT, help="the unpacked documentation packages")
    parser.add_argument("--json", type=Path, help="write this checkout's hashes here")
    parser.add_argument("--diff", nargs=2, type=Path, metavar=("OLD", "NEW"), help="compare two hash files")
    args = parser.parse_args(argv)
    if args.diff:
        old, new = (json.loads(path.read_text()) for path in args.diff)
        print(report(old, new))
        return 0
    if not args.json:
        parser.error("give --json OUT (hash this checkout's converter) or --diff OLD NEW")
    out = hashes(args.corpus, args.root)
    args.json.write_text(json.dumps(out, indent=0, sort_keys=True) + "\n")
    print({group: len(pages) for group, pages in out.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
