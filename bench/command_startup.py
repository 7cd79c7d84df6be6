"""How long a `scrapy` command takes to start, against `scrapy version` outside any
project (the reference, in the same run): Scrapy imports every project command on
every invocation, so a command module's imports are paid by all of them.

    python -m bench.command_startup [--runs 9] [--before DIR]

``--before DIR``: a checkout of another revision (``git worktree add DIR REV``) measured
alongside. Prints a markdown table of medians and their ratio to the reference.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def small_cache(directory: Path) -> None:
    """A cache of one page, for ``scrapy cache stats`` to read."""
    from crawler.cache.sqlite import SqliteDocStore

    store = SqliteDocStore(directory)
    store.put_page("a" * 40, {"url": "https://x.example/a", "domain": "x.example", "status": "new"})
    store.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--before", type=Path)
    args = parser.parse_args()
    scrapy = str(Path(sys.executable).with_name("scrapy"))
    work = Path(tempfile.mkdtemp())
    try:
        small_cache(work / "cache")
        at_cache = ["-s", f"EXTRACTED_DOCS_DIR={work / 'cache'}"]
        cases = [("reference: scrapy version, outside a project", work, [scrapy, "version"])]
        checkouts = ([("before", args.before)] if args.before else []) + [("this checkout", ROOT)]
        for label, root in checkouts:
            cases += [
                (f"{label}: scrapy version", root, [scrapy, "version"]),
                (f"{label}: scrapy cache --help", root, [scrapy, "cache", "--help"]),
                (
                    f"{label}: scrapy cache stats",
                    root,
                    [scrapy, "cache", "stats", *at_cache],
                ),
            ]
        times: dict[str, list[float]] = {name: [] for name, _, _ in cases}
        for _ in range(args.runs):  # interleaved: a load that comes and goes weighs on all alike
            for name, cwd, command in cases:
                start = time.perf_counter()
                subprocess.run(command, cwd=cwd, capture_output=True, check=True)
                times[name].append(time.perf_counter() - start)
        reference = statistics.median(times[cases[0][0]])
        print("| command | median | against the reference |\n| --- | --- | --- |")
        for name, measured in times.items():
            median = statistics.median(measured)
            print(f"| {name} | {median:.2f} s | {median / reference:.2f}x |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
