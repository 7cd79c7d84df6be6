"""The seed's test list for the pure functions, then what the crawler's analyser adds."""

import tracemalloc

import pytest

from crawler.lib.boilerplate import (
    DomainAnalyser,
    Params,
    analyse_pages,
    block_key,
    compute_domain_fingerprint,
    hash_block,
    split_blocks,
    split_into_blocks,
    strip_boilerplate,
)

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


# -- split_into_blocks


def test_splits_on_double_newlines():
    assert split_into_blocks("a" * 60 + "\n\n" + "b" * 60 + "\n \t\n" + "c" * 60) == ["a" * 60, "b" * 60, "c" * 60]


def test_filters_short_blocks():
    assert split_into_blocks("short\n\n" + "x" * 49 + "\n\n" + "y" * 50) == ["y" * 50]


def test_handles_empty_content():
    assert split_into_blocks("") == []
    assert split_into_blocks("\n\n\n") == []


def test_handles_single_block():
    assert split_into_blocks("z" * 70) == ["z" * 70]


def test_preserves_block_content():
    block = "Line one of a block that is long enough\nline two of the same block"
    assert split_into_blocks(f"\n\n{block}\n\n") == [block]


# -- hash_block


def test_hash_is_deterministic_and_short():
    assert hash_block(COOKIE) == hash_block(COOKIE)
    assert len(hash_block(COOKIE)) == 16


def test_whitespace_normalized():
    assert hash_block("We use\tcookies   here\n\nand there") == hash_block("We use cookies here and there")


def test_case_insensitive():
    assert hash_block("ACCEPT ALL COOKIES") == hash_block("accept all cookies")


# -- compute_domain_fingerprint


def test_identifies_boilerplate_above_threshold():
    pages = [page(n, COOKIE) for n in range(10)]
    result = compute_domain_fingerprint(pages)
    assert result.boilerplate_hashes == [hash_block(COOKIE)]
    assert (result.pages_analyzed, result.blocks_total, result.blocks_boilerplate) == (10, 20, 1)


def test_skips_when_below_min_pages():
    assert compute_domain_fingerprint([page(n, COOKIE) for n in range(4)]).boilerplate_hashes == []


def test_respects_threshold_pct():
    pages = [page(n, COOKIE) if n < 6 else page(n) for n in range(10)]  # on 60% of pages
    assert compute_domain_fingerprint(pages, threshold_pct=0.7).boilerplate_hashes == []
    assert compute_domain_fingerprint(pages, threshold_pct=0.6).boilerplate_hashes == [hash_block(COOKIE)]


def test_ignores_unique_blocks():
    assert compute_domain_fingerprint([page(n) for n in range(8)]).boilerplate_hashes == []


def test_handles_empty_pages():
    result = compute_domain_fingerprint(["", "", "", "", "", ""])
    assert (result.boilerplate_hashes, result.blocks_total) == ([], 0)


def test_real_world_cookie_banner():
    banner = "\n".join(["Cookie settings", COOKIE, "[Accept all](/consent?a=1) [Reject](/consent?a=0)"])
    pages = [page(n, banner, FOOTER) for n in range(30)]
    result = compute_domain_fingerprint(pages)
    assert set(result.boilerplate_hashes) == {hash_block(banner), hash_block(FOOTER)}


# -- strip_boilerplate


def test_removes_boilerplate_blocks():
    cleaned, _ = strip_boilerplate(page(1, COOKIE), {hash_block(COOKIE)})
    assert COOKIE not in cleaned


def test_preserves_unique_content():
    cleaned, _ = strip_boilerplate(page(1, COOKIE), {hash_block(COOKIE)})
    assert cleaned == page(1)


def test_handles_empty_boilerplate_set():
    assert strip_boilerplate(page(1, COOKIE), set()) == (page(1, COOKIE), 0)


def test_collapses_blank_lines_after_removal():
    cleaned, _ = strip_boilerplate(
        f"# Title\n\n{COOKIE}\n\n\n\n{FOOTER}\n\nEnd", {hash_block(COOKIE), hash_block(FOOTER)}
    )
    assert cleaned == "# Title\n\nEnd"


def test_returns_correct_bytes_removed():
    text = "# Título\n\n" + COOKIE + " ✓\n\nEnd"
    cleaned, removed = strip_boilerplate(text, {hash_block(COOKIE + " ✓")})
    assert removed == len(text.encode()) - len(cleaned.encode()) - len(b"\n\n")


# -- the crawler's analyser


def run(pages, params=None, previous=None):
    params = params or Params()
    fingerprint, analyser = analyse_pages(pages, params, previous)
    return fingerprint, {url: analyser.clean(url, text) for url, text in pages}


def test_same_decisions_as_the_seed_in_strict_mode():
    pages = [(f"https://a.com/p{n}", page(n, COOKIE, FOOTER if n % 2 else "")) for n in range(12)]
    params = Params(loose=False, sections=False, hysteresis=0.0)
    fingerprint, cleaned = run(pages, params)
    seed = compute_domain_fingerprint([text for _, text in pages])
    assert fingerprint.hashes == set(seed.boilerplate_hashes)
    for url, text in pages:
        assert cleaned[url][0] == strip_boilerplate(text, set(seed.boilerplate_hashes))[0]


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
    author = "About the author: Jane writes about distributed systems and coffee every week."
    blog = [(f"https://a.com/blog/post-{n}", page(n, author)) for n in range(5)]
    docs = [(f"https://a.com/docs/page-{n}", page(100 + n, author if n == 0 else "")) for n in range(7)]
    fingerprint, cleaned = run(blog + docs)  # on 6 of 12 pages: not domain boilerplate
    assert not fingerprint.hashes
    assert set(fingerprint.section_hashes) == {"blog"}
    assert all(author not in cleaned[url][0] for url, _ in blog)
    assert author in cleaned["https://a.com/docs/page-0"][0]  # outside the section: kept
    assert not run(blog + docs, Params(sections=False))[0].section_hashes


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
    with pytest.raises(ValueError, match="HYSTERESIS"):
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


def test_block_key_examples():
    assert block_key("3 items in cart") == block_key("12 items in cart")
    assert block_key("Read [docs](https://a.com/x)") == block_key("read [docs](/y)")
