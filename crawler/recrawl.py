"""Cron-grade recrawls: ``python -m crawler.recrawl URL [scrapy crawl options]``.

* never overlaps with itself: a second recrawl on the same cache while one runs exits
  at once with status 75 (EX_TEMPFAIL) and one line on standard error;
* writes one log per run, ``EXTRACTED_DOCS_DIR/logs/recrawl-<time>.log`` (the last
  ``--keep-logs`` are kept; ``logs/latest.log`` points to the newest), and the crawl
  writes its run report (``runs/<run id>.json``);
* prints nothing when the run succeeds, so cron sends no mail; on failure (the crawl
  could not start or crashed, no run report, a finish reason other than ``finished``
  or a ``closespider`` limit, no page reached at all, the extraction or the vector
  sync stopped) it prints what failed with the
  end of the log and exits with status 1, so cron mails the owner;
* a run killed half-way leaves the cache consistent (every cache write is atomic), and
  the next run picks up where it stopped.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scrapy.utils.project import get_project_settings

from crawler.cache.perms import open_private, private_mkdir

ROOT = Path(__file__).resolve().parent.parent
EX_TEMPFAIL = 75


def cache_dir(scrapy_args: list[str]) -> Path:
    """EXTRACTED_DOCS_DIR as the crawl will see it (``-s`` overrides included)."""
    directory = None
    for i, arg in enumerate(scrapy_args):
        value = scrapy_args[i + 1] if arg in ("-s", "--set") and i + 1 < len(scrapy_args) else None
        if arg.startswith("--set="):
            value = arg.split("=", 1)[1]
        if value and value.startswith("EXTRACTED_DOCS_DIR="):
            directory = value.split("=", 1)[1]
    if directory is None:
        cwd = os.getcwd()
        os.chdir(ROOT)
        try:
            directory = get_project_settings().get("EXTRACTED_DOCS_DIR", "extracted-docs")
        finally:
            os.chdir(cwd)
    path = Path(directory)
    return path if path.is_absolute() else ROOT / path


def failure_reasons(returncode: int, report: dict[str, Any] | None, previous_run: str | None) -> list[str]:
    """Why a finished crawl counts as failed (empty: it succeeded).

    >>> failure_reasons(0, {"run_id": "b", "finish_reason": "finished", "pages_new": 3}, "a")
    []
    >>> failure_reasons(1, None, "a")
    ['scrapy exited with status 1', 'no run report was written']
    >>> failure_reasons(0, {"finish_reason": "finished", "pages_new": 3, "extraction_stopped": "HTTP 401"}, "a")
    ['extraction stopped: HTTP 401']
    >>> failure_reasons(0, {"finish_reason": "finished", "pages_new": 3, "vector_sync": {"error": "store down"}}, "a")
    ['vector sync stopped: store down']
    """
    reasons = []
    if returncode != 0:
        reasons.append(f"scrapy exited with status {returncode}")
    if report is None or report.get("run_id") == previous_run:
        reasons.append("no run report was written")
        return reasons
    reason = str(report.get("finish_reason"))
    if reason != "finished" and not reason.startswith("closespider"):
        reasons.append(f"the crawl ended with finish reason {reason!r}")
    if not any(report.get(k) for k in ("pages_new", "pages_changed", "pages_unchanged")):
        reasons.append("no page could be crawled")
    if report.get("extraction_stopped"):
        reasons.append(f"extraction stopped: {report['extraction_stopped']}")
    vector_sync = report.get("vector_sync")
    if isinstance(vector_sync, dict) and vector_sync.get("error"):
        reasons.append(f"vector sync stopped: {vector_sync['error']}")
    return reasons


def latest_report(directory: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((directory / "runs" / "latest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m crawler.recrawl", description=__doc__.splitlines()[0])
    parser.add_argument("url", help="start URL(s), comma-separated")
    parser.add_argument("--spider", default="docs")
    parser.add_argument("--keep-logs", type=int, default=30)
    args, scrapy_args = parser.parse_known_args(argv)
    if args.keep_logs < 1:
        parser.error(f"--keep-logs must be at least 1, got {args.keep_logs}")
    directory = cache_dir(scrapy_args)
    logs = directory / "logs"
    private_mkdir(logs)  # 0700, like the cache: logs name pages and may quote them

    lock_file = os.fdopen(open_private(directory / ".recrawl.lock", os.O_RDWR | os.O_APPEND), "a+")
    try:
        fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock_file.seek(0)
        holder = lock_file.read().strip() or "unknown"
        print(f"recrawl {args.url}: skipped, the previous recrawl ({holder}) is still running", file=sys.stderr)
        return EX_TEMPFAIL
    started = datetime.now(UTC)
    lock_file.seek(0)
    lock_file.truncate()
    lock_file.write(f"pid {os.getpid()}, started {started:%Y-%m-%dT%H:%M:%SZ}")
    lock_file.flush()

    log_path = logs / f"recrawl-{started:%Y%m%dT%H%M%SZ}-{os.getpid()}.log"
    previous = latest_report(directory)
    command = [sys.executable, "-m", "scrapy", "crawl", args.spider, "-a", f"start_urls={args.url}", *scrapy_args]
    with os.fdopen(open_private(log_path, os.O_WRONLY | os.O_TRUNC), "w", encoding="utf-8") as log:
        log.write(f"recrawl: {' '.join(command)}\n")
        log.flush()
        returncode = subprocess.call(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        report = latest_report(directory)
        reasons = failure_reasons(returncode, report, previous.get("run_id") if previous else None)
        if reasons:
            log.write(f"recrawl: FAILED: {'; '.join(reasons)}\n")
        else:
            assert report is not None
            log.write(f"recrawl: OK: run {report['run_id']}, report runs/{report['run_id']}.json\n")
    _update_latest(logs, log_path)
    _drop_old_logs(logs, args.keep_logs, keep=log_path)
    if reasons:
        tail = log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-25:]
        print(f"recrawl {args.url} FAILED: {'; '.join(reasons)}\nlog: {log_path}\n", file=sys.stderr)
        print("\n".join(tail), file=sys.stderr)
        return 1
    return 0


def _update_latest(logs: Path, log_path: Path) -> None:
    latest = logs / "latest.log"
    tmp = logs / ".latest.log.tmp"
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(log_path.name)
    os.replace(tmp, latest)


def _drop_old_logs(logs: Path, count: int, keep: Path) -> None:
    """Keep the newest ``count`` logs, and ``keep`` (this run's) always."""
    old = [p for p in sorted(logs.glob("recrawl-*.log"), key=lambda p: p.stat().st_mtime) if p != keep]
    for path in old[: max(0, len(old) - (count - 1))]:
        path.unlink(missing_ok=True)


if __name__ == "__main__":
    sys.exit(main())
