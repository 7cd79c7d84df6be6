"""The boilerplate statistics kept between runs (crawler.lib.blockstats, with the page
signatures of crawler.lib.blocksig): after every run of edits, additions and removals,
what the statistics decide and every page's cleaned text equal a full pass of
DomainAnalyser over the pages as they are (read in ascending key order), with the same
previous decisions fed to both. A Hypothesis state machine drives the runs; plain tests
cover each tricky path by hand."""

from __future__ import annotations

import hashlib
import itertools
from array import array

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from crawler.lib.blocksig import HEADING, LONG, Signature, edge_digests, signature
from crawler.lib.blockstats import DomainStats, own_below
from crawler.lib.boilerplate import CONTENT, Params, analyse_pages

NAV = "[Home](/) · [Guides](/guides) · [Reference](/reference) · [Blog](/blog) · [About us](/about)"
COOKIE = "We use cookies to give you the best experience. By continuing you accept our cookie policy."
BANNER = "Version 3 is out: read the release notes before you upgrade your installation today."
NOTE = "Note for the pages of this part: the examples assume the default configuration file."
#: blocks with loose variants of different lengths ({} takes a variant)
FOOTER = "© {} Example Corp. All rights reserved. Registered office in Springfield."
UPDATED = "Updated {}"
PRIVACY = "[Privacy]({})"
VARIANTS = {
    FOOTER: ["2025", "12026", "7"],
    UPDATED: ["3 May", "14 December 2025", "1 jan", "22 Sept 2026"],
    PRIVACY: ["/p", "/privacy?v=12345", "/legal/privacy-policy"],
}
POOL = [
    NAV,
    COOKIE,
    BANNER,
    NOTE,
    FOOTER,
    UPDATED,
    PRIVACY,
    "## Notes",
    "# A heading every guide shares",
    "# A long heading that every page of the guides repeats word for word",
    "By Jane Doe",
    "#hashtag line",
]
WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo"]


def letters(n: int) -> str:
    """A word per number, no digit (loose matching folds digits)."""
    out = []
    while True:
        out.append(WORDS[n % len(WORDS)])
        n //= len(WORDS)
        if not n:
            return "".join(out)


def url_of(n: int, section: int) -> str:
    return ["https://a.com/p{}", "https://a.com/blog/p{}", "https://a.com/guides/p{}/"][section].format(n)


def key_of(url: str) -> str:
    return hashlib.sha256(url.encode()).hexdigest()


class Pages:
    """The pages of a domain as a store keeps them: text and signature by key (a
    PageSource), counting what is read."""

    def __init__(self) -> None:
        self.pages: dict[str, tuple[str, str]] = {}  # key -> url, text
        self.sigs: dict[str, Signature] = {}
        self.texts_read = 0
        self.scans = 0

    def signatures(self):
        self.scans += 1
        return list(self.sigs.items())

    def texts(self, keys):
        self.texts_read += len(keys)
        return [(key, self.pages[key][1]) for key in keys]


def full_pass(pages, params, previous, previous_content):
    ordered = [pages[key] for key in sorted(pages)]
    fingerprint, analyser = analyse_pages(ordered, params, previous, previous_content)
    cleaned = {key: analyser.clean(*pages[key]) for key in sorted(pages)}
    return fingerprint, cleaned, analyser


def previous_of(fingerprint):
    """What the stage feeds the next analysis (stages.boilerplate.previous_decisions)."""
    if fingerprint.skipped:
        return {}, {}
    previous = {"": set(fingerprint.hashes), **{s: set(h) for s, h in fingerprint.section_hashes.items()}}
    content: dict[str, set[str]] = {}
    for decision in fingerprint.decisions:
        if decision.treated == CONTENT:
            content.setdefault(decision.section or "", set()).add(decision.hash)
    return previous, content


def summary(fingerprint):
    return (
        fingerprint.skipped,
        fingerprint.pages_analysed,
        fingerprint.blocks_total,
        fingerprint.hashes,
        fingerprint.section_hashes,
        fingerprint.blocks,
        [d.to_json() for d in fingerprint.decisions],
    )


class Domain:
    """A domain analysed run after run by the statistics, checked against a full pass."""

    def __init__(self, params: Params) -> None:
        self.params = params
        self.store = Pages()
        self.stats: DomainStats | None = None
        self.cleaned: dict[str, tuple[str, int]] = {}
        self.previous: tuple[dict[str, set[str]], dict[str, set[str]]] = ({}, {})
        self.changes: dict[str, tuple[str, str] | None] = {}  # key -> (url, text) or None: removed

    def put(self, url: str, text: str) -> None:
        key = key_of(url)
        self.store.pages[key] = (url, text)
        self.changes[key] = (url, text)

    def drop(self, url: str) -> None:
        key = key_of(url)
        del self.store.pages[key]
        self.changes[key] = None

    def run(self):
        """One run: the statistics updated with the changes, decided, the pages they
        name cleaned; checked against a full pass. Returns the fingerprint."""
        stats = self.stats or DomainStats(self.params)
        for key, change in sorted(self.changes.items()):
            old = self.store.sigs.pop(key, None)
            if old is not None:
                stats.remove_page(key, old)
            if change is not None:
                self.store.sigs[key] = stats.add_page(key, *change)
        self.changes.clear()
        stats.commit(self.store)
        fingerprint = stats.decide(*self.previous)
        to_clean = stats.pages_to_clean(self.store)
        for key in list(self.cleaned):
            if key not in self.store.pages:
                del self.cleaned[key]
        for key in sorted(self.store.pages) if to_clean is None else sorted(to_clean):
            self.cleaned[key] = stats.clean(key, *self.store.pages[key])
        expected, cleaned, analyser = full_pass(self.store.pages, self.params, *self.previous)
        assert summary(fingerprint) == summary(expected)
        assert self.cleaned == cleaned
        assert (stats.pages_emptied, stats.emptied_urls()) == (analyser.pages_emptied, analyser.emptied)
        self.stats = DomainStats.from_bytes(stats.to_bytes(), self.params)
        assert self.stats is not None
        self.previous = previous_of(fingerprint)
        return fingerprint


# -- the property: any sequence of runs


params_strategy = st.builds(
    Params,
    threshold_pct=st.sampled_from([0.3, 0.5, 0.7]),
    min_pages=st.sampled_from([2, 3, 5]),
    min_block_chars=st.sampled_from([12, 20, 50]),
    loose=st.booleans(),
    sections=st.booleans(),
    hysteresis=st.sampled_from([0.0, 0.1, 0.2]),
    position=st.booleans(),
)
shared = st.tuples(st.just("pool"), st.integers(0, len(POOL) - 1), st.integers(0, 3))
own = st.sampled_from([("own", 0, 0), ("own_short", 0, 0), ("own_heading", 0, 0)])
page_strategy = st.tuples(
    st.lists(shared, max_size=4),
    st.lists(st.one_of(own, own, shared), max_size=4),
    st.lists(shared, max_size=3),
)


class Runs(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.unique = itertools.count(1)
        self.live: dict[int, int] = {}  # page number -> section

    @initialize(params=params_strategy)
    def start(self, params: Params) -> None:
        self.domain = Domain(params)

    def text(self, parts) -> str:
        blocks = []
        for kind, i, variant in itertools.chain(*parts):
            if kind == "pool":
                block = POOL[i]
                if block in VARIANTS:
                    block = block.format(VARIANTS[block][variant % len(VARIANTS[block])])
            elif kind == "own":
                block = f"This paragraph is the page's own, {letters(next(self.unique))} in particular, and long."
            elif kind == "own_short":
                block = f"Only {letters(next(self.unique))}"
            else:
                block = f"## About {letters(next(self.unique))}"
            blocks.append(block)
        return "\n\n".join(blocks) or "Empty"

    @rule(n=st.integers(0, 29), section=st.integers(0, 2), parts=page_strategy)
    def add(self, n: int, section: int, parts) -> None:
        if n in self.live:
            self.domain.drop(url_of(n, self.live[n]))
        self.live[n] = section
        self.domain.put(url_of(n, section), self.text(parts))

    @rule(first=st.integers(0, 29), count=st.integers(2, 10), section=st.integers(0, 2), parts=page_strategy)
    def add_many(self, first: int, count: int, section: int, parts) -> None:
        """Pages made from one template (the same shared blocks, their own text each)."""
        for n in range(first, min(30, first + count)):
            self.add(n, section, parts)

    @precondition(lambda self: self.live)
    @rule(data=st.data(), parts=page_strategy)
    def edit(self, data, parts) -> None:
        n = data.draw(st.sampled_from(sorted(self.live)))
        self.domain.put(url_of(n, self.live[n]), self.text(parts))

    @precondition(lambda self: self.live)
    @rule(data=st.data())
    def remove(self, data) -> None:
        n = data.draw(st.sampled_from(sorted(self.live)))
        self.domain.drop(url_of(n, self.live.pop(n)))

    @rule()
    def run(self) -> None:
        self.domain.run()

    @invariant()
    def runs_now_and_then(self) -> None:
        if len(self.domain.changes) > 12:
            self.domain.run()


Runs.TestCase.settings = settings(
    max_examples=150, stateful_step_count=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
test_runs = Runs.TestCase
