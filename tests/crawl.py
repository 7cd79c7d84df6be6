"""Run ``scrapy crawl`` as a user does: a subprocess in the project directory."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

#: settings every test crawl uses: fast and quiet, the recording extractor
TEST_SETTINGS = {
    "DOWNLOAD_DELAY": "0",
    "CONCURRENT_REQUESTS_PER_DOMAIN": "8",
    "LOG_LEVEL": "INFO",
    "EXTRACTOR": "tests.extractors.RecordingExtractor",
}


@dataclass
class CrawlResult:
    returncode: int
    stdout: str
    stderr: str
    cache: Path
    calls: list[str] = field(default_factory=list)

    @property
    def report(self) -> dict[str, Any]:
        return json.loads((self.cache / "runs" / "latest.json").read_text())

    @property
    def log(self) -> str:
        return self.stderr


def scrapy_command(args: list[str], cache: Path, settings: dict[str, str] | None = None) -> list[str]:
    merged = {**TEST_SETTINGS, "EXTRACTED_DOCS_DIR": str(cache), **(settings or {})}
    command = [sys.executable, "-m", "scrapy", *args]
    for name, value in merged.items():
        command += ["-s", f"{name}={value}"]
    return command


def crawl_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a crawl process: this one's, without the keys and connection
    strings a crawl reads (a developer's own would change what it does), plus ``extra``."""
    from crawler.support.secrets import CONNECTION_ENVS, KEY_ENVS

    env = {name: value for name, value in os.environ.items() if name not in (*KEY_ENVS, *CONNECTION_ENVS)}
    env.update(extra or {})
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("SCRAPY_SETTINGS_MODULE", None)
    return env


def run_crawl(
    start_url: str,
    cache: Path,
    *,
    spider: str = "docs",
    runspider: str | None = None,
    settings: dict[str, str] | None = None,
    args: dict[str, str] | None = None,
    timeout: float = 120,
    env: dict[str, str] | None = None,
) -> CrawlResult:
    """Crawl ``start_url`` into ``cache``; the extractor's calls of this run are in
    ``result.calls`` (URLs, in call order). ``env`` adds environment variables."""
    calls_log = cache.parent / f"{cache.name}-calls.log"
    calls_log.unlink(missing_ok=True)
    spider_args = ["-a", f"start_urls={start_url}"]
    for name, value in (args or {}).items():
        spider_args += ["-a", f"{name}={value}"]
    how = ["runspider", runspider] if runspider else ["crawl", spider]
    command = scrapy_command([*how, *spider_args], cache, {"TEST_EXTRACTOR_LOG": str(calls_log), **(settings or {})})
    proc = subprocess.run(command, cwd=ROOT, env=crawl_env(env), capture_output=True, text=True, timeout=timeout)
    calls = []
    if calls_log.exists():
        calls = [line.split("\t", 1)[0] for line in calls_log.read_text().splitlines() if line]
    return CrawlResult(proc.returncode, proc.stdout, proc.stderr, cache, calls)


def start_crawl(site, cache, calls_log, settings, *, log=None, args=None):
    """``scrapy crawl docs`` of ``site`` in the background, its extractor calls in
    ``calls_log``, with the spider arguments ``args``; its output in the file ``log``
    when given (read while it runs), else in pipes."""
    spider_args = [f"-a{name}={value}" for name, value in (args or {}).items()]
    command = scrapy_command(
        ["crawl", "docs", "-a", f"start_urls={site.url}/", *spider_args],
        cache,
        {"TEST_EXTRACTOR_LOG": str(calls_log), **settings},
    )
    if log is None:
        return subprocess.Popen(
            command, cwd=ROOT, env=crawl_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
    with open(log, "w") as handle:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(command, cwd=ROOT, env=crawl_env(), stdout=handle, stderr=subprocess.STDOUT)


def wait_for_text(path, text, proc, timeout=60):
    """Wait until the file ``path`` holds ``text``; fail if ``proc`` ends first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_text(errors="replace"):
            return
        if proc.poll() is not None:
            raise AssertionError(f"process ended before {text!r} appeared: {path.read_text()[-2000:]}")
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {text!r}")


def wait_for_lines(path, count, proc, timeout=60):
    """Wait until ``path`` has ``count`` lines (calls started); fail if ``proc`` ends first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and len(path.read_text().splitlines()) >= count:
            return
        if proc.poll() is not None:
            _, err = proc.communicate()
            raise AssertionError(f"crawl ended early: {err[-2000:]}")
        time.sleep(0.05)
    raise AssertionError("timed out")


def paths(site, urls):
    """The paths of ``urls`` on ``site``, sorted."""
    return sorted(url.replace(site.url, "") for url in urls)


def stat(result, name):
    """A stat's value from the stats dump at the end of the crawl log."""
    for line in result.stderr.splitlines():
        if f"'{name}':" in line:
            return int(line.split(":")[-1].strip(" ,}"))
    return 0


def cache_command(cache: Path, *args: str) -> str:
    """``scrapy cache ARGS`` on ``cache`` as a user runs it; its output (it must succeed)."""
    command = scrapy_command(["cache", *args], cache, {})
    done = subprocess.run(command, cwd=ROOT, env=crawl_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    return done.stdout


def extractor_input(cache: Path, url: str) -> str:
    """What the extractor reads for ``url``: ``scrapy cache show URL --input``."""
    return cache_command(cache, "show", url, "--input")


def assert_ok(result):
    """The crawl ended with status 0 and no traceback; the result."""
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    return result


def crawled_once(tmp_path_factory, settings=None):
    """A module's first crawl, made once: ``(site, cache, result)``, the standard site
    (left running: stop it after the module) crawled into ``cache`` with ``settings``;
    ``site.log`` stays the requests of that crawl. Each test takes a copy with
    :func:`copy_of_crawl`."""
    from tests.site import docs_site

    served = docs_site().start()
    try:
        cache = tmp_path_factory.mktemp("crawled-once") / "cache"
        result = assert_ok(run_crawl(served.url + "/", cache, settings=settings))
    except BaseException:
        served.stop()
        raise
    return served, cache, result


def copy_of_crawl(once, tmp_path):
    """What a test's own first crawl of a fresh standard site would have left: a fresh
    site model (``docs_site()``: the same pages, in its request log those of the first
    crawl) served on the crawled site's port, and a copy of the crawled cache in
    ``tmp_path / "cache"`` (with the extractor's calls log beside it, as run_crawl
    leaves it)."""
    from tests.site import docs_site

    served, template, _ = once
    cache = tmp_path / "cache"
    shutil.copytree(template, cache)
    calls_log = template.parent / f"{template.name}-calls.log"
    if calls_log.exists():
        shutil.copy(calls_log, cache.parent / f"{cache.name}-calls.log")
    site = docs_site().adopt(served)
    site.log = list(served.log)
    return site, cache
