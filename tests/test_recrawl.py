"""The cron recipe (``python -m crawler.recrawl``, ``make recrawl``) as cron runs it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

from tests.crawl import ROOT, TEST_SETTINGS, crawl_env, wait_for_lines


def recrawl_command(url, cache, **settings):
    command = [sys.executable, "-m", "crawler.recrawl", url]
    for name, value in {**TEST_SETTINGS, "EXTRACTED_DOCS_DIR": str(cache), **settings}.items():
        command += ["-s", f"{name}={value}"]
    return command


def start(url, cache, **settings):
    """A recrawl in the background, in its own process group (as cron starts it)."""
    return subprocess.Popen(
        recrawl_command(url, cache, **settings),
        cwd=ROOT,
        env=crawl_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def run(url, cache, **settings):
    return subprocess.run(
        recrawl_command(url, cache, **settings), cwd=ROOT, env=crawl_env(), capture_output=True, text=True, timeout=120
    )


def test_success_is_silent_and_logged(site, tmp_path):
    cache = tmp_path / "cache"
    first = run(site.url + "/", cache)
    assert (first.returncode, first.stdout, first.stderr) == (0, "", "")  # cron sends no mail
    second = run(site.url + "/", cache)
    assert (second.returncode, second.stdout, second.stderr) == (0, "", "")
    logs = sorted((cache / "logs").glob("recrawl-*.log"))
    assert len(logs) == 2
    latest = (cache / "logs" / "latest.log").read_text()
    assert "recrawl: OK: run" in latest and "0 new, 0 changed, 6 unchanged" in latest
    report = json.loads((cache / "runs" / "latest.json").read_text())
    assert f"runs/{report['run_id']}.json" in latest


def test_two_at_once_never_overlap(site, tmp_path):
    cache = tmp_path / "cache"
    calls = tmp_path / "calls.log"
    first = start(site.url + "/", cache, TEST_EXTRACTOR_DELAY="0.4", TEST_EXTRACTOR_LOG=str(calls))
    wait_for_lines(calls, 1, first)
    second = run(site.url + "/", cache)
    assert second.returncode == 75
    assert "skipped, the previous recrawl (pid" in second.stderr and "still running" in second.stderr
    out, err = first.communicate(timeout=120)
    assert (first.returncode, out, err) == (0, "", "")
    assert len(list((cache / "logs").glob("recrawl-*.log"))) == 1  # the skipped run started no crawl
    assert len(calls.read_text().splitlines()) == 6


def test_failures_exit_non_zero_with_a_message(site, tmp_path):
    cache = tmp_path / "cache"
    down = run("http://127.0.0.1:9/", cache)  # nothing listens there
    assert down.returncode == 1
    assert "FAILED: no page could be crawled" in down.stderr and "log:" in down.stderr
    bad = run(site.url + "/", cache, EXTRACTOR="no.such.Extractor")
    assert bad.returncode == 1 and "scrapy exited with status 1" in bad.stderr
    assert "cannot be imported" in bad.stderr  # the end of the log says why


def verify(cache, *options):
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "cache", "verify", *options, "-s", f"EXTRACTED_DOCS_DIR={cache}"],
        cwd=ROOT, env=crawl_env(), capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_killed_half_way_leaves_the_cache_consistent(site, tmp_path):
    for n in range(10):
        site.page(f"/more/{n}.html", f"More {n}", f"More page {n} with text of its own.")
    site.pages["/"].links += [f"/more/{n}.html" for n in range(10)]
    cache = tmp_path / "cache"
    calls = tmp_path / "calls.log"
    proc = start(site.url + "/", cache, TEST_EXTRACTOR_DELAY="0.3", TEST_EXTRACTOR_LOG=str(calls))
    wait_for_lines(calls, 5, proc)
    os.killpg(proc.pid, signal.SIGKILL)  # the machine went down: recrawl and crawl killed
    proc.communicate(timeout=30)
    finished = {json.loads(p.read_text())["url"] for p in (cache / "extractions").glob("*.json")}
    assert finished
    # right after the kill the cache is readable; the index may lag the files it wrote
    # last, which verify reports and --repair takes into the index
    first_check = verify(cache)
    assert "Traceback" not in first_check.stderr
    repaired = verify(cache, "--repair")
    assert repaired.returncode == 0, repaired.stdout
    assert verify(cache).returncode == 0
    calls.unlink()
    after = run(site.url + "/", cache, TEST_EXTRACTOR_LOG=str(calls))
    assert after.returncode == 0, after.stderr
    redone = {line.split("\t")[0] for line in calls.read_text().splitlines()} if calls.exists() else set()
    assert not redone & finished  # nothing finished before the kill is paid for again
    assert len(redone) + len(finished) == 16
    assert verify(cache).returncode == 0


def test_keep_logs_must_keep_one(site):
    proc = subprocess.run([sys.executable, "-m", "crawler.recrawl", site.url + "/", "--keep-logs", "0"],
                          cwd=ROOT, env=crawl_env(), capture_output=True, text=True, timeout=60)  # fmt: skip
    assert proc.returncode == 2 and "--keep-logs must be at least 1" in proc.stderr


def test_make_recrawl_target(site, tmp_path):
    cache = tmp_path / "cache"
    args = " ".join(f"-s {k}={v}" for k, v in {**TEST_SETTINGS, "EXTRACTED_DOCS_DIR": str(cache)}.items())
    proc = subprocess.run(
        ["make", "-s", "recrawl", f"URL={site.url}/", f"ARGS={args}"],
        cwd=ROOT,
        env=crawl_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert (cache / "runs" / "latest.json").exists()


def modes(directory):
    """``{relative path: permission bits}`` of everything under ``directory`` and itself."""
    found = {".": directory.stat().st_mode & 0o777}
    for path in directory.rglob("*"):
        if not path.is_symlink():  # logs/latest.log: a link's own mode means nothing
            found[str(path.relative_to(directory))] = path.stat().st_mode & 0o777
    return found


def test_the_cache_is_private_to_its_user_at_umask_022(site, tmp_path):
    """Extractions may hold private data: nothing of the cache is readable by others."""
    cache = tmp_path / "cache"
    old = os.umask(0o022)
    try:
        assert run(site.url + "/", cache).returncode == 0
    finally:
        os.umask(old)
    found = modes(cache)
    assert {"index.sqlite", "content.sqlite", ".lock", ".recrawl.lock", "runs/latest.json", "logs"} <= set(found)
    assert any(name.startswith("extractions/") for name in found)
    assert any(name.startswith("boilerplate/") for name in found)
    assert any(name.startswith("logs/recrawl-") for name in found)
    wrong = {name: oct(mode) for name, mode in found.items() if mode != (0o700 if (cache / name).is_dir() else 0o600)}
    assert wrong == {}
