"""The cron recipe (``python -m crawler.recrawl``, ``make recrawl``) as cron runs it."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from urllib.parse import quote

import pytest

from crawler.recrawl import is_secret_name
from tests.crawl import ROOT, TEST_SETTINGS, crawl_env, wait_for_lines
from tests.site import Raw

pytestmark = pytest.mark.e2e  # every test runs the cron wrapper, as cron does, in a process of its own


def recrawl_command(url, cache, **settings):
    command = [sys.executable, "-m", "crawler.recrawl", url]
    for name, value in {**TEST_SETTINGS, "EXTRACTED_DOCS_DIR": str(cache), **settings}.items():
        command += ["-s", f"{name}={value}"]
    return command


def start(url, cache, preexec_fn=None, **settings):
    """A recrawl in the background, in its own process group (as cron starts it);
    ``preexec_fn`` runs in the child before it starts."""
    return subprocess.Popen(
        recrawl_command(url, cache, **settings),
        cwd=ROOT,
        env=crawl_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=preexec_fn,
    )


def run(url, cache, env=None, **settings):
    command = recrawl_command(url, cache, **settings)
    return subprocess.run(command, cwd=ROOT, env=crawl_env(env), capture_output=True, text=True, timeout=120)


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
    assert f"recrawl: OK: run {report['run_id']}, report {cache / 'runs' / report['run_id']}.json\n" in latest


def test_two_at_once_never_overlap(site, tmp_path, reap):
    cache, calls, gate = tmp_path / "cache", tmp_path / "calls.log", tmp_path / "gate"
    # the first recrawl's calls wait for the gate: it runs until the test opens it
    first = reap(start(site.url + "/", cache, TEST_EXTRACTOR_GATE=str(gate), TEST_EXTRACTOR_LOG=str(calls)))
    wait_for_lines(calls, 1, first)
    second = run(site.url + "/", cache)
    assert second.returncode == 75
    assert "skipped, the previous recrawl (pid" in second.stderr and "still running" in second.stderr
    gate.touch()
    out, err = first.communicate(timeout=120)
    assert (first.returncode, out, err) == (0, "", "")
    assert len(list((cache / "logs").glob("recrawl-*.log"))) == 1  # the skipped run started no crawl
    assert len(calls.read_text().splitlines()) == 6


def test_failures_exit_non_zero_with_a_message(site, tmp_path):
    cache = tmp_path / "cache"
    down = run("http://127.0.0.1:9/", cache)  # nothing listens there
    assert down.returncode == 1
    assert "FAILED: scrapy exited with status 1; no page could be crawled" in down.stderr and "log:" in down.stderr
    assert "Connection was refused" in down.stderr  # the mail says why, not only the stats dump
    assert "Dumping Scrapy stats" not in down.stderr
    bad = run(site.url + "/", cache, EXTRACTOR="no.such.Extractor")
    assert bad.returncode == 1 and "scrapy exited with status 1" in bad.stderr
    assert "cannot be imported" in bad.stderr  # the end of the log says why


def verify(cache, *options):
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "cache", "verify", *options, "-s", f"EXTRACTED_DOCS_DIR={cache}"],
        cwd=ROOT, env=crawl_env(), capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_killed_half_way_leaves_the_cache_consistent(site, tmp_path, reap):
    for n in range(10):
        site.page(f"/more/{n}.html", f"More {n}", f"More page {n} with text of its own.")
    site.pages["/"].links += [f"/more/{n}.html" for n in range(10)]
    cache = tmp_path / "cache"
    calls = tmp_path / "calls.log"
    proc = reap(start(site.url + "/", cache, TEST_EXTRACTOR_DELAY="0.3", TEST_EXTRACTOR_LOG=str(calls)))
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


def test_ctrl_c_stops_the_crawl_and_is_reported_like_any_failure(site, tmp_path, reap):
    """Ctrl-C (SIGINT to the process group, as a terminal sends it) used to end the
    recrawl itself with a KeyboardInterrupt traceback while its crawl shut down: the log
    cut short, no ``latest.log``, no failure line. The recrawl now outlasts the signal,
    reads the crawl's output to its end and says what failed."""
    cache = tmp_path / "cache"
    held = site.holds["/api.html"] = threading.Event()
    # SIGINT as from a terminal: not ignored, as it is in a background child
    proc = reap(start(site.url + "/", cache, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)))
    deadline = time.monotonic() + 60
    while "/api.html" not in [path for path, _ in site.log]:  # the crawl is fetching
        assert time.monotonic() < deadline and proc.poll() is None, "the crawl did not start"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)
    while not any("Received SIGINT" in log.read_text() for log in (cache / "logs").glob("recrawl-*.log")):
        assert time.monotonic() < deadline and proc.poll() is None, "the crawl did not get the signal"
        time.sleep(0.05)
    held.set()
    out, err = proc.communicate(timeout=120)
    assert (proc.returncode, out) == (1, ""), err
    assert "Traceback" not in err and "FAILED: scrapy exited with status 130" in err
    latest = (cache / "logs" / "latest.log").read_text()
    assert re.search(r"\(shutdown in \w+, partial", latest) and latest.endswith(
        "recrawl: FAILED: scrapy exited with status 130; the crawl ended with finish reason 'shutdown'\n"
    )


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


def readme_cron_line():
    """The crontab line the README documents, without its schedule."""
    text = (ROOT / "README.md").read_text()
    block = text.split("```cron\n", 1)[1].split("```", 1)[0]
    line = next(line for line in block.splitlines() if line and not line.startswith("#"))
    return line.split(None, 5)[5]


def test_the_documented_cron_line_exits_0_75_and_1(site, tmp_path, reap):
    """The README's crontab line as cron runs it (sh -c), its project directory and URL
    replaced: cron mails on 75 (still running) and 1 (failed), never on 0."""
    cache, calls, gate = tmp_path / "cache", tmp_path / "calls.log", tmp_path / "gate"
    settings = {**TEST_SETTINGS, "EXTRACTED_DOCS_DIR": str(cache)}

    def cron_command(url, **extra):
        line = readme_cron_line().replace("/srv/crawler", str(ROOT)).replace("https://docs.example.com/", url)
        line = line.replace(".venv/bin/python", sys.executable)
        return line + "".join(f" -s {name}={value}" for name, value in {**settings, **extra}.items())

    def cron(url, **extra):
        return subprocess.run(
            ["sh", "-c", cron_command(url, **extra)], env=crawl_env(), capture_output=True, text=True, timeout=120
        )

    ok = cron(site.url + "/")
    assert (ok.returncode, ok.stdout, ok.stderr) == (0, "", "")
    held = cron_command(site.url + "/", TEST_EXTRACTOR_GATE=gate, TEST_EXTRACTOR_LOG=calls) + " -a redo=extraction"
    running = reap(
        subprocess.Popen(
            ["sh", "-c", held], env=crawl_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            start_new_session=True,
        )
    )  # fmt: skip
    wait_for_lines(calls, 1, running)
    skipped = cron(site.url + "/")
    assert skipped.returncode == 75 and "still running" in skipped.stderr
    gate.touch()
    assert running.wait(timeout=120) == 0
    failed = cron("http://127.0.0.1:9/")  # nothing listens there
    assert failed.returncode == 1 and "FAILED" in failed.stderr


KEY = "AIzaSyC9x-Y7w_Q2p/Zr+Lm4=Kq8vTn3eRtU"


@pytest.mark.parametrize(
    "option",
    [
        ["-s", f"LLM_API_KEY={KEY}"],
        ["--set", f"OPENAI_API_KEY={KEY}"],
        [f"--set=QDRANT_API_KEY={KEY}"],
        [f"-sAWS_SECRET_ACCESS_KEY={KEY}"],
        ["-s", f"MY_SERVICE_TOKEN={KEY}"],
        ["-s", f"FTP_PASSWORD={KEY}"],
        ["-a", f"http_pass={KEY}"],
    ],
)
def test_a_secret_on_the_command_line_is_refused_before_anything_is_written(site, tmp_path, option):
    cache = tmp_path / "cache"
    command = [*recrawl_command(site.url + "/", cache), *option]
    proc = subprocess.run(command, cwd=ROOT, env=crawl_env(), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    [line] = proc.stderr.splitlines()  # one line, for the cron mail
    name = option[-1].removeprefix("--set=").removeprefix("-s").split("=", 1)[0]
    assert f"{name}: refused" in line and "environment" in line
    assert KEY not in proc.stderr + proc.stdout
    assert not cache.exists()  # no log, no lock, no crawl


@pytest.mark.parametrize(
    ("option", "named"),
    [
        (["-s", "REVISIT_ENABLE=True"], "REVISIT_ENABLE (did you mean REVISIT_ENABLED?)"),
        (["-s", "DOWNLOAD_DELAYY=1"], "DOWNLOAD_DELAYY (did you mean DOWNLOAD_DELAY?)"),  # Scrapy's own names too
        (
            ["--set=LLM_MODLE=x", "-s", "EXTRACTOR_QUUXQUUX=1"],
            "EXTRACTOR_QUUXQUUX, LLM_MODLE (did you mean LLM_MODEL?)",
        ),
    ],
)
def test_a_misspelt_setting_is_refused_before_anything_is_written(site, tmp_path, option, named):
    """Under cron the crawl's "Unknown setting ..., ignored" warning reached only the
    log: a crontab typo went unnoticed, the run exiting 0 without the user's setting."""
    cache = tmp_path / "cache"
    command = [*recrawl_command(site.url + "/", cache), *option]
    proc = subprocess.run(command, cwd=ROOT, env=crawl_env(), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    [line] = proc.stderr.splitlines()  # one line, for the cron mail
    assert line.startswith(f"recrawl: unknown setting{'s' if ',' in named else ''} {named}: refused")
    assert proc.stdout == ""
    assert not cache.exists()  # no log, no lock, no crawl


def test_a_misspelt_spider_argument_fails_the_run_as_a_mistake(site, tmp_path):
    """A spider argument is the crawl's to read: the run goes on without it, and the
    wrapper fails it like any mistake, naming it (the run report lists it)."""
    cache = tmp_path / "cache"
    command = [*recrawl_command(site.url + "/", cache), "-a", "maxpages=2"]
    proc = subprocess.run(command, cwd=ROOT, env=crawl_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    first = proc.stderr.splitlines()[0]
    assert first.endswith(
        "FAILED: 1 mistake in the command: Unknown spider argument maxpages, ignored (did you mean max_pages?)"
    )
    report = json.loads((cache / "runs" / "latest.json").read_text())
    assert [m["name"] for m in report["mistakes"]] == ["maxpages"]


def test_latest_log_follows_the_running_recrawl_from_its_start(site, tmp_path, reap):
    """``tail -f logs/latest.log`` during a cron run used to open the previous run's log:
    the link was moved only when a run ended."""
    cache = tmp_path / "cache"
    assert run(site.url + "/", cache).returncode == 0
    previous = (cache / "logs" / "latest.log").resolve()
    held = site.holds["/api.html"] = threading.Event()
    site.reset_log()
    proc = reap(start(site.url + "/", cache))
    deadline = time.monotonic() + 60
    while "/api.html" not in [path for path, _ in site.log]:  # the crawl is fetching
        assert time.monotonic() < deadline and proc.poll() is None, "the crawl did not start"
        time.sleep(0.05)
    running = (cache / "logs" / "latest.log").resolve()
    assert running != previous and running.name.startswith("recrawl-")
    assert "recrawl: OK" not in running.read_text()  # it is the run going on
    held.set()
    out, err = proc.communicate(timeout=120)
    assert (proc.returncode, out, err) == (0, "", "")
    assert (cache / "logs" / "latest.log").resolve() == running and "recrawl: OK" in running.read_text()


def test_a_removed_setting_is_refused_with_what_replaces_it(site, tmp_path):
    cache = tmp_path / "cache"
    command = [*recrawl_command(site.url + "/", cache), "-s", "REVISIT_VERIFY_ALL=True"]
    proc = subprocess.run(command, cwd=ROOT, env=crawl_env(), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    [line] = proc.stderr.splitlines()
    assert line == (
        "recrawl: Setting REVISIT_VERIFY_ALL was removed: a one-run choice: scrapy crawl ... -a redo=download"
    )
    assert not cache.exists()


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("LLM_API_KEY", True),
        ("aws_secret_access_key", True),
        ("HTTPAUTH_PASS", True),
        ("ACCESS_TOKEN", True),
        ("APIKEY", True),
        ("LLM_TOKENS_PER_MIN", False),
        ("LLM_MAX_TOKENS", False),
        ("FTP_PASSIVE_MODE", False),
        ("start_urls", False),
    ],
)
def test_secret_names(name, secret):
    assert is_secret_name(name) is secret


def test_env_keys_are_masked_in_the_log_and_the_failure_mail(site, tmp_path):
    cache = tmp_path / "cache"
    failed = run(
        site.url + "/",
        cache,
        env={"LLM_API_KEY": KEY},
        EXTRACTOR="tests.extractors.KeyPrintingExtractor",
    )
    assert failed.returncode == 1
    assert "debug: key *** / ***" in failed.stderr  # the tail of the log, in the mail
    assert "cannot start (key ***)" in failed.stderr
    for form in (KEY, quote(KEY, safe="")):
        assert form not in failed.stderr + failed.stdout
        for path in cache.rglob("*"):
            if path.is_file():
                assert form.encode() not in path.read_bytes(), path
    assert "debug: key *** / ***" in (cache / "logs" / "latest.log").read_text()


def test_a_process_left_holding_the_output_does_not_keep_the_recrawl(tmp_path):
    """The crawl exits, a process it started (a browser driver) still holds its output:
    the recrawl stops reading soon after, and masks to the last byte."""
    import time

    from crawler.recrawl import run_masked
    from crawler.support import secrets

    secrets.register(KEY, "TEST_KEY")
    pid_file = tmp_path / "left.pid"
    script = (
        "import subprocess, sys\n"
        "left = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(left.pid))\n"
        f"sys.stdout.write('no newline at the end: {KEY}')\n"
    )
    log_path = tmp_path / "recrawl.log"
    started = time.monotonic()
    try:
        with log_path.open("w", encoding="utf-8") as log:
            returncode = run_masked([sys.executable, "-c", script], log, linger=0.2)
        elapsed = time.monotonic() - started
    finally:  # the left-over process never outlives the test
        if pid_file.exists():
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
    text = log_path.read_text()
    assert returncode == 0
    assert elapsed < 30  # not the 60 s the left-over process holds the pipe
    assert text.endswith("no newline at the end: ***") and KEY not in text


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
    assert {"cache.sqlite", ".lock", ".recrawl.lock", "logs"} <= set(found)
    assert any(name.startswith("runs/") for name in found)  # (runs/latest.json: a link, as logs/latest.log)
    assert any(name.startswith("extractions/") for name in found)
    assert any(name.startswith("boilerplate/") for name in found)
    assert any(name.startswith("logs/recrawl-") for name in found)
    wrong = {name: oct(mode) for name, mode in found.items() if mode != (0o700 if (cache / name).is_dir() else 0o600)}
    assert wrong == {}


def test_partial_runs_in_a_row_are_reported(site, tmp_path):
    """A page that fails every night keeps every run partial, so removed pages go
    unnoticed: the third such run in a row fails (cron mails); a limit the user set
    (max_pages) does not count."""
    cache = tmp_path / "cache"
    site.raw["/broken"] = Raw(b"<h1>down</h1>", status=500)
    site.pages["/"].links.append("/broken")
    results = [run(site.url + "/", cache, RETRY_TIMES="0") for _ in range(3)]
    assert [r.returncode for r in results] == [0, 0, 1]
    assert "the last 3 runs were partial (failed pages; retry/max_reached: 1)" in results[2].stderr
    site.raw.pop("/broken")
    site.pages["/"].links.remove("/broken")
    assert run(site.url + "/", cache).returncode == 0  # a complete run ends the streak


def test_the_partial_streak_is_read_through_the_store_however_long(tmp_path):
    from crawler.cache.sqlite import SqliteDocStore
    from crawler.recrawl import partial_streak

    store = SqliteDocStore(tmp_path / "cache")
    assert partial_streak(store) == 0
    store.write_run_report("20261101T000000000Z-a", {"complete": True})
    for day in range(2, 17):  # 15 partial runs after a complete one: more than one read's worth
        report = {"complete": False, "incomplete_reasons": ["failed pages"]}
        store.write_run_report(f"202611{day:02d}T000000000Z-a", report)
    assert partial_streak(store) == 15
    store.write_run_report("20261117T000000000Z-a", {"complete": False, "incomplete_reasons": ["max_pages"]})
    assert partial_streak(store) == 0  # a limit the user set ends it
    store.close()


def test_a_run_whose_extraction_stopped_ends_a_partial_streak(tmp_path):
    """Partial because its extraction stopped, a run still marked its removals (and
    failed on its own): it neither makes nor extends a streak of partial crawls."""
    from crawler.cache.sqlite import SqliteDocStore
    from crawler.recrawl import partial_streak

    store = SqliteDocStore(tmp_path / "cache")
    store.write_run_report("20261101T000000000Z-a", {"complete": False, "incomplete_reasons": ["failed pages"]})
    stopped = {"complete": False, "incomplete_reasons": ["extraction stopped: 3 pages left for the next run"]}
    store.write_run_report("20261102T000000000Z-a", stopped)
    assert partial_streak(store) == 0
    store.write_run_report("20261103T000000000Z-a", {"complete": False, "incomplete_reasons": ["failed pages"]})
    assert partial_streak(store) == 1
    store.close()


def test_a_process_run_between_partial_crawls_does_not_break_their_streak(tmp_path):
    from crawler.cache.sqlite import SqliteDocStore
    from crawler.recrawl import partial_streak

    store = SqliteDocStore(tmp_path / "cache")
    partial = {"complete": False, "incomplete_reasons": ["retry/max_reached: 1"]}
    for run_id, report in (
        ("20260101T000000000Z-a", partial),
        ("20260102T000000000Z-b", {"kind": "process", "complete": True}),
        ("20260103T000000000Z-c", partial),
    ):
        store.write_run_report(run_id, {"run_id": run_id, **report})
    assert partial_streak(store) == 2
    store.close()


def test_a_malformed_dsn_is_masked_in_the_output_and_the_log(site, tmp_path):
    cache = tmp_path / "cache"
    dsn = "postgresql://user:PASSWORD1@[::1:15432/docs"  # unparsable: libpq quotes it whole
    failed = run(
        site.url + "/",
        cache,
        env={"EXTRACTED_DOCS_DSN": dsn},
        EXTRACTED_DOCS_STORE="crawler.cache.postgres.PostgresDocStore",
    )
    assert failed.returncode == 1
    assert "Cannot connect to the cache database" in failed.stderr  # the mail says why...
    assert "PASSWORD1" not in failed.stderr + failed.stdout  # ...never with the password
    logs = [path for path in cache.rglob("*.log") if path.is_file()]
    assert logs
    for path in logs:
        assert "PASSWORD1" not in path.read_text(), path


def test_a_cache_directory_that_cannot_be_made_is_one_line_not_a_traceback(site, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    proc = run(site.url + "/", blocker / "cache")
    assert proc.returncode == 1
    assert proc.stderr == (
        f"recrawl {site.url}/ FAILED: the log directory {blocker}/cache/logs cannot be made "
        f"({blocker} is not a directory)\n"
    )
