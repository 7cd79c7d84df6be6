"""The boilerplate statistics kept between runs (crawler.lib.blockstats, with the page
signatures of crawler.lib.blocksig): after every run of edits, additions and removals,
what the statistics decide and every page's cleaned text equal a full pass of
DomainAnalyser over the pages as they are (read in ascending key order), with the same
previous decisions fed to both. A Hypothesis state machine drives the runs
(``BLOCKSTATS_EXAMPLES`` sequences, 150 by default); plain tests cover each tricky path
by hand."""

from __future__ import annotations

import hashlib
import itertools
import os
from array import array
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from crawler.lib.blockcounts import BlockCounts, array_parts, read_array
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
        self.last_cleaned: set[str] | None = None
        self.kept = b""
        self.unchanged_runs = 0

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
        to_clean = self.last_cleaned = stats.pages_to_clean(self.store)
        for key in list(self.cleaned):
            if key not in self.store.pages:
                del self.cleaned[key]
        for key in sorted(self.store.pages) if to_clean is None else sorted(to_clean):
            self.cleaned[key] = stats.clean(key, *self.store.pages[key])
        expected, cleaned, analyser = full_pass(self.store.pages, self.params, *self.previous)
        assert summary(fingerprint) == summary(expected)
        assert self.cleaned == cleaned
        assert (stats.pages_emptied, stats.emptied_urls()) == (analyser.pages_emptied, analyser.emptied)
        # the bytes to keep: none when they are the bytes loaded (so not written again)
        changed, data = stats.changed_parts(), stats.to_bytes()
        assert data == self.kept if changed is None else b"".join(changed) == data
        self.unchanged_runs += changed is None
        self.kept = data
        self.stats = DomainStats.from_bytes(data, self.params)
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


#: sequences of runs tried (``BLOCKSTATS_EXAMPLES=2000`` for a longer search)
EXAMPLES = int(os.environ.get("BLOCKSTATS_EXAMPLES", "150"))
Runs.TestCase.settings = settings(
    max_examples=EXAMPLES, stateful_step_count=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
test_runs = Runs.TestCase


class EagerlyCompactedRuns(Runs):
    """The same, with each block newly on one page merged into the count arrays at
    once: a first pass over a large domain merges them part way (``COMPACT_AT``)."""

    @initialize(params=params_strategy)
    def start(self, params: Params) -> None:
        BlockCounts.COMPACT_AT = 1
        super().start(params)

    def teardown(self) -> None:
        BlockCounts.COMPACT_AT = COMPACT_AT


COMPACT_AT = BlockCounts.COMPACT_AT
EagerlyCompactedRuns.TestCase.settings = settings(
    max_examples=max(1, EXAMPLES // 3),
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_eagerly_compacted_runs = EagerlyCompactedRuns.TestCase


# -- each tricky path by hand


def guide(n: int, *shared: str) -> str:
    own = f"This paragraph is the page's own, {letters(n)} in particular, and long enough."
    return "\n\n".join([NAV, f"# Guide {letters(n)}", own, *shared, FOOTER.format("2026")])


def domain_of(count: int, params: Params | None = None, section: int = 0, **shared: list[str]) -> Domain:
    domain = Domain(params or Params())
    for n in range(count):
        domain.put(url_of(n, section), guide(n, *shared.get(str(n), [])))
    domain.run()
    return domain


def reads(domain: Domain) -> tuple[int, int]:
    return domain.store.scans, domain.store.texts_read


def test_a_small_change_reads_the_changed_pages_only():
    domain = domain_of(200)
    assert domain.run().hashes  # the nav and the footer
    before = reads(domain)
    domain.put(url_of(7, 0), guide(1007))
    domain.put(url_of(300, 0), guide(300))
    domain.drop(url_of(9, 0))
    domain.run()
    assert reads(domain) == before  # no signature scanned, no text read back
    assert domain.last_cleaned == {key_of(url_of(7, 0)), key_of(url_of(300, 0))}


def test_a_block_crossing_own_below_relocates_the_pages_holding_it():
    # a note after the pages' own text on 4 of 30 pages is their own text (own_below 5):
    # the nav and the footer are at their edges, the note too on none of them
    note = "Read the upgrade notes of this release before anything else, they matter."
    domain = domain_of(30, **{str(n): [note] for n in range(4)})
    assert own_below(domain.params, 30) == 5
    scans = domain.store.scans
    # on a fifth page it is no longer their own: the pages' edges move on all five
    domain.put(url_of(4, 0), guide(4, note))
    domain.run()  # equal to a full pass
    assert domain.store.scans == scans + 1
    assert domain.stats is not None
    note_digest = domain.store.sigs[key_of(url_of(0, 0))].digests[3]
    assert domain.stats.edges.get(note_digest) == 5
    # and back under
    domain.put(url_of(4, 0), guide(4))
    domain.run()
    assert domain.stats.edges.get(note_digest) is None


def test_own_below_changing_relocates_every_page():
    params = Params(min_pages=5, threshold_pct=0.5)
    note = "A paragraph three of these pages share, right after their own text, as a note."
    domain = domain_of(9, params, **{str(n): [note] for n in range(3)})
    assert own_below(params, 9) == 3  # the note (3 pages) is not the pages' own text
    domain.put(url_of(9, 0), guide(9))
    domain.put(url_of(10, 0), guide(10))
    domain.put(url_of(11, 0), guide(11))
    scans = domain.store.scans
    domain.run()  # own_below 4: the note is their own text now, on every page holding it
    assert own_below(params, 12) == 4
    assert domain.store.scans > scans


def test_a_section_crossing_min_pages_cleans_its_unchanged_pages():
    author = "By the blog team"
    domain = Domain(Params(min_pages=5))
    for n in range(20):
        domain.put(url_of(n, 0), guide(n))
    for n in range(20, 24):  # four blog pages: under min_pages, no section analysed
        domain.put(url_of(n, 1), "\n\n".join([author + " 2026", guide(n)]))
    assert not domain.run().section_hashes
    domain.put(url_of(24, 1), "\n\n".join([author + " 2025", guide(24)]))
    stats = domain.stats
    assert stats is not None
    fingerprint = domain.run()  # cleans the four unchanged blog pages too (else unequal)
    assert set(fingerprint.section_hashes) == {"blog"}
    assert all(author not in domain.cleaned[key_of(url_of(n, 1))][0] for n in range(20, 25))


def test_hysteresis_holds_a_block_and_cleans_nothing_more():
    domain = Domain(Params())  # a banner closing 7 of 10 pages
    for n in range(10):
        domain.put(url_of(n, 0), "\n\n".join([guide(n), *([BANNER] if n < 7 else [])]))
    assert any(d.text == BANNER for d in domain.run().decisions if d.treated == "boilerplate")
    domain.put(url_of(0, 0), guide(1000))  # 6 of 10: held, was boilerplate
    fingerprint = domain.run()
    [held] = [d for d in fingerprint.decisions if d.text == BANNER]
    assert held.treated == "boilerplate" and "held" in held.why
    assert domain.last_cleaned == {key_of(url_of(0, 0))}  # the decisions did not change: no other page


def test_loose_variants_keep_the_full_pass_sample():
    # the footer's text on the second page by key is the decision's; edits move it
    domain = Domain(Params())
    years = ["2025", "12026", "7", "1999", "42", "3"]
    for n, year in enumerate(years):
        domain.put(url_of(n, 0), guide(n).replace("2026", year))
    domain.run()
    first, second = sorted(key_of(url_of(n, 0)) for n in range(len(years)))[:2]
    for key in (second, first):  # the second page loses its footer, then the first
        url, text = domain.store.pages[key]
        domain.put(url, text.replace(FOOTER.format(text.rsplit("© ", 1)[1].split(" ")[0]), ""))
        domain.run()


def test_statistics_of_a_run_that_changed_nothing_are_not_made_again():
    domain = domain_of(40)
    domain.run()
    domain.run()
    assert domain.unchanged_runs == 2
    domain.put(url_of(3, 0), guide(1003))
    domain.run()
    assert domain.unchanged_runs == 2


def test_stats_kept_and_loaded():
    domain = domain_of(12)
    assert domain.stats is not None
    data = domain.stats.to_bytes()
    assert DomainStats.from_bytes(data, Params(min_pages=6)) is None  # other parameters: a full pass
    assert DomainStats.from_bytes(data.replace(b'"version":1', b'"version":9', 1), Params()) is None
    with pytest.raises(ValueError, match="not block statistics"):
        DomainStats.from_bytes(b"{}", Params())
    with pytest.raises(ValueError, match=r"truncated|read"):
        DomainStats.from_bytes(data[:-3], Params())


def test_signature_bytes():
    sig = signature("https://a.com/blog/x", "# Title\n\n" + "x" * 60 + "\n\nshort", Params())
    assert sig.section == "blog" and bytes(sig.flags) == bytes([HEADING, LONG, 0])
    assert Signature.from_bytes(sig.to_bytes()) == sig
    with pytest.raises(ValueError, match="version 9"):
        Signature.from_bytes(b"\x09" + sig.to_bytes()[1:])
    with pytest.raises(ValueError, match="expected"):
        Signature.from_bytes(sig.to_bytes()[:-1])
    with pytest.raises(ValueError, match="one flag a block"):
        Signature(None, array("Q", [1]), b"")


def test_edges_of_a_page():
    # own text: the long blocks on fewer than own_below pages; around it, the edges
    sig = Signature(None, array("Q", [1, 2, 3, 4, 5]), bytes([LONG, HEADING, LONG, 0, LONG]))
    counts = {1: 9, 2: 1, 3: 1, 4: 9, 5: 9}
    assert edge_digests(sig, counts.__getitem__, 5) == {1, 4, 5}
    assert edge_digests(sig, {**counts, 3: 9}.__getitem__, 5) == {1, 3, 4, 5}  # no own text: all edge but the heading


def test_changes_in_a_bad_order_are_refused():
    stats = DomainStats(Params())
    sig = stats.add_page("k", "https://a.com/x", "text")
    with pytest.raises(ValueError, match="added twice"):
        stats.add_page("k", "https://a.com/x", "text")
    with pytest.raises(ValueError, match="taken out after"):
        stats.remove_page("k", sig)
    with pytest.raises(RuntimeError, match="before commit"):
        stats.decide()


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.booleans(), st.integers(1, 12), st.sampled_from([None, "blog", "guides"]), st.booleans()),
        max_size=60,
    ),
    st.sampled_from([COMPACT_AT, 1, 3]),
)
def test_block_counts_as_counters(steps, compact_at):
    """BlockCounts (blocks on one page in arrays) counts as Counters do, through
    compactions (as it adds, past ``COMPACT_AT``) and a round trip through bytes."""
    counts = BlockCounts()
    counts.COMPACT_AT = compact_at
    domain: Counter[int] = Counter()
    sections: dict[str, Counter[int]] = {}
    held: list[tuple[int, str | None]] = []  # the (digest, section) of each page holding a block
    for add, digest, section, compact in steps:
        if add or not held:
            assert counts.add(digest, section) == domain[digest]
            held.append((digest, section))
        else:
            digest, section = held.pop(digest % len(held))
            assert counts.remove(digest, section) == domain[digest]
        domain.clear()
        sections.clear()
        for d, s in held:
            domain[d] += 1
            if s is not None:
                sections.setdefault(s, Counter())[d] += 1
        if compact:
            names, kept = counts.arrays()
            data = b"".join(part for values in kept for part in array_parts(values))
            view, start, arrays = memoryview(data), 0, []
            while start < len(view):
                values, start = read_array(view, start)
                arrays.append(values)
            counts = BlockCounts.from_arrays(names, iter(arrays))
            counts.COMPACT_AT = compact_at
        assert {d: counts.get(d) for d in range(1, 13)} == {d: domain[d] for d in range(1, 13)}
        assert dict(counts.items()) == +domain and len(counts) == len(+domain)
        for name, in_section in sections.items():
            assert {d: counts.section_count(name, d) for d in counts.multi} == {d: in_section[d] for d in counts.multi}
