"""The reference implementation of the original block-hash boilerplate algorithm
(bench/reference_boilerplate.py), which the crawler's analyser is checked against."""

from bench.reference_boilerplate import compute_domain_fingerprint, hash_block, split_into_blocks, strip_boilerplate

COOKIE = "We use cookies to give you the best experience. By continuing you accept our cookie policy."
FOOTER = "Copyright 2026 Example Corp. Registered office: 1 Example Street, Springfield, 12345."


def page(n, *extra):
    return "\n\n".join([f"# Page {n}", f"This page is about topic number {n}, a text of its own.", *extra])


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
