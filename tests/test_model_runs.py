"""A model-based test of recrawls: Hypothesis drives random sequences of site changes
and runs through the real crawl (``scrapy crawl docs`` against a loopback site), and a
small reference model says what the cache must hold after each run.

The site: a home page linking every live page (some as ``/c/index.html``, another
spelling of ``/c/``), a sitemap listing them with a lastmod that is truthful, absent or
a build date that moves every run, and ETags that are truthful, absent or changing.
The changes: edits, additions, removals (404 or 410, the link kept or not), moves (a
301 from the old URL). The runs: complete, with the extractor failing on one page,
partial (one page answers 500), killed (SIGKILL) while a page is downloaded or while
the extractor reads one; the revisit schedule on or off.

After every run that finishes, the checks:

- no live page is marked removed, and a page gone is marked removed after a
  complete run;
- every page whose text the cache has not recorded is extracted, exactly once, and no
  page whose text it has is extracted again;
- every page a run paid for is in that run's change list (new or changed), and so is
  every page a killed run paid for, in the next run's;
- no page is requested twice in a run once the cache knows its spellings;
- one record per page, with the status the model gives it.

``MODEL_EXAMPLES`` sets how many sequences run (10 in ``make test``, about a minute;
``make model`` runs 200 and shrinks a failure, ``MODEL_SHRINK``). Each failure found
is fixed and its sequence kept at the end of this file.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import tempfile
import threading
import time
from pathlib import Path

from hypothesis import HealthCheck, Phase, currently_in_test_context, settings
from hypothesis import event as hypothesis_event
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule
from scrapy.settings import Settings

from crawler.cache import open_store
from tests.crawl import CrawlResult, run_crawl, start_crawl
from tests.site import Raw, Site

HOME = "/"
POOL = ("/a.html", "/b.html", "/c/", "/d.html", "/e.html")
SPELLING = "/c/index.html"
#: the revisit schedule as the tests learn it: every page due unless its host's lastmod
#: is trusted, trusted after two agreeing observations, no sample
REVISIT = {
    "REVISIT_ENABLED": "True",
    "REVISIT_MIN_INTERVAL": "0",
    "REVISIT_TRUST_EVIDENCE": "2",
    "REVISIT_SAMPLE": "0",
}
#: one request at a time: a sequence replays as it ran (Hypothesis shrinks it), the order
#: of the pages its own (the home page's links, in the order the model gives them)
RUN = {"RETRY_TIMES": "0", "CONCURRENT_REQUESTS": "1"}


def page_of(path: str) -> str:
    """The page a path is a spelling of."""
    return "/c/" if path == SPELLING else path


class Recrawls(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.site = Site(validators="etag")
        self.site.start()
        self.tmp = Path(tempfile.mkdtemp(prefix="model-"))
        self.cache = self.tmp / "cache"
        self.words = itertools.count(1)
        self.runs = 0
        #: the model: the live pages besides the home page
        self.live: set[str] = set()
        #: pages gone from the site that the cache may hold (path -> how: 404, 410, moved)
        self.gone: dict[str, str] = {}
        self.spelt = False  # the home page links /c/ as /c/index.html too
        self.spelling_first = True
        self.broken: set[str] = set()  # gone pages the home page still links
        self.lastmod: str | None = None
        #: what the cache holds: path -> the text version it recorded (None: not known,
        #: a killed run may or may not have recorded it)
        self.recorded: dict[str, str | None] = {}
        #: every text version extracted by a run (a killed one's included)
        self.extracted: set[str] = set()
        #: paid by a killed run: to be in the next report's change list
        self.paid_unreported: dict[str, str] = {}
        self.fold_known = False
        self.site.page(HOME, "Home", "Welcome to the model documentation.")
        for path in POOL[:3]:
            self._add(path)

    def teardown(self) -> None:
        self.site.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)

    # -- the site ------------------------------------------------------------

    def _text(self) -> str:
        return f"Revision {next(self.words)} of this page explains one more part of the library in full."

    def _relink(self) -> None:
        links = sorted(self.live | self.broken)
        if self.spelt and "/c/" in self.live:
            links = [SPELLING if link == "/c/" else link for link in links]
            links = ["/c/", *links] if not self.spelling_first else [*links, "/c/"]
        home = self.site.pages[HOME]
        self.site.page(HOME, home.title, *home.paragraphs, links=links)
        self.site.sitemap = [HOME, *sorted(self.live)]

    def _add(self, path: str) -> None:
        self.site.raw.pop(path, None)
        self.site.redirects.pop(path, None)
        self.gone.pop(path, None)
        self.broken.discard(path)
        self.site.page(path, path.strip("/").split(".")[0].upper() or "C", self._text())
        self.live.add(path)
        self._relink()

    def pages(self) -> set[str]:
        """Every live page, the home page included."""
        return {HOME} | self.live

    def version(self, path: str) -> str:
        """The text of the page at ``path`` (its title, paragraphs and links: what the
        extractor is given), as a key: a moved page keeps it."""
        return self.site.pages[path].version()

    @rule(path=st.sampled_from(POOL))
    def edit(self, path: str) -> None:
        if path in self.live:
            self.site.edit(path, self._text())

    @rule(path=st.sampled_from(POOL))
    def add(self, path: str) -> None:
        if path not in self.live:
            self._add(path)

    @rule(path=st.sampled_from(POOL), status=st.sampled_from([404, 410]), keep_link=st.booleans())
    def remove(self, path: str, status: int, keep_link: bool) -> None:
        if path not in self.live:
            return
        self.site.remove(path)
        if status == 410:
            self.site.raw[path] = Raw(b"<html><body><h1>Gone</h1></body></html>", status=410)
        self.live.discard(path)
        self.gone[path] = str(status)
        if keep_link:
            self.broken.add(path)
        self._relink()

    @rule(old=st.sampled_from(POOL), new=st.sampled_from(POOL))
    def move(self, old: str, new: str) -> None:
        """The page at ``old`` moves to ``new``: a 301 from ``old``, links updated."""
        if old not in self.live or new in self.live or not (old.endswith(".html") and new.endswith(".html")):
            return
        self.site.raw.pop(new, None)
        self.site.redirects.pop(new, None)
        self.site.pages[new] = self.site.pages.pop(old)
        self.site.redirects[old] = new
        self.live.discard(old)
        self.live.add(new)
        self.gone.pop(new, None)
        self.broken.discard(new)
        self.gone[old] = "moved"
        self._relink()

    @rule(first=st.booleans())
    def toggle_spelling(self, first: bool) -> None:
        """The home page links ``/c/`` as ``/c/index.html`` too (``first``: before
        ``/c/``), or no more."""
        self.spelt = not self.spelt
        self.spelling_first = first
        self._relink()

    @rule(mode=st.sampled_from([None, "page", "build"]))
    def sitemap_lastmod(self, mode: str | None) -> None:
        self.lastmod = mode

    @rule(mode=st.sampled_from(["etag", "etag-changing", "last-modified"]))
    def validators(self, mode: str) -> None:
        self.site.validators = mode

    # -- the runs ------------------------------------------------------------

    def _settings(self, revisit: bool) -> dict[str, str]:
        self.runs += 1
        if self.lastmod == "build":  # a build date: every page's lastmod moves every run
            self.site.lastmod = f"2026-01-01T00:{self.runs:02d}:00Z"
        else:
            self.site.lastmod = self.lastmod
        return {**RUN, **(REVISIT if revisit else {"REVISIT_ENABLED": "False"})}

    @rule(revisit=st.booleans(), unextracted=st.sampled_from((None, HOME, *POOL)))
    def complete_run(self, revisit: bool, unextracted: str | None = None) -> None:
        """A run that reaches every page; the extractor fails on ``unextracted``."""
        settings = self._settings(revisit)
        if unextracted is not None:
            settings["TEST_EXTRACTOR_FAIL"] = re.escape(self.site.url + unextracted) + "$"
        self.site.reset_log()
        result = run_crawl(self.site.url + "/", self.cache, settings=settings)
        assert result.returncode == 0, result.stderr[-3000:]
        self._check(result, failed=None, unextracted=unextracted)

    @rule(revisit=st.booleans(), failing=st.sampled_from((HOME, *POOL)))
    def partial_run(self, revisit: bool, failing: str) -> None:
        """A run in which the live page ``failing`` answers 500."""
        if failing not in self.pages():
            return
        saved = self.site.raw.get(failing)
        self.site.raw[failing] = Raw(b"<html><body><h1>Server error</h1></body></html>", status=500)
        self.site.reset_log()
        try:
            result = run_crawl(self.site.url + "/", self.cache, settings=self._settings(revisit))
        finally:
            if saved is None:
                self.site.raw.pop(failing)
            else:
                self.site.raw[failing] = saved
        assert result.returncode == 0, result.stderr[-3000:]
        self._check(result, failed=failing)

    @rule(revisit=st.booleans(), held=st.sampled_from((HOME, *POOL)))
    def killed_run(self, revisit: bool, held: str) -> None:
        """A run killed (SIGKILL) while the live page ``held`` is being answered."""
        if held not in self.pages():
            return
        hold = self.site.holds[held] = threading.Event()
        calls_log = self.tmp / "killed-calls.log"
        calls_log.unlink(missing_ok=True)
        self.site.reset_log()
        proc = start_crawl(self.site, self.cache, calls_log, {**self._settings(revisit), **TEST_OUTPUT})
        try:
            asked = wait_until(lambda: any(page_of(path) == held for path, _ in list(self.site.log)), proc)
        finally:
            proc.kill()
            proc.communicate()
            hold.set()
            self.site.holds.pop(held)
        assert asked or proc.returncode == 0  # (not asked: the run ended, the page skipped)
        event("run: killed while fetching")
        for path in calls_of(calls_log, self.site.url):
            self.extracted.add(self.version(path))
            self.paid_unreported[path] = self.version(path)
        for path in set(self.recorded) | self.pages():
            self.recorded[path] = None  # recorded or not, as far as the kill let it

    @rule(revisit=st.booleans(), held=st.sampled_from((HOME, *POOL)))
    def killed_extracting(self, revisit: bool, held: str) -> None:
        """A run killed (SIGKILL) while the extractor reads the live page ``held``: the
        crawl is over, the other pages' extractions may be written, and their records too
        (the extraction stage writes a record as its call ends): the next run lists them."""
        if held not in self.pages():
            return
        calls_log = self.tmp / "killed-calls.log"
        calls_log.unlink(missing_ok=True)
        url = self.site.url + held
        settings = {
            **self._settings(revisit),
            **TEST_OUTPUT,
            "TEST_EXTRACTOR_GATE": str(self.tmp / "never"),  # (never made: the call waits)
            "TEST_EXTRACTOR_HOLD": re.escape(url) + "$",
        }
        self.site.reset_log()
        proc = start_crawl(self.site, self.cache, calls_log, settings)
        try:
            extracting = wait_until(lambda: f"{url}\t" in read(calls_log), proc)
        finally:
            if proc.poll() is None:
                proc.kill()
            out, err = proc.communicate()
        calls = [self.site.url + path for path in calls_of(calls_log, self.site.url)]
        if not extracting:  # its text was extracted before: the run ended as any other
            assert proc.returncode == 0, err[-3000:]
            self._check(CrawlResult(proc.returncode, out, err, self.cache, calls), failed=None)
            return
        event("run: killed while extracting")
        for path in calls_of(calls_log, self.site.url):
            self.extracted.add(self.version(path))
            self.paid_unreported[path] = self.version(path)
        for path in set(self.recorded) | self.pages():
            self.recorded[path] = None  # recorded or not, as far as the kill let it

    # -- the checks ----------------------------------------------------------

    def _expected_status(self, path: str, extracted_now: bool) -> set[str]:
        """The statuses the model allows the live page ``path`` after a run that reached it."""
        before = self.recorded.get(path, "")
        if before is None:
            return {"new", "changed", "unchanged"}  # a killed run may have recorded it
        if before == "":
            return {"new"}
        if before != self.version(path):
            return {"changed"}
        # the same text: unchanged, unless this run paid its extraction (a failed one
        # retried): then listed, new when it never had one
        return {"new", "changed"} if extracted_now else {"unchanged"}

    def _check(self, result, failed: str | None, unextracted: str | None = None) -> None:
        report = result.report
        complete = failed is None
        url = self.site.url
        self._events(report, failed, unextracted)
        calls = [page_of(path) for path in calls_of_urls(result.calls, url)]
        reached = self.pages() - {failed}
        # extracted exactly once: a text never extracted, and never one the cache has
        assert len(calls) == len(set(calls)), f"a page extracted twice in one run: {calls}"
        for path in calls:
            assert path in self.pages(), f"{path} extracted, not a live page"
            unchanged = self.recorded.get(path, "") == self.version(path) and self.version(path) in self.extracted
            assert not unchanged, f"{path} extracted again, its text unchanged and extracted"
        must = {
            path
            for path in reached
            if self.recorded.get(path, "") is not None and self.version(path) not in self.extracted
        }
        assert must <= set(calls), f"pages not extracted: {sorted(must - set(calls))}"
        # every paid page in the change list, with the status the model gives it
        changes: dict[str, str] = {}
        assert report["changes_total"] == len(report["changes_sample"])  # (a small site: the sample is all)
        for change in report["changes_sample"]:
            path = change["url"].replace(url, "")
            if path == SPELLING and change["status"] == "removed":
                continue  # a record the spelling had of its own, before a run found it is /c/
            assert page_of(path) not in changes, f"{path} listed twice: {changes[page_of(path)]}, {change['status']}"
            changes[page_of(path)] = change["status"]
        records = self._records()
        for path in reached:
            if path not in records:
                continue  # (checked below)
            allowed = self._expected_status(path, path in calls and path != unextracted)
            assert records[path] in allowed, f"{path} is {records[path]}, the model says {sorted(allowed)}"
            if records[path] in ("new", "changed"):
                assert changes.get(path) == records[path], f"{path} {records[path]}, listed {changes.get(path)}"
        for path in calls:
            if path != unextracted:
                assert changes.get(path) in ("new", "changed"), f"{path} paid for, listed as {changes.get(path)}"
        for path, version in self.paid_unreported.items():
            if path in reached and self.version(path) == version:
                assert changes.get(path) in ("new", "changed"), f"{path} paid by a killed run, never listed"
        # no page requested twice once its spellings are known
        asked: dict[str, int] = {}
        for path, status in self.site.log:
            if path in ("/robots.txt", "/sitemap.xml") or status in (301, 302):
                continue
            asked[page_of(path)] = asked.get(page_of(path), 0) + 1
        twice = {path: n for path, n in asked.items() if n > 1 and not (path == "/c/" and not self.fold_known)}
        assert not twice, f"requested more than once: {twice}"
        # one record per page (see _records), none of a live page removed, gone pages removed
        for path in self.pages():
            if path == failed and self.recorded.get(path) is None:
                continue  # (failed, and not known to be recorded before)
            assert path in records, f"live page {path} not recorded"
            assert records[path] != "removed", f"live page {path} marked removed"
        assert report["complete"] is complete, (report["complete"], report.get("incomplete_reasons"))
        removed = [c["url"].replace(url, "") for c in report["changes_sample"] if c["status"] == "removed"]
        assert report["pages_removed"] == len(removed), (report["pages_removed"], removed)
        if complete:  # a page gone that the cache recorded is marked removed, not forgotten
            for path in self.gone:
                if self.recorded.get(path, "") != "":
                    assert records.get(path, "removed") == "removed", f"{path} ({self.gone[path]}) is {records[path]}"
                    assert path in records or self.recorded.get(path) is None, f"{path}'s record lost"
        else:  # nothing removed for not being reached: a 404/410 asked for (a link kept), a
            # spelling found to be its directory's page
            assert set(removed) <= {SPELLING} | self.broken, removed
        # the model moves on
        for path in calls:
            if path != unextracted:
                self.extracted.add(self.version(path))
        for path in reached:
            self.recorded[path] = self.version(path)
            self.paid_unreported.pop(path, None)
        if complete:
            for path in self.gone:
                self.recorded.pop(path, None)
        if complete and self.spelt and "/c/" in self.live:
            self.fold_known = True
        if "/c/" not in self.live:
            self.fold_known = False

    def _events(self, report: dict, failed: str | None, unextracted: str | None) -> None:
        """What the run exercised (``make model`` prints the share of sequences with each)."""
        revisit = report.get("revisit") or {}
        event("run: " + ("partial" if failed else "extraction failed" if unextracted else "complete"))
        if revisit.get("requests_saved"):
            event("revisit skipped known pages")
        if revisit.get("trusted_hosts"):
            event("lastmod trusted")
        if self.spelt and "/c/" in self.live:
            event("a page linked under two spellings")
        if report.get("pages_removed"):
            event("pages removed")
        if report.get("responses_not_modified"):
            event("304s")
        if self.runs >= 4:
            event("four runs or more")

    def _records(self) -> dict[str, str]:
        """The cache's pages: path -> status; two records of one page fail."""
        store = open_store(Settings({"EXTRACTED_DOCS_DIR": str(self.cache)}), readonly=True)
        try:
            found: dict[str, str] = {}
            for _, record in store.iter_pages():
                path = page_of(str(record["url"]).replace(self.site.url, ""))
                status = str(record.get("status"))
                if path in found and "removed" not in (found[path], status):
                    raise AssertionError(f"two records of {path}: {found[path]}, {status}")
                if path not in found or found[path] == "removed":
                    found[path] = status
            return found
        finally:
            store.close()


#: the killed crawl's output goes to a file, not a pipe nobody reads
TEST_OUTPUT = {"LOG_LEVEL": "WARNING"}


def event(name: str) -> None:
    """A Hypothesis event (counted in ``make model``'s statistics); none in a kept example."""
    if currently_in_test_context():
        hypothesis_event(name)


def wait_until(condition, proc, timeout: float = 60) -> bool:
    """Wait until ``condition()`` holds (True) or ``proc`` ends first (False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.02)
    raise AssertionError("timed out waiting for the held page to be asked for")


def read(path: Path) -> str:
    return path.read_text() if path.exists() else ""


def calls_of_urls(urls: list[str], site_url: str) -> list[str]:
    return [u.replace(site_url, "") for u in urls]


def calls_of(log: Path, site_url: str) -> list[str]:
    if not log.exists():
        return []
    lines = [line.split("\t", 1)[0] for line in log.read_text().splitlines() if line]
    return [page_of(path) for path in calls_of_urls(lines, site_url)]


Recrawls.TestCase.settings = settings(
    max_examples=int(os.environ.get("MODEL_EXAMPLES", "10")),
    stateful_step_count=int(os.environ.get("MODEL_STEPS", "12")),
    deadline=None,
    # (shrinking reruns crawls for minutes: the longer run shrinks, make test reports as found)
    phases=[Phase.explicit, Phase.reuse, Phase.generate, *([Phase.shrink] if os.environ.get("MODEL_SHRINK") else [])],
    suppress_health_check=list(HealthCheck),
    database=None,
)
test_recrawls_against_the_model = Recrawls.TestCase


# -- kept examples: sequences the model-based test found, each a bug fixed -------------


def replay(*steps: tuple[str, dict[str, object]]) -> None:
    """Runs ``steps`` (rule name, arguments) through the state machine, as Hypothesis
    printed them, with every check."""
    state = Recrawls()
    try:
        for name, arguments in steps:
            getattr(state, name)(**arguments)
    finally:
        state.teardown()


def test_kept_a_spelling_folded_into_a_page_keeps_that_pages_url():
    """The spelling came first and was folded into /c/'s record, which took its URL:
    the next run requested /c/ and /c/index.html."""
    replay(
        ("sitemap_lastmod", {"mode": None}),
        ("complete_run", {"revisit": True, "unextracted": None}),
        ("toggle_spelling", {"first": True}),
        ("complete_run", {"revisit": True, "unextracted": None}),
        ("complete_run", {"revisit": False, "unextracted": "/b.html"}),
    )


def test_kept_a_spelling_recorded_as_a_page_by_an_earlier_run_is_merged():
    """/c/ failed (500) while /c/index.html answered: the spelling was recorded as a page
    of its own, and the next run, /c/ back with the same text, kept both records."""
    replay(
        ("toggle_spelling", {"first": True}),
        ("validators", {"mode": "last-modified"}),
        ("partial_run", {"failing": "/c/", "revisit": True}),
        ("partial_run", {"failing": "/b.html", "revisit": True}),
        ("complete_run", {"revisit": False, "unextracted": None}),
        ("complete_run", {"revisit": True, "unextracted": None}),
    )
