"""Cron-grade recrawls: ``python -m crawler.recrawl URL [scrapy crawl options]``.

* never overlaps with itself: a second recrawl on the same cache while one runs exits
  at once with status 75 (EX_TEMPFAIL) and one line on standard error;
* writes one log per run, ``EXTRACTED_DOCS_DIR/logs/recrawl-<time>.log`` (the last
  ``--keep-logs`` are kept; ``logs/latest.log`` points to the running one from its
  start, so ``tail -f`` follows the run), and the crawl
  writes its run report (``runs/<run id>.json``);
* prints nothing when the run succeeds, so cron sends no mail; on failure (the crawl
  could not start or crashed, no run report, a finish reason other than ``finished``
  or a ``closespider`` limit, no page reached at all, the extraction or the vector
  sync stopped) it prints what failed with the
  end of the log and exits with status 1, so cron mails the owner;
* a run killed half-way leaves the cache consistent (every cache write is atomic), and
  the next run picks up where it stopped;
* writes no secret: a setting or spider argument whose name says it holds one
  (``*_KEY``, ``*_TOKEN``, ``*SECRET*``, ``*PASSWORD*``, ``*_PASS``...) is refused at
  once, status 2, one line, nothing written (a command line ends up in the log, the
  cron mail and ``ps``); so is a setting the crawl would ignore (a misspelt name:
  ``REVISIT_ENABLE``, named with the closest one) or no longer has; and the keys and
  connection strings the crawl reads from the environment (``LLM_API_KEY``,
  ``EMBEDDER_API_KEY``, ``QDRANT_API_KEY``, ``OPENAI_API_KEY``, ``EXTRACTED_DOCS_DSN``,
  ``FRONTIER_REDIS_URL``) are masked in everything the crawl prints before it reaches
  the log and the failure mail.
"""

from __future__ import annotations

import argparse
import os
import re
import select
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy.settings import Settings
from scrapy.utils.conf import closest_scrapy_cfg
from scrapy.utils.project import get_project_settings

from crawler.cache import CacheCorruptError, CacheMissingError, StoreSettingError, store_factory, using_store
from crawler.cache.lock import FileLock, LockHeldError
from crawler.cache.perms import mkdir_problem, open_private, private_mkdir
from crawler.cache.run_report import REMOVAL_HELD, removal_held
from crawler.config import defaults, removed_setting_error, unknown_settings, user_set
from crawler.subcommands import outside_project
from crawler.support import secrets
from crawler.support.plural import plural

if TYPE_CHECKING:
    from collections.abc import Iterator

    from crawler.cache.ports import RunPort

EX_TEMPFAIL = 75
EX_USAGE = 2
#: seconds the crawl's output is still read after it exits (see run_masked)
LINGER_SECONDS = 5.0
#: a name part that says the value is a secret
SECRET_PARTS = {"KEY", "APIKEY", "TOKEN", "SECRET", "SECRETS", "PASSWORD", "PASSWD", "PASS", "CREDENTIALS"}


def is_secret_name(name: str) -> bool:
    """Does a setting or spider argument of this name hold a secret?

    >>> is_secret_name("LLM_API_KEY"), is_secret_name("LLM_MAX_TOKENS")
    (True, False)
    """
    parts = [part for part in re.split(r"[^A-Za-z0-9]+", name.upper()) if part]
    if not parts:
        return False
    return any(part in SECRET_PARTS or "SECRET" in part or "PASSWORD" in part for part in parts)


def name_values(scrapy_args: list[str], short: str, long: str) -> list[tuple[str, str]]:
    """The ``NAME=VALUE`` pairs given with ``-s``/``--set`` (or ``-a``), in every
    spelling argparse accepts: ``-s X``, ``-sX``, ``--set X``, ``--set=X``.

    >>> name_values(["-s", "A=1", "-sB=2", "--set=C=3", "--set", "D=4", "-a", "E=5"], "-s", "--set")
    [('A', '1'), ('B', '2'), ('C', '3'), ('D', '4')]
    """
    pairs = []
    for i, arg in enumerate(scrapy_args):
        if arg in (short, long):
            value = scrapy_args[i + 1] if i + 1 < len(scrapy_args) else ""
        elif arg.startswith(long + "="):
            value = arg[len(long) + 1 :]
        elif arg.startswith(short) and not arg.startswith("--") and len(arg) > len(short):
            value = arg[len(short) :]
        else:
            continue
        name, sep, rest = value.partition("=")
        if sep:
            pairs.append((name, rest))
    return pairs


def refused_secret(scrapy_args: list[str]) -> str | None:
    """The one-line error for a secret on the command line, None without one (the
    message names the setting, never its value)."""
    for kind, short, long in (("setting", "-s", "--set"), ("spider argument", "-a", "--a")):
        for name, _ in name_values(scrapy_args, short, long):
            if is_secret_name(name):
                return (
                    f"recrawl: {kind} {name}: refused: a secret on the command line is written to the log, "
                    "the cron mail and the process list; put it in the environment (LLM, embedder and Qdrant "
                    "keys: LLM_API_KEY, EMBEDDER_API_KEY, QDRANT_API_KEY) "
                    "or in the project's settings"
                )
    return None


def refused_unknown(settings: Settings) -> str | None:
    """The one-line error for settings the crawl would ignore (a misspelt name), None
    without one: the crawl warns of them (crawler.extensions.closing), but under cron
    the warning reaches only the log, and the run goes on without what was asked.

    >>> refused_unknown(Settings({"REVISIT_ENABLE": True}))  # doctest: +ELLIPSIS
    'recrawl: unknown setting REVISIT_ENABLE (did you mean REVISIT_ENABLED?): refused: ...'
    >>> refused_unknown(Settings({"REVISIT_ENABLED": True})) is None
    True
    >>> refused_unknown(Settings({"EXTRACTOR_FORCE": True}))  # doctest: +ELLIPSIS
    'recrawl: Setting EXTRACTOR_FORCE was removed: a one-run choice: ...'
    """
    if removed := removed_setting_error(settings):
        return f"recrawl: {removed}"
    unknown = unknown_settings(user_set(settings))
    if not unknown:
        return None
    names = ", ".join(f"{name} (did you mean {close}?)" if close else name for name, close in unknown)
    return (
        f"recrawl: unknown setting{'s' if len(unknown) > 1 else ''} {names}: refused: the crawl would ignore "
        f"{'them' if len(unknown) > 1 else 'it'}; every setting: docs/settings.md"
    )


@cache
def project_dir() -> Path:
    """The Scrapy project the wrapper runs in: the directory of the ``scrapy.cfg``
    nearest the current directory (Scrapy's own rule), else the current directory.
    This repository's checkout, or any project using the add-on."""
    found = closest_scrapy_cfg()
    return Path(found).parent if found else Path.cwd()


@cache
def _project_settings() -> Settings:
    cwd = os.getcwd()
    os.chdir(project_dir())
    try:
        return get_project_settings()
    finally:
        os.chdir(cwd)


def crawl_setting(scrapy_args: list[str], name: str, default: Any = None) -> Any:
    """A setting as the crawl will see it: the last ``-s`` override, else the project's."""
    overrides = dict(name_values(scrapy_args, "-s", "--set"))
    if name in overrides:
        return overrides[name]
    return _project_settings().get(name, default)


def register_env_keys() -> None:
    """Register (crawler.support.secrets) the keys the crawl will read from the environment,
    and the passwords of its connection strings."""
    for name in secrets.KEY_ENVS:
        secrets.register(os.environ.get(name), name, warn=False)
    for name in secrets.CONNECTION_ENVS:
        secrets.register_connection(os.environ.get(name), name)  # a malformed one's too


def cache_dir(scrapy_args: list[str]) -> Path:
    """EXTRACTED_DOCS_DIR as the crawl will see it (``-s`` overrides included)."""
    path = Path(crawl_setting(scrapy_args, "EXTRACTED_DOCS_DIR") or defaults()["EXTRACTED_DOCS_DIR"])
    return path if path.is_absolute() else project_dir() / path


#: what makes a run partial by the user's own choice (not worth a mail)
CHOSEN_LIMITS = ("max_pages", "max_depth", "sitemaps off", "finish reason closespider", "shared frontier:")
#: a process of a shared-frontier run: the run has the pages (it may have been left none)
#: and its own report is not the run's (``scrapy process --run`` writes that)
RUN_PART_GAP = "shared frontier:"
#: partial runs in a row (for other reasons) after which cron is told: removed pages go unnoticed
PARTIAL_STREAK = 3


def unexpected_gaps(report: dict[str, Any]) -> list[str]:
    """Why a run was partial, less the limits the user set.

    >>> unexpected_gaps({"incomplete_reasons": ["max_pages", "failed pages"]})
    ['failed pages']
    """
    return [r for r in report.get("incomplete_reasons") or [] if not str(r).startswith(CHOSEN_LIMITS)]


def partial_streak(store: RunPort) -> int:
    """How many of the latest run reports in a row were partial for a reason the user did
    not choose (a page that keeps failing, a binary page, a redirect loop...)."""
    last = PARTIAL_STREAK * 4
    while True:
        reports = store.run_reports(last)
        streak = 0
        ended = False
        for report in reversed(reports):
            if report.get("kind") == "process":
                continue  # `scrapy process` crawls nothing: it neither makes nor breaks a streak
            if any(str(gap).startswith(RUN_PART_GAP) for gap in report.get("incomplete_reasons") or []):
                continue  # a process of a shared-frontier run: the run's own report (kind run) counts
            # a run whose extraction stopped marked its removals: it ends a streak (and failed itself)
            if report.get("complete") or not unexpected_gaps(report) or not removal_held(report):
                ended = True
                break
            streak += 1
        if ended or len(reports) < last:
            return streak
        last *= 4


def failure_reasons(
    returncode: int,
    report: dict[str, Any] | None,
    previous_run: str | None,
    streak: int = 0,
    partial_runs: int = PARTIAL_STREAK,
) -> list[str]:
    """Why a finished crawl counts as failed (empty: it succeeded).

    >>> failure_reasons(0, {"run_id": "b", "finish_reason": "finished", "pages_new": 3}, "a")
    []
    >>> failure_reasons(1, None, "a")
    ['scrapy exited with status 1', 'no run report was written']
    >>> failure_reasons(0, {"finish_reason": "finished", "pages_new": 3, "extraction_stopped": "HTTP 401"}, "a")
    ['extraction stopped: HTTP 401']
    >>> failure_reasons(0, {"finish_reason": "finished", "pages_new": 3, "vector_sync": {"error": "store down"}}, "a")
    ['vector sync stopped: store down']
    >>> damaged = {"finish_reason": "finished", "pages_new": 3, "incomplete_reasons": ["cache read failed: x"]}
    >>> failure_reasons(0, damaged, "a")
    ['the cache failed: cache read failed: x']
    >>> held = {"finish_reason": "finished", "pages_changed": 1, "incomplete_reasons": ["removal held: 40 of 41"]}
    >>> failure_reasons(0, held, "a")
    ['removal held: 40 of 41 (is the start page what it was? -s REMOVAL_MAX_SHARE=1 removes them)']
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
    gaps = [str(r) for r in report.get("incomplete_reasons") or []]
    crawled = any(report.get(k) for k in ("pages_new", "pages_changed", "pages_unchanged"))
    if report.get("failed"):  # the run says why (what its start URLs answered)
        reasons.append(str(report["failed"]))
    elif not crawled and not any(gap.startswith(RUN_PART_GAP) for gap in gaps):
        reasons.append("no page could be crawled")
    if mistakes := report.get("mistakes"):  # what was asked and ignored: as if refused
        said = "; ".join(str(m.get("message")) if isinstance(m, dict) else str(m) for m in mistakes)
        reasons.append(f"{plural(len(mistakes), 'mistake')} in the command: {said}")
    if report.get("interrupted"):
        reasons.append(f"interrupted by {report['interrupted']}")
    if report.get("extraction_stopped"):
        reasons.append(f"extraction stopped: {report['extraction_stopped']}")
    vector_sync = report.get("vector_sync")
    if isinstance(vector_sync, dict) and vector_sync.get("error"):
        reasons.append(f"vector sync stopped: {vector_sync['error']}")
    for gap in unexpected_gaps(report):
        if gap == report.get("failed"):
            continue
        if gap.startswith(("cache ", "a page could not be recorded")):
            reasons.append(f"the cache failed: {gap}")
        if gap.startswith(REMOVAL_HELD):
            reasons.append(f"{gap} (is the start page what it was? -s REMOVAL_MAX_SHARE=1 removes them)")
    if streak >= partial_runs:
        last = "the last run was" if streak == 1 else f"the last {streak} runs were"
        reasons.append(
            f"{last} partial ({'; '.join(unexpected_gaps(report))}): no page is marked removed until a run completes"
        )
    return reasons


def partial_verdict(report: dict[str, Any], streak: int, partial_runs: int) -> str:
    """What the log's verdict adds for a partial run that is not (yet) a failure ("" for
    a run with no gap but the limits the user set).

    >>> partial_verdict({"incomplete_reasons": ["max_pages", "renderings failed"]}, 1, 3)
    ' (partial: renderings failed; partial run 1 in a row, the 3rd fails)'
    """
    gaps = unexpected_gaps(report)
    if not gaps:
        return ""
    return f" (partial: {'; '.join(gaps)}; partial run {streak} in a row, the {ordinal(partial_runs)} fails)"


def ordinal(n: int) -> str:
    """``n`` as an ordinal number.

    >>> [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 21)]
    ['1st', '2nd', '3rd', '4th', '11th', '12th', '21st']
    """
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def store_settings(scrapy_args: list[str]) -> Settings:
    """The settings the crawl opens its store with: the project's, the ``-s``
    overrides, EXTRACTED_DOCS_DIR as the crawl resolves it."""
    settings = _project_settings().copy()
    for name, value in name_values(scrapy_args, "-s", "--set"):
        settings.set(name, value, priority="cmdline")
    settings.set("EXTRACTED_DOCS_DIR", str(cache_dir(scrapy_args)), priority="cmdline")
    return settings


def latest_runs(settings: Settings, run_id: str | None = None) -> tuple[dict[str, Any] | None, int, str]:
    """The latest run report (or the report of ``run_id``: other crawls may write to a
    shared store meanwhile), the partial streak (:func:`partial_streak`) and where the
    report is (the store's :meth:`run_report_location`), read through the store;
    ``(None, 0, "")`` when there is no cache yet or it cannot be read (the crawl says why)."""
    try:
        with using_store(settings) as store:
            report = store.latest_run_report() if run_id is None else store.run_report(run_id)
            where = store.run_report_location(str(report["run_id"])) if report is not None else ""
            return report, partial_streak(store), where
    except (CacheMissingError, CacheCorruptError):
        return None, 0, ""


#: the crawl's summary line (crawler.extensions.closing): ``... INFO: run <id> (<reason>): ...``
SUMMARY_RE = re.compile(r"\] INFO: run (\S+) \(")


def logged_run_id(lines: list[str]) -> str | None:
    """The run id the crawl's summary line names (its last one).

    >>> logged_run_id(["x", "2026-11-24 03:17:09 [crawler.extensions.closing] INFO: run 2026T-5a (finished): 0 new"])
    '2026T-5a'
    >>> logged_run_id(["no summary"]) is None
    True
    """
    found = [m.group(1) for line in lines if (m := SUMMARY_RE.search(line))]
    return found[-1] if found else None


#: what a log line that says why a crawl failed looks like (Scrapy's log format)
LOG_LINE_RE = re.compile(r"^\S+ \S+ \[[^\]]+\] [A-Z]+: |^recrawl: ")
PROBLEM_RE = re.compile(r"^\S+ \S+ \[[^\]]+\] (WARNING|ERROR|CRITICAL): ")


def mail_excerpt(lines: list[str], problems: int = 20, tail: int = 5) -> list[str]:
    """What the failure mail shows of the log: its first warnings and errors (why the
    crawl failed: ``Connection was refused``...), with their tracebacks' last lines,
    then the last lines of the log that are not Scrapy's stats dump.

    >>> log = ["2026-11-24 03:17:00 [scrapy.core.scraper] ERROR: Error downloading <GET x>",
    ...        "Traceback (most recent call last):", "  File ...", "ConnectionRefusedError: refused",
    ...        "2026-11-24 03:17:01 [scrapy.statscollectors] INFO: Dumping Scrapy stats:",
    ...        "{'a': 1,", " 'b': 2}", "2026-11-24 03:17:01 [crawler] INFO: run r (finished): 0 new",
    ...        "recrawl: FAILED: no page could be crawled"]
    >>> for line in mail_excerpt(log): print(line)
    2026-11-24 03:17:00 [scrapy.core.scraper] ERROR: Error downloading <GET x>
    ConnectionRefusedError: refused
    ...
    2026-11-24 03:17:01 [crawler] INFO: run r (finished): 0 new
    recrawl: FAILED: no page could be crawled
    """
    found: list[str] = []
    for index, line in enumerate(lines):
        if len(found) >= problems:
            break
        if PROBLEM_RE.match(line):
            found.append(line)
            # a traceback under it: its last line says what was raised
            following = lines[index + 1 : index + 200]
            if following and following[0].startswith("Traceback"):
                end = next((n for n, more in enumerate(following) if LOG_LINE_RE.match(more)), len(following))
                found.append(following[end - 1])
    in_dump = False
    rest: list[str] = []
    for line in lines:
        if "Dumping Scrapy stats:" in line:
            in_dump = True
            continue
        if in_dump and (line.startswith(("{", " ")) or not line.strip()):
            continue
        in_dump = False
        rest.append(line)
    last = [line for line in rest[-tail:] if line not in found]
    return [*found, "...", *last] if found else last


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m crawler.recrawl", description=__doc__.splitlines()[0])
    parser.add_argument("url", help="start URL(s), comma-separated")
    parser.add_argument("--spider", default="docs")
    parser.add_argument("--keep-logs", type=int, default=30)
    parser.add_argument("--partial-runs", type=int, default=PARTIAL_STREAK)
    args, scrapy_args = parser.parse_known_args(argv)
    if args.keep_logs < 1:
        parser.error(f"--keep-logs must be at least 1, got {args.keep_logs}")
    if args.partial_runs < 1:
        parser.error(f"--partial-runs must be at least 1, got {args.partial_runs}")
    if (outside := outside_project("recrawl", None, store_named=False)) is not None:  # before anything is written
        print(outside.replace("scrapy recrawl", "recrawl"), file=sys.stderr)
        return EX_USAGE
    refused = refused_secret(scrapy_args)
    if refused is not None:  # before anything is written
        print(refused, file=sys.stderr)
        return EX_USAGE
    register_env_keys()
    settings = store_settings(scrapy_args)
    refused = refused_unknown(settings)
    if refused is not None:  # before anything is written
        print(refused, file=sys.stderr)
        return EX_USAGE
    try:
        store_factory(settings)  # a store that cannot be loaded: before anything is written
    except StoreSettingError as exc:
        print(f"recrawl: {exc}", file=sys.stderr)
        return EX_USAGE
    directory = cache_dir(scrapy_args)
    logs = directory / "logs"
    try:
        private_mkdir(logs)  # 0700, like the cache: logs name pages and may quote them
    except OSError as exc:  # a path through a file, a read-only or missing mount: no log to write
        why = mkdir_problem(logs, exc)
        print(f"recrawl {args.url} FAILED: the log directory {logs} cannot be made ({why})", file=sys.stderr)
        return 1

    started = datetime.now(UTC)
    lock = FileLock(directory / ".recrawl.lock")  # held until this process exits
    try:
        lock.acquire(f"pid {os.getpid()}, started {started:%Y-%m-%dT%H:%M:%SZ}")
    except LockHeldError as exc:
        print(f"recrawl {args.url}: skipped, the previous recrawl ({exc.holder}) is still running", file=sys.stderr)
        return EX_TEMPFAIL

    log_path = logs / f"recrawl-{started:%Y%m%dT%H%M%SZ}-{os.getpid()}.log"
    previous, _, _ = latest_runs(settings)
    command = [sys.executable, "-m", "scrapy", "crawl", args.spider, "-a", f"start_urls={args.url}", *scrapy_args]
    with os.fdopen(open_private(log_path, os.O_WRONLY | os.O_TRUNC), "w", encoding="utf-8") as log:
        log.write(secrets.mask(f"recrawl: {' '.join(command)}\n"))
        log.flush()
        _update_latest(logs, log_path)  # from its start: `tail -f logs/latest.log` follows this run
        with outlasting_signals():
            returncode = run_masked(command, log)
        log.flush()
        ran = logged_run_id(log_path.read_text(encoding="utf-8", errors="replace").splitlines())
        report, streak, where = latest_runs(settings, ran)
        previous_id = previous.get("run_id") if previous else None
        reasons = failure_reasons(returncode, report, previous_id, streak, args.partial_runs)
        if reasons:
            log.write(f"recrawl: FAILED: {'; '.join(reasons)}\n")
        else:
            assert report is not None
            partial = partial_verdict(report, streak, args.partial_runs)
            log.write(f"recrawl: OK{partial}: run {report['run_id']}, report {where}\n")
    _drop_old_logs(logs, args.keep_logs, keep=log_path)
    if reasons:
        lines = log_path.read_text(encoding="utf-8", errors="replace").splitlines()
        print(secrets.mask(f"recrawl {args.url} FAILED: {'; '.join(reasons)}\nlog: {log_path}\n"), file=sys.stderr)
        print(secrets.mask("\n".join(mail_excerpt(lines))), file=sys.stderr)
        return 1
    return 0


@contextmanager
def outlasting_signals() -> Iterator[None]:
    """While the crawl runs, SIGINT and SIGTERM do not end this process: Ctrl-C (or a
    kill of the process group: cron, systemd, timeout) reaches the crawl too, which
    stops gracefully (status 130/143), and this process goes on reading its output to
    the end, then says what failed. Ended first, it used to leave a traceback, a log cut
    short, no ``latest.log`` and no failure line (a signal to it alone: the crawl running
    on without its lock). Forwarding the signal would give the crawl a second one, which
    Scrapy takes as "stop at once"."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, lambda *_: None) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def run_masked(command: list[str], log: Any, *, linger: float = LINGER_SECONDS) -> int:
    """Run the crawl, its output (standard output and error) written to ``log`` line
    by line with the registered keys masked: the crawl masks its own log lines, this
    also covers what it prints past logging (a traceback, a library's print).

    Reading stops ``linger`` seconds after the crawl exits even if a process it left
    behind (a browser driver) still holds the pipe: that never keeps the recrawl."""
    proc = subprocess.Popen(command, cwd=project_dir(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    pending = b""
    deadline: float | None = None

    def write(data: bytes) -> None:
        log.write(secrets.mask(data.decode("utf-8", errors="replace")))
        log.flush()  # the log stays live (tail -f logs/latest.log)

    with proc.stdout:
        while True:
            if deadline is None and proc.poll() is not None:
                deadline = time.monotonic() + linger
            timeout = 0.5 if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([fd], [], [], timeout)
            if not ready:
                if deadline is not None and time.monotonic() >= deadline:
                    break
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            pending += chunk
            # whole lines only, so no key is cut in two between writes (or a long line)
            cut = pending.rfind(b"\n") + 1 or (len(pending) if len(pending) > 1 << 20 else 0)
            if cut:
                write(pending[:cut])
                pending = pending[cut:]
        if pending:
            write(pending)
    return proc.wait()


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
