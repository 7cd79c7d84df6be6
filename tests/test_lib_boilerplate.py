"""The crawler's boilerplate analyser (crawler.lib.boilerplate); the original block-hash
algorithm it extends is tested in test_bench_reference_boilerplate.py."""

import re
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.reference_boilerplate import compute_domain_fingerprint, strip_boilerplate
from crawler.lib.blockkeys import block_key, key_hash, split_blocks
from crawler.lib.boilerplate import DomainAnalyser, Params, analyse_pages

COOKIE = "We use cookies to give you the best experience. By continuing you accept our cookie policy."
FOOTER = "Copyright 2026 Example Corp. Registered office: 1 Example Street, Springfield, 12345."


WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
    "november",
    "oscar",
]


def own_text(n):
    """Text of page ``n`` that no other page shares, even with digits ignored."""
    words = " ".join(WORDS[(n * 7 + i) % len(WORDS)] + WORDS[(n // len(WORDS) + i) % len(WORDS)] for i in range(8))
    return f"This page is about {words}, a topic of its own."


def page(n, *extra):
    own = own_text(n)
    return "\n\n".join([f"# Page {n}", own, *extra])


# -- the crawler's analyser


def run(pages, params=None, previous=None, previous_content=None):
    params = params or Params()
    fingerprint, analyser = analyse_pages(pages, params, previous, previous_content)
    return fingerprint, {url: analyser.clean(url, text) for url, text in pages}


def test_same_decisions_as_the_original_algorithm_in_strict_mode():
    pages = [(f"https://a.com/p{n}", page(n, COOKIE, FOOTER if n % 2 else "")) for n in range(12)]
    params = Params(loose=False, sections=False, hysteresis=0.0)
    fingerprint, cleaned = run(pages, params)
    reference = compute_domain_fingerprint([text for _, text in pages])
    assert fingerprint.hashes == set(reference.boilerplate_hashes)
    for url, text in pages:
        assert cleaned[url][0] == strip_boilerplate(text, set(reference.boilerplate_hashes))[0]


def test_page_own_text_kept_whole():
    pages = [(f"https://a.com/p{n}", page(n, COOKIE, FOOTER)) for n in range(6)]
    _, cleaned = run(pages)
    for n, (url, _) in enumerate(pages):
        assert cleaned[url][0] == page(n)
        assert cleaned[url][1] == len(COOKIE.encode()) + len(FOOTER.encode())


def test_loose_matching_digits_dates_links():
    pages = [
        (
            f"https://a.com/p{n}",
            page(
                n,
                f"© {2020 + n % 3} Example Corp. [Privacy](/privacy?v={n}) updated March {n}"
                f", {2024 + n}. {n} items in your cart right now.",
            ),
        )
        for n in range(8)
    ]
    loose, cleaned = run(pages)
    strict, _ = run(pages, Params(loose=False))
    assert len(loose.hashes) == 1 and not strict.hashes
    assert all(text == page(n) for n, (text, _) in enumerate(cleaned.values()))


def test_section_boilerplate_under_the_domain_threshold():
    """By repetition alone, a box on every /blog/ page is the section's boilerplate."""
    author = "About the author: Jane writes about distributed systems and coffee every week."
    blog = [(f"https://a.com/blog/post-{n}", page(n, author)) for n in range(5)]
    docs = [(f"https://a.com/docs/page-{n}", page(100 + n, author if n == 0 else "")) for n in range(7)]
    params = Params(position=False)
    fingerprint, cleaned = run(blog + docs, params)  # on 6 of 12 pages: not domain boilerplate
    assert not fingerprint.hashes
    assert set(fingerprint.section_hashes) == {"blog"}
    assert all(author not in cleaned[url][0] for url, _ in blog)
    assert author in cleaned["https://a.com/docs/page-0"][0]  # outside the section: kept
    assert not run(blog + docs, Params(sections=False, position=False))[0].section_hashes


def test_long_text_repeated_in_a_section_only_is_the_section_text():
    """Where a block sits cannot tell an author's box closing each post (or the notes
    closing each migration guide) from a footer; not being site-wide does: kept."""
    author = "About the author: Jane writes about distributed systems and coffee every week."
    blog = [(f"https://a.com/blog/post-{n}", page(n, author)) for n in range(5)]
    docs = [(f"https://a.com/docs/page-{n}", page(100 + n, author if n == 0 else "")) for n in range(7)]
    fingerprint, cleaned = run(blog + docs)
    assert not fingerprint.hashes and not fingerprint.section_hashes
    assert all(cleaned[url] == (text, 0) for url, text in blog + docs)
    assert decisions(fingerprint) == {(author, "blog"): ("content", "section text")}
    # the same box on every page of the site is chrome
    everywhere = [(url, text if author in text else f"{text}\n\n{author}") for url, text in blog + docs]
    assert all(author not in cleaned for cleaned, _ in run(everywhere)[1].values())


def test_hysteresis_keeps_a_block_that_dips_below_the_threshold():
    def crawl(share):
        return [(f"https://a.com/p{n}", page(n, COOKIE) if n < share else page(n)) for n in range(100)]

    first, _ = run(crawl(70))
    assert first.hashes
    second, cleaned = run(crawl(69), previous={"": first.hashes})
    assert second.hashes == first.hashes  # 69% still boilerplate: no page's input flips back
    assert all(COOKIE not in text for text, _ in cleaned.values())
    assert not run(crawl(69))[0].hashes  # without the previous fingerprint it would flip
    assert not run(crawl(59), previous={"": first.hashes})[0].hashes  # a real drop does count
    assert not run(crawl(69), previous={"": {"0123456789abcdef"}})[0].hashes  # only its own past counts


def test_code_blocks_are_never_split():
    code = "```python\nimport os\n\n\nprint(os.getcwd())  # a long enough line of code here\n```"
    pages = [(f"https://a.com/p{n}", page(n, code)) for n in range(6)]
    _, cleaned = run(pages)
    assert all("```" not in text for text, _ in cleaned.values())  # removed whole, fences and all
    assert split_blocks(page(1, code))[-1] == code


def test_min_pages_leaves_small_domains_alone():
    fingerprint, cleaned = run([(f"https://a.com/p{n}", page(n, COOKIE)) for n in range(4)])
    assert fingerprint.skipped and all(removed == 0 for _, removed in cleaned.values())


def test_facts_in_repeated_blocks_are_kept_once():
    pages = [(f"https://a.com/p{n}", page(n, FOOTER.replace("2026", str(2020 + n)))) for n in range(6)]
    fingerprint, _ = run(pages)
    [(count, text)] = fingerprint.blocks.values()
    assert count == 6 and "Registered office: 1 Example Street" in text


def test_bad_parameters():
    with pytest.raises(ValueError, match="THRESHOLD"):
        Params(threshold_pct=1.5)
    with pytest.raises(ValueError, match="MIN_PAGES"):
        Params(min_pages=1)
    with pytest.raises(ValueError, match="hysteresis must be"):
        Params(hysteresis=0.8)


def test_memory_grows_with_distinct_blocks_not_text():
    """Counting 20x more text with the same distinct blocks costs no more memory."""

    def measure(repeats):
        analyser = DomainAnalyser(Params())
        big = "\n\n".join(f"{COOKIE} {n}" for n in range(50))  # 50 distinct blocks
        tracemalloc.start()
        for i in range(repeats):
            analyser.add_page(f"https://a.com/p{i}", big)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return peak

    assert measure(400) < 1.5 * measure(20) + 50_000


def test_memory_of_every_pass_grows_with_distinct_blocks_not_pages():
    """The passes that locate blocks and clean pages keep nothing per page: a domain
    of 400 pages costs what one of 40 costs (a page kept whole keeps its URL, the
    first 100 of them)."""

    def measure(pages):
        big = "\n\n".join(f"{COOKIE} {n}" for n in range(50))
        texts = [(f"https://a.com/p{i}", f"# Page {i}\n\n{big}") for i in range(pages)]
        tracemalloc.start()
        _, analyser = analyse_pages(texts, Params())
        for url, text in texts:
            analyser.clean(url, text)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert analyser.pages_emptied == pages and len(analyser.emptied) == min(pages, 100)
        return peak

    assert measure(400) < 1.5 * measure(40) + 100_000


def test_block_key_examples():
    assert block_key("3 items in cart") == block_key("12 items in cart")
    assert block_key("Read [docs](https://a.com/x)") == block_key("read [docs](/y)")


# -- where a block sits: chrome at the page's edges, repeated text inside it


def long_own(n, what="page"):
    """A paragraph of this page alone, long enough to count (>= 50 chars)."""
    return f"{own_text(n)} More about the {what} {WORDS[n % len(WORDS)]} here."


def decisions(fingerprint):
    return {(d.text, d.section): (d.treated, d.why.partition(":")[0]) for d in fingerprint.decisions}


def test_short_chrome_at_the_page_start_goes_whatever_its_length():
    """A div layout: a home link, the title, "Last updated: <date>", the page's text,
    "Generated on <date>": the date lines change on every page; they are chrome."""

    def div_page(n):
        return "\n\n".join(
            [
                "[Docs](/index.html)",
                f"# Page {n}",
                f"Last updated: March {n + 1}, 2025",
                long_own(n),
                f"Generated on 2025-03-{n + 1:02d} by Sphinx 7.{n}",
            ]
        )

    pages = [(f"https://a.com/p{n}", div_page(n)) for n in range(10)]
    fingerprint, cleaned = run(pages)
    for n, (url, _) in enumerate(pages):
        assert cleaned[url][0] == f"# Page {n}\n\n{long_own(n)}"
    assert decisions(fingerprint) == {
        ("[Docs](/index.html)", None): ("boilerplate", "edge"),
        ("Last updated: March 2, 2025", None): ("boilerplate", "edge"),
        ("Generated on 2025-03-02 by Sphinx 7.1", None): ("boilerplate", "edge"),
    }
    # repetition alone (the original algorithm's rule) keeps them: too short
    assert all(text in run(pages, Params(position=False))[1][url][0] for url, text in pages)


def test_repeated_text_between_the_page_own_text_stays():
    """Cumulative migration guides: each page of /migrate/ repeats the notes of the
    later versions between its introduction and its checklist."""
    notes = [f"Version 2.{v} removes the option legacy_{WORDS[v]} and renames its hooks." for v in range(7)]

    def guide(v):
        later = [block for w in range(v + 1, 7) for block in (f"## Notes for 2.{w}", notes[w])]
        return "\n\n".join([f"# Upgrading to 2.{v}", long_own(v, "upgrade"), *later, long_own(50 + v, "checklist")])

    pages = [(f"https://a.com/migrate/to-2-{v}", guide(v)) for v in range(7)]
    pages += [(f"https://a.com/p{n}", page(n)) for n in range(3)]
    fingerprint, cleaned = run(pages)
    assert all(cleaned[url] == (text, 0) for url, text in pages)  # every note reaches its pages
    assert not fingerprint.hashes and not fingerprint.section_hashes
    found = decisions(fingerprint)
    assert found[(notes[6], None)] == ("content", "interior")  # on 6 of 10: decided for the domain
    assert found[(notes[5], "migrate")] == ("content", "interior")  # on 5 of 7 /migrate/ pages
    by_repetition = run(pages, Params(position=False))[1]
    assert notes[6] not in by_repetition["https://a.com/migrate/to-2-0"][0]  # what repetition alone did


def test_a_description_under_each_page_title_stays():
    """A file-format site repeats the format's description on each language page."""
    description = "Packed is a binary format like JSON, but fast and small, for every language."
    pages = [
        (f"https://a.com/{lang}.html", f"# Packed for {lang}\n\n{description}\n\n{long_own(n, lang)}")
        for n, lang in enumerate(["python", "java", "go", "rust", "ruby", "perl", "c"])
    ]
    fingerprint, cleaned = run(pages)
    assert all(cleaned[url] == (text, 0) for url, text in pages)
    assert decisions(fingerprint) == {(description, None): ("content", "interior")}


def test_an_author_line_stays_in_a_section_a_dated_one_goes():
    blog = [(f"https://a.com/blog/post-{n}", f"# Post {n}\n\nBy Jane Doe\n\n{long_own(n)}") for n in range(5)]
    other = [(f"https://a.com/docs/d{n}", page(10 + n)) for n in range(5)]
    fingerprint, cleaned = run(blog + other)
    assert all(cleaned[url] == (text, 0) for url, text in blog)
    assert decisions(fingerprint) == {
        ("By Jane Doe", "blog"): ("content", "short and the same on every page of section /blog/, not site-wide")
    }
    dated = [(url, text.replace("By Jane Doe", f"Posted on May {n + 1}, 2025")) for n, (url, text) in enumerate(blog)]
    _, cleaned = run(dated + other)
    assert [cleaned[url][0] for url, _ in dated] == [f"# Post {n}\n\n{long_own(n)}" for n in range(5)]


def test_a_long_block_at_the_edges_goes_as_before_and_half_interior_stays():
    pages = [(f"https://a.com/p{n}", page(n, COOKIE)) for n in range(10)]
    assert all(cleaned == page(n) for n, (cleaned, _) in enumerate(run(pages)[1].values()))
    # at the end of 5 pages, between the page's own text on the 5 others: content
    mixed = [(url, text if n % 2 else text + "\n\n" + long_own(n)) for n, (url, text) in enumerate(pages)]
    fingerprint, cleaned = run(mixed)
    assert all(cleaned[url] == (text, 0) for url, text in mixed)
    [decision] = fingerprint.decisions
    assert (decision.treated, decision.pages, decision.edge_pages) == ("content", 10, 5)


def test_a_block_that_was_content_does_not_flip_in_one_crawl():
    def crawl(share):
        return [(f"https://a.com/p{n}", page(n, COOKIE) if n < share else page(n)) for n in range(100)]

    first, _ = run(crawl(65))
    assert not first.hashes and first.content_hashes == {"": {first.decisions[0].hash}}
    second, cleaned = run(crawl(72), previous_content=first.content_hashes)
    assert not second.hashes and all(removed == 0 for _, removed in cleaned.values())
    assert decisions(second)[(COOKIE, None)] == ("content", "held")
    assert not run(crawl(79), previous_content=first.content_hashes)[0].hashes
    assert run(crawl(80), previous_content=first.content_hashes)[0].hashes  # a real rise counts
    assert run(crawl(72))[0].hashes  # without its past, 72% is boilerplate
    # and the way down, as before: boilerplate stays so down to 60%
    assert run(crawl(61), previous={"": run(crawl(72))[0].hashes})[0].hashes


def test_a_block_that_was_boilerplate_but_sits_inside_the_pages_becomes_content():
    """What an upgrade does: a record of the rule by repetition alone listed it."""
    pages = [(f"https://a.com/p{n}", "\n\n".join([f"# P{n}", long_own(n), COOKIE, long_own(40 + n)])) for n in range(8)]
    old, _ = run(pages, Params(position=False))
    assert old.hashes
    new, cleaned = run(pages, previous={"": old.hashes})
    assert not new.hashes and all(cleaned[url] == (text, 0) for url, text in pages)


def test_a_page_that_cleaning_would_empty_is_kept_whole():
    """The latest migration page is its notes, which every other page repeats at its end."""
    notes = "Version 3.0 drops Python 3.8 and renames the setting TIMEOUT to READ_TIMEOUT."
    pages = [(f"https://a.com/p{n}", page(n, notes)) for n in range(6)]
    pages.append(("https://a.com/to-3-0", f"# Upgrading to 3.0\n\n## Changes\n\n{notes}"))
    fingerprint, analyser = analyse_pages(pages, Params())
    cleaned = {url: analyser.clean(url, text) for url, text in pages}
    assert fingerprint.hashes
    assert cleaned["https://a.com/to-3-0"] == (pages[-1][1], 0)
    assert (analyser.pages_emptied, analyser.emptied) == (1, ["https://a.com/to-3-0"])
    assert all(cleaned[url][0] == page(n) for n, (url, _) in enumerate(pages[:-1]))
    # a page with a little text of its own is cleaned as usual
    short = ("https://a.com/tiny", f"# Tiny\n\nA short note.\n\n{notes}")
    assert analyser.clean(*short) == ("# Tiny\n\nA short note.", len(notes))


def test_positions_must_be_seen_before_deciding():
    analyser = DomainAnalyser(Params())
    for n in range(5):
        analyser.add_page(f"https://a.com/p{n}", page(n, COOKIE))
    assert analyser.wants_positions
    with pytest.raises(RuntimeError, match="locate"):
        analyser.finish()


def test_a_block_on_half_of_a_small_domain_is_not_a_page_own_text():
    """9 pages, a banner on all, a box on 4 after it: the box does not make the banner
    sit inside the pages' own text (it would, counted as own text under min_pages)."""
    box = "Related products: gearboxes, couplings and motors for every industrial drive."
    pages = [(f"https://a.com/p{n}", page(n, COOKIE, *([box] if n % 2 else []))) for n in range(9)]
    fingerprint, cleaned = run(pages)
    assert fingerprint.hashes == {key_hash(block_key(COOKIE))}
    assert all(COOKIE not in text for text, _ in cleaned.values())
    assert decisions(fingerprint)[(COOKIE, None)] == ("boilerplate", "edge")


def _split_blocks_line_by_line(content):
    """split_blocks as it was written first, line by line: the reference."""
    if not ("`" in content and "```" in content) and not ("~" in content and "~~~" in content):
        return [s for block in re.split(r"\n\s*\n", content) if (s := block.strip())]
    blocks, current, fence = [], [], ""
    for line in content.split("\n"):
        stripped = line.strip()
        if fence:
            current.append(line)
            if stripped.startswith(fence) and stripped.strip("`~") == "":
                fence = ""
            continue
        if not stripped:
            if current:
                blocks.append("\n".join(current).strip())
                current = []
            continue
        if stripped.startswith(("```", "~~~")):
            fence = stripped[: len(stripped) - len(stripped.lstrip(stripped[0]))]
        current.append(line)
    if current:
        blocks.append("\n".join(current).strip())
    return [b for b in blocks if b]


LINES = ["```", "````", " ```", "``` ", "~~~", "~~~~", "```py", "~~~ x", "text", "  ", "", " x ", "`", "# h", "\t"]


@settings(max_examples=1000)
@given(st.lists(st.sampled_from(LINES), max_size=60))
def test_split_blocks_is_the_line_by_line_rule(lines):
    """Blocks decide which text is boilerplate: the faster split must cut exactly where
    the line-by-line rule cuts, or cleaned inputs (and extractions) would change."""
    content = "\n".join(lines)
    assert split_blocks(content) == _split_blocks_line_by_line(content)
