import random
import unicodedata

from crawler.lib.hashing import (
    OTHER_ASCII_WS,
    OTHER_WS_RE,
    _has_other_white_space,
    _normalize_lines,
    content_hash,
    normalize_text,
    normalize_value,
    sha256_hex,
)


def test_normalize_text_folds_white_space_and_unicode_forms():
    assert normalize_text("  caf\u0065\u0301 \t bar\t") == normalize_text("caf\u00e9 bar")
    assert normalize_text("Do NOT") != normalize_text("do not")


def test_multi_line_text_keeps_its_lines_and_indentation():
    code = "```python\nif ready:\n    stop()\n```"
    assert normalize_text(code) != normalize_text(code.replace("    stop()", "stop()"))
    assert normalize_text("a  \nb\n\n\n\nc\n") == normalize_text("a\nb\n\nc")


def test_fast_path_gives_the_line_by_line_result():
    # normalize_text() takes a fast path for texts of spaces and line feeds only; it must
    # hash every text exactly as the line-by-line definition does, or every page of a
    # cache would count as changed after an upgrade
    pieces = ["a", "b", "x y", " ", "  ", "    ", "\t", "\n", "\n\n", "\n\n\n", "  \n", "\n  ", " \t\n"]
    pieces += ["\u00a0", "\u3000", "\x1f", "\r\n", "\u2028", "\x85", "e\u0301"]
    rng = random.Random(8)
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        nfkc = unicodedata.normalize("NFKC", text)
        if "\n" in nfkc or "\r" in nfkc:
            assert normalize_text(text) == _normalize_lines(nfkc), repr(text)


def test_other_white_space_found_as_the_regex_finds_it():
    # ASCII text is searched character by character instead of by OTHER_WS_RE: the
    # same characters, or a text with one of them would take the wrong path
    assert sorted(OTHER_ASCII_WS) == [chr(c) for c in range(128) if OTHER_WS_RE.match(chr(c))]
    for char in map(chr, range(0x3100)):
        text = f"a b\n{char}c"
        assert _has_other_white_space(text) == (OTHER_WS_RE.search(text) is not None), repr(char)


def test_lists_are_order_insensitive_and_nested_values_normalized():
    assert normalize_value(["b", " a "]) == normalize_value(["a", "b"])
    assert normalize_value({"k": [2, 1]}) == normalize_value({"k": [1, 2]})
    assert normalize_value(b"x  y") == "x y"


def test_content_hash_uses_only_named_fields():
    a = {"title": "Rwanda Population 2024", "tags": ["rwanda", "population"], "views": 10}
    b = {"title": "Rwanda  Population 2024 ", "tags": ["population", "rwanda"], "views": 99}
    assert content_hash(a, ["title", "tags"]) == content_hash(b, ["title", "tags"])
    c = dict(a, title="Rwanda Population 2023")
    assert content_hash(a, ["title", "tags"]) != content_hash(c, ["title", "tags"])


def test_missing_and_empty_fields():
    assert content_hash({}, ["title"]) == content_hash({"title": None}, ["title"])
    assert content_hash({"title": ""}, ["title"]) != content_hash({"title": None}, ["title"])


def test_sha256_hex_is_sha256():
    assert sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
